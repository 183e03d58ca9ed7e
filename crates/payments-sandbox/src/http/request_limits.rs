//! Bounds on one request, checked before routing: the URI's length, the headers' size, the
//! body's size (declared, then read), and the time the body may take to arrive. Each refusal is
//! the error object, and the connection is closed after it (what the client was sending is left
//! unread).

use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use payments_server::ApiError;
use payments_server::runtime::{BODY_LIMIT, too_large};

use super::serve::MAX_HEAD;

/// The longest path and query accepted; a longer one is answered `414`.
pub const MAX_URI: usize = 8 * 1024;

/// Refuses a URI over [`MAX_URI`], and reads the body within `body_timeout` (`408` when it
/// does not arrive in time) and [`BODY_LIMIT`] (`413`), so no handler waits on a slow client.
pub async fn bounded(State(body_timeout): State<Duration>, request: Request, next: Next) -> Response {
    let uri_length = request.uri().path_and_query().map_or(0, |target| target.as_str().len());
    if uri_length > MAX_URI {
        return closing(ApiError::new(
            StatusCode::URI_TOO_LONG,
            format!("URI too long: {uri_length} bytes of path and query, at most {MAX_URI}"),
        ));
    }
    // hyper refuses a head over its read buffer's limit only when a read ends past it; one
    // that arrives whole in a last read gets through, so the limit is checked here as well.
    let header_bytes: usize = request.headers().iter().map(|(name, value)| name.as_str().len() + value.len() + 4).sum();
    if header_bytes > MAX_HEAD {
        return closing(ApiError::new(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            format!("Request headers too large: {header_bytes} bytes of headers, at most {MAX_HEAD}"),
        ));
    }
    // The body's size as declared (`Content-Length`): most requests (every GET) have none, so
    // there is nothing to wait for; one declared over the limit is refused before it is read.
    let declared = axum::body::HttpBody::size_hint(request.body());
    if declared.exact() == Some(0) {
        return next.run(request).await;
    }
    if declared.lower() > BODY_LIMIT as u64 {
        return closing(too_large());
    }
    let (parts, body) = request.into_parts();
    match tokio::time::timeout(body_timeout, Limited::new(body, BODY_LIMIT).collect()).await {
        Ok(Ok(collected)) => next.run(Request::from_parts(parts, Body::from(collected.to_bytes()))).await,
        Ok(Err(error)) if error.is::<LengthLimitError>() => closing(too_large()),
        Ok(Err(error)) => closing(ApiError::bad_request(format!("the request body could not be read ({error})"))),
        Err(_) => closing(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!("Request timeout: the body did not arrive within {} seconds", body_timeout.as_secs_f64()),
        )),
    }
}

fn closing(error: ApiError) -> Response {
    let mut response = error.into_response();
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}
