//! The embedded backend: one SQLite file in WAL mode with `synchronous = FULL`, so a commit is on
//! disk before a write is acknowledged. Reads use a pool of read-only connections, which WAL
//! lets run beside the writer without waiting for it; writes go through the one [`Writer`].

mod backup;
mod changes;
mod codec;
mod lists;
mod persist_wal;
mod prepared;
#[cfg(test)]
mod query_plans;
mod readers;
mod search_batches;
mod statements;
mod tenants;
mod webhooks;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use lists::Lists;
use readers::Readers;
use statements::{execute, rows};
use uuid::Uuid;

pub use backup::Backup;

use crate::reads::{self, Query, ReadRows, Sqlite};
use crate::*;
use writer::Writer;

/// How long a statement waits for a lock held by another process before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);
/// Page caches, in KiB (SQLite's negative `cache_size`). The writer's holds the pages every
/// write touches — a dozen indexes and the search tables — which with SQLite's default 2 MiB
/// are read again on every write (BENCHMARKS.md, *Why, measured: SQLite's caches, checkpoints
/// and bound values*).
const WRITER_CACHE: &str = "-65536";
const READER_CACHE: &str = "-16384";
/// What the writer's connection sets (the journal mode, WAL, is the file's and set at start).
const WRITER_PRAGMAS: &[(&str, &str)] = &[
    ("synchronous", "FULL"),
    ("foreign_keys", "ON"),
    // Unmapped, as the readers: inside a write transaction SQLite fetches from the map only the
    // pages it asks read-only, and looks each of those up in the WAL's index first, where its
    // cache would have answered (BENCHMARKS.md, *Why, measured: SQLite's writer without the file
    // mapped*).
    ("mmap_size", "0"),
    ("cache_size", WRITER_CACHE),
    ("wal_autocheckpoint", WAL_CHECKPOINT),
    // Savepoints' journals (a write's undo) stay in memory instead of spilling to a file.
    ("temp_store", "MEMORY"),
];
/// Statements the writer keeps prepared: each change's text (a handful of shapes each).
const PREPARED: usize = 256;
/// What each read connection sets. Readers do not map the file: in WAL mode a connection whose
/// read transaction finds a commit it has not seen unmaps the whole file, and the next read
/// maps it again and faults in every page it touches. With payments committing all the time
/// that was every read, and `munmap` stops every core running the process to flush its TLB
/// (BENCHMARKS.md, *Why, measured: SQLite readers without the file mapped*).
const READER_PRAGMAS: &[(&str, &str)] = &[("mmap_size", "0"), ("cache_size", READER_CACHE)];
/// WAL pages after which the writer copies them into the database file (a checkpoint). Pages are
/// SQLite's default 4 KiB: 2 KiB pages were measured and not kept, a payment's commit cheaper but
/// the file larger and its backups slower (BENCHMARKS.md, *Why, measured: A payment's JSON and
/// pages*). SQLite's default checkpoint, 1,000 pages, meant a checkpoint every few commits, each
/// copying again the pages every commit rewrites (the last leaf of each index, the balances); this
/// many more than halves the pages written per payment (BENCHMARKS.md, *Why, measured: SQLite's
/// caches, checkpoints and bound values*), and the WAL file stays small.
const WAL_CHECKPOINT: &str = "10000";
/// The database's `application_id`: "PAYS".
const APPLICATION_ID: i64 = 0x5041_5953;

