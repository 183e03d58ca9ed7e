//! Payment requests.

use payments_types as types;
use sqlx::sqlite::{SqliteConnection, SqliteRow};
use sqlx::{QueryBuilder, Row, Sqlite};
use uuid::Uuid;

use super::codec::{amount, cursor, finish_page, instant, parsed, parsed_opt};
use crate::{Keyed, Page, PaymentRequestFilter, Result, TenantId};

const COLUMNS: &str = "id, market, currency, amount, settlement_balance_id, reference_id, reference, status, \
                       payment_url, qr_code_url, return_url, created";

fn record(row: &SqliteRow) -> Result<types::PaymentRequest> {
    Ok(types::PaymentRequest {
        id: row.try_get("id")?,
        market: parsed(row, "market")?,
        currency: parsed(row, "currency")?,
        amount: amount(row, "amount")?,
        settlement_balance_id: row.try_get("settlement_balance_id")?,
        reference_id: parsed_opt(row, "reference_id")?,
        reference: parsed_opt(row, "reference")?,
        status: parsed(row, "status")?,
        payment_url: row.try_get("payment_url")?,
        qr_code_url: row.try_get("qr_code_url")?,
        return_url: row.try_get("return_url")?,
        created: instant(row.try_get("created")?)?,
    })
}

pub async fn get(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    id: Uuid,
) -> Result<Option<types::PaymentRequest>> {
    let row = sqlx::query(
        "SELECT id, market, currency, amount, settlement_balance_id, reference_id, reference, status,
                payment_url, qr_code_url, return_url, created
         FROM payment_requests WHERE id = $1 AND tenant_id = $2",
    )
    .bind(id)
    .bind(tenant.0)
    .fetch_optional(connection)
    .await?;
    row.as_ref().map(record).transpose()
}

pub async fn for_payer(
    connection: &mut SqliteConnection,
    id: Uuid,
) -> Result<Option<(TenantId, types::PaymentRequest)>> {
    let row = sqlx::query(
        "SELECT tenant_id, id, market, currency, amount, settlement_balance_id, reference_id, reference, status,
                payment_url, qr_code_url, return_url, created
         FROM payment_requests WHERE id = $1",
    )
    .bind(id)
    .fetch_optional(connection)
    .await?;
    row.map(|row| Ok((TenantId(row.try_get("tenant_id")?), record(&row)?))).transpose()
}

pub async fn by_reference_id(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    reference_id: &str,
) -> Result<Option<Keyed<types::PaymentRequest>>> {
    let row = sqlx::query(
        "SELECT request, id, market, currency, amount, settlement_balance_id, reference_id, reference, status,
                payment_url, qr_code_url, return_url, created
         FROM payment_requests WHERE tenant_id = $1 AND reference_id = $2",
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
    filter: &PaymentRequestFilter,
    page: Page,
) -> Result<Vec<types::PaymentRequest>> {
    let start = match page.starting_after {
        Some(after) => Some(cursor(&mut *connection, "payment_requests", "TRUE", tenant.0, after).await?),
        None => None,
    };
    let rows = list_query(tenant, filter, start, page).build().fetch_all(connection).await?;
    rows.iter().map(record).collect()
}

/// The page of the tenant's payment requests that `filter` selects, newest first.
pub fn list_query(
    tenant: TenantId,
    filter: &PaymentRequestFilter,
    start: Option<i64>,
    page: Page,
) -> QueryBuilder<Sqlite> {
    let mut query = QueryBuilder::<Sqlite>::new(format!("SELECT {COLUMNS} FROM payment_requests WHERE tenant_id = "));
    query.push_bind(tenant.0);
    if let Some(reference_id) = &filter.reference_id {
        query.push(" AND reference_id = ").push_bind(reference_id.clone());
    }
    if let Some(currency) = &filter.currency {
        query.push(" AND currency = ").push_bind(currency.clone());
    }
    if let Some(balance) = filter.settlement_balance_id {
        query.push(" AND settlement_balance_id = ").push_bind(balance);
    }
    if let Some(status) = filter.status {
        query.push(" AND status = ").push_bind(status.to_string());
    }
    finish_page(&mut query, "seq", start, page);
    query
}
