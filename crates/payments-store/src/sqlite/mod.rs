//! The embedded backend: one SQLite file in WAL mode with `synchronous = FULL`, so a commit is on
//! disk before a write is acknowledged. Reads use a pool of read-only connections, which WAL
//! lets run beside the writer without waiting for it; writes go through the one [`Writer`].

mod balances;
mod changes;
mod codec;
mod payment_requests;
#[cfg(test)]
mod query_plans;
mod recipients;
mod tenants;
mod transactions;
mod virtual_accounts;
mod webhooks;
mod writer;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use futures::FutureExt;
use payments_types as types;
use sqlx::migrate::{MigrateError, Migration, MigrationType, Migrator};
use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{ConnectOptions, Connection, Sqlite};
use uuid::Uuid;

use crate::*;
use writer::Writer;

/// Read connections: enough for the lists and gets of a busy sandbox to run side by side.
const READERS: u32 = 4;
/// How long a statement waits for a lock held by another process before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Reads map the file (up to this size) instead of copying its pages through `read()`.
const MMAP_SIZE: &str = "1073741824";
/// Page caches, in KiB (SQLite's negative `cache_size`). The writer's holds the pages every
/// write touches — a dozen indexes and the search tables — which with SQLite's default 2 MiB
/// are read again on every write (measured: a search-table insert 3.4 ms with 2 MiB, 0.9 ms
/// with 64 MiB, on 55,000 transactions).
const WRITER_CACHE: &str = "-65536";
const READER_CACHE: &str = "-16384";
/// The database's `application_id`: "PAYS".
const APPLICATION_ID: i64 = 0x5041_5953;

/// The migrations, in order. Files, so a reader sees the schema's history; embedded, so the
/// binary needs nothing beside it.
const MIGRATIONS: &[(i64, &str, &str)] = &[
    (1, "release 0.1", include_str!("../../migrations/sqlite/0001_release_0_1.sql")),
    (2, "relational", include_str!("../../migrations/sqlite/0002_relational.sql")),
];

/// The tables of release 0.1 (and of an interrupted first migration): a file holding only these
/// is a sandbox database.
const RELEASE_0_1_TABLES: &[&str] = &[
    "tenants",
    "tokens",
    "resources",
    "balances",
    "ledger",
    "events",
    "webhook_endpoints",
    "notifications",
    "sqlite_sequence",
    "_sqlx_migrations",
];

pub struct SqliteStore {
    path: PathBuf,
    readers: SqlitePool,
    writer: Writer,
    /// Holds the file of an in-memory (`sqlite::memory:`) database until the store is dropped.
    _temporary: Option<tempfile::TempDir>,
}

