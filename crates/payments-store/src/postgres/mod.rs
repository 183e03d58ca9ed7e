//! The shared backend: one PostgreSQL database that any number of sandbox instances use at
//! once. Everything a single process guarantees with its one SQLite writer, the database
//! guarantees here across processes:
//!
//! - migrations run under an advisory lock (`migrations.rs`), and tenants are made under one of
//!   their own, so instances started at the same moment do each once;
//! - a changeset is written in one transaction (`READ COMMITTED`) with the others queued beside
//!   it, each in a savepoint (group commit: `writer.rs`): a debit is an `UPDATE` of the balance
//!   row, which takes its lock and checks the `funds` constraint on the value it writes, so
//!   concurrent debits from any instance queue on the row and none overdraws; a status change
//!   names the status it expects and changes nothing (found stale) when another instance moved
//!   it first; idempotency keys are unique indexes, so of two instances making one key, one
//!   waits for the other and then finds it taken;
//! - the outbox is claimed with `FOR UPDATE SKIP LOCKED` under a lease, so each notification is
//!   delivered by one instance at a time, and by another once the lease of one that died runs
//!   out;
//! - a write is acknowledged once committed, and PostgreSQL's commit is on disk
//!   (`synchronous_commit`, its default): nothing acknowledged is lost when an instance dies;
//! - a write runs to its end (commit or rollback) in a task of its own, whatever becomes of the
//!   request that asked for it (a changeset in its lane; the others through [`to_the_end`]).

mod changes;
mod outbox;
mod params;
#[cfg(test)]
mod query_plans;
mod reader;
mod tenants;
mod writer;

