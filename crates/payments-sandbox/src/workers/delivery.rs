//! Posts the outbox (`notifications`) to the endpoints, as the document's delivery rules say:
//! signed with HMAC-SHA512 over the raw body, `X-Service-Retry-Count`, 2xx within 10 seconds or
//! it failed, then redelivered on the hour (every `retry_interval`) up to 24 times.
//!
//! Fairness: each endpoint has at most [`PER_ENDPOINT`] deliveries under way, so a slow or dead
//! receiver holds only its own slots, and none of this runs on the request path (the API only
//! writes rows). The outbox is the database: a restart picks up whatever is due.
//!
//! The worker fills an endpoint's free slots from the outbox (on a wake, or every [`POLL`]); a
//! slot then keeps itself busy: the write that records an attempt also claims the endpoint's
//! next due notification, so a backlog costs one commit per delivery.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use tokio::sync::Notify;

use chrono::Utc;
use payments_client::webhooks as webhooks_kit;
use payments_store::{Attempt, AttemptOutcome, NextClaim, Store};
use uuid::Uuid;

use crate::StartError;
use crate::domain::outages;
use crate::domain::webhook_targets::{TargetPolicy, check_url, forbidden_address};

/// Deliveries under way per endpoint at most.
pub const PER_ENDPOINT: usize = 8;
/// How often the worker looks for due notifications when nothing woke it.
const POLL: Duration = Duration::from_millis(100);
/// Redeliveries after the first attempt, before a notification is discarded.
pub const MAX_RETRIES: i64 = 24;
/// How long a receiver has to answer (a promise of the domain's: `POST /webhooks` waits on it).
pub use crate::domain::RECEIVER_TIMEOUT;
/// How long a claimed notification stays claimed by default: long enough for any attempt (the
/// receiver's time and the connection's), so only a deliverer that died leaves one to run out.
pub const LEASE: Duration = Duration::from_secs(60);

#[derive(Debug, Clone)]
pub struct DeliveryOptions {
    /// Redeliveries happen at the next multiple of this since the epoch: on the hour for the
    /// document's 3600 seconds.
    pub retry_interval: Duration,
    /// A PEM file of extra trusted roots (a private or test CA).
    pub root_ca: Option<PathBuf>,
    pub policy: TargetPolicy,
    /// How long a claim lasts: after this, what a dead instance had claimed is due again. More
    /// than [`RECEIVER_TIMEOUT`], or a slow receiver may be posted to twice.
    pub lease: Duration,
    /// How long notifications that are over (and their events) are kept before they are pruned
    /// (see `workers::retention`).
    pub retention: Duration,
}

impl Default for DeliveryOptions {
    fn default() -> Self {
        Self {
            retry_interval: Duration::from_secs(3600),
            root_ca: None,
            policy: TargetPolicy::default(),
            lease: LEASE,
            retention: super::retention::RETENTION,
        }
    }
}

