//! Applying a [`Changeset`] on the writer's connection: a savepoint (unless it is its
//! transaction's only write), its statements (written by `writes.rs`, SQLite's part of them
//! here: [`WriteDialect`]), the savepoint released. A change
//! that cannot apply to the state it was decided on stops it: a guarded statement that changes
//! no row (a status that moved, a row that is gone) is stale, a debit the balance does not cover
//! fails the `funds` check, a taken key its unique index. The savepoint is then rolled back, so
//! nothing of the changeset remains.
//!
//! A transaction's search row is written with it, into the rows waiting to be indexed
//! (`search_batches.rs`).

use super::prepared::PreparedConnection;
use chrono::{DateTime, Utc};
use payments_types as types;
use uuid::Uuid;

use super::codec::{constraint_message, push_new_seq, unique_key};
use super::search_batches;
use super::statements::{execute, rows};
use crate::plan::posting_totals;
use crate::reads::{Query, Sqlite, Value, micros};
use crate::writes::{self, Check, WriteDialect};
use crate::{Change, Changeset, Result, StoreError};

/// The endpoints (aliased `e`) of tenant `?` subscribed to event `?` (binds: tenant, event).
const SUBSCRIBED: &str = "e.tenant_id = ? AND e.deleted = FALSE AND (e.all_events OR EXISTS \
     (SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = e.id AND s.event = ?))";

/// A fresh version-4 UUID for each row an `INSERT ... SELECT` makes (notifications fanned out
/// to several endpoints): random hex with the version (`4`) and variant (`8`–`b`) digits set.
const NEW_UUID: &str = "unhex(hex(randomblob(6)) || '4' || substr(hex(randomblob(2)), 2) \
     || substr('89ab', 1 + (random() & 3), 1) || substr(hex(randomblob(2)), 2) || hex(randomblob(6)))";

/// Why a changeset was not applied.
enum Failure {
    /// Refused for a reason the caller acts on.
    Refused(StoreError),
    /// A debit failed the funds check: what the balance holds is read once rolled back.
    Funds,
    Database(StoreError),
}

impl From<rusqlite::Error> for Failure {
    fn from(error: rusqlite::Error) -> Self {
        if constraint_message(&error) == Some("CHECK constraint failed: funds") {
            return Self::Funds;
        }
        match unique_key(&error) {
            Some(key) => Self::Refused(StoreError::Duplicate(key)),
            None => Self::Database(error.into()),
        }
    }
}

impl From<StoreError> for Failure {
    fn from(error: StoreError) -> Self {
        Self::Database(error)
    }
}

/// Applies `changes`, and says how many search rows it left waiting to be indexed. `alone`: the
/// only write of its transaction, which then needs no savepoint of its own — SQLite copies each
/// page a savepoint's statements change into a journal of its own first, a tenth of a payment
/// (BENCHMARKS.md, *Why, measured: A write alone in its transaction*) — since rolling back the
/// whole transaction undoes it and nothing else.
pub(super) fn apply(connection: &PreparedConnection, changes: &Changeset, alone: bool) -> Result<usize> {
    if !alone {
        execute(connection, Query::new("SAVEPOINT change"))?;
    }
    let mut searchable = 0;
    let failure = match write(connection, changes, &mut searchable) {
        Ok(()) => {
            if !alone {
                execute(connection, Query::new("RELEASE change"))?;
            }
            return Ok(searchable);
        }
        Err(failure) => failure,
    };
    // Nothing of the changeset may remain; alone, the transaction begins again, empty, for the
    // writer to commit. If even that fails, the writer's whole transaction is in doubt: a
    // `Database` error tells the writer to roll it all back.
    connection.execute_batch(match alone {
        true => "ROLLBACK; BEGIN IMMEDIATE",
        false => "ROLLBACK TO change; RELEASE change",
    })?;
    Err(match failure {
        Failure::Refused(error) | Failure::Database(error) => error,
        Failure::Funds => match uncovered(connection, changes) {
            Ok(Some((balance, available))) => StoreError::InsufficientFunds { balance, available },
            Ok(None) => StoreError::Inconsistent("a debit failed the funds check, yet every balance covers it".into()),
            Err(error) => error,
        },
    })
}

/// The first balance that this changeset's debits overdraw, with what it holds.
fn uncovered(connection: &PreparedConnection, changes: &Changeset) -> Result<Option<(Uuid, i64)>> {
    for (balance, total) in posting_totals(&changes.changes) {
        let mut query = Query::new("SELECT amount FROM balances WHERE id = ");
        query.bind(balance).push(" AND tenant_id = ").bind(changes.tenant.0);
        let held = rows(connection, query, |row| Ok(row.get::<i64>(0)?), Some(1))?.pop();
        if let Some(held) = held
            && held + total < 0
        {
            return Ok(Some((balance, held)));
        }
    }
    Ok(None)
}

