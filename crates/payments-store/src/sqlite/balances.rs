//! Balances: what each holds, in the same row as what describes it.

use sqlx::sqlite::{SqliteConnection, SqliteRow};
use sqlx::{QueryBuilder, Row, Sqlite};
use uuid::Uuid;

use super::codec::{cursor, finish_page, instant};
use crate::{BalanceFilter, BalanceRecord, Page, Result, TenantId};

const COLUMNS: &str = "id, name, currency, amount, created";

fn record(row: &SqliteRow) -> Result<BalanceRecord> {
    Ok(BalanceRecord {
        id: row.try_get("id")?,
        name: row.try_get("name")?,
        currency: row.try_get("currency")?,
        amount: row.try_get("amount")?,
        created: instant(row.try_get("created")?)?,
    })
}

pub async fn get(connection: &mut SqliteConnection, tenant: TenantId, id: Uuid) -> Result<Option<BalanceRecord>> {
    let row = sqlx::query("SELECT id, name, currency, amount, created FROM balances WHERE id = $1 AND tenant_id = $2")
        .bind(id)
        .bind(tenant.0)
        .fetch_optional(connection)
        .await?;
    row.as_ref().map(record).transpose()
}

pub async fn oldest(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    currency: &str,
) -> Result<Option<BalanceRecord>> {
    let row = sqlx::query(
        "SELECT id, name, currency, amount, created FROM balances WHERE tenant_id = $1 AND currency = $2
         ORDER BY seq LIMIT 1",
    )
    .bind(tenant.0)
    .bind(currency)
    .fetch_optional(connection)
    .await?;
    row.as_ref().map(record).transpose()
}

pub async fn list(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    filter: &BalanceFilter,
    page: Page,
) -> Result<Vec<BalanceRecord>> {
    let start = match page.starting_after {
        Some(after) => Some(cursor(&mut *connection, "balances", "TRUE", tenant.0, after).await?),
        None => None,
    };
    let rows = list_query(tenant, filter, start, page).build().fetch_all(connection).await?;
    rows.iter().map(record).collect()
}

/// The page of the tenant's balances that `filter` selects, newest first.
pub fn list_query(tenant: TenantId, filter: &BalanceFilter, start: Option<i64>, page: Page) -> QueryBuilder<Sqlite> {
    let mut query = QueryBuilder::<Sqlite>::new(format!("SELECT {COLUMNS} FROM balances WHERE tenant_id = "));
    query.push_bind(tenant.0);
    if let Some(currency) = &filter.currency {
        query.push(" AND currency = ").push_bind(currency.clone());
    }
    finish_page(&mut query, "seq", start, page);
    query
}
