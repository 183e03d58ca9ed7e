//! Tenants and their tokens, and the start-up check that money adds up.

use chrono::{DateTime, Utc};
use sqlx::Row;
use sqlx::sqlite::SqliteConnection;

use super::codec::unique_key;
use crate::reads::micros;
use crate::{EnsuredTenant, Result, StoreError, TenantId, TenantRecord, TokenHash, UniqueKey, Unreconciled};

/// Every new tenant's default currency (the API has no way to change it yet).
const DEFAULT_CURRENCY: &str = "GBP";

const BY_TOKEN: &str =
    "SELECT t.id, t.name, t.default_currency FROM tokens k JOIN tenants t ON t.id = k.tenant_id WHERE k.hash = $1";

/// The tenant holding the token whose hash is `hash`, read on a read connection.
pub fn holder(connection: &rusqlite::Connection, hash: &TokenHash) -> Result<Option<TenantRecord>> {
    let mut statement = connection.prepare_cached(BY_TOKEN)?;
    let mut rows = statement.query([&hash[..]])?;
    let Some(row) = rows.next()? else { return Ok(None) };
    Ok(Some(TenantRecord { id: TenantId(row.get(0)?), name: row.get(1)?, default_currency: row.get(2)? }))
}

pub async fn by_token(connection: &mut SqliteConnection, hash: &TokenHash) -> Result<Option<TenantRecord>> {
    let row = sqlx::query(BY_TOKEN).bind(&hash[..]).fetch_optional(connection).await?;
    row.map(|row| {
        Ok(TenantRecord { id: TenantId(row.try_get(0)?), name: row.try_get(1)?, default_currency: row.try_get(2)? })
    })
    .transpose()
}

/// A tenant and its token, in one script (one is never kept without the other).
pub async fn create(
    connection: &mut SqliteConnection,
    hash: &TokenHash,
    name: &str,
    now: DateTime<Utc>,
) -> Result<TenantRecord> {
    let made: Result<i64, sqlx::Error> = sqlx::query_scalar(
        "SAVEPOINT tenant;
         INSERT INTO tenants (name, default_currency, created) VALUES ($1, $2, $3);
         INSERT INTO tokens (hash, tenant_id, created) VALUES ($4, last_insert_rowid(), $3);
         RELEASE tenant;
         SELECT tenant_id FROM tokens WHERE hash = $4",
    )
    .bind(name)
    .bind(DEFAULT_CURRENCY)
    .bind(micros(now))
    .bind(&hash[..])
    .fetch_one(&mut *connection)
    .await;
    match made {
        Ok(id) => {
            Ok(TenantRecord { id: TenantId(id), name: name.to_owned(), default_currency: DEFAULT_CURRENCY.to_owned() })
        }
        Err(error) => {
            sqlx::raw_sql("ROLLBACK TO tenant; RELEASE tenant").execute(&mut *connection).await?;
            Err(match &error {
                sqlx::Error::Database(e)
                    if e.is_unique_violation() && unique_key(e.message()) == Some(UniqueKey::Token) =>
                {
                    StoreError::Duplicate(UniqueKey::Token)
                }
                _ => error.into(),
            })
        }
    }
}

/// Runs on the writer, so the look-up and the creation cannot be interleaved with another.
pub async fn ensure(
    connection: &mut SqliteConnection,
    hash: &TokenHash,
    name: &str,
    now: DateTime<Utc>,
) -> Result<EnsuredTenant> {
    if let Some(tenant) = by_token(&mut *connection, hash).await? {
        return Ok(EnsuredTenant { tenant, created: false });
    }
    let tenant = create(connection, hash, name, now).await?;
    Ok(EnsuredTenant { tenant, created: true })
}

pub fn count(connection: &rusqlite::Connection) -> Result<u64> {
    let count: i64 = connection.query_row("SELECT COUNT(*) FROM tenants", [], |row| row.get(0))?;
    Ok(count.unsigned_abs())
}

pub fn unreconciled(connection: &rusqlite::Connection) -> Result<Vec<Unreconciled>> {
    let mut statement = connection.prepare(
        "SELECT b.id, b.amount, COALESCE(l.total, 0) AS total
         FROM balances b LEFT JOIN (SELECT balance_id, SUM(delta) AS total FROM ledger GROUP BY balance_id) l
           ON l.balance_id = b.id
         WHERE b.amount != COALESCE(l.total, 0)",
    )?;
    let rows = statement.query_map([], |row| {
        Ok(Unreconciled { balance: row.get(0)?, amount: row.get(1)?, ledger_total: row.get(2)? })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
