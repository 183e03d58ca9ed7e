//! The payments sandbox: a real payments service implementing the generated
//! `payments_server::Api`, on the `payments-store` database, with simulated payment rails, the
//! hosted payment page and webhook delivery. `main.rs` is the command line around [`Server`].
//!
//! Three layers, and data flows one way through them:
//! - [`http`] maps HTTP to domain calls and answers back (the generated trait, the pay page,
//!   the docs);
//! - [`domain`] holds the rules and decides every change;
//! - the store (`payments-store`) holds every SQL statement.
//!
//! [`workers`] (webhook delivery, the background rail) sit beside `http` and use the domain and
//! the store. No layer imports one above it.

pub mod domain;
pub mod http;
pub mod workers;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

pub use domain::{Sandbox, TargetPolicy};
pub use payments_store::{Store, open as open_store};
pub use workers::delivery::DeliveryOptions;

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

/// A sandbox ready to serve: everything that takes time or can fail (the HTTP client for
/// webhooks, the documentation) is done, so once this exists the address can be announced.
pub struct Server {
    sandbox: Sandbox,
    options: Options,
    app: axum::Router,
    deliverer: workers::delivery::Deliverer,
}

impl Server {
    pub fn new(store: Arc<dyn Store>, options: Options) -> Result<Self, String> {
        let sandbox = Sandbox::new(store.clone(), &options.public_url, options.webhooks.policy);
        let app = http::app(sandbox.clone(), options.rate_limit)?;
        let deliverer = workers::delivery::Deliverer::new(store, options.webhooks.clone())?;
        Ok(Self { sandbox, options, app, deliverer })
    }

    /// The service behind the HTTP surface (to set up tenants before serving).
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Serves on `listener` until `shutdown` resolves, then finishes the requests in flight and
    /// the webhook deliveries under way. The rails and the delivery worker run alongside.
    pub async fn run(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let deliveries = tokio::spawn(self.deliverer.run(stopped.clone()));
        let rails = self
            .options
            .rail_interval
            .map(|interval| tokio::spawn(workers::rails::run(self.sandbox.clone(), interval, stopped)));
        let served = axum::serve(listener, self.app).with_graceful_shutdown(shutdown).await;
        let _ = stop.send(true);
        let _ = deliveries.await;
        if let Some(rails) = rails {
            let _ = rails.await;
        }
        served
    }
}

/// [`Server::new`] then [`Server::run`].
pub async fn run(
    store: Arc<dyn Store>,
    options: Options,
    listener: tokio::net::TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    Server::new(store, options).map_err(std::io::Error::other)?.run(listener, shutdown).await
}
