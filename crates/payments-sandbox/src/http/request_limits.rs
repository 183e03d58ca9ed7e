//! Bounds on one request, checked before routing: the URI's length, the headers' size, the
//! body's size (declared, then read), and the time the body may take to arrive. Each refusal is
//! the error object, and the connection is closed after it (what the client was sending is left
//! unread).

use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use payments_server::ApiError;
use payments_server::runtime::{BODY_LIMIT, too_large};

/// The largest request head (request line and headers) read; a longer one is answered `431`.
/// The read buffer starts at 8 KiB and grows to this only for a head that needs it.
pub(crate) const MAX_HEAD: usize = 64 * 1024;

/// The longest path and query accepted; a longer one is answered `414`.
pub const MAX_URI: usize = 8 * 1024;

/// A request refused on what its head says: a URI over [`MAX_URI`] (`414`), headers over
/// [`MAX_HEAD`] (`431`), or a declared body over [`BODY_LIMIT`] (`413`).
pub fn refusal(request: &Request) -> Option<Response> {
    let uri_length = request.uri().path_and_query().map_or(0, |target| target.as_str().len());
    if uri_length > MAX_URI {
        return Some(closing(ApiError::new(
            StatusCode::URI_TOO_LONG,
            format!("URI too long: {uri_length} bytes of path and query, at most {MAX_URI}"),
        )));
    }
    // hyper refuses a head over its read buffer's limit only when a read ends past it; one
    // that arrives whole in a last read gets through, so the limit is checked here as well.
    let header_bytes: usize = request.headers().iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if header_bytes > MAX_HEAD {
        return Some(closing(ApiError::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            format!("Request headers too large: {header_bytes} bytes of headers, at most {MAX_HEAD}"),
        )));
    }
    (axum::body::HttpBody::size_hint(request.body()).lower() > BODY_LIMIT as u64).then(|| closing(too_large()))
}

/// The request with its body read in full, within `body_timeout` (`408` when it does not
/// arrive in time) and [`BODY_LIMIT`] (`413`), so no handler waits on a slow client. A request
/// declaring no body (every GET) is given back as it is, without waiting.
pub async fn with_body(request: Request, body_timeout: Duration) -> Result<Request, Response> {
    if axum::body::HttpBody::size_hint(request.body()).exact() == Some(0) {
        return Ok(request);
    }
    let (parts, body) = request.into_parts();
    match tokio::time::timeout(body_timeout, Limited::new(body, BODY_LIMIT).collect()).await {
        Ok(Ok(collected)) => Ok(Request::from_parts(parts, Body::from(collected.to_bytes()))),
        Ok(Err(error)) if error.is::<LengthLimitError>() => Err(closing(too_large())),
        Ok(Err(error)) => Err(closing(ApiError::bad_request(format!("the request body could not be read ({error})")))),
        Err(_) => Err(closing(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!("Request timeout: the body did not arrive within {} seconds", body_timeout.as_secs_f64()),
        ))),
    }
}

fn closing(error: ApiError) -> Response {
    let mut response = error.into_response();
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
