//! Recipients. Deleted ones stay (payments keep their snapshot) but are found no more.

use payments_types as types;
use sqlx::sqlite::{SqliteConnection, SqliteRow};
use sqlx::{QueryBuilder, Row, Sqlite};
use uuid::Uuid;

use super::codec::{cursor, finish_page, instant, json, parsed, parsed_opt};
use crate::{Page, Result, TenantId};

pub const COLUMNS: &str = "id, type, country, alias, default_reference, bank_account, created";

pub fn record(row: &SqliteRow) -> Result<types::Recipient> {
    Ok(types::Recipient {
        id: row.try_get("id")?,
        type_: parsed(row, "type")?,
        country: parsed(row, "country")?,
        alias: parsed_opt(row, "alias")?,
        default_reference: parsed_opt(row, "default_reference")?,
        bank_account: json(row, "bank_account")?,
        created: instant(row.try_get("created")?)?,
    })
}

pub async fn get(connection: &mut SqliteConnection, tenant: TenantId, id: Uuid) -> Result<Option<types::Recipient>> {
    let row = sqlx::query(
        "SELECT id, type, country, alias, default_reference, bank_account, created FROM recipients
         WHERE id = $1 AND tenant_id = $2 AND deleted = FALSE",
    )
    .bind(id)
    .bind(tenant.0)
    .fetch_optional(connection)
    .await?;
    row.as_ref().map(record).transpose()
}

pub async fn list(connection: &mut SqliteConnection, tenant: TenantId, page: Page) -> Result<Vec<types::Recipient>> {
    let start = match page.starting_after {
        Some(after) => Some(cursor(&mut *connection, "recipients", "deleted = FALSE", tenant.0, after).await?),
        None => None,
    };
    let mut query =
        QueryBuilder::<Sqlite>::new(format!("SELECT {COLUMNS} FROM recipients WHERE deleted = FALSE AND tenant_id = "));
    query.push_bind(tenant.0);
    finish_page(&mut query, "seq", start, page);
    let rows = query.build().fetch_all(connection).await?;
    rows.iter().map(record).collect()
}
