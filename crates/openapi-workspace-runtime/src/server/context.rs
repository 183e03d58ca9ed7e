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

/// What a handler answers: the implementation's answer; the mock's (`mock_answer`) when the
/// server mocks and the operation is not implemented; the error object for any other error.
#[inline]
pub fn or_mock<T: IntoResponse>(
    output: Result<T, ApiError>,
    mock: bool,
    mock_answer: impl FnOnce() -> Response,
) -> Result<Response, ApiError> {
    match output {
        Ok(output) => Ok(output.into_response()),
        Err(error) if mock && error.is_not_implemented() => Ok(mock_answer()),
        Err(error) => Err(error),
    }
}

/// A mock answer (the generated `mock_router`'s, for an operation not implemented): `status`,
/// `body` of `content_type` when there is one, and the response's required `headers`.
pub fn mock_response(
    status: u16,
    content_type: Option<&str>,
    body: impl IntoResponse,
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

/// A mock answer offered in several media types (`offered`: each content type and body, the
/// document's JSON first): the one the request's `accept` prefers, else the first.
pub fn mock_negotiated(
    status: u16,
    offered: &[(&'static str, &'static str)],
    accept: Option<&HeaderValue>,
    headers: &[(&'static str, &'static str)],
) -> Response {
    let chosen = preferred(accept, offered.iter().map(|(content_type, _)| *content_type));
    let (content_type, body) = offered.get(chosen).copied().unwrap_or(("application/octet-stream", ""));
    mock_response(status, Some(content_type), body, headers)
}

/// Which of `offered` (media types) an `Accept` header prefers: the one of highest quality, its
/// quality that of the most specific range matching it (`text/event-stream` before `text/*`
/// before `*/*`), the earlier on a tie; the first when `Accept` is absent or accepts none of them.
pub fn preferred<'a>(accept: Option<&HeaderValue>, offered: impl Iterator<Item = &'a str>) -> usize {
    let Some(accept) = accept.and_then(|value| value.to_str().ok()) else { return 0 };
    let ranges: Vec<(String, f32)> = accept
        .split(',')
        .map(|item| {
            let mut parts = item.split(';');
            let range = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let quality = parts
                .filter_map(|p| p.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok()))
                .next()
                .unwrap_or(1.0);
            (range, quality)
        })
        .collect();
    let quality = |offered: &str| {
        let essence = offered.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
        let kind = essence.split('/').next().unwrap_or_default().to_owned();
        ranges
            .iter()
            .filter_map(|(range, quality)| {
                let specificity = match range.as_str() {
                    range if range == essence => 3,
                    "*/*" => 1,
                    range if range.strip_suffix("/*") == Some(kind.as_str()) => 2,
                    _ => return None,
                };
                Some((specificity, *quality))
            })
            .max_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)))
            .map_or(0.0, |(_, quality)| quality)
    };
    let mut best = (0, 0.0f32);
    for (index, media) in offered.enumerate() {
        let quality = quality(media);
        if quality > best.1 {
            best = (index, quality);
        }
    }
    best.0
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

#[cfg(test)]
mod tests {
    use super::*;

    fn chosen(accept: Option<&'static str>) -> usize {
        let accept = accept.map(HeaderValue::from_static);
        preferred(accept.as_ref(), ["application/json", "text/event-stream"].into_iter())
    }

    #[test]
    fn the_most_specific_range_decides_each_offer_and_the_best_wins() {
        assert_eq!(chosen(None), 0);
        assert_eq!(chosen(Some("text/event-stream")), 1);
        assert_eq!(chosen(Some("application/json")), 0);
        assert_eq!(chosen(Some("*/*")), 0, "a tie goes to the document's first");
        assert_eq!(chosen(Some("text/*, application/json;q=0.5")), 1);
        assert_eq!(chosen(Some("text/event-stream;q=0.2, */*;q=0.9")), 0);
        assert_eq!(chosen(Some("text/event-stream, application/json;q=0")), 1);
        assert_eq!(chosen(Some("image/png")), 0, "nothing acceptable: the first");
        assert_eq!(chosen(Some("TEXT/Event-Stream; q=1")), 1);
    }
}
