//! Transactions: payments out, collections and deposits in. Every filter of the list is a
//! column with an index; `search` goes through the trigram table `transaction_search`.

use payments_types as types;
use sqlx::sqlite::{SqliteConnection, SqliteRow};
use sqlx::{QueryBuilder, Row, Sqlite};
use uuid::Uuid;

use super::codec::{amount, cursor, finish_page, instant, parsed, parsed_opt, push_created, push_search_from};
use crate::{Keyed, Page, Result, TenantId, TransactionFilter};

pub const COLUMNS: &str = "id, transaction_type, payment_method, status, failure_reason, balance_id, currency, \
                           amount, fees, to_currency, to_amount, rate, single_rate, virtual_account_id, order_id, \
                           recipient, payer_name, reference, payment_reference, created";

/// The columns `search` looks in, in `transaction_search`.
pub const SEARCHED: &[&str] = &["reference", "payment_reference", "order_id", "payer_name", "account_name", "alias"];

pub fn record(row: &SqliteRow) -> Result<types::Transaction> {
    let rate: Option<i64> = row.try_get("rate")?;
    let single_rate: Option<i64> = row.try_get("single_rate")?;
    let exchange_rate = match (rate, single_rate) {
        (Some(rate), Some(single)) => {
            Some(types::ExchangeRate { rate: rate_value(rate)?, single_rate: rate_value(single)? })
        }
        _ => None,
    };
    let recipient: Option<String> = row.try_get("recipient")?;
    Ok(types::Transaction {
        id: row.try_get("id")?,
        transaction_type: parsed(row, "transaction_type")?,
        payment_method: parsed(row, "payment_method")?,
        status: parsed(row, "status")?,
        failure_reason: row.try_get("failure_reason")?,
        balance_id: row.try_get("balance_id")?,
        currency: parsed(row, "currency")?,
        amount: amount(row, "amount")?,
        fees: row.try_get("fees")?,
        to_currency: parsed(row, "to_currency")?,
        to_amount: amount(row, "to_amount")?,
        exchange_rate,
        virtual_account_id: row.try_get("virtual_account_id")?,
        order_id: parsed_opt(row, "order_id")?,
        recipient: recipient
            .map(|text| serde_json::from_str(&text).map_err(|_| super::codec::corrupt("recipient", text)))
            .transpose()?,
        payer_name: row.try_get("payer_name")?,
        reference: parsed_opt(row, "reference")?,
        payment_reference: parsed_opt(row, "payment_reference")?,
        created: instant(row.try_get("created")?)?,
    })
}

fn rate_value(value: i64) -> Result<std::num::NonZeroU64> {
    u64::try_from(value).ok().and_then(std::num::NonZeroU64::new).ok_or_else(|| super::codec::corrupt("rate", value))
}

pub async fn get(connection: &mut SqliteConnection, tenant: TenantId, id: Uuid) -> Result<Option<types::Transaction>> {
    let row = sqlx::query(
        "SELECT id, transaction_type, payment_method, status, failure_reason, balance_id, currency, amount, fees,
                to_currency, to_amount, rate, single_rate, virtual_account_id, order_id, recipient, payer_name,
                reference, payment_reference, created
         FROM transactions WHERE id = $1 AND tenant_id = $2",
    )
    .bind(id)
    .bind(tenant.0)
    .fetch_optional(connection)
    .await?;
    row.as_ref().map(record).transpose()
}

pub async fn by_order_id(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    order_id: &str,
) -> Result<Option<Keyed<types::Transaction>>> {
    let row = sqlx::query(
        "SELECT request, id, transaction_type, payment_method, status, failure_reason, balance_id, currency, amount,
                fees, to_currency, to_amount, rate, single_rate, virtual_account_id, order_id, recipient, payer_name,
                reference, payment_reference, created
         FROM transactions WHERE tenant_id = $1 AND order_id = $2",
    )
    .bind(tenant.0)
    .bind(order_id)
    .fetch_optional(connection)
    .await?;
    row.map(|row| Ok(Keyed { request: row.try_get("request")?, resource: record(&row)? })).transpose()
}

