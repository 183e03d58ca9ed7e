//! Balances: what each holds, in the same row as what describes it.

use uuid::Uuid;

use super::{Cells, Dialect, Query, Selection};
use crate::{BalanceFilter, BalanceRecord, Page, Result, TenantId};

const COLUMNS: &str = "id, name, currency, amount, created";

pub(crate) fn record(row: &impl Cells) -> Result<BalanceRecord> {
    Ok(BalanceRecord {
        id: row.uuid("id")?,
        name: row.text("name")?,
        currency: row.text("currency")?,
        amount: row.int("amount")?,
        created: row.instant("created")?,
    })
}

pub(crate) fn get<D: Dialect>(tenant: TenantId, id: Uuid) -> Query<D> {
    let mut query = Query::new("SELECT ");
    query.push(COLUMNS).push(" FROM balances WHERE id = ");
    query.bind(id).push(" AND tenant_id = ").bind(tenant.0);
    query
}

/// The tenant's first balance in `currency`.
pub(crate) fn oldest<D: Dialect>(tenant: TenantId, currency: &str) -> Query<D> {
    let mut query = Query::new("SELECT ");
    query.push(COLUMNS).push(" FROM balances WHERE tenant_id = ");
    query.bind(tenant.0).push(" AND currency = ").bind(currency).push(" ORDER BY seq LIMIT 1");
    query
}

pub(crate) const TABLE: (&str, &str) = ("balances", "TRUE");

/// The page of the tenant's balances that `filter` selects, newest first.
pub(crate) fn list<D: Dialect>(tenant: TenantId, filter: &BalanceFilter, start: Option<i64>, page: Page) -> Query<D> {
    let mut selection = Selection::new(tenant, start);
    selection.equal("currency", filter.currency.clone());
    let mut query = Query::new("SELECT ");
    query.push(COLUMNS).push(" FROM balances WHERE ");
    D::select(&mut query, &selection, "balances", "balances.seq", page.limit);
    query
}
