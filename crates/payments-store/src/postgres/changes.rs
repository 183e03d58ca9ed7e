//! What a [`Changeset`] writes on PostgreSQL: PostgreSQL's part of its statements (written by
//! `writes.rs`: [`WriteDialect`]); and the statements a batch of changesets begins and ends with
//! (see `writer.rs` for how a batch is sent and committed). A guarded update that finds no row in
//! the expected state is stale; a taken key fails its unique index.
//!
//! Balances move once per batch, not once per changeset: the batch locks the balances it posts
//! to first (`FOR NO KEY UPDATE`, in the order of their ids), each changeset checks that each
//! balance it debits covers what the batch has moved it by so far plus its own debits
//! ([`funds_check`], a read of the locked row, which nobody else can change until the commit),
//! and the batch ends with one `UPDATE` per balance by what its accepted changesets moved it
//! ([`move_balance`]), the `funds` constraint still the last word. Why: an update per changeset
//! left the hot balance row a new version per payment, each one's foreign keys took a
//! `KEY SHARE` lock on it from inside a savepoint (a subtransaction), so the row's lockers
//! became multixacts that every later lock and read had to look up.

use crate::reads::Postgres;
use chrono::{DateTime, Utc};
use payments_types as types;
use uuid::Uuid;

use crate::plan::balance_moves;
use crate::reads::{Query, SEQ_BITS, Value, micros, seq_floor};
use crate::writes::{WriteDialect, text};
use crate::{Change, Changeset, UniqueKey};

/// The unique key a constraint of that name keeps; `None` for one no caller can take.
pub(super) fn unique_key(constraint: &str) -> Option<UniqueKey> {
    Some(match constraint {
        "transactions_order_id" => UniqueKey::OrderId,
        "payment_requests_reference_id" => UniqueKey::PaymentRequestReferenceId,
        "virtual_accounts_reference_id" => UniqueKey::VirtualAccountReferenceId,
        "virtual_accounts_account_number" => UniqueKey::AccountNumber,
        "tokens_hash" => UniqueKey::Token,
        _ => return None,
    })
}

/// The endpoints (aliased `w`) of tenant `$t` subscribed to event `$e`.
fn push_subscribed(query: &mut Query<Postgres>, tenant: i64, event: &str) {
    query.push("w.tenant_id = ").bind(tenant).push(" AND w.deleted = FALSE AND (w.all_events OR EXISTS ");
    query.push("(SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = w.id AND s.event = ");
    query.bind(event).push("))");
}

/// A new row's key: the millisecond it was created, and the next number of `row_order` within
/// it (distinct across instances without asking them: the sequence is the database's).
fn push_new_seq(query: &mut Query<Postgres>, created: DateTime<Utc>) {
    query.push("(").bind(seq_floor(created)).push(format!("::bigint + nextval('row_order') % {})", 1_i64 << SEQ_BITS));
}

/// What `changes` moves balances by, move by move in order (consecutive postings to one balance,
/// a payment and its fee, are one move).
pub(super) fn moves(changes: &Changeset) -> Vec<(Uuid, i64)> {
    changes
        .changes
        .iter()
        .zip(balance_moves(&changes.changes))
        .filter_map(|(change, moved)| match (change, moved) {
            (Change::Post { balance, .. }, Some(moved)) => Some((*balance, moved)),
            _ => None,
        })
        .collect()
}

/// Finds the tenant's balance `balance` only if it holds at least `need`.
pub(super) fn funds_check(tenant: i64, balance: Uuid, need: i64) -> Query<Postgres> {
    let mut q = Query::new("SELECT 1 FROM balances WHERE id = ");
    q.bind(balance).push(" AND tenant_id = ").bind(tenant).push(" AND amount >= ").bind(need);
    q
}

/// What the tenant's balance `balance` holds (in a batch that holds its lock).
pub(super) fn balance_amount(tenant: i64, balance: Uuid) -> Query<Postgres> {
    let mut q = Query::new("SELECT amount FROM balances WHERE id = ");
    q.bind(balance).push(" AND tenant_id = ").bind(tenant);
    q
}