use std::time::Duration;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use deadpool_postgres::{GenericClient, Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio_postgres::Config;
use uuid::Uuid;

use crate::migrations::{Migrations, run_postgres};
use crate::reads::{
    self, Dialect, Postgres, Query, ReadRows, Searched, Selection, like_pattern, order_and_limit, qualified,
};
use crate::*;

/// Pooled connections per instance for tenants, migrations and retention, and for the outbox
/// (reads and writes have connections of their own: `reader.rs`, `writer.rs`). Several
/// instances on one server need `max_connections` (100 by default) of at least instances ×
/// [`connections_per_instance`].
const CONNECTIONS: usize = 4;
const OUTBOX_CONNECTIONS: usize = 4;
/// The newest rows a search looks at first through the list's index (see
/// [`Dialect::search_page`]): about a millisecond's reading (`ILIKE` costs some microseconds a
/// row), in which a needle found in one row of 30 or more fills a page.
const SEARCH_WINDOW: u32 = 300;
/// How long a request waits for a pooled connection, and anyone for the server to answer.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(10);
/// A session left inside a transaction this long is ended by the server, which rolls the
/// transaction back and frees its locks. None of ours waits that long between statements; this
/// bounds the harm of one that was abandoned (see [`to_the_end`]).
const IDLE_IN_TRANSACTION: &str = "30s";

pub(crate) const MIGRATIONS: Migrations = &[
    (1, "schema", include_str!("../../migrations/postgres/0001_schema.sql")),
    (2, "retention", include_str!("../../migrations/postgres/0002_retention.sql")),
    (3, "contract 2.0", include_str!("../../migrations/postgres/0003_contract_2.sql")),
    (4, "search pending list", include_str!("../../migrations/postgres/0004_search_pending_list.sql")),
    (5, "readiness", include_str!("../../migrations/postgres/0005_readiness.sql")),
    (6, "scheduled payment filter", include_str!("../../migrations/postgres/0006_scheduled_payment_filter.sql")),
];

impl Dialect for Postgres {
    /// The range of one index, written so that no other can serve the page: the driver's
    /// (a filter's column, or the tenant's) equality and the key bounds as two row comparisons,
    /// `(column, seq) >= (value, from)` and `(column, seq) < (value, before)`, and the page
    /// ordered by `column, seq`, which only that index holds in order (an equality would let
    /// the planner drop `column` from the order, and any index ending in `seq` would do).
    ///
    /// Left to choose, the planner walked the key index backwards whenever it judged that the
    /// filter's rows were spread evenly: always for the generic plan of a prepared statement
    /// (which takes each value for 1/(the values seen) of the rows), and for a custom one when
    /// the rows were old (recent payments `initiated`, older ones `processing`). A filter
    /// matching none or only old rows then read every row (BENCHMARKS.md, *Why, measured:
    /// PostgreSQL lists and searches*).
    /// The exact `created` bounds are not repeated beside the key bounds (see
    /// [`Selection::push_rest`]): taking each for a 200th of the rows, the planner expected a
    /// handful and sorted them rather than read the index in order.
    fn select(query: &mut Query<Self>, selection: &Selection, alias: &str, key: &str, limit: u32) {
        let Some((column, value)) = selection.driver() else {
            // A unique key: its index finds the row, whatever the plan.
            selection.push_conditions(query, alias, key);
            return order_and_limit(query, &format!("{key} DESC"), limit);
        };
        selection.push_rest(query, alias, column);
        if column != "tenant_id" {
            // What the partial indexes of optional columns (`WHERE recipient_id IS NOT NULL`)
            // need to see to be used: PostgreSQL does not infer it from a row comparison.
            query.push(format!(" AND {alias}.{column} IS NOT NULL"));
        }
        let (from, before) = (selection.from().unwrap_or(i64::MIN), selection.before().unwrap_or(i64::MAX));
        query.push(format!(" AND ({alias}.{column}, {key}) >= (")).bind(value.clone()).push(", ").bind(from);
        query.push(format!(") AND ({alias}.{column}, {key}) < (")).bind(value).push(", ").bind(before).push(")");
        order_and_limit(query, &format!("{alias}.{column} DESC, {key} DESC"), limit);
    }

    /// The rows whose `search` column (their searched fields, joined) contains `needle`, any
    /// case, in two steps whose cost does not depend on where the matches lie:
    ///
    /// 1. the newest [`SEARCH_WINDOW`] rows that `selection` selects, read newest first through
    ///    their list index like any list, and their matches;
    /// 2. only when those were too few, the older matches through the trigram index, sorted.
    ///
    /// Left to itself, the planner walked the key index backwards until a page of matches was
    /// found, assuming them spread evenly: when the matches were the oldest rows, that read the
    /// whole table (BENCHMARKS.md, *Why, measured: PostgreSQL lists and searches*). Step
    /// 1 finds common needles at once; step 2 runs only when step 1 came up short (its
    /// conditions on step 1 are constants, which PostgreSQL checks before running it) and
    /// costs what the older matches number. Nothing in step 2 is in a form a b-tree index can
    /// serve (`seq + 0`), so its plan, even the generic plan of the prepared statement, is the
    /// trigram index's, not the key index's range, filtered.
    fn search_page(searched: Searched, columns: &str, needle: &str, selection: &Selection, limit: u32) -> Query<Self> {
        let (table, alias) = (searched.table(), searched.alias());
        let pattern = like_pattern(needle);
        let mut query =
            Query::new(format!("WITH recent AS MATERIALIZED (SELECT r.seq, r.search FROM {table} r WHERE "));
        Self::select(&mut query, selection, "r", "r.seq", SEARCH_WINDOW);
        query.push("), near AS MATERIALIZED (SELECT seq FROM recent WHERE search ILIKE ").bind(pattern.clone());
        query.push(format!(" ORDER BY seq DESC LIMIT {limit}) "));
        query.push(format!(
            "SELECT {} FROM (SELECT seq FROM near UNION ALL (SELECT o.seq FROM {table} o \
             WHERE (SELECT count(*) FROM near) < {limit} AND (SELECT count(*) FROM recent) = {SEARCH_WINDOW} \
             AND o.seq + 0 < (SELECT min(seq) FROM recent) AND o.search ILIKE ",
            qualified(columns, alias)
        ));
        query.bind(pattern).push(" AND ");
        selection.push_conditions(&mut query, "o", "o.seq + 0");
        query.push(format!(
            " ORDER BY o.seq + 0 DESC LIMIT {limit})) m JOIN {table} {alias} ON {alias}.seq = m.seq \
             ORDER BY {alias}.seq DESC LIMIT {limit}"
        ));
        query
    }

    const ENDPOINT_EVENTS: &'static str = "CASE WHEN w.all_events THEN NULL ELSE (SELECT \
         COALESCE(json_agg(s.event ORDER BY s.position), '[]')::text FROM webhook_subscriptions s \
         WHERE s.endpoint_id = w.id) END";
}

pub struct PostgresStore {
    /// Tenants and retention.
    pool: Pool,
    /// The delivery workers' claims and attempt records.
    outbox: Pool,
    reader: reader::Reader,
    writer: writer::Writer,
    /// The URL without its password.
    shown: String,
}

/// Connections for point reads: one per core, at least two. The fewer, the more reads each
/// system call carries when nothing else runs, but the smaller PostgreSQL's share of its CPU
/// for reads when writes keep it busy (each connection is one server process): BENCHMARKS.md,
/// *Why, measured: PostgreSQL reads pipelined*.
fn point_read_connections() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 16))
}

