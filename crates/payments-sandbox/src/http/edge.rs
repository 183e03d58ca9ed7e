//! The edge: what every request passes on its way to the router, and every answer on its way
//! out, in one pass: the request's id, the bounds on its size and time
//! ([`super::request_limits`]), the failed-authentication limit ([`super::auth_failures`]),
//! CORS, and its line in the access log.
//!
//! Why one hand-written pass instead of a stack of tower layers (tower-http's request id, trace
//! and CORS layers, and two `from_fn` middlewares): each layer cloned the service under it and
//! boxed a future of its own, the trace layer made a span per request, and CORS built a header
//! map per request. Measured on `GET /currencies` (server CPU per request, 16 connections,
//! 2 cores): see ARCHITECTURE.md, "Where the time goes".

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
// The id set here is the one each operation's `RequestContext` reads.
use payments_server::runtime::REQUEST_ID;

use super::auth_failures::AuthFailures;
use super::request_limits;

/// The HTTP surface behind the edge, and what the edge holds requests to.
#[derive(Clone)]
pub struct Edge {
    shared: Arc<Shared>,
}

struct Shared {
    router: axum::Router,
    body_timeout: Duration,
    auth_failures: Option<AuthFailures>,
}

/// Browsers may call the API from other origins (the static reference opened from disk, a test
/// page): credentials are bearer tokens, never cookies, so any origin may, and every answer
/// says so the same way whatever the request's `Origin` (so no `Vary` is needed).
const ANY: HeaderValue = HeaderValue::from_static("*");
/// What a script on another origin may read of an answer besides the safelisted headers.
const EXPOSED: HeaderValue = HeaderValue::from_static("x-request-id,retry-after");

impl Edge {
    pub fn new(router: axum::Router, body_timeout: Duration, auth_failures: Option<AuthFailures>) -> Self {
        Self { shared: Arc::new(Shared { router, body_timeout, auth_failures }) }
    }

    /// Answers `request`, which came from `peer`.
    pub async fn handle(&self, peer: SocketAddr, mut request: Request) -> Response {
        let started = Instant::now();
        let id = request_id(&mut request);
        let method = request.method().clone();
        let uri = request.uri().clone();
        let mut response = if method == Method::OPTIONS {
            // Every OPTIONS is a CORS preflight: no operation answers OPTIONS.
            preflight(&request)
        } else {
            let mut response = ANSWERING.scope(id.clone(), self.shared.respond(peer, request)).await;
            let headers = response.headers_mut();
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, ANY);
            headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSED);
            response
        };
        let status = response.status().as_u16();
        tracing::info!(
            target: "payments_sandbox::access",
            id = id.to_str().unwrap_or("-"),
            method = method.as_str(),
            path = uri.path(),
            status,
            latency_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
            "request"
        );
        response.headers_mut().entry(REQUEST_ID).or_insert(id);
        response
    }
}

impl Shared {
    async fn respond(&self, peer: SocketAddr, request: Request) -> Response {
        if let Some(refused) = request_limits::refusal(&request) {
            return refused;
        }
        let request = match request_limits::with_body(request, self.body_timeout).await {
            Ok(request) => request,
            Err(refused) => return refused,
        };
        let address = peer.ip();
        if let Some(refused) = self.auth_failures.as_ref().and_then(|limits| limits.refusal(address, &request)) {
            return refused;
        }
        let response = match tower::ServiceExt::oneshot(self.router.clone(), request).await {
            Ok(response) => response,
            Err(never) => match never {},
        };
        if response.status() == StatusCode::UNAUTHORIZED
            && let Some(limits) = &self.auth_failures
        {
            limits.failed(address);
        }
        response
    }
}

tokio::task_local! {
    /// The id of the request the task is answering.
    static ANSWERING: HeaderValue;
}

/// The id of the request being answered, for a log line written while answering it (the access
/// log's line for the request comes after, with the same id).
pub fn request_id_answered() -> String {
    ANSWERING.try_with(|id| id.to_str().unwrap_or("-").to_owned()).unwrap_or_else(|_| "-".to_owned())
}

/// The request's id: the `x-request-id` it came with, or a new one set on it (also in place of
/// one that is not visible ASCII, which could not be shown in a log line as it came).
fn request_id(request: &mut Request) -> HeaderValue {
    if let Some(given) = request.headers().get(&REQUEST_ID).filter(|given| given.to_str().is_ok()) {
        return given.clone();
    }
    let id = new_request_id();
    request.headers_mut().insert(REQUEST_ID, id.clone());
    id
}

/// A version-4 UUID from the thread's random generator: `Uuid::new_v4` asks the kernel
/// (`getrandom`) every time, a system call per request; an id needs to be unique, not secret.
fn new_request_id() -> HeaderValue {
    let id = uuid::Builder::from_random_bytes(rand::random()).into_uuid();
    let mut text = uuid::Uuid::encode_buffer();
    HeaderValue::from_str(id.hyphenated().encode_lower(&mut text)).expect("a UUID is a header value")
}

/// The answer to a CORS preflight: any origin and method, and the headers asked for. The
/// headers are named back rather than allowed with `*`, which by the Fetch standard does not
/// cover `Authorization`, the one header every call of this API needs.
fn preflight(request: &Request) -> Response {
    let allow = [(header::ACCESS_CONTROL_ALLOW_ORIGIN, ANY), (header::ACCESS_CONTROL_ALLOW_METHODS, ANY)];
    let mut response = (StatusCode::OK, allow).into_response();
    let headers = response.headers_mut();
    if let Some(asked) = request.headers().get(header::ACCESS_CONTROL_REQUEST_HEADERS) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, asked.clone());
    }
    headers.insert(header::VARY, HeaderValue::from_static("access-control-request-headers"));
    response
}
