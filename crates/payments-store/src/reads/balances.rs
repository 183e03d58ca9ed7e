//! Balances: what each holds, in the same row as what describes it.

use sqlx::QueryBuilder;
use uuid::Uuid;

use super::{Bind, Cells, Dialect, finish_page};
use crate::{BalanceFilter, BalanceRecord, Page, Result, TenantId};

const COLUMNS: &str = "id, name, currency, amount, created";

pub fn record(row: &impl Cells) -> Result<BalanceRecord> {
    Ok(BalanceRecord {
        id: row.uuid("id")?,
        name: row.text("name")?,
        currency: row.text("currency")?,
        amount: row.int("amount")?,
        created: row.instant("created")?,
    })
}

pub fn get<D: Dialect>(tenant: TenantId, id: Uuid) -> QueryBuilder<D> {
    let mut query = QueryBuilder::new(format!("SELECT {COLUMNS} FROM balances WHERE id = "));
    query.bind(id).push(" AND tenant_id = ").bind(tenant.0);
    query
}

/// The tenant's first balance in `currency`.
pub fn oldest<D: Dialect>(tenant: TenantId, currency: &str) -> QueryBuilder<D> {
    let mut query = QueryBuilder::new(format!("SELECT {COLUMNS} FROM balances WHERE tenant_id = "));
    query.bind(tenant.0).push(" AND currency = ").bind(currency).push(" ORDER BY seq LIMIT 1");
    query
}

pub const TABLE: (&str, &str) = ("balances", "TRUE");

/// The page of the tenant's balances that `filter` selects, newest first.
pub fn list<D: Dialect>(tenant: TenantId, filter: &BalanceFilter, start: Option<i64>, page: Page) -> QueryBuilder<D> {
    let mut query = QueryBuilder::new(format!("SELECT {COLUMNS} FROM balances WHERE tenant_id = "));
    query.bind(tenant.0);
    if let Some(currency) = &filter.currency {
        query.push(" AND currency = ").bind(currency.clone());
    }
    finish_page(&mut query, "seq", start, page);
    query
}