/// The connections one instance holds: the pool's, the point reads', one per list page read
/// at once, and the write lanes'.
fn connections_per_instance() -> usize {
    CONNECTIONS + OUTBOX_CONNECTIONS + point_read_connections() + list_pages_at_once() + writer::LANES
}

/// What to tell the person starting an instance that cannot connect.
fn cannot_connect(shown: &str, error: tokio_postgres::Error) -> OpenError {
    let full = error.code() == Some(&tokio_postgres::error::SqlState::TOO_MANY_CONNECTIONS);
    let hint = if full {
        format!(
            " (each instance holds {} connections: raise the server's max_connections or the role's or database's connection limit, or run fewer instances)",
            connections_per_instance()
        )
    } else {
        String::new()
    };
    OpenError::failed(format!("cannot connect to {shown}{hint}"), error)
}

impl PostgresStore {
    /// See [`crate::open`].
    pub async fn open(url: &str) -> std::result::Result<Self, OpenError> {
        let shown = without_password(url);
        let mut config: Config =
            url.parse().map_err(|e| OpenError::failed(format!("{shown} is not a PostgreSQL URL"), e))?;
        config.connect_timeout(ACQUIRE_TIMEOUT);
        // A list page costs PostgreSQL up to a few milliseconds and a payment a fraction of one;
        // written in batches, payments are CPU-bound, and clients listing back to back took
        // their CPU (BENCHMARKS.md, *Why, measured: PostgreSQL lists and searches*). So pages
        // are read a few at once, like SQLite's (`sqlite/lists.rs`). Nothing is read or
        // written before the database is checked below.
        let pages = list_pages_at_once();
        let reader = reader::Reader::start(url, &shown, point_read_connections(), pages, ACQUIRE_TIMEOUT).await?;
        let writer = writer::Writer::start(url, &shown).await?;
        // The check and the migrations on a connection of their own, closed once done.
        let mut client = connect(&config, "migration").await.map_err(|e| cannot_connect(&shown, e))?;
        check_ours(&client, &shown).await?;
        run_postgres(&mut client, MIGRATIONS, &shown, "give --database an empty database").await?;
        drop(client);
        let idle = ("idle_in_transaction_session_timeout", IDLE_IN_TRANSACTION);
        let pool = connect_pool(&config, &[idle], CONNECTIONS, &shown).await?;
        // The outbox's claims and attempt records are not waited for on disk: they are no
        // client's acknowledged write, and losing the last of them to a crash of the server
        // only delivers those notifications again (delivery is at least once). Waiting, each
        // delivery's record took a flush of PostgreSQL's log of its own.
        let outbox = connect_pool(&config, &[idle, ("synchronous_commit", "off")], OUTBOX_CONNECTIONS, &shown).await?;
        Ok(Self { pool, outbox, reader, writer, shown })
    }
}

