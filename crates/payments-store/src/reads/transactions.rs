//! Transactions: payments out, collections and deposits in. Every filter of the list is a
//! column with an index; `search` goes through the backend's trigram index.

use payments_types as types;
use uuid::Uuid;

use super::{Cells, Dialect, Query, Searched, Selection, corrupt, qualified};
use crate::{Page, Result, TenantId, TransactionFilter};

const COLUMNS: &str = "id, transaction_type, payment_method, status, failure_reason, balance_id, currency, amount, \
                       fees, to_currency, to_amount, rate, single_rate, rate_decimal, single_rate_decimal, virtual_account_id, order_id, recipient, \
                       payer_name, reference, payment_reference, created";

pub(crate) fn record(row: &impl Cells) -> Result<types::Transaction> {
    let exchange_rate = match (row.opt_int("rate")?, row.opt_int("single_rate")?) {
        (Some(rate), Some(single)) => Some(types::ExchangeRate {
            rate: rate_value(rate)?,
            single_rate: rate_value(single)?,
            rate_decimal: decimal(row, "rate_decimal", rate)?,
            single_rate_decimal: decimal(row, "single_rate_decimal", single)?,
        }),
        _ => None,
    };
    Ok(types::Transaction {
        id: row.uuid("id")?,
        transaction_type: row.parsed("transaction_type")?,
        payment_method: row.parsed("payment_method")?,
        status: row.parsed("status")?,
        failure_reason: row.opt_text("failure_reason")?,
        balance_id: row.uuid("balance_id")?,
        currency: row.parsed("currency")?,
        amount: row.amount("amount")?,
        fees: row.int("fees")?,
        to_currency: row.parsed("to_currency")?,
        to_amount: row.amount("to_amount")?,
        exchange_rate,
        virtual_account_id: row.opt_uuid("virtual_account_id")?,
        order_id: row.parsed_opt("order_id")?,
        recipient: row
            .opt_text("recipient")?
            .map(|text| serde_json::from_str(&text).map_err(|_| corrupt("recipient", text)))
            .transpose()?,
        payer_name: row.opt_text("payer_name")?,
        reference: row.parsed_opt("reference")?,
        payment_reference: row.parsed_opt("payment_reference")?,
        created: row.instant("created")?,
    })
}

/// The decimal rate in `column`; a row written before rates had decimals was converted at its
/// six-decimal integer `micros`, which is then that decimal exactly.
fn decimal<T: std::str::FromStr>(row: &impl Cells, column: &str, micros: i64) -> Result<T> {
    let text = match row.opt_text(column)? {
        Some(text) => text,
        None => {
            let micros = u64::try_from(micros).map_err(|_| corrupt(column, micros))?;
            let fraction = format!("{:06}", micros % 1_000_000);
            let fraction = fraction.trim_end_matches('0');
            format!("{}.{}", micros / 1_000_000, if fraction.is_empty() { "0" } else { fraction })
        }
    };
    text.parse().map_err(|_| corrupt(column, text))
}

fn rate_value(value: i64) -> Result<std::num::NonZeroU64> {
    u64::try_from(value).ok().and_then(std::num::NonZeroU64::new).ok_or_else(|| corrupt("rate", value))
}

pub(crate) fn get<D: Dialect>(tenant: TenantId, id: Uuid) -> Query<D> {
    let mut query = Query::new("SELECT ");
    query.push(COLUMNS).push(" FROM transactions WHERE id = ");
    query.bind(id).push(" AND tenant_id = ").bind(tenant.0);
    query
}

/// The transaction keyed `order_id`, with the `request` that made it.
pub(crate) fn by_order_id<D: Dialect>(tenant: TenantId, order_id: &str) -> Query<D> {
    let mut query = Query::new("SELECT request, ");
    query.push(COLUMNS).push(" FROM transactions WHERE tenant_id = ");
    query.bind(tenant.0).push(" AND order_id = ").bind(order_id);
    query
}

pub(crate) const TABLE: (&str, &str) = ("transactions", "TRUE");

/// The page of the tenant's transactions that `filter` selects, newest first: one range of the
/// index of a filter (the first given of an id's, the status's, the country's, the currencies',
/// the type's: roughly from the most to the least selective), or (searching) the search index's
/// matches.
pub(crate) fn list<D: Dialect>(
    tenant: TenantId,
    filter: &TransactionFilter,
    start: Option<i64>,
    page: Page,
) -> Query<D> {
    let mut selection = Selection::new(tenant, start);
    selection
        .unique("order_id", filter.order_id.clone())
        .equal("recipient_id", filter.recipient_id)
        .equal("virtual_account_id", filter.virtual_account_id)
        .equal("scheduled_payment_id", filter.scheduled_payment_id)
        .equal("balance_id", filter.balance_id)
        .equal("status", filter.status.map(|s| s.to_string()))
        .equal("recipient_country", filter.recipient_country.clone())
        .equal("to_currency", filter.to_currency.clone())
        .equal("currency", filter.currency.clone())
        .equal("transaction_type", filter.transaction_type.map(|t| t.to_string()))
        .created(filter.created_from, filter.created_before);
    if let Some(needle) = &filter.search {
        return D::search_page(Searched::Transactions, COLUMNS, needle, &selection, page.limit);
    }
    let mut query = Query::new(format!("SELECT {} FROM transactions t WHERE ", qualified(COLUMNS, "t")));
    D::select(&mut query, &selection, "t", "t.seq", page.limit);
    query
}

/// Transactions in `status` (only payments are ever `initiated` or `processing`), with the
/// `tenant_id` of each, oldest first: one tenant's (through its status index), or everyone's
/// (through the small index of what is still on the rails). The status is written into the
/// text, not bound: it is one of our own enum's values, and a plan made without it (PostgreSQL's
/// generic plan) may walk the key index when one status fills the table, reading every row
/// when none is on the rails.
pub(crate) fn on_rails<D: Dialect>(tenant: Option<TenantId>, status: types::TransactionStatus) -> Query<D> {
    let mut query = Query::new(format!("SELECT tenant_id, {COLUMNS} FROM transactions WHERE status = '{status}'"));
    match tenant {
        Some(tenant) => query.push(" AND tenant_id = ").bind(tenant.0),
        // The partial index's own condition, which the planner needs to see to use it.
        None => query.push(" AND status IN ('initiated', 'processing')"),
    };
    query.push(" ORDER BY seq");
    query
}
