//! Virtual accounts. Account numbers are unique across tenants; `search` goes through the
//! backend's trigram index.

use payments_types as types;
use uuid::Uuid;

use super::{Cells, Dialect, Query, Searched, Selection, corrupt, qualified};
use crate::{Page, Result, TenantId, VirtualAccountFilter};

const COLUMNS: &str = "id, account_name, currency, settlement_balance_id, reference_id, bank_name, account_number, \
                       supported_channels, type, status, created";

pub(crate) fn record(row: &impl Cells) -> Result<types::VirtualAccount> {
    let account_name = row.text("account_name")?;
    Ok(types::VirtualAccount {
        id: row.uuid("id")?,
        account_name: account_name.parse().map_err(|_| corrupt("account_name", &account_name))?,
        currency: row.parsed("currency")?,
        settlement_balance_id: row.uuid("settlement_balance_id")?,
        reference_id: row.parsed_opt("reference_id")?,
        details: types::AccountDetails {
            account_name,
            account_number: row.text("account_number")?,
            bank_name: row.text("bank_name")?,
        },
        supported_channels: row.json("supported_channels")?,
        type_: row.parsed("type")?,
        status: row.parsed("status")?,
        created: row.instant("created")?,
    })
}

pub(crate) fn get<D: Dialect>(tenant: TenantId, id: Uuid) -> Query<D> {
    let mut query = Query::new("SELECT ");
    query.push(COLUMNS).push(" FROM virtual_accounts WHERE id = ");
    query.bind(id).push(" AND tenant_id = ").bind(tenant.0);
    query
}

/// The account keyed `reference_id`, with the `request` that made it.
pub(crate) fn by_reference_id<D: Dialect>(tenant: TenantId, reference_id: &str) -> Query<D> {
    let mut query = Query::new("SELECT request, ");
    query.push(COLUMNS).push(" FROM virtual_accounts WHERE tenant_id = ");
    query.bind(tenant.0).push(" AND reference_id = ").bind(reference_id);
    query
}

pub(crate) const TABLE: (&str, &str) = ("virtual_accounts", "TRUE");

/// The page of the tenant's accounts that `filter` selects, newest first: one range of the
/// filter's index, or (searching) the search index's matches.
pub(crate) fn list<D: Dialect>(
    tenant: TenantId,
    filter: &VirtualAccountFilter,
    start: Option<i64>,
    page: Page,
) -> Query<D> {
    let mut selection = Selection::new(tenant, start);
    selection
        .unique("reference_id", filter.reference_id.clone())
        .equal("settlement_balance_id", filter.settlement_balance_id)
        .equal("status", filter.status.map(|s| s.to_string()))
        .equal("currency", filter.currency.clone());
    if let Some(needle) = &filter.search {
        return D::search_page(Searched::VirtualAccounts, COLUMNS, needle, &selection, page.limit);
    }
    let mut query = Query::new(format!("SELECT {} FROM virtual_accounts v WHERE ", qualified(COLUMNS, "v")));
    D::select(&mut query, &selection, "v", "v.seq", page.limit);
    query
}

/// Accounts waiting to be activated, with the `tenant_id` of each, oldest first: one tenant's
/// (through its status index), or everyone's (through the small index of those to activate).
pub(crate) fn initiated<D: Dialect>(tenant: Option<TenantId>) -> Query<D> {
    let mut query = Query::new("SELECT tenant_id, ");
    query.push(COLUMNS).push(" FROM virtual_accounts WHERE status = 'initiated'");
    if let Some(tenant) = tenant {
        query.push(" AND tenant_id = ").bind(tenant.0);
    }
    query.push(" ORDER BY seq");
    query
}
