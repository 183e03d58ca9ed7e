//! Credentials asked for at each attempt: a [`TokenSource`] the client asks before every attempt
//! (so a token that expires is fetched anew) and, once per call, after a `401` (so a token the
//! server refused is renewed and the request sent again with it).

use std::sync::Arc;

/// The futures [`TokenSource`] and [`Authorize`] return (re-exported so that implementations
/// need not name the `futures` crate).
pub use futures::future::BoxFuture;

/// A [`TokenSource`]'s own error, whatever its type: an OAuth endpoint's refusal, a vault's I/O.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a request's credentials could not be put on it.
#[derive(Debug)]
pub enum CredentialError {
    /// The source did not give one.
    Source(BoxError),
    /// What it gave cannot be a header's value (a line break, a control character).
    NotAHeaderValue,
}

impl std::fmt::Display for CredentialError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Source(error) => write!(f, "the credential's source failed: {error}"),
            Self::NotAHeaderValue => f.write_str("a credential is not a valid header value"),
        }
    }
}

impl std::error::Error for CredentialError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Source(error) => Some(error.as_ref()),
            Self::NotAHeaderValue => None,
        }
    }
}

/// Where a credential comes from when it is not fixed: an OAuth token cache, a vault, a file
/// that is rotated.
pub trait TokenSource: Send + Sync {
    /// The credential to send now (the token, key or secret itself, without a scheme word).
    fn token(&self) -> BoxFuture<'_, Result<String, BoxError>>;

    /// Called once per call after the server answered `401`: whether a new credential can now
    /// be had (the request is then sent again at once). By default, no.
    fn renew(&self) -> BoxFuture<'_, bool> {
        Box::pin(std::future::ready(false))
    }
}

/// A credential: fixed, or asked of a source at every attempt.
#[derive(Clone)]
pub enum Secret {
    Fixed(String),
    Source(Arc<dyn TokenSource>),
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self::Fixed(value)
    }
}

impl Secret {
    /// The credential to send now.
    pub async fn get(&self) -> Result<String, CredentialError> {
        match self {
            Self::Fixed(value) => Ok(value.clone()),
            Self::Source(source) => source.token().await.map_err(CredentialError::Source),
        }
    }

    /// Whether a new credential can be had after a `401` (never for a fixed one).
    pub async fn renew(&self) -> bool {
        match self {
            Self::Fixed(_) => false,
            Self::Source(source) => source.renew().await,
        }
    }
}

/// What the retry loop asks of a client's credentials: to put them on each attempt, and to
/// renew them after a `401`. A client without credentials passes `()`.
pub trait Authorize: Send + Sync {
    /// Puts the credentials `operation` asks for on `request`, replacing any it carries.
    fn authorize<'a>(
        &'a self,
        operation: &'a str,
        request: &'a mut reqwest::Request,
    ) -> BoxFuture<'a, Result<(), CredentialError>>;

    /// Whether any credential was renewed.
    fn renew(&self) -> BoxFuture<'_, bool>;
}

impl Authorize for () {
    fn authorize<'a>(&'a self, _: &'a str, _: &'a mut reqwest::Request) -> BoxFuture<'a, Result<(), CredentialError>> {
        Box::pin(std::future::ready(Ok(())))
    }

    fn renew(&self) -> BoxFuture<'_, bool> {
        Box::pin(std::future::ready(false))
    }
}