fn write(connection: &PreparedConnection, changes: &Changeset, searchable: &mut usize) -> Result<(), Failure> {
    let mut changed = 0;
    for statement in writes::statements::<Sqlite>(changes)? {
        if statement.after_a_change && changed == 0 {
            continue;
        }
        changed = match statement.check {
            Check::None => execute(connection, statement.query)?,
            Check::Changes(resource, id) => match execute(connection, statement.query)? {
                0 => return Err(Failure::Refused(StoreError::Stale { resource, id })),
                changed => changed,
            },
            Check::Finds(resource, id) => match rows(connection, statement.query, |_| Ok(()), Some(1))?.len() {
                0 => return Err(Failure::Refused(StoreError::Stale { resource, id })),
                found => found,
            },
        };
        if let Some(Change::InsertTransaction { transaction, .. }) =
            statement.inserts_transaction.map(|index| &changes.changes[index])
        {
            // The row just inserted: a transaction's seq is its rowid.
            search_batches::write_pending(connection, connection.last_insert_rowid(), transaction)?;
            *searchable += 1;
        }
    }
    Ok(())
}

impl WriteDialect for Sqlite {
    const MOVES_BALANCES: bool = true;
    /// The writer is the only one writing: a row keeps what it was found with until the commit.
    const KEEP_FOUND: &'static str = "";

    fn push_new_seq(query: &mut Query<Self>, table: &'static str, created: DateTime<Utc>) {
        push_new_seq(query, table, created);
    }

    /// A transaction's searched fields are in `transaction_search` (`search_batches.rs`).
    fn transaction_columns(_: &mut String, _: &mut Vec<Value>, _: &types::Transaction) {}

    fn virtual_account_searchable(account: &types::VirtualAccount) -> Vec<Query<Self>> {
        // The row just inserted: an account's seq is its rowid.
        let mut q = Query::new(
            "INSERT INTO virtual_account_search (rowid, account_name, account_number, bank_name) \
             VALUES (last_insert_rowid(), ",
        );
        q.binds([
            account.account_name.to_string().into(),
            account.details.account_number.clone().into(),
            account.details.bank_name.clone().into(),
        ]);
        q.push(")");
        vec![q]
    }

    fn virtual_account_renamed(id: Uuid, name: &str) -> Vec<Query<Self>> {
        let mut q = Query::new("UPDATE virtual_account_search SET account_name = ");
        q.bind(name).push(" WHERE rowid = (SELECT seq FROM virtual_accounts WHERE id = ").bind(id).push(")");
        vec![q]
    }

    /// Two statements: the event, kept when an endpoint subscribes; then, only when it was, a
    /// notification for each endpoint that does, taking consecutive keys after those already
    /// made in this millisecond (the writer is the only one writing), for the newest event, the
    /// one just kept.
    fn event(tenant: i64, event: &str, data: &str, at: DateTime<Utc>) -> Vec<(Query<Self>, bool)> {
        let now = micros(at);
        let mut kept = Query::new("INSERT INTO events (tenant_id, event, created, data) SELECT ");
        kept.binds([tenant.into(), event.into(), now.into(), data.into()]);
        kept.push(" WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE ");
        push_subscribed(&mut kept, tenant, event);
        kept.push(")");
        let mut notified = Query::new(
            "INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, next_attempt, created) \
             SELECT ",
        );
        push_new_seq(&mut notified, "notifications", at);
        notified.push(format!(
            " + row_number() OVER (ORDER BY e.seq) - 1, {NEW_UUID}, e.tenant_id, e.id, (SELECT max(seq) FROM events), "
        ));
        notified.binds(["pending".into(), now.into(), now.into()]);
        notified.push(" FROM webhook_endpoints e WHERE ");
        push_subscribed(&mut notified, tenant, event);
        vec![(kept, false), (notified, true)]
    }

    fn ping(tenant: i64, id: Uuid, endpoint: Uuid, data: &str, at: DateTime<Utc>) -> Vec<Query<Self>> {
        let now = micros(at);
        let mut kept = Query::new("INSERT INTO events (tenant_id, event, created, data) VALUES (");
        kept.binds([tenant.into(), types::WebhookEvent::Ping.to_string().into(), now.into(), data.into()]);
        kept.push(")");
        let mut notified = Query::new(
            "INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, next_attempt, created) \
             VALUES (",
        );
        push_new_seq(&mut notified, "notifications", at);
        notified.push(", ").binds([id.into(), tenant.into(), endpoint.into()]);
        // The event just kept: its seq is its rowid.
        notified.push(", last_insert_rowid(), ").binds(["pending".into(), now.into(), now.into()]).push(")");
        vec![kept, notified]
    }
}

fn push_subscribed(query: &mut Query<Sqlite>, tenant: i64, event: &str) {
    let mut parts = SUBSCRIBED.split('?');
    query.push(parts.next().unwrap_or_default()).bind(tenant);
    query.push(parts.next().unwrap_or_default()).bind(event.to_owned());
    query.push(parts.next().unwrap_or_default());
}
