//! A document's error object: how a server writes an [`ApiError`] in the schema that document's
//! error responses share. The generator finds it and writes it as each server crate's
//! `ERROR_OBJECT` (its rule: `model/error_object.rs`); the router's last layer writes every
//! refusal in it. [`PROBLEM_DETAILS`] (RFC 9457) is for a document that has none.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use super::ApiError;

/// An error object: JSON text with an error's parts in their places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorObject {
    /// The media type the document gives it.
    pub media: &'static str,
    pub parts: &'static [ErrorPart],
}

/// A piece of an [`ErrorObject`]'s text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorPart {
    /// JSON text, as it is.
    Text(&'static str),
    /// The error's message, a JSON string.
    Message,
    /// The error's message cut to so many characters (the schema's `maxLength`).
    MessageUpTo(usize),
    /// Its status, a JSON number.
    Status,
    /// Its status as a JSON string (`"404"`).
    StatusText,
    /// Its status's reason phrase (`"Not Found"`).
    Reason,
}

/// The statuses an operation's own error object is for: as its responses are keyed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorStatus {
    Code(u16),
    /// `4XX`, `5XX`.
    Class(u16),
    Default,
}

/// An operation's answer, its errors written in the objects its own responses give their
/// statuses (`objects`, each for a status, a class or `default`) rather than the document's.
pub async fn written_in<F>(objects: &'static [(ErrorStatus, ErrorObject)], answer: F) -> Result<Response, ApiError>
where
    F: Future<Output = Result<Response, ApiError>>,
{
    answer.await.map_err(|error| error.written_in(objects))
}

/// An operation's answer, its refusals given the statuses the operation documents for them
/// ([`ApiError::refused_as`]).
pub async fn refused_as<F>(invalid: u16, ids_not_found: bool, answer: F) -> Result<Response, ApiError>
where
    F: Future<Output = Result<Response, ApiError>>,
{
    let invalid = axum::http::StatusCode::from_u16(invalid).unwrap_or(axum::http::StatusCode::BAD_REQUEST);
    answer.await.map_err(|error| error.refused_as(invalid, ids_not_found))
}

/// The object of `objects` for `status`: its code's, else its class's, else `default`'s.
pub(crate) fn object_for(objects: &'static [(ErrorStatus, ErrorObject)], status: u16) -> Option<&'static ErrorObject> {
    let find = |wanted: ErrorStatus| objects.iter().find(|(at, _)| *at == wanted).map(|(_, object)| object);
    find(ErrorStatus::Code(status))
        .or_else(|| find(ErrorStatus::Class(status / 100)))
        .or_else(|| find(ErrorStatus::Default))
}

/// RFC 9457 problem details, `{"title":…,"status":…,"detail":…}`: what [`ApiError`] writes
/// until a router writes it in its document's error object.
pub const PROBLEM_DETAILS: ErrorObject = ErrorObject {
    media: "application/problem+json",
    parts: &[
        ErrorPart::Text("{\"title\":"),
        ErrorPart::Reason,
        ErrorPart::Text(",\"status\":"),
        ErrorPart::Status,
        ErrorPart::Text(",\"detail\":"),
        ErrorPart::Message,
        ErrorPart::Text("}"),
    ],
};

impl ErrorObject {
    /// `error` in this object, as JSON: for writers below axum (the connection layer).
    pub fn body(&self, error: &ApiError) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + error.message().len());
        let string = |out: &mut Vec<u8>, text: &str| {
            serde_json::to_writer(&mut *out, text).expect("a string serialises");
        };
        for part in self.parts {
            match part {
                ErrorPart::Text(text) => out.extend_from_slice(text.as_bytes()),
                ErrorPart::Message => string(&mut out, error.message()),
                ErrorPart::MessageUpTo(longest) => {
                    let message = error.message();
                    let cut = message.char_indices().nth(*longest).map_or(message.len(), |(at, _)| at);
                    string(&mut out, &message[..cut]);
                }
                ErrorPart::Status => out.extend_from_slice(error.status().as_str().as_bytes()),
                ErrorPart::StatusText => string(&mut out, error.status().as_str()),
                ErrorPart::Reason => string(&mut out, error.status().canonical_reason().unwrap_or("Error")),
            }
        }
        out
    }

    /// `error` answered in this object, with its `WWW-Authenticate` and `Retry-After`.
    pub fn response(&self, error: &ApiError) -> Response {
        let body = self.body(error);
        let mut response = error.headed((error.status(), body).into_response());
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(self.media));
        response
    }

    /// `response` with the [`ApiError`] it carries (it was [`ApiError::into_response`]) written
    /// in this object instead of problem details; any other response as it is.
    /// An operation's own object for the error's status, where its responses give one, is
    /// written instead of this one.
    pub fn rewrite(&self, mut response: Response) -> Response {
        let Some(error) = response.extensions_mut().remove::<ApiError>() else { return response };
        let object = error.own_object().unwrap_or(self);
        if *object == PROBLEM_DETAILS {
            return response;
        }
        let (mut parts, _) = response.into_parts();
        parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(object.media));
        parts.headers.remove(header::CONTENT_LENGTH);
        Response::from_parts(parts, axum::body::Body::from(object.body(&error)))
    }
}
