//! Payment requests.

use payments_types as types;
use uuid::Uuid;

use super::{Cells, Dialect, Query, Selection};
use crate::{Page, PaymentRequestFilter, Result, TenantId};

const COLUMNS: &str = "id, market, currency, amount, settlement_balance_id, reference_id, reference, status, \
                       payment_url, qr_code_url, return_url, created";

pub(crate) fn record(row: &impl Cells) -> Result<types::PaymentRequest> {
    Ok(types::PaymentRequest {
        id: row.uuid("id")?,
        market: row.parsed("market")?,
        currency: row.parsed("currency")?,
        amount: row.opt_amount("amount")?,
        settlement_balance_id: row.uuid("settlement_balance_id")?,
        reference_id: row.parsed_opt("reference_id")?,
        reference: row.parsed_opt("reference")?,
        status: row.parsed("status")?,
        payment_url: row.text("payment_url")?,
        qr_code_url: row.text("qr_code_url")?,
        return_url: row.opt_text("return_url")?,
        created: row.instant("created")?,
    })
}

pub(crate) fn get<D: Dialect>(tenant: TenantId, id: Uuid) -> Query<D> {
    let mut query = Query::new("SELECT ");
    query.push(COLUMNS).push(" FROM payment_requests WHERE id = ");
    query.bind(id).push(" AND tenant_id = ").bind(tenant.0);
    query
}

/// The payment request with this id whoever owns it, with its `tenant_id`.
pub(crate) fn for_payer<D: Dialect>(id: Uuid) -> Query<D> {
    let mut query = Query::new("SELECT tenant_id, ");
    query.push(COLUMNS).push(" FROM payment_requests WHERE id = ");
    query.bind(id);
    query
}

/// The payment request keyed `reference_id`, with the `request` that made it.
pub(crate) fn by_reference_id<D: Dialect>(tenant: TenantId, reference_id: &str) -> Query<D> {
    let mut query = Query::new("SELECT request, ");
    query.push(COLUMNS).push(" FROM payment_requests WHERE tenant_id = ");
    query.bind(tenant.0).push(" AND reference_id = ").bind(reference_id);
    query
}

pub(crate) const TABLE: (&str, &str) = ("payment_requests", "TRUE");

/// The page of the tenant's payment requests that `filter` selects, newest first.
pub(crate) fn list<D: Dialect>(
    tenant: TenantId,
    filter: &PaymentRequestFilter,
    start: Option<i64>,
    page: Page,
) -> Query<D> {
    let mut selection = Selection::new(tenant, start);
    selection
        .unique("reference_id", filter.reference_id.clone())
        .equal("settlement_balance_id", filter.settlement_balance_id)
        .equal("status", filter.status.map(|s| s.to_string()))
        .equal("currency", filter.currency.clone());
    let mut query = Query::new("SELECT ");
    query.push(COLUMNS).push(" FROM payment_requests WHERE ");
    D::select(&mut query, &selection, "payment_requests", "payment_requests.seq", page.limit);
    query
}
