//! The payments sandbox's database, and the only code that talks to it: every SQL statement,
//! the schema and its migrations live in this crate, behind the [`Store`] trait. A backend is a
//! module that implements it (`sqlite` today); nothing outside this crate names a database.
//!
//! Reads run on a pool of read connections and never wait behind a write. Writes are
//! [`Changeset`]s applied whole, in one database transaction, and acknowledged only once
//! committed to disk. The rules that decide *what* to write (funds, fees, state machines,
//! idempotency, events) are the domain's; the store guarantees that a changeset applies
//! atomically and only to the state it was decided on: debits never overdraw (checked by the
//! update itself and a `CHECK`), idempotency keys are unique per tenant (a unique index), and
//! status changes name the status they expect (a stale one fails with [`StoreError::Stale`]).

mod error;
mod migrations;
mod model;
mod plan;
mod postgres;
mod reads;
mod sqlite;
mod writes;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use payments_types as types;
use uuid::Uuid;

pub use error::{DriverError, OpenError, Outage, StoreError, UniqueKey, chain};
pub use model::*;
pub use postgres::PostgresStore;
pub use sqlite::{Backup, SqliteStore};

/// List pages a backend reads at once: half the cores, at least one, so clients listing back to
/// back never hold every core (why, and what it measured: `sqlite/lists.rs`, and
/// `PostgresStore::lists`).
fn list_pages_at_once() -> usize {
    std::thread::available_parallelism().map_or(1, |n| (n.get() / 2).max(1))
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Opens the database named by `location` — a `postgres://` (or `postgresql://`) URL; else
/// SQLite: a file path, `sqlite:PATH`, or `sqlite::memory:` (a database in a temporary file that
/// is removed when the store is dropped) — creating the SQLite file on first use and migrating
/// the database to this release's schema. A database this release cannot read (written by a
/// newer release, or not a sandbox database) is refused with a one-line message that names it
/// (never its password) and says what to do; nothing in it is changed then.
pub async fn open(location: &str) -> std::result::Result<std::sync::Arc<dyn Store>, OpenError> {
    if location.starts_with("postgres://") || location.starts_with("postgresql://") {
        Ok(std::sync::Arc::new(PostgresStore::open(location).await?))
    } else {
        Ok(std::sync::Arc::new(SqliteStore::open(location).await?))
    }
}

/// A consistent copy of the SQLite database at `location` in `to`, taken while sandboxes serve
/// from it: it holds every commit made before it began. A PostgreSQL database is copied with
/// PostgreSQL's own tools (`pg_dump`, `pg_restore`: see the README), and refused here.
pub fn backup(location: &str, to: &std::path::Path) -> std::result::Result<Backup, OpenError> {
    if location.starts_with("postgres://") || location.starts_with("postgresql://") {
        return Err(OpenError::refused(
            "a PostgreSQL database is backed up with pg_dump (see the README, \"Backups\")",
        ));
    }
    sqlite::backup(location, to)
}

/// The database, as the domain and the workers use it. Every method concerns one tenant only
/// (the `tenant` argument or the changeset's), except those the background workers use across
/// tenants (`on_rails(None)`, the outbox).
#[async_trait]
pub trait Store: Reads + Send + Sync + 'static {
    /// Where the data is, for messages (never a password).
    fn describe(&self) -> String;

    // -- tenants ----------------------------------------------------------------------------

    async fn tenant_by_token(&self, hash: &TokenHash) -> Result<Option<TenantRecord>>;
    /// The tenant holding this token, created with `name` when there is none. Race-free: of
    /// concurrent calls with one token, exactly one creates it.
    async fn ensure_tenant(&self, hash: &TokenHash, name: &str, now: DateTime<Utc>) -> Result<EnsuredTenant>;
    /// A new tenant holding this token; [`StoreError::Duplicate`] when the token is taken.
    async fn create_tenant(&self, hash: &TokenHash, name: &str, now: DateTime<Utc>) -> Result<TenantRecord>;
    async fn tenant_count(&self) -> Result<u64>;
    /// `Ok` when the database can be read and written now: a read on a read connection, and a
    /// one-row write committed to disk (`GET /readyz`).
    async fn ready(&self) -> Result<()>;
    /// Balances whose amount differs from the sum of their ledger entries.
    async fn unreconciled_balances(&self) -> Result<Vec<Unreconciled>>;

    // -- writes -----------------------------------------------------------------------------

    /// Applies every change, or none: the first that fails rolls the whole changeset back and
    /// its error is returned. `Ok` means committed to disk.
    async fn apply(&self, changes: Changeset) -> Result<()>;

    // -- the outbox, for the delivery worker -------------------------------------------------

    /// Claims up to `limit` due notifications of one endpoint, oldest due first, for a
    /// delivery that must be recorded before `lease_until` (else they are due again).
    async fn claim(
        &self,
        endpoint: Uuid,
        now: DateTime<Utc>,
        limit: usize,
        lease_until: DateTime<Utc>,
    ) -> Result<Vec<Attempt>>;
    /// Records an attempt and ends its claim. A notification discarded meanwhile (its endpoint
    /// deleted) stays discarded. With `next`, the same transaction then claims the endpoint's
    /// oldest due notification, as `claim` with a limit of one would: a delivery goes on to its
    /// endpoint's next notification for one commit, not two, and without the worker's round
    /// of finding due endpoints in between.
    async fn record_attempt(
        &self,
        notification: Uuid,
        outcome: AttemptOutcome,
        next: Option<NextClaim>,
    ) -> Result<Option<Attempt>>;
    /// Ends every claim at start-up, when this process is the database's only deliverer (an
    /// embedded SQLite file); on a database shared by several instances another one may be
    /// delivering them, so nothing is ended there: claims run out by themselves. The number
    /// ended.
    async fn release_claims(&self) -> Result<u64>;
    /// Deletes the notifications that are over (delivered, or discarded: nothing more will be
    /// tried) and were made before `before`, then the events made before `before` that no
    /// notification refers to. Notifications still being retried are kept, however old.
    async fn prune(&self, before: DateTime<Utc>) -> Result<Pruned>;
}

