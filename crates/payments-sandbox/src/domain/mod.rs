//! The payments service's rules, with no HTTP in sight: what each operation checks, computes
//! and changes, and which events a change emits. Pure rules (reference data and bank details,
//! money and exchange, the state machines, idempotency decisions) are functions of their inputs
//! and are tested as such; the operations read from the [`Store`], decide, and write one
//! [`Changeset`] that the store applies atomically — and only to the state it was decided on,
//! so a concurrent change makes the write fail ([`StoreError::Stale`]) and the operation decides
//! again on what is there now.

mod balances;
pub mod error;
pub mod idempotency;
pub mod money;
pub mod outages;
mod payment_requests;
pub mod rails;
mod recipients;
pub mod reference;
mod tenants;
mod transactions;
mod virtual_accounts;
pub mod webhook_targets;
mod webhooks;

use std::sync::Arc;

use chrono::{DateTime, SubsecRound, Utc};
use payments_store::{Changeset, Store, StoreError};
use uuid::Uuid;

pub use error::{Error, Result};
/// What lists take: the store's filters and page, as the domain's input.
pub use payments_store::{
    BalanceFilter, NotificationFilter, Page, PaymentRequestFilter, TenantId, TransactionFilter, VirtualAccountFilter,
};
pub use tenants::{Tenant, new_token, token_hash};
pub use webhook_targets::TargetPolicy;
pub use webhooks::RECEIVER_TIMEOUT;

/// How many times an operation decides again when the state it decided on changed before its
/// write landed. Each retry sees the newer state, so this only bounds a pathological race.
const ATTEMPTS: usize = 8;

/// The payments service. Cheap to clone; clones share the store and the tenant directory.
#[derive(Clone)]
pub struct Sandbox {
    store: Arc<dyn Store>,
    /// Base of the pay links (`{public_url}/pay/{id}`).
    public_url: Arc<str>,
    tenants: tenants::Directory,
    balance_currencies: balances::BalanceCurrencies,
    webhook_policy: TargetPolicy,
}

impl Sandbox {
    pub fn new(store: Arc<dyn Store>, public_url: &str, webhook_policy: TargetPolicy) -> Self {
        Self {
            tenants: tenants::Directory::new(store.clone()),
            balance_currencies: balances::BalanceCurrencies::default(),
            store,
            public_url: public_url.trim_end_matches('/').into(),
            webhook_policy,
        }
    }

    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }

    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    fn payment_url(&self, id: Uuid) -> String {
        format!("{}/pay/{id}", self.public_url)
    }

    /// Applies `changes` (see `Store::apply`). Every write of the domain goes through here: one
    /// committed is the news that an outage is over.
    async fn apply(&self, changes: Changeset) -> std::result::Result<(), StoreError> {
        self.store.apply(changes).await?;
        outages::over();
        Ok(())
    }

    /// Applies `changes`; a changeset that is stale is decided again by `decide`, up to
    /// [`ATTEMPTS`] times. `decide` reads what it needs and returns the changes with the
    /// operation's answer.
    async fn decide_and_apply<T, F, Fut>(&self, mut decide: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<(Changeset, T)>>,
    {
        for _ in 0..ATTEMPTS {
            let (changes, answer) = decide().await?;
            match self.apply(changes).await {
                Ok(()) => return Ok(answer),
                Err(StoreError::Stale { resource, id }) => {
                    tracing::debug!(resource, %id, "changed while deciding; deciding again");
                }
                Err(other) => return Err(other.into()),
            }
        }
        Err(Error::conflict("the resource kept changing while this request was decided; retry it"))
    }
}

/// The instant of one operation, in the precision the API shows (milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Now(pub DateTime<Utc>);

impl Default for Now {
    fn default() -> Self {
        Self::new()
    }
}

impl Now {
    pub fn new() -> Self {
        Self(Utc::now().trunc_subsecs(3))
    }
}

/// The changes of one operation of `tenant`, made `now`.
fn changeset(tenant: TenantId, now: Now) -> Changeset {
    Changeset::new(tenant, now.0)
}

/// A value the service produced or already validated, as its constrained type.
fn typed<T: std::str::FromStr>(value: &str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    value.parse().map_err(|e| Error::internal(format!("{value:?}: {e}")))
}

/// A resource as the JSON the API shows (event data, canonical requests): serde_json's bytes,
/// written by the runtime's writer, as responses are, for fewer instructions on every payment
/// (BENCHMARKS.md, *Why, measured: A payment's JSON and pages*).
fn json<T: serde::Serialize>(value: &T) -> Result<String> {
    let mut out = Vec::with_capacity(512);
    payments_server::runtime::json_writer::write(&mut out, value).map_err(Error::internal)?;
    // The writer writes UTF-8 only: text as given, the rest ASCII.
    String::from_utf8(out).map_err(Error::internal)
}

fn ok() -> payments_types::ResultOk {
    payments_types::ResultOk { result: payments_types::ResultOkResult::Ok }
}