/// The migrations, in order. Files, so a reader sees the schema's history; embedded, so the
/// binary needs nothing beside it.
pub(crate) const MIGRATIONS: migrations::Migrations = &[
    (1, "release 0.1", include_str!("../../migrations/sqlite/0001_release_0_1.sql")),
    (2, "relational", include_str!("../../migrations/sqlite/0002_relational.sql")),
    (3, "retention", include_str!("../../migrations/sqlite/0003_retention.sql")),
    (4, "contract 2.0", include_str!("../../migrations/sqlite/0004_contract_2.sql")),
    (5, "writer checks", include_str!("../../migrations/sqlite/0005_writer_checks.sql")),
    (6, "search merges", include_str!("../../migrations/sqlite/0006_search_merges.sql")),
    (7, "readiness", include_str!("../../migrations/sqlite/0007_readiness.sql")),
    (8, "scheduled payment filter", include_str!("../../migrations/sqlite/0008_scheduled_payment_filter.sql")),
    (9, "search batches", include_str!("../../migrations/sqlite/0009_search_batches.sql")),
    (10, "checks without lists", include_str!("../../migrations/sqlite/0010_checks_without_lists.sql")),
    (11, "search without copies", include_str!("../../migrations/sqlite/0011_search_without_copies.sql")),
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

/// Fields drop in order: the read connections close before the writer's, which, closing last,
/// checkpoints the WAL into the file.
pub struct SqliteStore {
    path: PathBuf,
    readers: Arc<Readers>,
    /// Where list pages are read; see `lists`. Dropped before the writer.
    lists: Lists,
    writer: Writer,
    /// Holds the file of an in-memory (`sqlite::memory:`) database until the store is dropped.
    _temporary: Option<tempfile::TempDir>,
}

impl SqliteStore {
    /// See [`crate::open`].
    pub async fn open(location: &str) -> std::result::Result<Self, OpenError> {
        let (path, temporary) = match location {
            "sqlite::memory:" | ":memory:" | "sqlite://:memory:" => {
                let dir = tempfile::Builder::new()
                    .prefix("payments-sandbox-")
                    .tempdir()
                    .map_err(|e| OpenError::failed("cannot make a temporary directory for an in-memory database", e))?;
                (dir.path().join("memory.db"), Some(dir))
            }
            other => (file_of(other), None),
        };
        let shown = path.display().to_string();
        if path.exists() {
            check_ours(&path, &shown)?;
        }
        // The migrations and the planner's statistics on a connection of their own, closed
        // before the writer's opens.
        let mut connection =
            open_to_migrate(&path).map_err(|e| OpenError::failed(format!("cannot open database {shown}"), e))?;
        migrations::run_sqlite(&mut connection, MIGRATIONS, &shown, "give --database a new file")?;
        // Maintenance, not a need: on a full disk (or a read-only one) the sandbox starts
        // without it, serves reads, and refuses writes until there is room again.
        refresh_statistics(&connection).unwrap_or_else(
            |error| tracing::warn!(database = %shown, %error, "cannot refresh the planner's statistics"),
        );
        drop(connection);
        let writer = open_writer(&path)
            .and_then(|connection| {
                Writer::start(connection).map_err(|e| OpenError::failed("cannot start the writer", e))
            })
            .map_err(|e| OpenError::failed(format!("cannot open database {shown} for writing"), e))?;
        let readers = Readers::open(&path, BUSY_TIMEOUT, READER_PRAGMAS)
            .map_err(|e| OpenError::failed(format!("cannot open database {shown} for reading"), e))?;
        let readers = Arc::new(readers);
        let lists = Lists::start(readers.clone(), list_pages_at_once())?;
        Ok(Self { path, readers, lists, writer, _temporary: temporary })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The file of a location that is not in memory: a path, `sqlite:PATH` or `sqlite://PATH`.
fn file_of(location: &str) -> PathBuf {
    PathBuf::from(location.strip_prefix("sqlite://").or_else(|| location.strip_prefix("sqlite:")).unwrap_or(location))
}

/// The connection that migrates: it makes the file if there is none and puts it in WAL mode
/// (the file's, for every later connection); foreign keys are checked, as every migration was
/// written to have them.
fn open_to_migrate(path: &Path) -> rusqlite::Result<rusqlite::Connection> {
    let connection = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
            | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    connection.busy_timeout(BUSY_TIMEOUT)?;
    connection.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))?;
    connection.execute_batch("PRAGMA foreign_keys = ON")?;
    Ok(connection)
}

/// Fresh statistics for the query planner, cheap when nothing changed. Only the index sizes
/// (`sqlite_stat1`): given the value samples of `sqlite_stat4`, the planner looks at a
/// statement's parameters, so every execution with new values compiled the statement again
/// (BENCHMARKS.md, *Why, measured: SQLite's caches, checkpoints and bound values*). The plans
/// (see `query_plans`) need only the sizes.
///
/// Nor any for FTS5's own tables (`*_search_data` and the like): FTS5 reads and deletes their
/// rows by key ranges, which a seek serves whatever their size, but statistics gathered while a
/// table was small (a new database's search table holds 2 rows) made the planner scan instead,
/// and they stay until the next start. FTS5 deletes the segments it merges by key range at
/// nearly every commit, and scanning the whole index each time capped payments (BENCHMARKS.md,
/// *Why, measured: SQLite's planner and FTS5's segments*).
fn refresh_statistics(connection: &rusqlite::Connection) -> rusqlite::Result<()> {
    connection.execute_batch("PRAGMA optimize = 0x10002")?;
    let stat4 = "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat4')";
    if connection.query_row(stat4, [], |row| row.get::<_, bool>(0))? {
        connection.execute_batch("DELETE FROM sqlite_stat4")?;
    }
    for searched in [reads::Searched::Transactions, reads::Searched::VirtualAccounts] {
        let shadow = format!("{}\\_%", codec::search_table(searched));
        connection.execute("DELETE FROM sqlite_stat1 WHERE tbl LIKE ?1 ESCAPE '\\'", [shadow])?;
    }
    connection.execute_batch("ANALYZE sqlite_schema")
}

/// See [`crate::backup`].
pub(crate) fn backup(location: &str, to: &Path) -> std::result::Result<Backup, OpenError> {
    if matches!(location, "sqlite::memory:" | ":memory:" | "sqlite://:memory:") {
        return Err(OpenError::refused("an in-memory database has nothing to back up"));
    }
    backup::backup(&file_of(location), to)
}

/// The writer's connection. `synchronous = FULL`: a commit is on disk before it returns.
fn open_writer(path: &Path) -> std::result::Result<rusqlite::Connection, OpenError> {
    let connection = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| OpenError::failed("cannot open the file", e))?;
    connection.busy_timeout(BUSY_TIMEOUT).map_err(|e| OpenError::failed("cannot set the busy timeout", e))?;
    for (name, value) in WRITER_PRAGMAS {
        connection.pragma_update(None, name, value).map_err(|e| OpenError::failed(format!("cannot set {name}"), e))?;
    }
    connection.set_prepared_statement_cache_capacity(PREPARED);
    persist_wal::persist_wal(&connection)?;
    Ok(connection)
}

