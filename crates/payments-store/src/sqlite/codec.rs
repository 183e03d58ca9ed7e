//! What is SQLite's own in how values and queries are written: the reads' [`Dialect`] (search
//! through FTS5 trigram tables), new rows' keys, and what a failed statement means.

use super::search_batches;
use crate::reads::Sqlite;
use chrono::{DateTime, Utc};
use rusqlite::ErrorCode;

use crate::UniqueKey;
use crate::reads::{
    Dialect, Query, SEQ_BITS, Searched, Selection, like_pattern, order_and_limit, qualified, seq_floor,
};

impl Dialect for Sqlite {
    /// Plain equalities and key bounds, newest first by `key`: SQLite's planner takes a range
    /// of the index with the most equalities (every list index ends with the rowid, `seq`), and
    /// gathers no statistics on values that could lead it elsewhere (see `open`).
    fn select(query: &mut Query<Self>, selection: &Selection, alias: &str, key: &str, limit: u32) {
        selection.push_conditions(query, alias, key);
        order_and_limit(query, &format!("{key} DESC"), limit);
    }

    /// The rows of the trigram table (alias `s`, rowid = the row's seq) containing `needle` in
    /// any of its fields, any case, joined to the table and read newest first through the
    /// search table itself (`s.rowid`), so a search stops at the page's last match instead of
    /// collecting and sorting every match. Needles of three characters or more are looked up in
    /// the index; shorter ones, which a trigram index cannot hold, are found by scanning it.
    ///
    /// Transactions' search rows not yet indexed wait in a table of their own
    /// (`search_batches.rs`): their page is read beside the index's, and the two merged, newest
    /// first, so what is sorted is two pages at most. Their index keeps no copy of the fields
    /// (migration 0011), so shorter needles are looked for in the transactions themselves
    /// ([`scanned_transactions`]).
    fn search_page(searched: Searched, columns: &str, needle: &str, selection: &Selection, limit: u32) -> Query<Self> {
        match searched {
            Searched::VirtualAccounts => indexed_page(searched, columns, needle, selection, limit, ""),
            Searched::Transactions if needle.chars().count() < TRIGRAM => {
                scanned_transactions(columns, needle, selection, limit)
            }
            Searched::Transactions => {
                let mut query = Query::new("SELECT * FROM (");
                query.append(indexed_page(searched, columns, needle, selection, limit, ", s.rowid AS search_seq"));
                query.push(") UNION ALL SELECT * FROM (");
                search_batches::pending_arm(&mut query, columns, needle, selection, limit);
                query.push(")");
                order_and_limit(&mut query, "search_seq DESC", limit);
                query
            }
        }
    }

    const ENDPOINT_EVENTS: &'static str = "CASE WHEN w.all_events THEN NULL ELSE (SELECT json_group_array(event) \
         FROM (SELECT event FROM webhook_subscriptions s WHERE s.endpoint_id = w.id ORDER BY position)) END";
}

/// The page of [`Dialect::search_page`] among the rows of the trigram table, with `extra`
/// columns after the table's.
fn indexed_page(
    searched: Searched,
    columns: &str,
    needle: &str,
    selection: &Selection,
    limit: u32,
    extra: &str,
) -> Query<Sqlite> {
    let (search_table, table, alias) = (search_table(searched), searched.table(), searched.alias());
    // CROSS JOIN: the search table is the outer loop, whatever the planner's statistics say.
    let mut query = Query::new(format!(
        "SELECT {}{extra} FROM {search_table} s CROSS JOIN {table} {alias} ON {alias}.seq = s.rowid WHERE ",
        qualified(columns, alias)
    ));
    if needle.chars().count() >= TRIGRAM {
        query.push(format!("s.{search_table} MATCH ")).bind(phrase(needle));
    } else {
        query.push("(");
        for (i, field) in searched.fields().iter().enumerate() {
            if i > 0 {
                query.push(" OR ");
            }
            query.push(format!("s.{field} LIKE ")).bind(like_pattern(needle)).push(" ESCAPE '\\'");
        }
        query.push(")");
    }
    query.push(" AND ");
    Sqlite::select(&mut query, selection, alias, "s.rowid", limit);
    query
}

