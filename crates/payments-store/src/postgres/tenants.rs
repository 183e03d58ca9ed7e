//! Tenants and their tokens, and the start-up check that money adds up.

use chrono::{DateTime, Utc};
use deadpool_postgres::{GenericClient, Pool};
use tokio_postgres::error::SqlState;

use super::changes::unique_key;
use crate::reads::micros;
use crate::{EnsuredTenant, Result, StoreError, TenantId, TenantRecord, TokenHash, UniqueKey, Unreconciled};

/// Every new tenant's default currency (the API has no way to change it yet).
const DEFAULT_CURRENCY: &str = "GBP";
/// The advisory lock held while a tenant is looked up and made: instances started at once with
/// the same `PAYMENTS_SANDBOX_TOKENS` make each tenant once.
const TENANTS_LOCK: i64 = 0x5041_5953_0001;

pub(super) async fn by_token(client: &impl GenericClient, hash: &TokenHash) -> Result<Option<TenantRecord>> {
    let statement = client
        .prepare_cached(
            "SELECT t.id, t.name, t.default_currency FROM tokens k JOIN tenants t ON t.id = k.tenant_id \
             WHERE k.hash = $1",
        )
        .await?;
    let hash: &[u8] = &hash[..];
    let row = client.query_opt(&statement, &[&hash]).await?;
    row.map(|row| {
        Ok(TenantRecord { id: TenantId(row.try_get(0)?), name: row.try_get(1)?, default_currency: row.try_get(2)? })
    })
    .transpose()
}

/// A tenant and its token, in the caller's transaction (one is never kept without the other).
pub(super) async fn create(
    client: &impl GenericClient,
    hash: &TokenHash,
    name: &str,
    now: DateTime<Utc>,
) -> Result<TenantRecord> {
    let hash: &[u8] = &hash[..];
    let made = client
        .query_one(
            "WITH tenant AS (INSERT INTO tenants (name, default_currency, created) VALUES ($1, $2, $3) RETURNING id)
             INSERT INTO tokens (hash, tenant_id, created) SELECT $4, id, $3 FROM tenant RETURNING tenant_id",
            &[&name, &DEFAULT_CURRENCY, &micros(now), &hash],
        )
        .await;
    match made {
        Ok(row) => Ok(TenantRecord {
            id: TenantId(row.try_get(0)?),
            name: name.to_owned(),
            default_currency: DEFAULT_CURRENCY.to_owned(),
        }),
        Err(error)
            if error.as_db_error().is_some_and(|e| {
                e.code() == &SqlState::UNIQUE_VIOLATION && e.constraint().and_then(unique_key) == Some(UniqueKey::Token)
            }) =>
        {
            Err(StoreError::Duplicate(UniqueKey::Token))
        }
        Err(error) => Err(error.into()),
    }
}

/// Looks the token up and makes its tenant if there is none, under an advisory lock, so the
/// look-up and the creation are never interleaved with another instance's.
pub(super) async fn ensure(pool: &Pool, hash: &TokenHash, name: &str, now: DateTime<Utc>) -> Result<EnsuredTenant> {
    let mut client = pool.get().await?;
    let transaction = client.transaction().await?;
    transaction.execute("SELECT pg_advisory_xact_lock($1)", &[&TENANTS_LOCK]).await?;
    let ensured = match by_token(&transaction, hash).await? {
        Some(tenant) => EnsuredTenant { tenant, created: false },
        None => EnsuredTenant { tenant: create(&transaction, hash, name, now).await?, created: true },
    };
    transaction.commit().await?;
    Ok(ensured)
}

pub(super) async fn count(pool: &Pool) -> Result<u64> {
    let count: i64 = pool.get().await?.query_one("SELECT COUNT(*) FROM tenants", &[]).await?.try_get(0)?;
    Ok(count.unsigned_abs())
}

/// One statement, so one snapshot: balances and ledger as of one moment, whatever the other
/// instances are writing.
pub(super) async fn unreconciled(pool: &Pool) -> Result<Vec<Unreconciled>> {
    let rows = pool
        .get()
        .await?
        .query(
            "SELECT b.id, b.amount, COALESCE(l.total, 0)::bigint AS total
             FROM balances b LEFT JOIN (SELECT balance_id, SUM(delta) AS total FROM ledger GROUP BY balance_id) l
               ON l.balance_id = b.id
             WHERE b.amount != COALESCE(l.total, 0)",
            &[],
        )
        .await?;
    rows.iter()
        .map(|row| {
            Ok(Unreconciled { balance: row.try_get(0)?, amount: row.try_get(1)?, ledger_total: row.try_get(2)? })
        })
        .collect()
}
