//! Why the domain refuses or fails a request. The HTTP side turns each kind into its status
//! (`400`, `404`, `409`, `500`); the message is the caller's to read.

use payments_store::StoreError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The request breaks a rule (`400`); the message says which.
    Invalid(String),
    /// No such resource for this caller (`404`): another tenant's answers exactly like none.
    NotFound(String),
    /// The resource's state forbids it, or an idempotency key was used by another request
    /// (`409`).
    Conflict(String),
    /// Something failed that the caller can do nothing about (`500`); the detail is for the log.
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn invalid(message: impl std::fmt::Display) -> Self {
        Self::Invalid(message.to_string())
    }

    pub fn not_found(message: impl std::fmt::Display) -> Self {
        Self::NotFound(message.to_string())
    }

    pub fn conflict(message: impl std::fmt::Display) -> Self {
        Self::Conflict(message.to_string())
    }

    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::Internal(message.to_string())
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Invalid(m) => write!(f, "invalid: {m}"),
            Self::NotFound(m) => write!(f, "not found: {m}"),
            Self::Conflict(m) => write!(f, "conflict: {m}"),
            Self::Internal(m) => write!(f, "internal: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// A store answer the operation did not expect is a failure; the ones it expects (a cursor
/// not in the list, a debit not covered, a key taken, a state that moved) are handled where
/// they can happen.
impl From<StoreError> for Error {
    fn from(error: StoreError) -> Self {
        Self::Internal(error.to_string())
    }
}

/// For list operations: a `starting_after` that is not in the list is the caller's mistake.
pub fn listing(noun: &'static str) -> impl Fn(StoreError) -> Error {
    move |error| match error {
        StoreError::UnknownCursor(id) => Error::invalid(format!("starting_after: {id} is not a {noun} in this list")),
        other => other.into(),
    }
}
