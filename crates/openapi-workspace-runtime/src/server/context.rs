//! What an operation knows of its request besides its parameters ([`RequestContext`]), and
//! the answers the generated code gives before an operation is implemented.

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{ApiError, events};

/// What an operation knows of its request besides its parameters: who is calling (`P`, as the
/// authentication hook found it; `()` for an operation the document leaves unsecured), the
/// request's headers, and its id.
#[derive(Debug, Clone)]
pub struct RequestContext<P> {
    /// The caller.
    pub caller: P,
    /// Every header of the request, as received.
    pub headers: HeaderMap,
    /// The request's extensions, for an operation that answers `101` (a protocol switch): hyper's
    /// `OnUpgrade` is there. Empty for every other operation.
    pub extensions: axum::http::Extensions,
    /// The id [`RequestContext::request_id`] made up, once asked.
    made_up_id: std::sync::OnceLock<String>,
}

/// The header carrying a request's id: the one a layer in front should set and propagate.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

impl<P> RequestContext<P> {
    /// Whether the request's `Accept` prefers server-sent events to JSON (an operation offering
    /// both answers [`events::Negotiated::Events`] then).
    pub fn wants_events(&self) -> bool {
        events::wants_events(&self.headers)
    }

    pub fn new(caller: P, headers: HeaderMap) -> Self {
        Self { caller, headers, extensions: axum::http::Extensions::new(), made_up_id: std::sync::OnceLock::new() }
    }

    /// The request's id: its `x-request-id` header (which a layer in front, or the client, set;
    /// the same id a layer propagating it answers with), or else a new UUID, made when first
    /// asked for (a request nobody asks the id of makes none) and the same on every call.
    pub fn request_id(&self) -> &str {
        match self.headers.get(&REQUEST_ID).and_then(|v| v.to_str().ok()) {
            Some(id) => id,
            None => self.made_up_id.get_or_init(|| uuid::Uuid::new_v4().to_string()),
        }
    }
}

/// `501`: what an operation answers until it is implemented.
pub fn not_implemented(operation_id: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_IMPLEMENTED, format!("Not implemented: {operation_id}"))
}

/// A mock answer (the generated `mock_router`'s, for an operation not implemented): `status`,
/// `body` of `content_type` when there is one, and the response's required `headers`.
pub fn mock_response(
    status: u16,
    content_type: Option<&'static str>,
    body: &'static str,
    headers: &[(&'static str, &'static str)],
) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    let mut response = match content_type {
        Some(content_type) => {
            let mut response = (status, body).into_response();
            if let Ok(value) = HeaderValue::from_str(content_type) {
                response.headers_mut().insert(header::CONTENT_TYPE, value);
            }
            response
        }
        None => status.into_response(),
    };
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// Sets the header `name` (lower case) of `response` to `value`'s text, if there is a value. A
/// value that cannot be a header (a line break in it) is the server's fault: the answer becomes
/// `500`.
pub fn set_header(response: &mut Response, name: &'static str, value: Option<&impl std::fmt::Display>) {
    let Some(value) = value else { return };
    match HeaderValue::try_from(value.to_string()) {
        Ok(value) => {
            response.headers_mut().insert(HeaderName::from_static(name), value);
        }
        Err(_) => *response = ApiError::internal().into_response(),
    }
}
