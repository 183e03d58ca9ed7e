//! The embedded database: one SQLite file in WAL mode with `synchronous=FULL`, so a write is on
//! disk before it is acknowledged. Resources are JSON documents (exactly what the API returns)
//! in one table keyed by kind; money lives apart from them, in `balances.amount` and the
//! `ledger` that explains every change of it.
//!
//! All access goes through one connection behind a mutex, on the blocking pool: every request is
//! one database transaction, and writes are serialised, which is what makes "check the balance,
//! then debit it" and "check the reference_id, then insert" race-free.

use std::path::Path;
use std::sync::{Arc, Mutex};

use payments_server::ApiError;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use serde::de::DeserializeOwned;
use uuid::Uuid;

const MIGRATIONS: &[&str] = &[r#"
CREATE TABLE tenants (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    default_currency TEXT NOT NULL,
    created TEXT NOT NULL
);
CREATE TABLE tokens (
    hash BLOB PRIMARY KEY,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    created TEXT NOT NULL
);
-- Every resource the API returns, as the JSON it returns (balances without their amount).
CREATE TABLE resources (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    created_us INTEGER NOT NULL,
    -- reference_id / order_id, and the request that used it, for idempotent retries.
    idempotency_key TEXT,
    request TEXT,
    deleted INTEGER NOT NULL DEFAULT 0,
    doc TEXT NOT NULL
);
CREATE INDEX resources_list ON resources (tenant_id, kind, seq);
CREATE UNIQUE INDEX resources_idempotency ON resources (tenant_id, kind, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE TABLE balances (
    id TEXT PRIMARY KEY REFERENCES resources(id),
    amount INTEGER NOT NULL CHECK (amount >= 0)
);
-- One row per change of a balance; per balance they sum to balances.amount.
CREATE TABLE ledger (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    balance_id TEXT NOT NULL REFERENCES balances(id),
    transaction_id TEXT NOT NULL,
    entry TEXT NOT NULL,
    delta INTEGER NOT NULL,
    created TEXT NOT NULL
);
CREATE INDEX ledger_balance ON ledger (balance_id);
-- Every event, recorded in the same database transaction as the change it reports.
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    event TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    created TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE webhook_endpoints (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    url TEXT NOT NULL,
    events TEXT, -- JSON array, NULL for every event
    secret TEXT NOT NULL,
    created TEXT NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0
);
-- The outbox: one row per event and subscribed endpoint, written with the event.
CREATE TABLE notifications (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    tenant_id TEXT NOT NULL REFERENCES tenants(id),
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id),
    event TEXT NOT NULL,
    created TEXT NOT NULL,
    created_us INTEGER NOT NULL,
    data TEXT NOT NULL,
    status TEXT NOT NULL,
    response_code INTEGER,
    attempts INTEGER NOT NULL DEFAULT 0,
    -- Set while a delivery is under way, so it is not claimed twice; cleared at start-up.
    in_flight INTEGER NOT NULL DEFAULT 0,
    next_attempt_us INTEGER
);
CREATE INDEX notifications_list ON notifications (tenant_id, seq);
CREATE INDEX notifications_due ON notifications (endpoint_id, next_attempt_us) WHERE next_attempt_us IS NOT NULL;
"#];

/// The kinds of resource, as stored in `resources.kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Balance,
    PaymentRequest,
    Recipient,
    VirtualAccount,
    Transaction,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Balance => "balance",
            Kind::PaymentRequest => "payment_request",
            Kind::Recipient => "recipient",
            Kind::VirtualAccount => "virtual_account",
            Kind::Transaction => "transaction",
        }
    }

    /// How a missing resource of this kind is named in a `404`.
    pub fn noun(self) -> &'static str {
        match self {
            Kind::Balance => "balance",
            Kind::PaymentRequest => "payment request",
            Kind::Recipient => "recipient",
            Kind::VirtualAccount => "virtual account",
            Kind::Transaction => "transaction",
        }
    }
}

#[derive(Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
}

/// A database failure: logged, and answered `500` with nothing changed (the transaction rolls
/// back when it is dropped).
pub fn db_error(error: impl std::fmt::Display) -> ApiError {
    tracing::error!(%error, "database error");
    ApiError::internal()
}

impl Store {
    /// Opens (creating and migrating) the database at `path`; `sqlite::memory:` or `:memory:`
    /// is an in-memory database.
    pub fn open(path: &str) -> Result<Self, String> {
        let conn = if path == "sqlite::memory:" || path == ":memory:" {
            Connection::open_in_memory()
        } else {
            Connection::open(Path::new(path))
        }
        .map_err(|e| format!("cannot open database {path}: {e}"))?;
        conn.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
            .map_err(|e| format!("cannot configure database {path}: {e}"))?;
        conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(|e| e.to_string())?;
        register_functions(&conn).map_err(|e| e.to_string())?;
        migrate(&conn).map_err(|e| format!("cannot migrate database {path}: {e}"))?;
        Ok(Self { conn: Arc::new(Mutex::new(conn)) })
    }

