//! The edge: what every request passes on its way to the router, and every answer on its way
//! out, in one pass: the request's id, who the client is ([`super::client_address`]), the
//! bounds on its size and time ([`super::request_limits`]), one `Authorization` header at most,
//! the client's share of requests in flight when it comes through a proxy ([`super::shares`]),
//! the failed-authentication limit ([`super::auth_failures`]), CORS, and its line in the access
//! log.
//!
//! Why one hand-written pass instead of a stack of tower layers (tower-http's request id, trace
//! and CORS layers, and two `from_fn` middlewares): each layer cloned the service under it and
//! boxed a future of its own, the trace layer made a span per request, and CORS built a header
//! map per request. Measured on `GET /currencies` (server CPU per request, 16 connections,
//! 2 cores): see ARCHITECTURE.md, "Where the time goes".

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
// The id set here is the one each operation's `RequestContext` reads.
use payments_server::ApiError;
use payments_server::runtime::REQUEST_ID;

use super::auth_failures::AuthFailures;
use super::client_address::{self, TrustedProxies};
use super::request_limits;
use super::shares::Shares;
use crate::logs::{self, AccessLine};

/// The HTTP surface behind the edge, and what the edge holds requests to.
#[derive(Clone)]
pub struct Edge {
    shared: Arc<Shared>,
}

struct Shared {
    router: axum::Router,
    body_timeout: Duration,
    auth_failures: Option<AuthFailures>,
    proxies: TrustedProxies,
    /// Requests in flight per client, for requests through a trusted proxy.
    proxied: Shares,
}

/// Browsers may call the API from other origins (the static reference opened from disk, a test
/// page): credentials are bearer tokens, never cookies, so any origin may, and every answer
/// says so the same way whatever the request's `Origin` (so no `Vary` is needed).
const ANY: HeaderValue = HeaderValue::from_static("*");
/// What a script on another origin may read of an answer besides the safelisted headers.
const EXPOSED: HeaderValue = HeaderValue::from_static("x-request-id,retry-after");

impl Edge {
    /// `share`: the requests in flight one client may have through a trusted proxy.
    pub fn new(
        router: axum::Router,
        body_timeout: Duration,
        auth_failures: Option<AuthFailures>,
        proxies: TrustedProxies,
        share: usize,
    ) -> Self {
        let proxied = Shares::new(share);
        Self { shared: Arc::new(Shared { router, body_timeout, auth_failures, proxies, proxied }) }
    }

    /// Answers `request`, which came from `peer`.
    pub async fn handle(&self, peer: SocketAddr, request: Request) -> Response {
        let started = Instant::now();
        let id = request_id(&request);
        let client = self.shared.proxies.client(peer.ip(), request.headers());
        let method = request.method().clone();
        let uri = request.uri().clone();
        let mut response = if method == Method::OPTIONS {
            // Every OPTIONS is a CORS preflight: no operation answers OPTIONS.
            preflight(&request)
        } else {
            let response = ANSWERING.scope(id.clone(), self.shared.respond(peer.ip(), client, request)).await;
            // The edge's own refusals (and its layers') in the document's error object, as the
            // router's are.
            let mut response = payments_server::ERROR_OBJECT.rewrite(response);
            let headers = response.headers_mut();
            headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, ANY);
            headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, EXPOSED);
            response
        };
        let status = response.status().as_u16();
        let mut buffer = [0; 15];
        let client = client_address::text(client, &mut buffer);
        let line = AccessLine {
            id: id.to_str().unwrap_or("-"),
            client: &client,
            method: method.as_str(),
            path: uri.path(),
            status,
            latency_us: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        };
        logs::access(&line);
        response.headers_mut().entry(REQUEST_ID).or_insert(id);
        response
    }
}

impl Shared {
    async fn respond(&self, peer: IpAddr, client: IpAddr, request: Request) -> Response {
        if let Some(refused) = request_limits::refusal(&request) {
            return refused;
        }
        if request.headers().get_all(header::AUTHORIZATION).iter().nth(1).is_some() {
            return ApiError::bad_request("More than one Authorization header: send one credential").into_response();
        }
        // Held until answered (a direct client's connections bound its requests already).
        let _in_flight = match self.proxies.trusts(peer) {
            true => match self.proxied.take(client, false) {
                Some(held) => Some(held),
                None => return too_many_in_flight(self.proxied.share()),
            },
            false => None,
        };
        let request = match request_limits::with_body(request, self.body_timeout).await {
            Ok(request) => request,
            Err(refused) => return refused,
        };
        let address = client;
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

fn too_many_in_flight(share: usize) -> Response {
    ApiError::new(
        StatusCode::TOO_MANY_REQUESTS,
        format!("Too many requests in flight from this address: at most {share} at once; retry after 1 second"),
    )
    .retry_after(1)
    .into_response()
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

/// The request's id: the `x-request-id` it came with, or a new one (also in place of one that is
/// not visible ASCII, which could not be shown in a log line as it came). A new one is not set on
/// the request: the sandbox reads the id it answers with from `ANSWERING`
/// ([`request_id_answered`]), no operation asks its context for it, and the insert grew the
/// request's header map on every request (instructions per request, BENCHMARKS.md).
fn request_id(request: &Request) -> HeaderValue {
    match request.headers().get(&REQUEST_ID).filter(|given| given.to_str().is_ok()) {
        Some(given) => given.clone(),
        None => new_request_id(),
    }
}

/// A version-4 UUID: a random 128-bit number per thread, counted up by one for each id. An id
/// needs to be unique, not secret: `Uuid::new_v4` asks the kernel (`getrandom`) every time, a
/// system call per request, and even the thread's random generator costs more than the rest
/// of the id (instructions per request, BENCHMARKS.md). Two threads' ids could meet only if
/// their starting points fell within as many ids of each other as they will ever give.
fn new_request_id() -> HeaderValue {
    thread_local! {
        static NEXT: std::cell::Cell<u128> = std::cell::Cell::new(rand::random());
    }
    let next = NEXT.with(|next| next.replace(next.get().wrapping_add(1)));
    let id = uuid::Builder::from_random_bytes(next.to_be_bytes()).into_uuid();
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
