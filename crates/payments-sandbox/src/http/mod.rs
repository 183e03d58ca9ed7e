//! The HTTP side: the generated router around [`api::Api`] (which only maps requests and
//! answers to and from the domain), the hosted payment page, the documentation, the layers
//! every request passes (request id, trace span, CORS, request bounds, the failed
//! authentication limit), the connection layer under them all ([`serve`]), and the freed memory
//! it gives back ([`memory`]).

pub mod api;
pub mod auth_failures;
pub mod docs;
pub mod memory;
mod parse_errors;
pub mod paypage;
pub mod request_limits;
pub mod serve;

use std::num::NonZeroU32;
use std::sync::Arc;

// The id the layers below set is the one each operation's `RequestContext` reads.
use payments_server::runtime::REQUEST_ID;
use tower_http::cors::{Any, CorsLayer};
use tower_http::request_id::{MakeRequestId, PropagateRequestIdLayer, RequestId, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};

use crate::domain::Sandbox;

/// A version-4 UUID for each request that comes without an id, from the thread's random
/// generator: `Uuid::new_v4` asks the kernel (`getrandom`) every time, a system call per
/// request that profiles showed; an id needs to be unique, not secret.
#[derive(Clone, Copy)]
struct RandomRequestId;

impl MakeRequestId for RandomRequestId {
    fn make_request_id<B>(&mut self, _: &axum::http::Request<B>) -> Option<RequestId> {
        let id = uuid::Builder::from_random_bytes(rand::random()).into_uuid();
        axum::http::HeaderValue::from_str(id.hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()))
            .ok()
            .map(RequestId::new)
    }
}

/// The whole HTTP surface: the generated API router around `sandbox`, the hosted payment page,
/// the documentation, and a request id and trace span for every request.
pub fn app(sandbox: Sandbox, rate_limit: Option<NonZeroU32>, limits: &serve::Limits) -> Result<axum::Router, String> {
    let docs = docs::routes(sandbox.public_url())?;
    let mut app = paypage::routes(sandbox.clone())
        .merge(docs)
        .merge(payments_server::router(Arc::new(api::Api::new(sandbox.clone(), rate_limit))));
    if let Some(per_minute) = limits.failed_authentications_per_minute {
        let failures = auth_failures::AuthFailures::new(sandbox, per_minute);
        app = app.layer(axum::middleware::from_fn_with_state(failures, auth_failures::limit));
    }
    Ok(app.layer(axum::middleware::from_fn_with_state(limits.body_timeout, request_limits::bounded)).layer(
        tower::ServiceBuilder::new()
            .layer(SetRequestIdLayer::new(REQUEST_ID, RandomRequestId))
            .layer(
                TraceLayer::new_for_http()
                    .make_span_with(|request: &axum::http::Request<_>| {
                        let id = request.headers().get(REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
                        tracing::info_span!("request", id, method = %request.method(), path = %request.uri().path())
                    })
                    // One line per request, with its status and latency, inside its span.
                    .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
            )
            .layer(PropagateRequestIdLayer::new(REQUEST_ID))
            // Browsers may call the API from other origins (the static reference opened from
            // disk, a test page): credentials are bearer tokens, never cookies.
            .layer(
                CorsLayer::new()
                    .allow_origin(Any)
                    .allow_methods(Any)
                    .allow_headers(Any)
                    .expose_headers([REQUEST_ID, axum::http::header::RETRY_AFTER]),
            ),
    ))
}