    /// Runs `work` in one database transaction on the blocking pool; commits when it returns
    /// `Ok`, rolls back otherwise.
    pub async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Tx) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db_error)?;
            let result = work(&Tx { tx: &tx })?;
            tx.commit().map_err(db_error)?;
            Ok(result)
        })
        .await
        .map_err(db_error)?
    }

    /// The same as [`Store::run`], for callers outside the runtime (the command line).
    pub fn run_blocking<T>(&self, work: impl FnOnce(&Tx) -> Result<T, ApiError>) -> Result<T, ApiError> {
        let mut conn = self.conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(db_error)?;
        let result = work(&Tx { tx: &tx })?;
        tx.commit().map_err(db_error)?;
        Ok(result)
    }
}

fn migrate(conn: &Connection) -> rusqlite::Result<()> {
    let version: usize = conn.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(version) {
        conn.execute_batch(&format!("BEGIN; {migration}; PRAGMA user_version = {}; COMMIT;", index + 1))?;
    }
    Ok(())
}

/// `contains_ci(haystack, needle)`: case-insensitive substring, Unicode-aware (SQLite's own
/// `lower` only folds ASCII).
fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "contains_ci",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let haystack: Option<String> = ctx.get(0)?;
            let needle: String = ctx.get(1)?;
            Ok(haystack.is_some_and(|h| h.to_lowercase().contains(&needle.to_lowercase())))
        },
    )
}

/// One open database transaction.
pub struct Tx<'a> {
    tx: &'a rusqlite::Transaction<'a>,
}

/// A filter of a list: a SQL condition over `doc` (and columns) with its parameters.
pub struct Filter {
    pub condition: String,
    pub values: Vec<rusqlite::types::Value>,
}

impl Filter {
    /// `json_extract(doc, path) = value`.
    pub fn equals(path: &str, value: impl Into<rusqlite::types::Value>) -> Self {
        Self { condition: format!("json_extract(doc, '{path}') = ?"), values: vec![value.into()] }
    }

    pub fn sql(condition: &str, values: Vec<rusqlite::types::Value>) -> Self {
        Self { condition: condition.into(), values }
    }
}

/// A page of a list: at most `limit` items older than `starting_after`.
pub struct Page {
    pub limit: i32,
    pub starting_after: Option<Uuid>,
}