/// What the API and the workers read: every backend runs the same queries (`reads`), each on
/// its own read connections, which never wait behind a write. Each method concerns one tenant,
/// except `on_rails(None)` and `due_endpoints`, which the background workers use across
/// tenants.
#[async_trait]
pub trait Reads: Send + Sync {
    async fn balance(&self, tenant: TenantId, id: Uuid) -> Result<Option<BalanceRecord>>;
    async fn balances(&self, tenant: TenantId, filter: &BalanceFilter, page: Page) -> Result<Vec<BalanceRecord>>;
    /// The tenant's first balance in `currency`.
    async fn oldest_balance(&self, tenant: TenantId, currency: &str) -> Result<Option<BalanceRecord>>;

    async fn recipient(&self, tenant: TenantId, id: Uuid) -> Result<Option<types::Recipient>>;
    async fn recipients(&self, tenant: TenantId, page: Page) -> Result<Vec<types::Recipient>>;

    async fn payment_request(&self, tenant: TenantId, id: Uuid) -> Result<Option<types::PaymentRequest>>;
    /// The payment request with this id whoever owns it: for the hosted payment page, where
    /// the unguessable id is the payer's credential.
    async fn payment_request_for_payer(&self, id: Uuid) -> Result<Option<(TenantId, types::PaymentRequest)>>;
    async fn payment_request_by_reference_id(
        &self,
        tenant: TenantId,
        reference_id: &str,
    ) -> Result<Option<Keyed<types::PaymentRequest>>>;
    async fn payment_requests(
        &self,
        tenant: TenantId,
        filter: &PaymentRequestFilter,
        page: Page,
    ) -> Result<Vec<types::PaymentRequest>>;

    async fn transaction(&self, tenant: TenantId, id: Uuid) -> Result<Option<types::Transaction>>;
    async fn transaction_by_order_id(
        &self,
        tenant: TenantId,
        order_id: &str,
    ) -> Result<Option<Keyed<types::Transaction>>>;
    async fn transactions(
        &self,
        tenant: TenantId,
        filter: &TransactionFilter,
        page: Page,
    ) -> Result<Vec<types::Transaction>>;

    async fn virtual_account(&self, tenant: TenantId, id: Uuid) -> Result<Option<types::VirtualAccount>>;
    async fn virtual_account_by_reference_id(
        &self,
        tenant: TenantId,
        reference_id: &str,
    ) -> Result<Option<Keyed<types::VirtualAccount>>>;
    async fn virtual_accounts(
        &self,
        tenant: TenantId,
        filter: &VirtualAccountFilter,
        page: Page,
    ) -> Result<Vec<types::VirtualAccount>>;

    /// What the rails have to move, for one tenant or (`None`) all of them, oldest first.
    async fn on_rails(&self, tenant: Option<TenantId>) -> Result<OnRails>;

    async fn webhook_endpoint(&self, tenant: TenantId, id: Uuid) -> Result<Option<EndpointRecord>>;
    async fn webhook_endpoints(&self, tenant: TenantId, page: Page) -> Result<Vec<types::WebhookEndpoint>>;
    async fn notification(&self, tenant: TenantId, id: Uuid) -> Result<Option<types::Webhook>>;
    async fn notifications(
        &self,
        tenant: TenantId,
        filter: &NotificationFilter,
        page: Page,
    ) -> Result<Vec<types::Webhook>>;

    /// Endpoints with notifications due at `now` that nobody is delivering.
    async fn due_endpoints(&self, now: DateTime<Utc>) -> Result<Vec<Uuid>>;
}
