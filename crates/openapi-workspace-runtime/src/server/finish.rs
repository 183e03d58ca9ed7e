//! The last layer of every router: every refusal written in the document's error object (an
//! `ApiError`, axum's own rejections, a body declared too large).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::bodies::is_json;
use super::responses::Documented;
use super::{ApiError, BODY_LIMIT, ErrorObject, too_large};

/// What the generated `router` adds around the operations (which include its fallback for
/// unknown paths): a body declared over the limit refused before any of it is read; a `401`
/// without `WWW-Authenticate` given `challenge`, the document's (an operation's own `401`s
/// carry its challenge already; empty when the document defines no scheme); every `ApiError`
/// written in `error_object`, the document's; and a last line of defence that turns any other
/// error response not in JSON into it, keeping its status and headers (but for an error the
/// document itself gives in another media type, answered through [`raw_response`]). The limit itself is [`read_body`]'s (and the
/// multipart reader's), not axum's `DefaultBodyLimit`, which would add an extension to every
/// request for extractors the handlers do not use.
pub fn finish_router(
    router: axum::Router,
    challenge: &'static str,
    error_object: &'static ErrorObject,
) -> axum::Router {
    router.layer(Finish(challenge, error_object))
}

/// [`finish_router`]'s layer: one service of its own around each route rather than axum's
/// `from_fn` and `map_response`, each of which clones the route under it and boxes a future per
/// request.
#[derive(Debug, Clone, Copy)]
struct Finish(&'static str, &'static ErrorObject);

impl<S> tower::Layer<S> for Finish {
    type Service = Finished<S>;

    fn layer(&self, inner: S) -> Finished<S> {
        Finished(inner, self.0, self.1)
    }
}

#[derive(Debug, Clone)]
struct Finished<S>(S, &'static str, &'static ErrorObject);

impl<S> tower::Service<axum::extract::Request> for Finished<S>
where
    S: tower::Service<axum::extract::Request, Response = Response, Error = std::convert::Infallible>,
    S::Future: Send + Unpin + 'static,
{
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = Answer<S::Future>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: axum::extract::Request) -> Answer<S::Future> {
        match declared_oversize(&request, self.2) {
            Some(refused) => Answer::Refused(Some(refused)),
            None => Answer::Answering(self.0.call(request), self.1, self.2),
        }
    }
}

/// [`Finished`]'s future: the route's answer, made uniform. Boxed only to rewrite an error
/// whose body is not the error object (which must be read first: a rejection of axum's own),
/// not for every request.
enum Answer<F> {
    Refused(Option<Response>),
    /// The route's answer, the document's challenge and error object.
    Answering(F, &'static str, &'static ErrorObject),
    Rewriting(std::pin::Pin<Box<dyn Future<Output = Response> + Send>>),
}

impl<F> Future for Answer<F>
where
    F: Future<Output = Result<Response, std::convert::Infallible>> + Unpin,
{
    type Output = Result<Response, std::convert::Infallible>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        use std::task::Poll;
        loop {
            match &mut *self {
                Answer::Refused(refused) => return Poll::Ready(Ok(refused.take().expect("polled once answered"))),
                Answer::Answering(answering, challenge, error_object) => {
                    let Poll::Ready(Ok(response)) = std::pin::Pin::new(answering).poll(cx) else {
                        return Poll::Pending;
                    };
                    let mut response = error_object.rewrite(response);
                    if response.status() == StatusCode::UNAUTHORIZED && !challenge.is_empty() {
                        let challenge = HeaderValue::from_static(challenge);
                        response.headers_mut().entry(header::WWW_AUTHENTICATE).or_insert(challenge);
                    }
                    if uniform(&response) {
                        return Poll::Ready(Ok(response));
                    }
                    let error_object = *error_object;
                    *self = Answer::Rewriting(Box::pin(uniform_errors(response, error_object)));
                }
                Answer::Rewriting(rewriting) => return rewriting.as_mut().poll(cx).map(Ok),
            }
        }
    }
}

/// Whether `response` is as [`uniform_errors`] leaves it: a success, or an error in the error
/// object (or in a media type the document gives it).
fn uniform(response: &Response) -> bool {
    let status = response.status();
    !(status.is_client_error() || status.is_server_error())
        || is_json(response.headers())
        || response.extensions().get::<Documented>().is_some()
}

/// A body whose declared length is over the limit is refused before any of it is read: `413`
/// with the error object at once, instead of waiting for bytes that will be refused anyway. The
/// connection is closed, since the body is left unread on it.
fn declared_oversize(request: &axum::extract::Request, error_object: &ErrorObject) -> Option<Response> {
    let declared = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_none_or(|length| length <= BODY_LIMIT as u64) {
        return None;
    }
    // A multipart body is read as it streams, under limits of its own (`multipart`).
    const MULTIPART: &str = "multipart/form-data";
    let content_type = request.headers().get(header::CONTENT_TYPE).map(|v| v.as_bytes().trim_ascii_start());
    if content_type
        .is_some_and(|v| v.len() >= MULTIPART.len() && v[..MULTIPART.len()].eq_ignore_ascii_case(MULTIPART.as_bytes()))
    {
        return None;
    }
    let mut response = error_object.response(&too_large());
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    Some(response)
}

/// `response` (not [`uniform`]) in the error object.
async fn uniform_errors(response: Response, error_object: &ErrorObject) -> Response {
    let status = response.status();
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, BODY_LIMIT).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let message = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            let allowed = parts.headers.get(header::ALLOW).and_then(|v| v.to_str().ok()).unwrap_or("");
            format!("Method not allowed; this path allows {allowed}")
        }
        StatusCode::PAYLOAD_TOO_LARGE => too_large().message,
        _ if !text.is_empty() => text,
        _ => status.canonical_reason().unwrap_or("Error").to_string(),
    };
    parts.headers.remove(header::CONTENT_TYPE);
    parts.headers.remove(header::CONTENT_LENGTH);
    let mut converted = error_object.response(&ApiError::new(status, message));
    for (name, value) in parts.headers.iter() {
        converted.headers_mut().entry(name).or_insert(value.clone());
    }
    converted
}