/// Refuses a file that is not a sandbox database before anything touches it: read-only, so a
/// file that is refused is left exactly as it was.
fn check_ours(path: &Path, shown: &str) -> std::result::Result<(), OpenError> {
    let unreadable = |e: rusqlite::Error| OpenError::failed(format!("cannot read database {shown}"), e);
    let probe = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| OpenError::failed(format!("cannot open database {shown}"), e))?;
    let tables = probe
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
        .and_then(|mut statement| statement.query_map([], |row| row.get(0))?.collect::<rusqlite::Result<Vec<String>>>())
        .map_err(unreadable)?;
    let application_id: i64 = probe.query_row("PRAGMA application_id", [], |row| row.get(0)).map_err(unreadable)?;
    drop(probe);
    if application_id == APPLICATION_ID {
        return Ok(());
    }
    if !tables.iter().all(|t| RELEASE_0_1_TABLES.contains(&t.as_str())) {
        return Err(OpenError::refused(format!(
            "{shown} is not a payments-sandbox database (it has tables {}): give --database a new file",
            tables.join(", ")
        )));
    }
    if tables.iter().any(|t| t == "resources") {
        tracing::info!(database = %shown, "upgrading a database of release 0.1 to the relational schema");
    }
    Ok(())
}

impl ReadRows for SqliteStore {
    type Dialect = Sqlite;
    type Row<'r> = statements::Row<'r>;