/// A tokio-postgres connection (`role`: the reader's, the writer's, a probe's), driven by a
/// task of its own, which logs how it ended.
async fn connect(config: &Config, role: &'static str) -> Result<tokio_postgres::Client, tokio_postgres::Error> {
    let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
    tokio::spawn(async move {
        if let Err(error) = connection.await {
            tracing::warn!(%error, "a {role} connection to PostgreSQL ended");
        }
    });
    Ok(client)
}

/// A pool of up to `size` connections made with `config` and the session `settings`, its first
/// connection made now (so that start-up fails, with the server's reason, when the server
/// refuses it). A connection is checked only for having closed before it is used: one the
/// server ended (a restart, `pg_terminate_backend`) is closed by its task as the server says
/// so, and is dropped for a new one.
async fn connect_pool(
    config: &Config,
    settings: &[(&str, &str)],
    size: usize,
    shown: &str,
) -> std::result::Result<Pool, OpenError> {
    let mut config = config.clone();
    let mut options = config.get_options().unwrap_or_default().to_owned();
    for (name, value) in settings {
        options.push_str(&format!(" -c {name}={value}"));
    }
    config.options(options.trim_start());
    let manager =
        Manager::from_config(config, tokio_postgres::NoTls, ManagerConfig { recycling_method: RecyclingMethod::Fast });
    let pool = Pool::builder(manager)
        .max_size(size)
        .wait_timeout(Some(ACQUIRE_TIMEOUT))
        .create_timeout(Some(ACQUIRE_TIMEOUT))
        .runtime(Runtime::Tokio1)
        .build()
        .map_err(|e| OpenError::failed("cannot make a connection pool", e))?;
    match pool.get().await {
        Ok(_first) => Ok(pool),
        Err(deadpool_postgres::PoolError::Backend(refused)) => Err(cannot_connect(shown, refused)),
        Err(error) => Err(OpenError::failed(format!("cannot connect to {shown}"), error)),
    }
}

/// The rows of `query` on `client` (a pooled connection, or a transaction on one).
async fn rows(client: &impl GenericClient, query: Query<Postgres>) -> Result<Vec<tokio_postgres::Row>> {
    let (statement, values) = prepared(client, query).await?;
    Ok(client.query(&statement, &params::params(&values)).await?)
}

/// What `query` changed on `client`: see [`rows`].
async fn execute(client: &impl GenericClient, query: Query<Postgres>) -> Result<u64> {
    let (statement, values) = prepared(client, query).await?;
    Ok(client.execute(&statement, &params::params(&values)).await?)
}

/// `query`'s statement, prepared once per connection, and its values.
async fn prepared(
    client: &impl GenericClient,
    query: Query<Postgres>,
) -> Result<(tokio_postgres::Statement, Vec<reads::Value>)> {
    let (sql, values) = query.prepared();
    let types: Vec<_> = values.iter().map(params::type_of).collect();
    Ok((client.prepare_typed_cached(&sql, &types).await?, values))
}

/// `url` without its password (in the authority or as a `password=` parameter), for messages.
fn without_password(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (location, query) = match rest.split_once('?') {
        Some((location, query)) => (location, Some(query)),
        None => (rest, None),
    };
    // The last `@` ends the user information, whatever the password holds.
    let location = match location.rsplit_once('@') {
        Some((user, host)) => format!("{}@{host}", user.split(':').next().unwrap_or_default()),
        None => location.to_owned(),
    };
    let kept: Vec<&str> =
        query.into_iter().flat_map(|q| q.split('&')).filter(|p| !p.to_lowercase().starts_with("password=")).collect();
    if kept.is_empty() { format!("{scheme}://{location}") } else { format!("{scheme}://{location}?{}", kept.join("&")) }
}