pub async fn list(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    filter: &TransactionFilter,
    page: Page,
) -> Result<Vec<types::Transaction>> {
    let start = match page.starting_after {
        Some(after) => Some(cursor(&mut *connection, "transactions", "TRUE", tenant.0, after).await?),
        None => None,
    };
    let rows = list_query(tenant, filter, start, page).build().fetch_all(connection).await?;
    rows.iter().map(record).collect()
}

/// The page of the tenant's transactions that `filter` selects, newest first: one range of the
/// filter's index, or (searching) the search table's matches newest first.
pub fn list_query(
    tenant: TenantId,
    filter: &TransactionFilter,
    start: Option<i64>,
    page: Page,
) -> QueryBuilder<Sqlite> {
    let columns = COLUMNS.split(", ").map(|c| format!("t.{c}")).collect::<Vec<_>>().join(", ");
    let mut query = QueryBuilder::<Sqlite>::new(format!("SELECT {columns}"));
    let key = match &filter.search {
        Some(needle) => {
            push_search_from(&mut query, "transaction_search", SEARCHED, "transactions", "t", needle);
            query.push(" AND t.tenant_id = ");
            "s.rowid"
        }
        None => {
            query.push(" FROM transactions t WHERE t.tenant_id = ");
            "t.seq"
        }
    };
    query.push_bind(tenant.0);
    let text = [
        ("order_id", &filter.order_id),
        ("recipient_country", &filter.recipient_country),
        ("currency", &filter.currency),
        ("to_currency", &filter.to_currency),
    ];
    for (column, value) in text {
        if let Some(value) = value {
            query.push(format!(" AND t.{column} = ")).push_bind(value.clone());
        }
    }
    let ids = [
        ("recipient_id", filter.recipient_id),
        ("balance_id", filter.balance_id),
        ("virtual_account_id", filter.virtual_account_id),
        ("scheduled_payment_id", filter.scheduled_payment_id),
    ];
    for (column, value) in ids {
        if let Some(value) = value {
            query.push(format!(" AND t.{column} = ")).push_bind(value);
        }
    }
    if let Some(transaction_type) = filter.transaction_type {
        query.push(" AND t.transaction_type = ").push_bind(transaction_type.to_string());
    }
    if let Some(status) = filter.status {
        query.push(" AND t.status = ").push_bind(status.to_string());
    }
    push_created(&mut query, key, "t.created", filter.created_from, filter.created_before);
    finish_page(&mut query, key, start, page);
    query
}

/// Transactions in `status` (only payments are ever `initiated` or `processing`), and the tenant
/// of each, oldest first: one tenant's (through its status index), or everyone's (through the
/// small index of what is still on the rails).
pub fn on_rails_query(tenant: Option<TenantId>, status: types::TransactionStatus) -> QueryBuilder<Sqlite> {
    let mut query =
        QueryBuilder::<Sqlite>::new(format!("SELECT tenant_id, {COLUMNS} FROM transactions WHERE status = "));
    query.push_bind(status.to_string());
    match tenant {
        Some(tenant) => query.push(" AND tenant_id = ").push_bind(tenant.0),
        // The partial index's own condition, which the planner needs to see to use it.
        None => query.push(" AND status IN ('initiated', 'processing')"),
    };
    query.push(" ORDER BY seq");
    query
}

pub async fn on_rails(
    connection: &mut SqliteConnection,
    tenant: Option<TenantId>,
    status: types::TransactionStatus,
) -> Result<Vec<(TenantId, types::Transaction)>> {
    let rows = on_rails_query(tenant, status).build().fetch_all(connection).await?;
    rows.iter().map(|row| Ok((TenantId(row.try_get("tenant_id")?), record(row)?))).collect()
}