    async fn one<T: Send>(
        &self,
        query: Query<Sqlite>,
        decode: impl for<'r> Fn(&statements::Row<'r>) -> Result<T> + Send,
    ) -> Result<Option<T>> {
        Ok(self.readers.with(|c| rows(c, query, decode, Some(1)))?.pop())
    }

    async fn all<T: Send>(
        &self,
        query: Query<Sqlite>,
        decode: impl for<'r> Fn(&statements::Row<'r>) -> Result<T> + Send,
    ) -> Result<Vec<T>> {
        self.readers.with(|c| rows(c, query, decode, None))
    }

    /// The cursor (one key looked up) is read here, the page on a list thread.
    async fn page<T: Send + 'static>(
        &self,
        (table, visible): (&str, &str),
        tenant: TenantId,
        page: Page,
        list: impl FnOnce(Option<i64>) -> Query<Sqlite> + Send,
        decode: impl for<'r> Fn(&statements::Row<'r>) -> Result<T> + Send + 'static,
    ) -> Result<Vec<T>> {
        let start = match page.starting_after {
            Some(after) => {
                let cursor = reads::cursor::<Sqlite>(table, visible, tenant.0, after);
                let found = self.readers.with(|c| rows(c, cursor, |row| Ok(row.get::<i64>(0)?), Some(1)))?;
                Some(found.first().copied().ok_or(StoreError::UnknownCursor(after))?)
            }
            None => None,
        };
        let query = list(start);
        self.lists.read(move |readers| readers.with(|c| rows(c, query, decode, None))).await
    }
}

#[async_trait]
impl Store for SqliteStore {
    fn describe(&self) -> String {
        format!("SQLite {}", self.path.display())
    }

    async fn tenant_by_token(&self, hash: &TokenHash) -> Result<Option<TenantRecord>> {
        self.readers.with(|c| tenants::holder(c, hash))
    }

    async fn ensure_tenant(&self, hash: &TokenHash, name: &str, now: DateTime<Utc>) -> Result<EnsuredTenant> {
        let (hash, name) = (*hash, name.to_owned());
        self.writer.write(move |c| tenants::ensure(&c.connection, &hash, &name, now)).await
    }

    async fn create_tenant(&self, hash: &TokenHash, name: &str, now: DateTime<Utc>) -> Result<TenantRecord> {
        let (hash, name) = (*hash, name.to_owned());
        self.writer.write(move |c| tenants::create(&c.connection, &hash, &name, now)).await
    }

    async fn tenant_count(&self) -> Result<u64> {
        self.readers.with(|c| tenants::count(c))
    }

    async fn ready(&self) -> Result<()> {
        self.readers.with(|c| Ok(c.query_row("SELECT checked_at FROM readiness", [], |_| Ok(()))?))?;
        let now = reads::micros(Utc::now());
        self.writer
            .write(move |session| {
                let mut query = Query::new("UPDATE readiness SET room = zeroblob(65536), checked_at = ");
                query.bind(now);
                execute(&session.connection, query)?;
                Ok(())
            })
            .await
    }

    async fn unreconciled_balances(&self) -> Result<Vec<Unreconciled>> {
        self.readers.with(|c| tenants::unreconciled(c))
    }

    async fn apply(&self, changes: Changeset) -> Result<()> {
        self.writer
            .write(move |session| {
                let searchable = changes::apply(&session.connection, &changes, session.alone)?;
                session.search_waiting = session.search_waiting.map(|waiting| waiting + searchable);
                Ok(())
            })
            .await
    }

    async fn claim(
        &self,
        endpoint: Uuid,
        now: DateTime<Utc>,
        limit: usize,
        lease_until: DateTime<Utc>,
    ) -> Result<Vec<Attempt>> {
        self.writer.write(move |c| webhooks::claim(&c.connection, endpoint, now, limit, lease_until, None)).await
    }

    async fn record_attempt(
        &self,
        notification: Uuid,
        outcome: AttemptOutcome,
        next: Option<NextClaim>,
    ) -> Result<Option<Attempt>> {
        self.writer.write(move |c| webhooks::record_attempt(&c.connection, notification, outcome, next)).await
    }

    async fn release_claims(&self) -> Result<u64> {
        self.writer.write(|c| webhooks::release_claims(&c.connection)).await
    }

    async fn prune(&self, before: DateTime<Utc>) -> Result<Pruned> {
        let mut pruned = Pruned::default();
        // A batch per write, so payments queued behind the writer wait for one batch at most.
        for table in [Prunable::Notifications, Prunable::Events] {
            loop {
                let deleted = self
                    .writer
                    .write(move |c| Ok(execute(&c.connection, reads::webhooks::prune(table, before))? as u64))
                    .await?;
                pruned.add(table, deleted);
                if deleted < reads::webhooks::PRUNE_BATCH {
                    break;
                }
            }
        }
        Ok(pruned)
    }
}
