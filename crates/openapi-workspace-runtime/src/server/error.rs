//! The error every operation and the router answer with: a status and a message, written in
//! the document's error object (`error_object.rs`).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{ErrorObject, ErrorStatus, PROBLEM_DETAILS};

/// A failed request: an HTTP status and a message. Answered as RFC 9457 problem details, which
/// the router's last layer writes again in its document's error object (`ERROR_OBJECT`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    pub(crate) message: String,
    retry_after: Option<u64>,
    /// A `401`'s `WWW-Authenticate`: the challenges of the schemes the operation takes.
    challenge: Option<&'static str>,
    /// The error objects of the operation's own responses (`written_in`).
    objects: Option<&'static [(ErrorStatus, ErrorObject)]>,
    /// A path's text that names nothing (not an id at all, `path::Id`, or no item the mock
    /// keeps): `404`, unless the operation documents no such status (`refused_as`).
    names_nothing: bool,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            retry_after: None,
            challenge: None,
            objects: None,
            names_nothing: false,
        }
    }

    /// `404` for a path's text that names nothing: not an id at all, or an id of no item.
    pub fn names_nothing(message: impl std::fmt::Display) -> Self {
        Self { names_nothing: true, ..Self::not_found(message) }
    }

    /// The same error with the status its operation documents for it: a refusal (`400`) as
    /// `invalid` (`422` where the operation documents that and not `400`: FastAPI's validation
    /// errors), and a path's text that names nothing as `invalid` too where it documents no `404`.
    pub fn refused_as(self, invalid: StatusCode, ids_not_found: bool) -> Self {
        let moved = self.status == StatusCode::BAD_REQUEST || (self.names_nothing && !ids_not_found);
        match moved {
            true => Self { status: invalid, ..self },
            false => self,
        }
    }

    /// `400`: the request breaks a rule; `message` says which.
    pub fn bad_request(message: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::BAD_REQUEST, format!("Invalid request: {message}"))
    }

    /// `401`: no credential, or one that is not valid.
    pub fn unauthorized() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "Missing or invalid credential: send Authorization: Bearer <token>")
    }

    /// `404`: no such resource for this caller.
    pub fn not_found(message: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::NOT_FOUND, format!("Not found: {message}"))
    }

    /// `409`: an id already used by a different request, or a state change the state forbids.
    pub fn conflict(message: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::CONFLICT, format!("Conflict: {message}"))
    }

    /// `429`: rate limited; the caller may retry after `seconds`.
    pub fn too_many_requests(seconds: u64) -> Self {
        let unit = if seconds == 1 { "second" } else { "seconds" };
        Self::new(StatusCode::TOO_MANY_REQUESTS, format!("Too many requests: retry after {seconds} {unit}"))
            .retry_after(seconds)
    }

    /// `401` for a request that presented none of the credentials an operation takes;
    /// `challenge` is the `WWW-Authenticate` that names them, `send` what to send.
    pub fn unauthorized_for(challenge: &'static str, send: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, format!("Missing or invalid credential: send {send}"))
            .with_challenge(challenge)
    }

    /// The same error, a `401` naming `challenge` in `WWW-Authenticate` (the router sets the
    /// operation's on an implementation's `401`s).
    pub fn with_challenge(self, challenge: &'static str) -> Self {
        Self { challenge: Some(challenge), ..self }
    }

    /// The same error, written in `objects` (an operation's own error objects, each for a status,
    /// a class or `default`) where one is for its status, rather than the document's.
    pub fn written_in(self, objects: &'static [(ErrorStatus, ErrorObject)]) -> Self {
        Self { objects: Some(objects), ..self }
    }

    /// The operation's own object for this error's status, if it has one.
    pub(crate) fn own_object(&self) -> Option<&'static ErrorObject> {
        super::error_object::object_for(self.objects?, self.status.as_u16())
    }

    /// The same error, answered with `Retry-After: <seconds>`.
    pub fn retry_after(self, seconds: u64) -> Self {
        Self { retry_after: Some(seconds), ..self }
    }

    /// `500`: an unexpected failure. The detail is for the server's log, not the caller.
    pub fn internal() -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal error")
    }

    /// Whether this is the `501` an operation answers until it is implemented.
    pub fn is_not_implemented(&self) -> bool {
        self.status == StatusCode::NOT_IMPLEMENTED
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// `response` with this error's `WWW-Authenticate` and `Retry-After`.
    pub(crate) fn headed(&self, mut response: Response) -> Response {
        // Without one, the router's last layer gives the document's (`finish_router`).
        if let Some(challenge) = self.challenge.filter(|_| self.status == StatusCode::UNAUTHORIZED) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
        }
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    /// Problem details, the error kept in the response's extensions for the router's last layer
    /// to write in its document's error object (`ErrorObject::rewrite`).
    fn into_response(self) -> Response {
        let mut response = PROBLEM_DETAILS.response(&self);
        response.extensions_mut().insert(self);
        response
    }
}