/// The shortest needle a trigram index can look up.
const TRIGRAM: usize = 3;

/// The page of a search for a needle shorter than a trigram among the transactions themselves,
/// newest first through the selection's index, each field compared by `LIKE` (ASCII case
/// folded); the recipient's fields are read out of its snapshot only where its JSON text holds
/// the needle at all (a needle with a control character, which JSON escapes, always).
fn scanned_transactions(columns: &str, needle: &str, selection: &Selection, limit: u32) -> Query<Sqlite> {
    let alias = Searched::Transactions.alias();
    let pattern = like_pattern(needle);
    let mut query = Query::new(format!(
        "SELECT {}, {alias}.seq AS search_seq FROM transactions {alias} WHERE (",
        qualified(columns, alias)
    ));
    let like = |query: &mut Query<Sqlite>, field: &str| {
        query.push(format!("{field} LIKE ")).bind(pattern.clone()).push(" ESCAPE '\\'");
    };
    // The searched fields `transactions` has a column for, then those of the recipient snapshot.
    let (columns, in_recipient): (Vec<&str>, Vec<&str>) =
        Searched::Transactions.fields().iter().partition(|field| recipient_path(field).is_none());
    for field in columns {
        like(&mut query, &format!("{alias}.{field}"));
        query.push(" OR ");
    }
    query.push("(");
    if !needle.chars().any(char::is_control) {
        like(&mut query, &format!("{alias}.recipient"));
        query.push(" AND ");
    }
    query.push("(");
    for (i, field) in in_recipient.into_iter().enumerate() {
        if i > 0 {
            query.push(" OR ");
        }
        let path = recipient_path(field).expect("partitioned above");
        like(&mut query, &format!("json_extract({alias}.recipient, '{path}')"));
    }
    query.push("))) AND ");
    Sqlite::select(&mut query, selection, alias, &format!("{alias}.seq"), limit);
    query
}

/// Where in a transaction's recipient snapshot (JSON) a searched field is, for the fields
/// `transactions` has no column for.
fn recipient_path(field: &str) -> Option<&'static str> {
    match field {
        "account_name" => Some("$.bank_account.account_name"),
        "alias" => Some("$.alias"),
        _ => None,
    }
}

/// The FTS5 trigram table holding what `search` looks in (rowid = the row's seq).
pub(super) fn search_table(searched: Searched) -> &'static str {
    match searched {
        Searched::Transactions => "transaction_search",
        Searched::VirtualAccounts => "virtual_account_search",
    }
}

/// `needle` as an FTS5 phrase: a substring match on a trigram table.
fn phrase(needle: &str) -> String {
    format!("\"{}\"", needle.replace('"', "\"\""))
}

/// The unique key a failed statement collided with, from SQLite's constraint message
/// (`UNIQUE constraint failed: table.column, ...`); `None` for another failure, or a key no
/// caller can take.
pub(super) fn unique_key(error: &rusqlite::Error) -> Option<UniqueKey> {
    let message = constraint_message(error)?;
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

/// The message of a failed constraint (unique, check, foreign key...), if that is what failed.
pub(super) fn constraint_message(error: &rusqlite::Error) -> Option<&str> {
    match error {
        rusqlite::Error::SqliteFailure(failure, Some(message)) if failure.code == ErrorCode::ConstraintViolation => {
            Some(message)
        }
        _ => None,
    }
}

/// A new row's key in `table`: after the rows already created in its millisecond (the writer
/// is the only one writing, so the largest key there is the last one given).
pub(super) fn push_new_seq(query: &mut Query<Sqlite>, table: &'static str, created: DateTime<Utc>) {
    let floor = seq_floor(created);
    query.push("(SELECT COALESCE(max(seq) + 1, ").bind(floor);
    query.push(format!(") FROM {table} WHERE seq >= ")).bind(floor);
    query.push(" AND seq < ").bind(floor + (1 << SEQ_BITS)).push(")");
}