impl Tx<'_> {
    pub fn sql(&self) -> &rusqlite::Transaction<'_> {
        self.tx
    }

    pub fn insert<T: Serialize>(
        &self,
        kind: Kind,
        tenant: Uuid,
        id: Uuid,
        created: chrono::DateTime<chrono::Utc>,
        idempotency: Option<(&str, &str)>,
        doc: &T,
    ) -> Result<(), ApiError> {
        let doc = serde_json::to_string(doc).map_err(db_error)?;
        let (key, request) = idempotency.unzip();
        self.tx
            .execute(
                "INSERT INTO resources (kind, id, tenant_id, created_us, idempotency_key, request, doc)
                 VALUES (?, ?, ?, ?, ?, ?, ?)",
                params![
                    kind.as_str(),
                    id.to_string(),
                    tenant.to_string(),
                    created.timestamp_micros(),
                    key,
                    request,
                    doc
                ],
            )
            .map_err(db_error)?;
        Ok(())
    }

    /// The resource of `tenant` with this id, or `None` (also for another tenant's, and for a
    /// deleted one).
    pub fn find<T: DeserializeOwned>(&self, kind: Kind, tenant: Uuid, id: Uuid) -> Result<Option<T>, ApiError> {
        let doc: Option<String> = self
            .tx
            .query_row(
                "SELECT doc FROM resources WHERE id = ? AND tenant_id = ? AND kind = ? AND deleted = 0",
                params![id.to_string(), tenant.to_string(), kind.as_str()],
                |row| row.get(0),
            )
            .optional()
            .map_err(db_error)?;
        doc.map(|doc| serde_json::from_str(&doc).map_err(db_error)).transpose()
    }

    /// The resource with this id whoever owns it, with its owner: for the hosted payment page,
    /// where the unguessable id is the credential.
    pub fn find_any<T: DeserializeOwned>(&self, kind: Kind, id: Uuid) -> Result<Option<(Uuid, T)>, ApiError> {
        let row: Option<(String, String)> = self
            .tx
            .query_row(
                "SELECT tenant_id, doc FROM resources WHERE id = ? AND kind = ? AND deleted = 0",
                params![id.to_string(), kind.as_str()],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(db_error)?;
        row.map(|(tenant, doc)| Ok((tenant.parse().map_err(db_error)?, serde_json::from_str(&doc).map_err(db_error)?)))
            .transpose()
    }

    /// As [`Tx::find`], answering `404` when there is none.
    pub fn get<T: DeserializeOwned>(&self, kind: Kind, tenant: Uuid, id: Uuid) -> Result<T, ApiError> {
        self.find(kind, tenant, id)?.ok_or_else(|| ApiError::not_found(format!("{} {id}", kind.noun())))
    }

    pub fn update<T: Serialize>(&self, kind: Kind, id: Uuid, doc: &T) -> Result<(), ApiError> {
        let doc = serde_json::to_string(doc).map_err(db_error)?;
        self.tx
            .execute(
                "UPDATE resources SET doc = ? WHERE id = ? AND kind = ?",
                params![doc, id.to_string(), kind.as_str()],
            )
            .map_err(db_error)?;
        Ok(())
    }

    pub fn mark_deleted(&self, kind: Kind, id: Uuid) -> Result<(), ApiError> {
        self.tx
            .execute(
                "UPDATE resources SET deleted = 1 WHERE id = ? AND kind = ?",
                params![id.to_string(), kind.as_str()],
            )
            .map_err(db_error)?;
        Ok(())
    }

    /// The resource an earlier request made with this `reference_id`/`order_id`, with that
    /// request's canonical JSON.
    pub fn find_by_idempotency_key<T: DeserializeOwned>(
        &self,
        kind: Kind,
        tenant: Uuid,
        key: &str,
    ) -> Result<Option<(T, String)>, ApiError> {
        let row: Option<(String, String)> = self
            .tx
            .query_row(
                "SELECT doc, request FROM resources WHERE tenant_id = ? AND kind = ? AND idempotency_key = ?",
                params![tenant.to_string(), kind.as_str(), key],
                |row| Ok((row.get(0)?, row.get(1)?)),
            )
            .optional()
            .map_err(db_error)?;
        row.map(|(doc, request)| Ok((serde_json::from_str(&doc).map_err(db_error)?, request))).transpose()
    }

    /// A page of `tenant`'s resources of `kind` matching every filter, newest first.
    pub fn list<T: DeserializeOwned>(
        &self,
        kind: Kind,
        tenant: Uuid,
        filters: Vec<Filter>,
        page: &Page,
    ) -> Result<Vec<T>, ApiError> {
        let mut sql = String::from("SELECT doc FROM resources WHERE tenant_id = ? AND kind = ? AND deleted = 0");
        let mut values: Vec<rusqlite::types::Value> = vec![tenant.to_string().into(), kind.as_str().to_owned().into()];
        if let Some(after) = page.starting_after {
            let seq = self.cursor(
                "SELECT seq FROM resources WHERE id = ?1 AND tenant_id = ?2 AND kind = ?3 AND deleted = 0",
                params![after.to_string(), tenant.to_string(), kind.as_str()],
                after,
                kind.noun(),
            )?;
            sql.push_str(" AND seq < ?");
            values.push(seq.into());
        }
        for filter in filters {
            sql.push_str(" AND ");
            sql.push_str(&filter.condition);
            values.extend(filter.values);
        }
        sql.push_str(" ORDER BY seq DESC LIMIT ?");
        values.push(i64::from(page.limit).into());
        let mut statement = self.tx.prepare_cached(&sql).map_err(db_error)?;
        let rows =
            statement.query_map(rusqlite::params_from_iter(values), |row| row.get::<_, String>(0)).map_err(db_error)?;
        rows.map(|doc| serde_json::from_str(&doc.map_err(db_error)?).map_err(db_error)).collect()
    }

    /// The `seq` of the item `after` a page starts after, found by `lookup`. An id that is not in
    /// the list (unknown, another tenant's, deleted) is refused with `400`.
    pub fn cursor(
        &self,
        lookup: &str,
        params: impl rusqlite::Params,
        after: Uuid,
        noun: &str,
    ) -> Result<i64, ApiError> {
        self.tx
            .query_row(lookup, params, |row| row.get(0))
            .optional()
            .map_err(db_error)?
            .ok_or_else(|| ApiError::bad_request(format!("starting_after: {after} is not a {noun} in this list")))
    }

    /// Ids of every tenant's resources of `kind` whose `doc` field `path` equals `value`.
    pub fn ids_where(
        &self,
        kind: Kind,
        tenant: Option<Uuid>,
        path: &str,
        value: &str,
    ) -> Result<Vec<(Uuid, Uuid)>, ApiError> {
        let sql = format!(
            "SELECT tenant_id, id FROM resources WHERE kind = ? AND deleted = 0 AND json_extract(doc, '{path}') = ?
             AND (?3 IS NULL OR tenant_id = ?3) ORDER BY seq"
        );
        let mut statement = self.tx.prepare_cached(&sql).map_err(db_error)?;
        let rows = statement
            .query_map(params![kind.as_str(), value, tenant.map(|t| t.to_string())], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })
            .map_err(db_error)?;
        rows.map(|row| {
            let (tenant, id) = row.map_err(db_error)?;
            Ok((tenant.parse().map_err(db_error)?, id.parse().map_err(db_error)?))
        })
        .collect()
    }

    // -- money ----------------------------------------------------------------------------

    pub fn open_balance(&self, id: Uuid) -> Result<(), ApiError> {
        self.tx
            .execute("INSERT INTO balances (id, amount) VALUES (?, 0)", params![id.to_string()])
            .map_err(db_error)?;
        Ok(())
    }

    pub fn balance_amount(&self, id: Uuid) -> Result<i64, ApiError> {
        self.tx
            .query_row("SELECT amount FROM balances WHERE id = ?", params![id.to_string()], |row| row.get(0))
            .map_err(db_error)
    }

    /// Changes a balance by `delta` with its ledger entry. A debit the balance does not cover is
    /// refused with `400` (and the `CHECK (amount >= 0)` stands behind that).
    pub fn post(&self, balance: Uuid, transaction: Uuid, entry: &str, delta: i64, now: &str) -> Result<(), ApiError> {
        let changed = self
            .tx
            .execute(
                "UPDATE balances SET amount = amount + ?1 WHERE id = ?2 AND amount + ?1 >= 0",
                params![delta, balance.to_string()],
            )
            .map_err(db_error)?;
        if changed != 1 {
            let available = self.balance_amount(balance)?;
            return Err(ApiError::bad_request(format!(
                "insufficient funds: balance {balance} holds {available}, this needs {}",
                -delta
            )));
        }
        self.tx
            .execute(
                "INSERT INTO ledger (balance_id, transaction_id, entry, delta, created) VALUES (?, ?, ?, ?, ?)",
                params![balance.to_string(), transaction.to_string(), entry, delta, now],
            )
            .map_err(db_error)?;
        Ok(())
    }

    /// Balances whose amount differs from the sum of their ledger entries (there should be none).
    pub fn unreconciled_balances(&self) -> Result<Vec<(String, i64, i64)>, ApiError> {
        let mut statement = self
            .tx
            .prepare(
                "SELECT b.id, b.amount, COALESCE((SELECT SUM(delta) FROM ledger l WHERE l.balance_id = b.id), 0) AS total
                 FROM balances b WHERE b.amount != total",
            )
            .map_err(db_error)?;
        let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?))).map_err(db_error)?;
        rows.collect::<Result<_, _>>().map_err(db_error)
    }

    // -- events ---------------------------------------------------------------------------

    pub fn record_event<T: Serialize>(
        &self,
        tenant: Uuid,
        event: &str,
        resource_id: Uuid,
        now: &str,
        data: &T,
    ) -> Result<Uuid, ApiError> {
        let id = Uuid::new_v4();
        let data = serde_json::to_string(data).map_err(db_error)?;
        self.tx
            .execute(
                "INSERT INTO events (id, tenant_id, event, resource_id, created, data) VALUES (?, ?, ?, ?, ?, ?)",
                params![id.to_string(), tenant.to_string(), event, resource_id.to_string(), now, data],
            )
            .map_err(db_error)?;
        crate::webhooks::enqueue(self, tenant, event, now, &data)?;
        Ok(id)
    }

    // -- tenants --------------------------------------------------------------------------

    pub fn create_tenant(&self, name: &str, token_hash: &[u8], now: &str) -> Result<Uuid, ApiError> {
        let id = Uuid::new_v4();
        self.tx
            .execute(
                "INSERT INTO tenants (id, name, default_currency, created) VALUES (?, ?, 'GBP', ?)",
                params![id.to_string(), name, now],
            )
            .map_err(db_error)?;
        self.tx
            .execute(
                "INSERT INTO tokens (hash, tenant_id, created) VALUES (?, ?, ?)",
                params![token_hash, id.to_string(), now],
            )
            .map_err(db_error)?;
        Ok(id)
    }

    pub fn tenant_count(&self) -> Result<i64, ApiError> {
        self.tx.query_row("SELECT COUNT(*) FROM tenants", [], |row| row.get(0)).map_err(db_error)
    }

    /// The tenant (id, default currency) holding the token with this hash.
    pub fn tenant_by_token_hash(&self, hash: &[u8]) -> Result<Option<(Vec<u8>, String, String)>, ApiError> {
        self.tx
            .query_row(
                "SELECT t.hash, n.id, n.default_currency FROM tokens t JOIN tenants n ON n.id = t.tenant_id WHERE t.hash = ?",
                params![hash],
                |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
            )
            .optional()
            .map_err(db_error)
    }
}
