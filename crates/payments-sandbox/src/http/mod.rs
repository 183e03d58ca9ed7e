//! The HTTP side: the generated router around [`api::Api`] (which only maps requests and
//! answers to and from the domain), the hosted payment page, the documentation, the edge every
//! request passes ([`edge`]: request id, request bounds, the failed authentication limit, CORS,
//! the access log), the connection layer under them all ([`serve`]), and the freed memory it
//! gives back ([`memory`]).

pub mod api;
pub mod auth_failures;
pub mod client_address;
pub mod docs;
pub mod edge;
pub mod health;
pub mod memory;
mod parse_errors;
pub mod paypage;
pub mod request_limits;
pub mod serve;
pub mod shares;

use std::num::NonZeroU32;
use std::sync::Arc;

use crate::domain::Sandbox;

/// The whole HTTP surface: the generated API router around `sandbox`, the hosted payment page
/// and the documentation, behind the [`edge::Edge`] every request passes.
pub fn app(
    sandbox: Sandbox,
    rate_limit: Option<NonZeroU32>,
    limits: &serve::Limits,
) -> Result<edge::Edge, crate::StartError> {
    let docs = docs::routes(sandbox.public_url())?;
    let router = paypage::routes(sandbox.clone())
        .merge(docs)
        .merge(health::routes(sandbox.clone()))
        .merge(payments_server::router(Arc::new(api::Api::new(sandbox.clone(), rate_limit))));
    let auth_failures = limits
        .failed_authentications_per_minute
        .map(|per_minute| auth_failures::AuthFailures::new(sandbox, per_minute));
    Ok(edge::Edge::new(
        router,
        limits.body_timeout,
        auth_failures,
        limits.trusted_proxies.clone(),
        limits.connections_per_address,
    ))
}
