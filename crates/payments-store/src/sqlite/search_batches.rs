//! The transactions' search rows, indexed in batches. FTS5 writes what a commit added to it as a
//! new segment, and merges segments as they pile up: with a commit per payment, that was most
//! of a payment's instructions (BENCHMARKS.md, *Why, measured: Search rows indexed in
//! batches*). So a transaction's search row is written with it into a plain table,
//! `transaction_search_pending`, and once [`BATCH`] rows wait there, the writer moves them into
//! `transaction_search` in the same transaction as the write that made them that many: one
//! segment for the batch.
//!
//! A search reads both ([`pending_arm`]): what waits is found as soon as it is committed, and a
//! crash loses nothing (the rows wait in the database, and the next batch moves them). Beside
//! its fields, a waiting row holds them case-folded (Rust's `to_lowercase`, as FTS5's trigram
//! tokenizer folds case) in one column that `instr` compares with the folded needle, so a
//! search finds the same rows in either table, in any case; the index gets the fields as given.

use std::sync::LazyLock;

use super::prepared::PreparedConnection;
use payments_types as types;

use super::statements::{execute, rows};
use crate::Result;
use crate::reads::{Dialect, Query, Searched, Selection, Sqlite, Value, qualified};
use crate::writes::text;

/// Search rows moved into the index at once.
pub(super) const BATCH: usize = 128;

/// The searched fields, in the order of both tables' columns, as a column list.
static FIELDS: LazyLock<String> = LazyLock::new(|| Searched::Transactions.fields().join(", "));
/// A waiting row's insert, and a batch's move into the index: written once, run for every
/// payment and every batch.
static INSERT: LazyLock<String> =
    LazyLock::new(|| format!("INSERT INTO transaction_search_pending (seq, {}, folded) VALUES (", *FIELDS));
static MOVE: LazyLock<String> = LazyLock::new(|| {
    let fields = &*FIELDS;
    format!(
        "INSERT INTO transaction_search (rowid, {fields}) SELECT seq, {fields} FROM transaction_search_pending ORDER BY seq"
    )
});

/// Between the fields of the folded column: a control character no needle holds.
const SEPARATOR: &str = "\u{1f}";

/// Writes the search row of `transaction`, just inserted with `seq`, into the pending table.
pub(super) fn write_pending(connection: &PreparedConnection, seq: i64, transaction: &types::Transaction) -> Result<()> {
    let recipient = transaction.recipient.as_ref();
    let reference = text(transaction.reference.as_ref());
    // A payment reference that repeats the reference (the usual case) is found through it.
    let payment_reference = text(transaction.payment_reference.as_ref()).filter(|p| Some(p) != reference.as_ref());
    let fields = [
        reference,
        payment_reference,
        text(transaction.order_id.as_ref()),
        transaction.payer_name.clone(),
        recipient.and_then(|r| text(r.bank_account.account_name.as_ref())),
        recipient.and_then(|r| text(r.alias.as_ref())),
    ];
    let folded = fields.iter().flatten().map(|f| f.to_lowercase()).collect::<Vec<_>>().join(SEPARATOR);
    let mut insert = Query::new(INSERT.as_str());
    let values = fields.into_iter().map(Value::from);
    insert.binds(std::iter::once(seq.into()).chain(values).chain([folded.into()])).push(")");
    execute(connection, insert)?;
    Ok(())
}

/// At the end of a batch of writes: once [`BATCH`] rows wait, moves them into the index.
/// `waiting`: how many wait, when known (the writer's count; `None` after a rolled-back batch).
pub(super) fn settle(connection: &PreparedConnection, waiting: &mut Option<usize>) -> Result<()> {
    let count = match *waiting {
        Some(count) => count,
        None => {
            let query = Query::new("SELECT count(*) FROM transaction_search_pending");
            let found = rows(connection, query, |row| Ok(row.get::<i64>(0)?), Some(1))?;
            usize::try_from(found.first().copied().unwrap_or(0)).unwrap_or(0)
        }
    };
    *waiting = Some(count);
    if count < BATCH {
        return Ok(());
    }
    execute(connection, Query::new(MOVE.as_str()))?;
    execute(connection, Query::new("DELETE FROM transaction_search_pending"))?;
    *waiting = Some(0);
    Ok(())
}

/// The rows waiting in the pending table (alias `p`) whose fields hold `needle` in any case,
/// joined to `transactions` (alias `t`) and read newest first, with the search's other
/// conditions: the page's rows among those not yet indexed, each with its `search_seq`.
pub(super) fn pending_arm(query: &mut Query<Sqlite>, columns: &str, needle: &str, selection: &Selection, limit: u32) {
    let (table, alias) = (Searched::Transactions.table(), Searched::Transactions.alias());
    query.push(format!(
        "SELECT {}, p.seq AS search_seq FROM transaction_search_pending p CROSS JOIN {table} {alias} \
         ON {alias}.seq = p.seq WHERE instr(p.folded, ",
        qualified(columns, alias)
    ));
    query.bind(needle.to_lowercase()).push(") > 0 AND ");
    Sqlite::select(query, selection, alias, "p.seq", limit);
}
