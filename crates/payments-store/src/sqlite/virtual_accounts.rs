//! Virtual accounts. Account numbers are unique across tenants; `search` goes through the
//! trigram table `virtual_account_search`.

use payments_types as types;
use sqlx::sqlite::{SqliteConnection, SqliteRow};
use sqlx::{QueryBuilder, Row, Sqlite};
use uuid::Uuid;

use super::codec::{cursor, finish_page, instant, json, parsed, parsed_opt, push_search_from};
use crate::{Keyed, Page, Result, TenantId, VirtualAccountFilter};

const COLUMNS: &str = "id, account_name, currency, settlement_balance_id, reference_id, bank_name, account_number, \
                       supported_channels, type, status, created";

pub const SEARCHED: &[&str] = &["account_name", "account_number", "bank_name"];

fn record(row: &SqliteRow) -> Result<types::VirtualAccount> {
    let account_name: String = row.try_get("account_name")?;
    Ok(types::VirtualAccount {
        id: row.try_get("id")?,
        account_name: account_name.parse().map_err(|_| super::codec::corrupt("account_name", &account_name))?,
        currency: parsed(row, "currency")?,
        settlement_balance_id: row.try_get("settlement_balance_id")?,
        reference_id: parsed_opt(row, "reference_id")?,
        details: types::AccountDetails {
            account_name,
            account_number: row.try_get("account_number")?,
            bank_name: row.try_get("bank_name")?,
        },
        supported_channels: json(row, "supported_channels")?,
        type_: parsed(row, "type")?,
        status: parsed(row, "status")?,
        created: instant(row.try_get("created")?)?,
    })
}

pub async fn get(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    id: Uuid,
) -> Result<Option<types::VirtualAccount>> {
    let row = sqlx::query(
        "SELECT id, account_name, currency, settlement_balance_id, reference_id, bank_name, account_number,
                supported_channels, type, status, created
         FROM virtual_accounts WHERE id = $1 AND tenant_id = $2",
    )
    .bind(id)
    .bind(tenant.0)
    .fetch_optional(connection)
    .await?;
    row.as_ref().map(record).transpose()
}

pub async fn by_reference_id(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    reference_id: &str,
) -> Result<Option<Keyed<types::VirtualAccount>>> {
    let row = sqlx::query(
        "SELECT request, id, account_name, currency, settlement_balance_id, reference_id, bank_name, account_number,
                supported_channels, type, status, created
         FROM virtual_accounts WHERE tenant_id = $1 AND reference_id = $2",
    )
    .bind(tenant.0)
    .bind(reference_id)
    .fetch_optional(connection)
    .await?;
    row.map(|row| Ok(Keyed { request: row.try_get("request")?, resource: record(&row)? })).transpose()
}

pub async fn list(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    filter: &VirtualAccountFilter,
    page: Page,
) -> Result<Vec<types::VirtualAccount>> {
    let start = match page.starting_after {
        Some(after) => Some(cursor(&mut *connection, "virtual_accounts", "TRUE", tenant.0, after).await?),
        None => None,
    };
    let rows = list_query(tenant, filter, start, page).build().fetch_all(connection).await?;
    rows.iter().map(record).collect()
}

/// The page of the tenant's accounts that `filter` selects, newest first: one range of the
/// filter's index, or (searching) the search table's matches newest first.
pub fn list_query(
    tenant: TenantId,
    filter: &VirtualAccountFilter,
    start: Option<i64>,
    page: Page,
) -> QueryBuilder<Sqlite> {
    let columns = COLUMNS.split(", ").map(|c| format!("v.{c}")).collect::<Vec<_>>().join(", ");
    let mut query = QueryBuilder::<Sqlite>::new(format!("SELECT {columns}"));
    let key = match &filter.search {
        Some(needle) => {
            push_search_from(&mut query, "virtual_account_search", SEARCHED, "virtual_accounts", "v", needle);
            query.push(" AND v.tenant_id = ");
            "s.rowid"
        }
        None => {
            query.push(" FROM virtual_accounts v WHERE v.tenant_id = ");
            "v.seq"
        }
    };
    query.push_bind(tenant.0);
    if let Some(reference_id) = &filter.reference_id {
        query.push(" AND v.reference_id = ").push_bind(reference_id.clone());
    }
    if let Some(currency) = &filter.currency {
        query.push(" AND v.currency = ").push_bind(currency.clone());
    }
    if let Some(balance) = filter.settlement_balance_id {
        query.push(" AND v.settlement_balance_id = ").push_bind(balance);
    }
    if let Some(status) = filter.status {
        query.push(" AND v.status = ").push_bind(status.to_string());
    }
    finish_page(&mut query, key, start, page);
    query
}

/// Accounts waiting to be activated, and the tenant of each, oldest first: one tenant's (through
/// its status index), or everyone's (through the small index of those still to activate).
pub fn initiated_query(tenant: Option<TenantId>) -> QueryBuilder<Sqlite> {
    let mut query = QueryBuilder::<Sqlite>::new(format!(
        "SELECT tenant_id, {COLUMNS} FROM virtual_accounts WHERE status = 'initiated'"
    ));
    if let Some(tenant) = tenant {
        query.push(" AND tenant_id = ").push_bind(tenant.0);
    }
    query.push(" ORDER BY seq");
    query
}

pub async fn initiated(
    connection: &mut SqliteConnection,
    tenant: Option<TenantId>,
) -> Result<Vec<(TenantId, types::VirtualAccount)>> {
    let rows = initiated_query(tenant).build().fetch_all(connection).await?;
    rows.iter().map(|row| Ok((TenantId(row.try_get("tenant_id")?), record(row)?))).collect()
}
