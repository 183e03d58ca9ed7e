//! Tenants and their tokens, and the start-up check that money adds up.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, params};

use super::codec::unique_key;
use crate::reads::micros;
use crate::{EnsuredTenant, Result, StoreError, TenantId, TenantRecord, TokenHash, UniqueKey, Unreconciled};

/// Every new tenant's default currency (the API has no way to change it yet).
const DEFAULT_CURRENCY: &str = "GBP";

const BY_TOKEN: &str =
    "SELECT t.id, t.name, t.default_currency FROM tokens k JOIN tenants t ON t.id = k.tenant_id WHERE k.hash = ?1";

/// The tenant holding the token whose hash is `hash`.
pub(super) fn holder(connection: &Connection, hash: &TokenHash) -> Result<Option<TenantRecord>> {
    let mut statement = connection.prepare_cached(BY_TOKEN)?;
    let mut rows = statement.query([&hash[..]])?;
    let Some(row) = rows.next()? else { return Ok(None) };
    Ok(Some(TenantRecord { id: TenantId(row.get(0)?), name: row.get(1)?, default_currency: row.get(2)? }))
}

/// A tenant and its token, in one savepoint (one is never kept without the other).
pub(super) fn create(
    connection: &Connection,
    hash: &TokenHash,
    name: &str,
    now: DateTime<Utc>,
) -> Result<TenantRecord> {
    connection.execute_batch("SAVEPOINT tenant")?;
    let made = (|| {
        connection
            .prepare_cached("INSERT INTO tenants (name, default_currency, created) VALUES (?1, ?2, ?3)")?
            .execute(params![name, DEFAULT_CURRENCY, micros(now)])?;
        let id = connection.last_insert_rowid();
        connection
            .prepare_cached("INSERT INTO tokens (hash, tenant_id, created) VALUES (?1, ?2, ?3)")?
            .execute(params![&hash[..], id, micros(now)])?;
        Ok::<_, rusqlite::Error>(id)
    })();
    match made {
        Ok(id) => {
            connection.execute_batch("RELEASE tenant")?;
            Ok(TenantRecord { id: TenantId(id), name: name.to_owned(), default_currency: DEFAULT_CURRENCY.to_owned() })
        }
        Err(error) => {
            connection.execute_batch("ROLLBACK TO tenant; RELEASE tenant")?;
            Err(match unique_key(&error) {
                Some(UniqueKey::Token) => StoreError::Duplicate(UniqueKey::Token),
                _ => error.into(),
            })
        }
    }
}

/// Runs on the writer, so the look-up and the creation cannot be interleaved with another.
pub(super) fn ensure(
    connection: &Connection,
    hash: &TokenHash,
    name: &str,
    now: DateTime<Utc>,
) -> Result<EnsuredTenant> {
    if let Some(tenant) = holder(connection, hash)? {
        return Ok(EnsuredTenant { tenant, created: false });
    }
    let tenant = create(connection, hash, name, now)?;
    Ok(EnsuredTenant { tenant, created: true })
}

pub(super) fn count(connection: &Connection) -> Result<u64> {
    let count: i64 = connection.query_row("SELECT COUNT(*) FROM tenants", [], |row| row.get(0))?;
    Ok(count.unsigned_abs())
}

pub(super) fn unreconciled(connection: &Connection) -> Result<Vec<Unreconciled>> {
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
