//! Keys and pages: each listed row's `seq` (its creation millisecond × 2^20 + its place in it),
//! the cursor a page starts after, and the order and limit every list ends with.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{Dialect, Query};

/// Rows created in one millisecond share the key range `[ms << 20, (ms + 1) << 20)`.
pub(crate) const SEQ_BITS: u32 = 20;

/// The first key of rows created at `at`'s millisecond.
pub(crate) fn seq_floor(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis() << SEQ_BITS
}

/// The first key of rows created at or after `at` (a bound for `created >= at` or
/// `created < at`: `created` is whole milliseconds).
pub(crate) fn seq_bound(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros().div_euclid(1000).saturating_add(i64::from(at.timestamp_micros().rem_euclid(1000) > 0))
        << SEQ_BITS
}

/// The key of the item a page starts after, among the tenant's rows of `table` that pass
/// `visible`; no row means the id is not in the list ([`StoreError::UnknownCursor`]).
pub(crate) fn cursor<D: Dialect>(table: &str, visible: &str, tenant: i64, after: Uuid) -> Query<D> {
    let mut query = Query::new(format!("SELECT seq FROM {table} WHERE {visible} AND tenant_id = "));
    query.bind(tenant).push(" AND id = ").bind(after);
    query
}

/// ` ORDER BY {order} LIMIT {limit}`. The limit is written, not bound: SQLite looks at a bound
/// LIMIT while planning, so each execution with it bound compiled the statement again
/// (BENCHMARKS.md, *Why, measured: SQLite's caches, checkpoints and bound values*). A number,
/// so nothing a caller sends reaches
/// the SQL text.
pub(crate) fn order_and_limit<D>(query: &mut Query<D>, order: &str, limit: u32) {
    query.push(format!(" ORDER BY {order} LIMIT {limit}"));
}

/// `needle` as a LIKE pattern matching it anywhere (`\` escapes).
pub(crate) fn like_pattern(needle: &str) -> String {
    let escaped = needle.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

/// `columns` (a comma-separated list) each prefixed with `alias.`.
pub(crate) fn qualified(columns: &str, alias: &str) -> String {
    columns.split(", ").map(|c| format!("{alias}.{c}")).collect::<Vec<_>>().join(", ")
}