impl SqliteStore {
    /// See [`crate::open`].
    pub async fn open(location: &str) -> Result<Self, String> {
        let (path, temporary) = match location {
            "sqlite::memory:" | ":memory:" | "sqlite://:memory:" => {
                let dir = tempfile::Builder::new()
                    .prefix("payments-sandbox-")
                    .tempdir()
                    .map_err(|e| format!("cannot make a temporary directory for an in-memory database: {e}"))?;
                (dir.path().join("memory.db"), Some(dir))
            }
            other => {
                let path = other.strip_prefix("sqlite://").or_else(|| other.strip_prefix("sqlite:")).unwrap_or(other);
                (PathBuf::from(path), None)
            }
        };
        let shown = path.display().to_string();
        if path.exists() {
            check_ours(&path, &shown).await?;
        }
        let writer_options = SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(BUSY_TIMEOUT)
            .pragma("mmap_size", MMAP_SIZE)
            .pragma("cache_size", WRITER_CACHE)
            .statement_cache_capacity(256)
            .log_statements(tracing::log::LevelFilter::Trace);
        let mut connection =
            writer_options.connect().await.map_err(|e| format!("cannot open database {shown}: {e}"))?;
        migrator().run(&mut connection).await.map_err(|e| explain(&shown, e))?;
        // Fresh statistics for the query planner, cheap when nothing changed.
        sqlx::raw_sql("PRAGMA optimize = 0x10002")
            .execute(&mut connection)
            .await
            .map_err(|e| format!("cannot optimise database {shown}: {e}"))?;
        let readers = SqlitePoolOptions::new()
            .max_connections(READERS)
            .min_connections(1)
            .test_before_acquire(false)
            .connect_with(
                SqliteConnectOptions::new()
                    .filename(&path)
                    .read_only(true)
                    .busy_timeout(BUSY_TIMEOUT)
                    .pragma("mmap_size", MMAP_SIZE)
                    .pragma("cache_size", READER_CACHE)
                    .statement_cache_capacity(256)
                    .log_statements(tracing::log::LevelFilter::Trace),
            )
            .await
            .map_err(|e| format!("cannot open database {shown} for reading: {e}"))?;
        Ok(Self { path, readers, writer: Writer::start(connection), _temporary: temporary })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn read(&self) -> Result<PoolConnection<Sqlite>> {
        Ok(self.readers.acquire().await?)
    }
}

fn migrator() -> Migrator {
    Migrator::with_migrations(
        MIGRATIONS
            .iter()
            .map(|(version, description, sql)| {
                Migration::new(
                    *version,
                    Cow::Borrowed(*description),
                    MigrationType::Simple,
                    sqlx::SqlSafeStr::into_sql_str(*sql),
                    false,
                )
            })
            .collect(),
    )
}

/// What a failed migration means for the person starting the sandbox.
fn explain(database: &str, error: MigrateError) -> String {
    let latest = MIGRATIONS.last().map_or(0, |(version, ..)| *version);
    match error {
        MigrateError::VersionMissing(version) => format!(
            "{database} was written by a newer payments-sandbox (its schema has migration {version}; this release \
             knows 1 to {latest}): run that release, or give --database a new file"
        ),
        MigrateError::VersionMismatch(version) => format!(
            "{database} was migrated by a different build of payments-sandbox (its migration {version} differs from \
             this release's): run that build, or give --database a new file"
        ),
        MigrateError::Dirty(version) => format!(
            "{database}: migration {version} was interrupted and left the database unusable: restore a backup, or \
             give --database a new file"
        ),
        other => format!("cannot migrate {database}: {other}; it was left as it was"),
    }
}

/// Refuses a file that is not a sandbox database before anything touches it: read-only, so a
/// file that is refused is left exactly as it was.
async fn check_ours(path: &Path, shown: &str) -> Result<(), String> {
    let mut probe = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .connect()
        .await
        .map_err(|e| format!("cannot open database {shown}: {e}"))?;
    let unreadable = |e: sqlx::Error| format!("cannot read database {shown}: {e}");
    let tables: Vec<String> = sqlx::query_scalar("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .fetch_all(&mut probe)
        .await
        .map_err(unreadable)?;
    let application_id: i64 =
        sqlx::query_scalar("PRAGMA application_id").fetch_one(&mut probe).await.map_err(unreadable)?;
    let _ = probe.close().await;
    if application_id == APPLICATION_ID {
        return Ok(());
    }
    if !tables.iter().all(|t| RELEASE_0_1_TABLES.contains(&t.as_str())) {
        return Err(format!(
            "{shown} is not a payments-sandbox database (it has tables {}): give --database a new file",
            tables.join(", ")
        ));
    }
    if tables.iter().any(|t| t == "resources") {
        tracing::info!(database = %shown, "upgrading a database of release 0.1 to the relational schema");
    }
    Ok(())
}

#[async_trait]
impl Store for SqliteStore {
    fn describe(&self) -> String {
        format!("SQLite {}", self.path.display())
    }

    async fn tenant_by_token(&self, hash: &TokenHash) -> Result<Option<TenantRecord>> {
        tenants::by_token(&mut *self.read().await?, hash).await
    }

    async fn ensure_tenant(&self, hash: &TokenHash, name: &str, now: DateTime<Utc>) -> Result<EnsuredTenant> {
        let (hash, name) = (*hash, name.to_owned());
        self.writer.write(move |c| async move { tenants::ensure(c, &hash, &name, now).await }.boxed()).await
    }

    async fn create_tenant(&self, hash: &TokenHash, name: &str, now: DateTime<Utc>) -> Result<TenantRecord> {
        let (hash, name) = (*hash, name.to_owned());
        self.writer.write(move |c| async move { tenants::create(c, &hash, &name, now).await }.boxed()).await
    }

    async fn tenant_count(&self) -> Result<u64> {
        tenants::count(&mut *self.read().await?).await
    }

    async fn unreconciled_balances(&self) -> Result<Vec<Unreconciled>> {
        tenants::unreconciled(&mut *self.read().await?).await
    }

    async fn apply(&self, changes: Changeset) -> Result<()> {
        self.writer.write(move |c| async move { changes::apply(c, &changes).await }.boxed()).await
    }

    async fn balance(&self, tenant: TenantId, id: Uuid) -> Result<Option<BalanceRecord>> {
        balances::get(&mut *self.read().await?, tenant, id).await
    }

    async fn balances(&self, tenant: TenantId, filter: &BalanceFilter, page: Page) -> Result<Vec<BalanceRecord>> {
        balances::list(&mut *self.read().await?, tenant, filter, page).await
    }

    async fn oldest_balance(&self, tenant: TenantId, currency: &str) -> Result<Option<BalanceRecord>> {
        balances::oldest(&mut *self.read().await?, tenant, currency).await
    }

    async fn recipient(&self, tenant: TenantId, id: Uuid) -> Result<Option<types::Recipient>> {
        recipients::get(&mut *self.read().await?, tenant, id).await
    }

    async fn recipients(&self, tenant: TenantId, page: Page) -> Result<Vec<types::Recipient>> {
        recipients::list(&mut *self.read().await?, tenant, page).await
    }

    async fn payment_request(&self, tenant: TenantId, id: Uuid) -> Result<Option<types::PaymentRequest>> {
        payment_requests::get(&mut *self.read().await?, tenant, id).await
    }

    async fn payment_request_for_payer(&self, id: Uuid) -> Result<Option<(TenantId, types::PaymentRequest)>> {
        payment_requests::for_payer(&mut *self.read().await?, id).await
    }

    async fn payment_request_by_reference_id(
        &self,
        tenant: TenantId,
        reference_id: &str,
    ) -> Result<Option<Keyed<types::PaymentRequest>>> {
        payment_requests::by_reference_id(&mut *self.read().await?, tenant, reference_id).await
    }

    async fn payment_requests(
        &self,
        tenant: TenantId,
        filter: &PaymentRequestFilter,
        page: Page,
    ) -> Result<Vec<types::PaymentRequest>> {
        payment_requests::list(&mut *self.read().await?, tenant, filter, page).await
    }

    async fn transaction(&self, tenant: TenantId, id: Uuid) -> Result<Option<types::Transaction>> {
        transactions::get(&mut *self.read().await?, tenant, id).await
    }

    async fn transaction_by_order_id(
        &self,
        tenant: TenantId,
        order_id: &str,
    ) -> Result<Option<Keyed<types::Transaction>>> {
        transactions::by_order_id(&mut *self.read().await?, tenant, order_id).await
    }

    async fn transactions(
        &self,
        tenant: TenantId,
        filter: &TransactionFilter,
        page: Page,
    ) -> Result<Vec<types::Transaction>> {
        transactions::list(&mut *self.read().await?, tenant, filter, page).await
    }

    async fn virtual_account(&self, tenant: TenantId, id: Uuid) -> Result<Option<types::VirtualAccount>> {
        virtual_accounts::get(&mut *self.read().await?, tenant, id).await
    }

    async fn virtual_account_by_reference_id(
        &self,
        tenant: TenantId,
        reference_id: &str,
    ) -> Result<Option<Keyed<types::VirtualAccount>>> {
        virtual_accounts::by_reference_id(&mut *self.read().await?, tenant, reference_id).await
    }

    async fn virtual_accounts(
        &self,
        tenant: TenantId,
        filter: &VirtualAccountFilter,
        page: Page,
    ) -> Result<Vec<types::VirtualAccount>> {
        virtual_accounts::list(&mut *self.read().await?, tenant, filter, page).await
    }

    async fn on_rails(&self, tenant: Option<TenantId>) -> Result<OnRails> {
        let mut connection = self.read().await?;
        Ok(OnRails {
            initiated_accounts: virtual_accounts::initiated(&mut connection, tenant).await?,
            initiated_payments: transactions::on_rails(&mut connection, tenant, types::TransactionStatus::Initiated)
                .await?,
            processing_payments: transactions::on_rails(&mut connection, tenant, types::TransactionStatus::Processing)
                .await?,
        })
    }

    async fn webhook_endpoint(&self, tenant: TenantId, id: Uuid) -> Result<Option<EndpointRecord>> {
        webhooks::endpoint_get(&mut *self.read().await?, tenant, id).await
    }

    async fn webhook_endpoints(&self, tenant: TenantId, page: Page) -> Result<Vec<types::WebhookEndpoint>> {
        webhooks::endpoint_list(&mut *self.read().await?, tenant, page).await
    }

    async fn notification(&self, tenant: TenantId, id: Uuid) -> Result<Option<types::Webhook>> {
        webhooks::notification_get(&mut *self.read().await?, tenant, id).await
    }

    async fn notifications(
        &self,
        tenant: TenantId,
        filter: &NotificationFilter,
        page: Page,
    ) -> Result<Vec<types::Webhook>> {
        webhooks::notification_list(&mut *self.read().await?, tenant, filter, page).await
    }

    async fn due_endpoints(&self, now: DateTime<Utc>) -> Result<Vec<Uuid>> {
        webhooks::due_endpoints(&mut *self.read().await?, now).await
    }

    async fn claim(
        &self,
        endpoint: Uuid,
        now: DateTime<Utc>,
        limit: usize,
        lease_until: DateTime<Utc>,
    ) -> Result<Vec<Attempt>> {
        self.writer.write(move |c| webhooks::claim(c, endpoint, now, limit, lease_until).boxed()).await
    }

    async fn record_attempt(&self, notification: Uuid, outcome: AttemptOutcome) -> Result<()> {
        self.writer.write(move |c| webhooks::record_attempt(c, notification, outcome).boxed()).await
    }

    async fn release_claims(&self) -> Result<u64> {
        self.writer.write(|c| webhooks::release_claims(c).boxed()).await
    }
}