/// Refuses a database that holds something else before anything touches it: one with tables
/// but no migration history is not a sandbox's (a history of another application's is refused
/// by the migrator, which finds versions it does not know).
async fn check_ours(client: &tokio_postgres::Client, shown: &str) -> std::result::Result<(), OpenError> {
    let tables: Vec<String> = client
        .query(
            "SELECT table_name::text FROM information_schema.tables WHERE table_schema = current_schema()
             ORDER BY table_name",
            &[],
        )
        .await
        .and_then(|rows| rows.iter().map(|row| row.try_get(0)).collect())
        .map_err(|e| OpenError::failed(format!("cannot read {shown}"), e))?;
    if tables.is_empty() || tables.iter().any(|t| t == "_sqlx_migrations") {
        return Ok(());
    }
    Err(OpenError::refused(format!(
        "{shown} is not a payments-sandbox database (it has tables {}): give --database an empty database",
        tables.join(", ")
    )))
}

impl ReadRows for PostgresStore {
    type Dialect = Postgres;
    type Row<'r> = tokio_postgres::Row;

    async fn one<T: Send>(
        &self,
        query: Query<Postgres>,
        decode: impl for<'r> Fn(&tokio_postgres::Row) -> Result<T> + Send,
    ) -> Result<Option<T>> {
        self.reader.rows(query).await?.first().map(decode).transpose()
    }

    async fn all<T: Send>(
        &self,
        query: Query<Postgres>,
        decode: impl for<'r> Fn(&tokio_postgres::Row) -> Result<T> + Send,
    ) -> Result<Vec<T>> {
        self.reader.rows(query).await?.iter().map(decode).collect()
    }

    async fn page<T: Send + 'static>(
        &self,
        (table, visible): (&str, &str),
        tenant: TenantId,
        page: Page,
        list: impl FnOnce(Option<i64>) -> Query<Postgres> + Send,
        decode: impl for<'r> Fn(&tokio_postgres::Row) -> Result<T> + Send + 'static,
    ) -> Result<Vec<T>> {
        let start = match page.starting_after {
            Some(after) => Some(
                *self
                    .reader
                    .scalars::<i64>(reads::cursor::<Postgres>(table, visible, tenant.0, after))
                    .await?
                    .first()
                    .ok_or(StoreError::UnknownCursor(after))?,
            ),
            None => None,
        };
        self.reader.page(list(start)).await?.iter().map(decode).collect()
    }
}

#[async_trait]
impl Store for PostgresStore {
    fn describe(&self) -> String {
        format!("PostgreSQL {}", self.shown)
    }

    async fn tenant_by_token(&self, hash: &TokenHash) -> Result<Option<TenantRecord>> {
        tenants::by_token(&self.pool.get().await?, hash).await
    }

    async fn ensure_tenant(&self, hash: &TokenHash, name: &str, now: DateTime<Utc>) -> Result<EnsuredTenant> {
        let (pool, hash, name) = (self.pool.clone(), *hash, name.to_owned());
        to_the_end(async move { tenants::ensure(&pool, &hash, &name, now).await }).await
    }

    async fn create_tenant(&self, hash: &TokenHash, name: &str, now: DateTime<Utc>) -> Result<TenantRecord> {
        let (pool, hash, name) = (self.pool.clone(), *hash, name.to_owned());
        to_the_end(async move {
            let mut client = pool.get().await?;
            let transaction = client.transaction().await?;
            let tenant = tenants::create(&transaction, &hash, &name, now).await?;
            transaction.commit().await?;
            Ok(tenant)
        })
        .await
    }

    async fn tenant_count(&self) -> Result<u64> {
        tenants::count(&self.pool).await
    }

    async fn ready(&self) -> Result<()> {
        self.reader.rows(Query::new("SELECT checked_at FROM readiness")).await?;
        let pool = self.pool.clone();
        to_the_end(async move {
            pool.get().await?.batch_execute("UPDATE readiness SET checked_at = now()").await?;
            Ok(())
        })
        .await
    }

