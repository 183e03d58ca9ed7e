//! How values cross into and out of SQLite: times as microseconds, enums and constrained
//! strings as their API text, and what a failed statement means to the caller.

use std::str::FromStr;

use chrono::{DateTime, Utc};
use payments_types as types;
use sqlx::sqlite::{SqliteConnection, SqliteRow};
use sqlx::{QueryBuilder, Row, Sqlite};
use uuid::Uuid;

use crate::{Page, Result, StoreError, UniqueKey};

pub fn micros(instant: DateTime<Utc>) -> i64 {
    instant.timestamp_micros()
}

pub fn instant(micros: i64) -> Result<DateTime<Utc>> {
    DateTime::from_timestamp_micros(micros).ok_or_else(|| corrupt("time", micros))
}

/// A stored value that does not parse: the database holds something this code never wrote.
pub fn corrupt(what: &str, value: impl std::fmt::Debug) -> StoreError {
    StoreError::Database(format!("stored {what} {value:?} is not valid"))
}

/// A text column as its enum or constrained string type.
pub fn parsed<T: FromStr>(row: &SqliteRow, column: &str) -> Result<T> {
    let text: String = row.try_get(column)?;
    text.parse().map_err(|_| corrupt(column, &text))
}

pub fn parsed_opt<T: FromStr>(row: &SqliteRow, column: &str) -> Result<Option<T>> {
    let text: Option<String> = row.try_get(column)?;
    text.map(|t| t.parse().map_err(|_| corrupt(column, &t))).transpose()
}

pub fn amount(row: &SqliteRow, column: &str) -> Result<types::Amount> {
    let value: i64 = row.try_get(column)?;
    u64::try_from(value).ok().and_then(types::Amount::new).ok_or_else(|| corrupt(column, value))
}

pub fn json<T: serde::de::DeserializeOwned>(row: &SqliteRow, column: &str) -> Result<T> {
    let text: String = row.try_get(column)?;
    serde_json::from_str(&text).map_err(|_| corrupt(column, &text))
}

pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Database(e.to_string()))
}

pub fn amount_value(amount: &types::Amount) -> Result<i64> {
    i64::try_from(amount.get()).map_err(|_| StoreError::Database(format!("amount {} too large", amount.get())))
}

/// The unique key a failed `INSERT` collided with, from SQLite's message
/// (`UNIQUE constraint failed: table.column, ...`); `None` for one no caller can take.
pub fn unique_key(message: &str) -> Option<UniqueKey> {
    let columns = message.strip_prefix("UNIQUE constraint failed: ")?;
    Some(match columns {
        "transactions.tenant_id, transactions.order_id" => UniqueKey::OrderId,
        "payment_requests.tenant_id, payment_requests.reference_id" => UniqueKey::PaymentRequestReferenceId,
        "virtual_accounts.tenant_id, virtual_accounts.reference_id" => UniqueKey::VirtualAccountReferenceId,
        "virtual_accounts.account_number" => UniqueKey::AccountNumber,
        "tokens.hash" => UniqueKey::Token,
        _ => return None,
    })
}

/// Where a page starts: the (created, seq) of the item it starts after, found in `table` among
/// the tenant's rows that pass `visible`. An id that is not in the list is refused.
pub async fn cursor(
    connection: &mut SqliteConnection,
    table: &'static str,
    visible: &'static str,
    tenant: i64,
    after: Uuid,
) -> Result<(i64, i64)> {
    let sql = format!("SELECT created, seq FROM {table} WHERE tenant_id = $1 AND id = $2 AND {visible}");
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(after).fetch_optional(connection).await?;
    let row = row.ok_or(StoreError::UnknownCursor(after))?;
    Ok((row.try_get(0)?, row.try_get(1)?))
}

/// Ends a list query: after the cursor if any, newest first, `limit` rows.
pub fn finish_page(query: &mut QueryBuilder<Sqlite>, start: Option<(i64, i64)>, page: Page) {
    if let Some((created, seq)) = start {
        query.push(" AND (created, seq) < (").push_bind(created).push(", ").push_bind(seq).push(")");
    }
    query.push(" ORDER BY created DESC, seq DESC LIMIT ").push_bind(i64::from(page.limit));
}

/// `needle` as an FTS5 phrase: a substring match on a trigram table.
pub fn phrase(needle: &str) -> String {
    format!("\"{}\"", needle.replace('"', "\"\""))
}

/// `needle` as a LIKE pattern matching it anywhere (`\` escapes).
pub fn like_pattern(needle: &str) -> String {
    let escaped = needle.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

/// Adds `AND seq IN (rows of the trigram table `search_table` containing `needle` in any of
/// `columns`, any case)`. Needles of three characters or more are looked up in the index;
/// shorter ones, which a trigram index cannot hold, are found by scanning it.
pub fn push_search(
    query: &mut QueryBuilder<Sqlite>,
    search_table: &'static str,
    columns: &[&'static str],
    needle: &str,
) {
    query.push(" AND seq IN (SELECT rowid FROM ").push(search_table).push(" WHERE ");
    if needle.chars().count() >= 3 {
        query.push(search_table).push(" MATCH ").push_bind(phrase(needle));
    } else {
        for (i, column) in columns.iter().enumerate() {
            if i > 0 {
                query.push(" OR ");
            }
            query.push(*column).push(" LIKE ").push_bind(like_pattern(needle)).push(" ESCAPE '\\'");
        }
    }
    query.push(")");
}