/// Locks `balances` (id, tenant) in the order given (`FOR NO KEY UPDATE`): nobody else moves
/// them until the batch ends, and the batch's own foreign keys to them find them locked by the
/// batch already.
pub(super) fn lock_balances(balances: &[(Uuid, i64)]) -> Query<Postgres> {
    let mut q = Query::new("SELECT b.id FROM balances b WHERE (b.id, b.tenant_id) IN (");
    for (i, (balance, tenant)) in balances.iter().enumerate() {
        q.push(if i == 0 { "(" } else { ", (" }).bind(*balance).push(", ").bind(*tenant).push(")");
    }
    q.push(") ORDER BY b.id FOR NO KEY UPDATE");
    q
}

/// Locks `tenants` against deletion for the batch (`FOR KEY SHARE`, what each row's foreign key
/// to its tenant takes), once at the top of the batch rather than once per row inside each
/// changeset's savepoint.
pub(super) fn lock_tenants(tenants: &[i64]) -> Query<Postgres> {
    let mut q = Query::new("SELECT t.id FROM tenants t WHERE t.id IN (");
    let mut ids = q.separated(", ");
    for tenant in tenants {
        ids.bind(*tenant);
    }
    q.push(") ORDER BY t.id FOR KEY SHARE");
    q
}

/// The balances `changes` posts to, with its tenant.
pub(super) fn posted_balances(changes: &Changeset) -> impl Iterator<Item = (Uuid, i64)> + '_ {
    changes.changes.iter().filter_map(|change| match change {
        Change::Post { balance, .. } => Some((*balance, changes.tenant.0)),
        _ => None,
    })
}

impl WriteDialect for Postgres {
    const MOVES_BALANCES: bool = false;
    /// Another instance may be changing the row: `FOR SHARE` keeps it as found until the commit.
    const KEEP_FOUND: &'static str = " FOR SHARE";

    fn push_new_seq(query: &mut Query<Self>, _: &'static str, created: DateTime<Utc>) {
        push_new_seq(query, created);
    }

    /// The recipient's searched fields, beside the others in the row's search column.
    fn transaction_columns(columns: &mut String, values: &mut Vec<Value>, transaction: &types::Transaction) {
        let recipient = transaction.recipient.as_ref();
        columns.push_str(", recipient_account_name, recipient_alias");
        values.push(recipient.and_then(|r| text(r.bank_account.account_name.as_ref())).into());
        values.push(recipient.and_then(|r| text(r.alias.as_ref())).into());
    }

    /// A virtual account's search column is generated from its row.
    fn virtual_account_searchable(_: &types::VirtualAccount) -> Vec<Query<Self>> {
        Vec::new()
    }

    fn virtual_account_renamed(_: Uuid, _: &str) -> Vec<Query<Self>> {
        Vec::new()
    }

    /// One statement: the event, kept only when an endpoint subscribes, and its notifications
    /// inserted from what the insert returned.
    fn event(tenant: i64, event: &str, data: &str, at: DateTime<Utc>) -> Vec<(Query<Self>, bool)> {
        let now = micros(at);
        let mut q = Query::new("WITH e AS (INSERT INTO events (tenant_id, event, created, data) SELECT ");
        q.bind(tenant).push(", ").bind(event).push(", ").bind(now).push(", ");
        q.bind(data).push(" WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE ");
        push_subscribed(&mut q, tenant, event);
        q.push(") RETURNING seq) INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, ");
        q.push("next_attempt, created) SELECT ");
        push_new_seq(&mut q, at);
        q.push(", gen_random_uuid(), w.tenant_id, w.id, e.seq, 'pending', ").bind(now).push(", ");
        q.bind(now).push(" FROM e CROSS JOIN webhook_endpoints w WHERE ");
        push_subscribed(&mut q, tenant, event);
        vec![(q, false)]
    }

    fn ping(tenant: i64, id: Uuid, endpoint: Uuid, data: &str, at: DateTime<Utc>) -> Vec<Query<Self>> {
        let now = micros(at);
        let mut q = Query::new("WITH e AS (INSERT INTO events (tenant_id, event, created, data) VALUES (");
        q.bind(tenant).push(", ").bind(types::WebhookEvent::Ping.to_string()).push(", ");
        q.bind(now).push(", ").bind(data).push(") RETURNING seq) ");
        q.push(
            "INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, next_attempt, created) ",
        );
        q.push("SELECT ");
        push_new_seq(&mut q, at);
        q.push(", ").bind(id).push(", ").bind(tenant).push(", ").bind(endpoint);
        q.push(", e.seq, 'pending', ").bind(now).push(", ").bind(now).push(" FROM e");
        vec![q]
    }
}
