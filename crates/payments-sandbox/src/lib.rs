//! The payments sandbox: a real payments service implementing the generated
//! `payments_server::Api`, on the `payments-store` database, with simulated payment rails, the
//! hosted payment page and webhook delivery. [`command_line`] is the binary's command line around
//! [`Server`].
//!
//! Three layers, and data flows one way through them:
//! - [`http`] maps HTTP to domain calls and answers back (the generated trait, the pay page,
//!   the docs);
//! - [`domain`] holds the rules and decides every change;
//! - the store (`payments-store`) holds every SQL statement.
//!
//! [`workers`] (webhook delivery, the background rail) sit beside `http` and use the domain and
//! the store (retention prunes the outbox through the store). No layer imports one above it.
//! [`logs`] carries log lines to stderr and uses none of them.

pub mod command_line;
pub mod domain;
pub mod http;
pub mod log_format;
pub mod logs;
pub mod workers;

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

pub use domain::{Sandbox, TargetPolicy};
pub use http::serve::Limits;
pub use payments_store::{OpenError, Store, backup, chain, open as open_store};
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
    /// Connection and request bounds: timeouts, the connection cap, the shutdown grace, the
    /// failed authentication limit.
    pub limits: Limits,
}

/// A sandbox ready to serve: everything that takes time or can fail (the HTTP client for
/// webhooks, the documentation) is done, so once this exists the address can be announced.
pub struct Server {
    sandbox: Sandbox,
    options: Options,
    app: http::edge::Edge,
    deliverer: workers::delivery::Deliverer,
    store: Arc<dyn Store>,
}

/// Why a server could not be made ready to serve.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A document compiled into the binary does not read (a broken build).
    #[error("{what} does not read")]
    Document {
        what: &'static str,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The webhooks' root CA bundle (`--webhook-root-ca`) cannot be read, or is not PEM.
    #[error("cannot use {path} as the webhooks' root CA bundle")]
    RootCa {
        path: std::path::PathBuf,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The client that posts webhooks cannot be built.
    #[error("cannot build the webhook client")]
    WebhookClient(#[source] reqwest::Error),
}

impl Server {
    pub fn new(store: Arc<dyn Store>, options: Options) -> Result<Self, StartError> {
        let sandbox = Sandbox::new(store.clone(), &options.public_url, options.webhooks.policy);
        let app = http::app(sandbox.clone(), options.rate_limit, &options.limits)?;
        let deliverer = workers::delivery::Deliverer::new(store.clone(), options.webhooks.clone())?;
        Ok(Self { sandbox, options, app, deliverer, store })
    }

    /// The service behind the HTTP surface (to set up tenants before serving).
    pub fn sandbox(&self) -> &Sandbox {
        &self.sandbox
    }

    /// Serves on `listener` until `shutdown` resolves, then finishes the requests in flight and
    /// the webhook deliveries under way, for up to the shutdown grace. The rails and the
    /// delivery worker run alongside.
    pub async fn run(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let deliveries = tokio::spawn(self.deliverer.run(stopped.clone()));
        let retention =
            tokio::spawn(workers::retention::run(self.store, self.options.webhooks.retention, stopped.clone()));
        let rails = self
            .options
            .rail_interval
            .map(|interval| tokio::spawn(workers::rails::run(self.sandbox.clone(), interval, stopped)));
        // The workers stop with the server, not after it: their grace runs at the same time.
        let grace = self.options.limits.shutdown_grace;
        let (signalled, deadline) = tokio::sync::oneshot::channel();
        let shutdown = async move {
            shutdown.await;
            let _ = stop.send(true);
            let _ = signalled.send(tokio::time::Instant::now() + grace);
        };
        let served = http::serve::serve(listener, self.app, &self.options.limits, shutdown).await;
        let deadline = deadline.await.unwrap_or_else(|_| tokio::time::Instant::now());
        let workers = async {
            let _ = deliveries.await;
            let _ = retention.await;
            if let Some(rails) = rails {
                let _ = rails.await;
            }
        };
        if tokio::time::timeout_at(deadline, workers).await.is_err() {
            tracing::warn!(
                "shutting down: webhook deliveries still under way after the grace period are left to their lease"
            );
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
