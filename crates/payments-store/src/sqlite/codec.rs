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

/// Rows created in one millisecond share the key range `[ms << 20, (ms + 1) << 20)`.
const SEQ_BITS: u32 = 20;

/// The first key of rows created at `at`'s millisecond.
pub fn seq_floor(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis() << SEQ_BITS
}

/// The first key of rows created at or after `at` (a bound for `created >= at` or
/// `created < at`: `created` is whole milliseconds).
pub fn seq_bound(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros().div_euclid(1000).saturating_add(i64::from(at.timestamp_micros().rem_euclid(1000) > 0))
        << SEQ_BITS
}

/// A new row's key in `table`: after the rows already created in its millisecond.
pub fn push_new_seq(script: &mut QueryBuilder<Sqlite>, table: &'static str, created: DateTime<Utc>) {
    let floor = seq_floor(created);
    script.push("(SELECT COALESCE(max(seq) + 1, ").push_bind(floor);
    script.push(format!(") FROM {table} WHERE seq >= ")).push_bind(floor);
    script.push(" AND seq < ").push_bind(floor + (1 << SEQ_BITS)).push(")");
}

/// Where a page starts: the key of the item it starts after, among the tenant's rows of `table`
/// that pass `visible`. An id that is not in the list is refused.
pub async fn cursor(
    connection: &mut SqliteConnection,
    table: &'static str,
    visible: &'static str,
    tenant: i64,
    after: Uuid,
) -> Result<i64> {
    let sql = format!("SELECT seq FROM {table} WHERE tenant_id = $1 AND id = $2 AND {visible}");
    let seq = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(tenant).bind(after).fetch_optional(connection).await?;
    seq.ok_or(StoreError::UnknownCursor(after))
}

/// Adds `created` bounds: on `key` (the row's seq), so the index range holds them, and on
/// `created` itself, so they are exact.
pub fn push_created(
    query: &mut QueryBuilder<Sqlite>,
    key: &str,
    created: &str,
    from: Option<DateTime<Utc>>,
    before: Option<DateTime<Utc>>,
) {
    if let Some(from) = from {
        query.push(format!(" AND {key} >= ")).push_bind(seq_bound(from));
        query.push(format!(" AND {created} >= ")).push_bind(micros(from));
    }
    if let Some(before) = before {
        query.push(format!(" AND {key} < ")).push_bind(seq_bound(before));
        query.push(format!(" AND {created} < ")).push_bind(micros(before));
    }
}

/// Ends a list query: after the cursor if any, newest first (by `key`), `limit` rows.
pub fn finish_page(query: &mut QueryBuilder<Sqlite>, key: &str, start: Option<i64>, page: Page) {
    if let Some(seq) = start {
        query.push(format!(" AND {key} < ")).push_bind(seq);
    }
    query.push(format!(" ORDER BY {key} DESC LIMIT ")).push_bind(i64::from(page.limit));
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

/// The `FROM` of a search: the rows of the trigram table `search_table` (alias `s`, rowid = the
/// row's seq) containing `needle` in any of `columns`, any case, joined to `table` (alias
/// `alias`) and read newest first through the search table itself (`s.rowid`), so a search
/// stops at the page's last match instead of collecting and sorting every match. Needles of
/// three characters or more are looked up in the index; shorter ones, which a trigram index
/// cannot hold, are found by scanning it.
pub fn push_search_from(
    query: &mut QueryBuilder<Sqlite>,
    search_table: &'static str,
    columns: &[&'static str],
    table: &'static str,
    alias: &'static str,
    needle: &str,
) {
    // CROSS JOIN: the search table is the outer loop, whatever the planner's statistics say.
    query.push(format!(" FROM {search_table} s CROSS JOIN {table} {alias} ON {alias}.seq = s.rowid WHERE "));
    if needle.chars().count() >= 3 {
        query.push(format!("s.{search_table} MATCH ")).push_bind(phrase(needle));
    } else {
        query.push("(");
        for (i, column) in columns.iter().enumerate() {
            if i > 0 {
                query.push(" OR ");
            }
            query.push(format!("s.{column} LIKE ")).push_bind(like_pattern(needle)).push(" ESCAPE '\\'");
        }
        query.push(")");
    }
}