/// Resolves names and drops every address the policy forbids, so a name that points (or is
/// re-pointed) at the sandbox's own network cannot be reached: the check is on the address
/// actually connected to.
struct GuardedResolver {
    policy: TargetPolicy,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            if special_use_invalid(&host) {
                return Err(format!("{host} is under the special-use domain `invalid`, which never resolves").into());
            }
            let resolved: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> =
                resolved.into_iter().filter(|a| forbidden_address(a.ip(), policy).is_none()).collect();
            if allowed.is_empty() {
                return Err(format!("{host} resolves to no address that may receive notifications").into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// Names under `invalid.` never exist, and RFC 6761 (6.4) asks resolvers to answer so at once
/// instead of asking the DNS. Asking costs more than the answer when the DNS is busy: beside 200
/// lookups in flight, this machine's resolver took 20 s to say `hooks.invalid` does not exist,
/// so an attempt to such an endpoint ran into the receiver timeout instead of failing.
fn special_use_invalid(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    host == "invalid" || host.ends_with(".invalid")
}

fn http_client(options: &DeliveryOptions) -> Result<reqwest::Client, StartError> {
    // reqwest is built without a crypto provider; ring is the workspace's.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .timeout(RECEIVER_TIMEOUT)
        .connect_timeout(RECEIVER_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .user_agent(concat!("payments-sandbox-webhooks/", env!("CARGO_PKG_VERSION")))
        .dns_resolver(Arc::new(GuardedResolver { policy: options.policy }));
    if let Some(path) = &options.root_ca {
        let unusable =
            |source: Box<dyn std::error::Error + Send + Sync>| StartError::RootCa { path: path.clone(), source };
        let pem = std::fs::read(path).map_err(|e| unusable(e.into()))?;
        let certificates = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| unusable(e.into()))?;
        builder = builder.tls_certs_merge(certificates);
    }
    builder.build().map_err(StartError::WebhookClient)
}

/// The delivery worker. [`Deliverer::run`] until the shutdown signal; it then stops claiming and
/// waits for the deliveries under way.
pub struct Deliverer {
    store: Arc<dyn Store>,
    client: reqwest::Client,
    options: DeliveryOptions,
    wake: Arc<Notify>,
    in_flight: Arc<Mutex<HashMap<Uuid, usize>>>,
}

impl Deliverer {
    pub fn new(store: Arc<dyn Store>, options: DeliveryOptions) -> Result<Self, StartError> {
        Ok(Self {
            client: http_client(&options)?,
            store,
            options,
            wake: Arc::new(Notify::new()),
            in_flight: Arc::default(),
        })
    }

    pub async fn run(self, mut shutdown: tokio::sync::watch::Receiver<bool>) {
        // On a database this process alone delivers from (SQLite), what a crash left claimed is
        // due again at once; on a shared one, when its lease runs out.
        if let Err(error) = self.store.release_claims().await
            && !outages::report(&error.clone().into(), "releasing notifications left in flight")
        {
            tracing::error!(%error, "cannot release notifications left in flight");
        }
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            if *shutdown.borrow() {
                break;
            }
            if let Err(error) = self.dispatch(&mut tasks, &shutdown).await
                && !outages::report(&error.clone().into(), "reading the outbox")
            {
                tracing::warn!(%error, "cannot read the outbox");
            }
            while tasks.try_join_next().is_some() {}
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(POLL) => {}
                _ = shutdown.changed() => {}
            }
        }
        let waiting = tasks.len();
        if waiting > 0 {
            tracing::info!(waiting, "finishing webhook deliveries under way");
        }
        while tasks.join_next().await.is_some() {}
    }

    /// Claims what is due for every endpoint with free slots and starts those deliveries.
    async fn dispatch(
        &self,
        tasks: &mut tokio::task::JoinSet<()>,
        shutdown: &tokio::sync::watch::Receiver<bool>,
    ) -> Result<(), payments_store::StoreError> {
        let now = Utc::now();
        let lease_until = lease_until(&self.options, now);
        for endpoint in self.store.due_endpoints(now).await? {
            let busy = self.in_flight.lock().unwrap().get(&endpoint).copied().unwrap_or(0);
            if busy >= PER_ENDPOINT {
                continue;
            }
            let attempts = self.store.claim(endpoint, now, PER_ENDPOINT - busy, lease_until).await?;
            *self.in_flight.lock().unwrap().entry(endpoint).or_default() += attempts.len();
            for attempt in attempts {
                let slot = Slot {
                    store: self.store.clone(),
                    client: self.client.clone(),
                    options: self.options.clone(),
                    shutdown: shutdown.clone(),
                };
                let (wake, in_flight) = (self.wake.clone(), self.in_flight.clone());
                tasks.spawn(async move {
                    slot.deliver(attempt).await;
                    if let Some(count) = in_flight.lock().unwrap().get_mut(&endpoint) {
                        *count = count.saturating_sub(1);
                    }
                    wake.notify_one();
                });
            }
        }
        Ok(())
    }
}

/// One of an endpoint's delivery slots: it posts a claimed notification, records the outcome
/// and, in the same write, claims the endpoint's next due one, until none is due or the worker
/// stops.
struct Slot {
    store: Arc<dyn Store>,
    client: reqwest::Client,
    options: DeliveryOptions,
    shutdown: tokio::sync::watch::Receiver<bool>,
}

impl Slot {
    async fn deliver(&self, mut attempt: Attempt) {
        loop {
            let response_code = post(&self.client, &self.options, &attempt).await;
            let outcome = match response_code {
                Some(code) if (200..300).contains(&code) => AttemptOutcome::Delivered { response_code: code },
                response_code => AttemptOutcome::Failed {
                    response_code,
                    retry_at: next_retry(self.options.retry_interval),
                    max_retries: MAX_RETRIES,
                },
            };
            tracing::info!(
                notification = %attempt.notification,
                endpoint = %attempt.endpoint,
                retry_count = attempt.retry_count,
                response_code = ?response_code,
                delivered = matches!(outcome, AttemptOutcome::Delivered { .. }),
                "webhook attempt"
            );
            let next = (!*self.shutdown.borrow()).then(|| {
                let now = Utc::now();
                NextClaim { endpoint: attempt.endpoint, now, lease_until: lease_until(&self.options, now) }
            });
            match self.store.record_attempt(attempt.notification, outcome, next).await {
                Ok(Some(claimed)) => attempt = claimed,
                Ok(None) => return,
                Err(error) => {
                    if !outages::report(&error.clone().into(), "recording a webhook attempt") {
                        tracing::error!(%error, notification = %attempt.notification, "cannot record a webhook attempt");
                    }
                    return;
                }
            }
        }
    }
}

/// When a claim made at `now` runs out.
fn lease_until(options: &DeliveryOptions, now: chrono::DateTime<Utc>) -> chrono::DateTime<Utc> {
    now + chrono::Duration::from_std(options.lease).unwrap_or(chrono::Duration::MAX)
}

/// The next multiple of `interval` since the epoch: on the hour for 3600 seconds.
fn next_retry(interval: Duration) -> chrono::DateTime<Utc> {
    let interval = i64::try_from(interval.as_micros()).unwrap_or(i64::MAX).max(1);
    let now = Utc::now().timestamp_micros();
    chrono::DateTime::from_timestamp_micros((now / interval + 1) * interval).unwrap_or_else(Utc::now)
}

/// Posts one attempt: the receiver's status code, or `None` when it did not answer.
async fn post(client: &reqwest::Client, options: &DeliveryOptions, attempt: &Attempt) -> Option<u16> {
    // The URL is checked again at every attempt: the policy may have changed since it was saved.
    if let Err(reason) = check_url(&attempt.url, options.policy) {
        tracing::warn!(url = %attempt.url, %reason, "webhook target refused");
        return None;
    }
    let response = client
        .post(&attempt.url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        // The receiver kit's own function: what the service signs is what a receiver checks.
        .header(webhooks_kit::SIGNATURE_HEADER, webhooks_kit::sign(&attempt.secret, attempt.body.as_bytes()))
        .header(webhooks_kit::RETRY_COUNT_HEADER, attempt.retry_count.to_string())
        .body(attempt.body.clone())
        .send()
        .await;
    match response {
        // Only the status counts; the body is not read beyond what the connection needs.
        Ok(response) => Some(response.status().as_u16()),
        Err(error) => {
            tracing::debug!(%error, url = %attempt.url, "webhook attempt got no response");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use reqwest::dns::Resolve;

    use super::GuardedResolver;
    use crate::domain::webhook_targets::TargetPolicy;

    #[tokio::test]
    async fn names_that_resolve_to_loopback_are_refused_unless_allowed() {
        let strict = GuardedResolver { policy: TargetPolicy { allow_loopback: false } };
        let refused = strict.resolve("localhost".parse().unwrap()).await;
        assert!(refused.is_err(), "localhost resolves only to loopback");
        let relaxed = GuardedResolver { policy: TargetPolicy { allow_loopback: true } };
        let addresses: Vec<_> = relaxed.resolve("localhost".parse().unwrap()).await.unwrap().collect();
        assert!(!addresses.is_empty() && addresses.iter().all(|a| a.ip().is_loopback()));
    }

    #[tokio::test]
    async fn names_under_invalid_are_refused_without_asking_the_dns() {
        let resolver = GuardedResolver { policy: TargetPolicy { allow_loopback: true } };
        for name in ["invalid", "hooks.invalid", "a.b.INVALID"] {
            let error = resolver.resolve(name.parse().unwrap()).await.err().expect(name).to_string();
            assert!(error.contains("special-use domain `invalid`"), "{name}: {error}");
        }
        assert!(!super::special_use_invalid("invalid.example.com"));
        assert!(!super::special_use_invalid("notinvalid"));
    }
}
