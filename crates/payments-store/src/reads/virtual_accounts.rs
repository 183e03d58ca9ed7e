//! Virtual accounts. Account numbers are unique across tenants; `search` goes through the
//! backend's trigram index.

use payments_types as types;
use uuid::Uuid;

use super::{Cells, Dialect, Query, Searched, corrupt, finish_page, qualified};
use crate::{Page, Result, TenantId, VirtualAccountFilter};

const COLUMNS: &str = "id, account_name, currency, settlement_balance_id, reference_id, bank_name, account_number, \
                       supported_channels, type, status, created";

pub fn record(row: &impl Cells) -> Result<types::VirtualAccount> {
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

pub fn get<D: Dialect>(tenant: TenantId, id: Uuid) -> Query<D> {
    let mut query = Query::new(format!("SELECT {COLUMNS} FROM virtual_accounts WHERE id = "));
    query.bind(id).push(" AND tenant_id = ").bind(tenant.0);
    query
}

/// The account keyed `reference_id`, with the `request` that made it.
pub fn by_reference_id<D: Dialect>(tenant: TenantId, reference_id: &str) -> Query<D> {
    let mut query = Query::new(format!("SELECT request, {COLUMNS} FROM virtual_accounts WHERE tenant_id = "));
    query.bind(tenant.0).push(" AND reference_id = ").bind(reference_id);
    query
}

pub const TABLE: (&str, &str) = ("virtual_accounts", "TRUE");

/// The page of the tenant's accounts that `filter` selects, newest first: one range of the
/// filter's index, or (searching) the search index's matches.
pub fn list<D: Dialect>(tenant: TenantId, filter: &VirtualAccountFilter, start: Option<i64>, page: Page) -> Query<D> {
    let conditions = |query: &mut Query<D>, alias: &str, _key: &str| {
        query.push(format!("{alias}.tenant_id = ")).bind(tenant.0);
        if let Some(reference_id) = &filter.reference_id {
            query.push(format!(" AND {alias}.reference_id = ")).bind(reference_id.clone());
        }
        if let Some(currency) = &filter.currency {
            query.push(format!(" AND {alias}.currency = ")).bind(currency.clone());
        }
        if let Some(balance) = filter.settlement_balance_id {
            query.push(format!(" AND {alias}.settlement_balance_id = ")).bind(balance);
        }
        if let Some(status) = filter.status {
            query.push(format!(" AND {alias}.status = ")).bind(status.to_string());
        }
    };
    if let Some(needle) = &filter.search {
        return D::search_page(Searched::VirtualAccounts, COLUMNS, needle, &conditions, start, page);
    }
    let mut query = Query::new(format!("SELECT {} FROM virtual_accounts v WHERE ", qualified(COLUMNS, "v")));
    conditions(&mut query, "v", "v.seq");
    finish_page(&mut query, "v.seq", start, page);
    query
}

/// Accounts waiting to be activated, with the `tenant_id` of each, oldest first: one tenant's
/// (through its status index), or everyone's (through the small index of those to activate).
pub fn initiated<D: Dialect>(tenant: Option<TenantId>) -> Query<D> {
    let mut query = Query::new(format!("SELECT tenant_id, {COLUMNS} FROM virtual_accounts WHERE status = 'initiated'"));
    if let Some(tenant) = tenant {
        query.push(" AND tenant_id = ").bind(tenant.0);
    }
    query.push(" ORDER BY seq");
    query
}
