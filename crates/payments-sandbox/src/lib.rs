//! The payments sandbox: a real payments service implementing the generated
//! `payments_server::Api` on an embedded SQLite database, with simulated payment rails, the
//! hosted payment page and webhook delivery. `main.rs` is the command line around [`run`].

pub mod delivery;
pub mod docs;
pub mod paypage;
pub mod rails;
pub mod reference;
pub mod service;
pub mod store;
pub mod webhooks;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderName;
use tower_http::cors::{Any, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::trace::{DefaultOnResponse, TraceLayer};

pub use delivery::DeliveryOptions;
pub use service::{Sandbox, Tenant};
pub use store::Store;
pub use webhooks::TargetPolicy;

/// How a sandbox behaves, besides where its database is.
#[derive(Debug, Clone)]
pub struct Options {
    /// Base of pay links, e.g. `http://127.0.0.1:8080`.
    pub public_url: String,
    /// Requests per second per tenant (bursts of twice that); `None` for no limit.
    pub rate_limit: Option<NonZeroU32>,
    /// How often the simulated rails move things on by themselves; `None` leaves it to
    /// `POST /sandbox/advance`.
    pub rail_interval: Option<Duration>,
    pub webhooks: DeliveryOptions,
}

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The whole HTTP surface: the generated API router around `sandbox`, the hosted payment page,
/// the documentation, and a request id and trace span for every request.
pub fn app(sandbox: Sandbox) -> Result<axum::Router, String> {
    let docs = docs::routes(sandbox.public_url())?;
    Ok(paypage::routes(sandbox.clone()).merge(docs).merge(payments_server::router(Arc::new(sandbox))).layer(
        tower::ServiceBuilder::new()
            .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
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

/// A sandbox ready to serve: everything that takes time or can fail (the HTTP client for
/// webhooks, the documentation) is done, so once this exists the address can be announced.
pub struct Server {
    store: Store,
    options: Options,
    app: axum::Router,
    deliverer: delivery::Deliverer,
}

impl Server {
    pub fn new(store: Store, options: Options) -> Result<Self, String> {
        let app = app(Sandbox::new(store.clone(), &options))?;
        let deliverer = delivery::Deliverer::new(store.clone(), options.webhooks.clone())?;
        Ok(Self { store, options, app, deliverer })
    }

    /// Serves on `listener` until `shutdown` resolves, then finishes the requests in flight and
    /// the webhook deliveries under way. The rails and the delivery worker run alongside.
    pub async fn run(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let deliveries = tokio::spawn(self.deliverer.run(stopped));
        if let Some(interval) = self.options.rail_interval {
            tokio::spawn(rails::run(self.store.clone(), interval));
        }
        let served = axum::serve(listener, self.app).with_graceful_shutdown(shutdown).await;
        let _ = stop.send(true);
        let _ = deliveries.await;
        served
    }
}

/// [`Server::new`] then [`Server::run`].
pub async fn run(
    store: Store,
    options: Options,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    Server::new(store, options).map_err(std::io::Error::other)?.run(listener, shutdown).await
}
