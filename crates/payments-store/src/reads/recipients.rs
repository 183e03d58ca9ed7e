//! Recipients. Deleted ones stay (payments keep their snapshot) but are found no more.

use payments_types as types;
use uuid::Uuid;

use super::{Cells, Dialect, Query, Selection};
use crate::{Page, Result, TenantId};

const COLUMNS: &str = "id, type, country, alias, default_reference, bank_account, created";

pub(crate) fn record(row: &impl Cells) -> Result<types::Recipient> {
    Ok(types::Recipient {
        id: row.uuid("id")?,
        type_: row.parsed("type")?,
        country: row.parsed("country")?,
        alias: row.parsed_opt("alias")?,
        default_reference: row.parsed_opt("default_reference")?,
        bank_account: row.json("bank_account")?,
        created: row.instant("created")?,
    })
}

pub(crate) fn get<D: Dialect>(tenant: TenantId, id: Uuid) -> Query<D> {
    let mut query = Query::new("SELECT ");
    query.push(COLUMNS).push(" FROM recipients WHERE id = ");
    query.bind(id).push(" AND tenant_id = ").bind(tenant.0).push(" AND deleted = FALSE");
    query
}

pub(crate) const TABLE: (&str, &str) = ("recipients", "deleted = FALSE");

pub(crate) fn list<D: Dialect>(tenant: TenantId, start: Option<i64>, page: Page) -> Query<D> {
    let mut query = Query::new("SELECT ");
    query.push(COLUMNS).push(" FROM recipients WHERE recipients.deleted = FALSE AND ");
    D::select(&mut query, &Selection::new(tenant, start), "recipients", "recipients.seq", page.limit);
    query
}