    async fn unreconciled_balances(&self) -> Result<Vec<Unreconciled>> {
        tenants::unreconciled(&self.pool).await
    }

    async fn apply(&self, changes: Changeset) -> Result<()> {
        // The lane's task writes it to the end, whatever becomes of the caller.
        self.writer.apply(changes).await
    }

    async fn claim(
        &self,
        endpoint: Uuid,
        now: DateTime<Utc>,
        limit: usize,
        lease_until: DateTime<Utc>,
    ) -> Result<Vec<Attempt>> {
        let pool = self.outbox.clone();
        to_the_end(async move { outbox::claim(&pool, endpoint, now, limit, lease_until).await }).await
    }

    async fn record_attempt(
        &self,
        notification: Uuid,
        outcome: AttemptOutcome,
        next: Option<NextClaim>,
    ) -> Result<Option<Attempt>> {
        let pool = self.outbox.clone();
        to_the_end(async move { outbox::record_attempt(&pool, notification, outcome, next).await }).await
    }

    async fn release_claims(&self) -> Result<u64> {
        // Other instances may be delivering what is claimed: their leases run out if they died.
        Ok(0)
    }

    async fn prune(&self, before: DateTime<Utc>) -> Result<Pruned> {
        let mut pruned = Pruned::default();
        // A batch per transaction, so no lock is held for long. Several instances may prune at
        // once: a row deleted by one is simply not found by the other.
        for table in [Prunable::Notifications, Prunable::Events] {
            loop {
                let pool = self.pool.clone();
                let deleted = to_the_end(async move {
                    execute(&pool.get().await?, reads::webhooks::prune::<Postgres>(table, before)).await
                })
                .await?;
                pruned.add(table, deleted);
                if deleted < reads::webhooks::PRUNE_BATCH {
                    break;
                }
            }
        }
        // What was pruned is reusable only once vacuumed; autovacuum would come by after a
        // fifth of the table is dead, so the tables grew meanwhile. A plain VACUUM blocks no
        // reads or writes; an instance that finds another vacuuming skips it.
        if pruned.notifications + pruned.events > 0 {
            self.pool.get().await?.batch_execute("VACUUM (SKIP_LOCKED) notifications, events").await?;
        }
        Ok(pruned)
    }
}

/// Runs `write` to its end in a task of its own. A request's future is dropped when its client
/// hangs up; dropped in the middle of a transaction, a write's connection could go back to the
/// pool still inside that transaction, and the statements later run on the connection stay
/// uncommitted, holding their row locks (seen with the pool this store had before): webhook
/// deliveries, and a graceful stop with them, waited on those locks (found by the benchmark,
/// whose load tool hangs up on the requests in flight when it stops). A write, once started,
/// commits or rolls back.
async fn to_the_end<T: Send + 'static>(write: impl Future<Output = Result<T>> + Send + 'static) -> Result<T> {
    tokio::spawn(write).await.map_err(|_| StoreError::Stopped("a write's task failed before it finished"))?
}

#[cfg(test)]
mod tests {
    use super::without_password;

    #[test]
    fn messages_never_show_the_password() {
        let cases = [
            ("postgres://ada:s3cret@db.example:5432/pay", "postgres://ada@db.example:5432/pay"),
            ("postgres://ada@db/pay?sslmode=require", "postgres://ada@db/pay?sslmode=require"),
            (
                "postgresql://db/pay?user=ada&password=s3cret&sslmode=disable",
                "postgresql://db/pay?user=ada&sslmode=disable",
            ),
            ("postgres://ada:p%40ss@db", "postgres://ada@db"),
            ("postgres://localhost/pay?password=x", "postgres://localhost/pay"),
            ("postgres://ada:pa/ss@db/pay", "postgres://ada@db/pay"),
        ];
        for (url, shown) in cases {
            assert_eq!(without_password(url), shown, "{url}");
        }
    }
}
