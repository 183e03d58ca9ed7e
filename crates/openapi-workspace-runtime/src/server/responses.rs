//! Answers: JSON, empty and raw bodies, with their status.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::ApiError;

/// A success response with a JSON body. Written into a plain vector (by `json_writer`, the
/// bytes serde_json writes), which is filled faster than axum's `Json` fills its growable
/// buffer. It starts under 1 KiB: glibc's malloc tidies all its small free blocks before every
/// allocation of 1 KiB or more, which a buffer of 1 KiB for every answer made a cost of every
/// request (`router-bench`, BENCHMARKS.md).
pub fn json_response<T: Serialize>(status: StatusCode, body: &T) -> Response {
    let mut bytes = Vec::with_capacity(512);
    match super::json_writer::write(&mut bytes, body) {
        Ok(()) => {
            (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], bytes).into_response()
        }
        // A model that cannot be written as JSON (a map with non-text keys) is the server's bug.
        Err(_) => ApiError::internal().into_response(),
    }
}

/// A success response without a body.
pub fn empty_response(status: StatusCode) -> Response {
    status.into_response()
}

/// A response body that is not JSON: bytes or a stream, and their media type.
#[derive(Debug)]
pub struct Raw {
    /// The `Content-Type` to answer with; without one, the media type the document gives (or
    /// `application/octet-stream` where it gives a wildcard).
    pub content_type: Option<HeaderValue>,
    pub body: axum::body::Body,
}

impl Raw {
    pub fn new(body: impl Into<axum::body::Body>) -> Self {
        Self { content_type: None, body: body.into() }
    }

    /// The same body, answered as `content_type`.
    pub fn with_content_type(mut self, content_type: HeaderValue) -> Self {
        self.content_type = Some(content_type);
        self
    }
}

/// A response with a [`Raw`] body; `documented` is the media type the document gives.
pub fn raw_response(status: StatusCode, raw: Raw, documented: &'static str) -> Response {
    let content_type = raw.content_type.unwrap_or_else(|| {
        let octets = HeaderValue::from_static("application/octet-stream");
        if documented.contains('*') { octets } else { HeaderValue::from_str(documented).unwrap_or(octets) }
    });
    let mut response = (status, [(header::CONTENT_TYPE, content_type)], raw.body).into_response();
    // An error the document gives in another media type is meant as it is.
    response.extensions_mut().insert(Documented);
    response
}

/// Marks a response the implementation gave as the document says, so [`finish_router`]'s last
/// layer does not turn a non-JSON error of the document's into the error object.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Documented;

/// `answer` with `status` when it is of the class (`4` for `4XX`) the document answers with; the
/// error object's `500` when the implementation answered outside its contract. One call per
/// variant of a class, so that each operation's answers stay a line each in the generated code.
pub fn in_class(status: StatusCode, class: u16, answer: impl FnOnce(StatusCode) -> Response) -> Response {
    if status.as_u16() / 100 == class { answer(status) } else { ApiError::internal().into_response() }
}
