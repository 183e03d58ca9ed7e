//! Applying a [`Changeset`] on the writer's connection: a savepoint, one or two statements per
//! change, the savepoint released. A change that cannot apply to the state it was decided on
//! stops it: a guarded statement that changes no row (a status that moved, a row that is gone)
//! is stale, a debit the balance does not cover fails the `funds` check, a taken key its unique
//! index. The savepoint is then rolled back, so nothing of the changeset remains.
//!
//! The search rows of the transactions a changeset inserts are not written here: the writer
//! writes them for its whole batch, after the last savepoint ([`index`]).

use chrono::{DateTime, Utc};
use payments_types as types;
use rusqlite::Connection;
use sqlx::Sqlite;
use uuid::Uuid;

use super::codec::{constraint_message, push_new_seq, unique_key};
use super::statements::{execute, rows};
use crate::plan::{balance_moves, guarded, posting_totals};
use crate::reads::{Query, Value, amount_value, micros, to_json};
use crate::{Change, Changeset, Idempotency, Result, StoreError, TenantId};

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

/// Applies `changes`, and gives the search rows of the transactions it inserted, for [`index`].
pub fn apply(connection: &Connection, changes: &Changeset) -> Result<Vec<Searchable>> {
    execute(connection, Query::new("SAVEPOINT change"))?;
    let mut searchable = Vec::new();
    let failure = match write(connection, changes, &mut searchable) {
        Ok(()) => {
            execute(connection, Query::new("RELEASE change"))?;
            return Ok(searchable);
        }
        Err(failure) => failure,
    };
    // Nothing of the changeset may remain. If even that fails, the writer's whole transaction
    // is in doubt: a `Database` error tells the writer to roll it all back.
    connection.execute_batch("ROLLBACK TO change; RELEASE change")?;
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
fn uncovered(connection: &Connection, changes: &Changeset) -> Result<Option<(Uuid, i64)>> {
    for (balance, total) in posting_totals(&changes.changes) {
        let mut query = Query::new("SELECT amount FROM balances WHERE id = ");
        query.bind(balance).push(" AND tenant_id = ").bind(changes.tenant.0);
        let held = rows(connection, query, |row| Ok(row.get::<_, i64>(0)?), Some(1))?.pop();
        if let Some(held) = held
            && held + total < 0
        {
            return Ok(Some((balance, held)));
        }
    }
    Ok(None)
}

fn write(connection: &Connection, changes: &Changeset, searchable: &mut Vec<Searchable>) -> Result<(), Failure> {
    let moves = balance_moves(&changes.changes);
    for (index, change) in changes.changes.iter().enumerate() {
        write_change(connection, changes.tenant, changes.now, change, moves[index])?;
        if let Change::InsertTransaction { transaction, .. } = change {
            // The row just inserted: a transaction's seq is its rowid.
            searchable.push(Searchable::of(connection.last_insert_rowid(), transaction));
        }
    }
    Ok(())
}

fn run(connection: &Connection, query: Query<Sqlite>) -> Result<usize, Failure> {
    Ok(execute(connection, query)?)
}

/// Runs a guarded statement: it must change a row, else the change is stale.
fn guarded_run(connection: &Connection, query: Query<Sqlite>, change: &Change) -> Result<(), Failure> {
    if run(connection, query)? == 0 {
        let (resource, id) = guarded(change);
        return Err(Failure::Refused(StoreError::Stale { resource, id }));
    }
    Ok(())
}

fn key_and_request(idempotency: &Option<Idempotency>) -> (Option<String>, Option<String>) {
    idempotency.as_ref().map(|i| (i.key.clone(), i.request.clone())).unzip()
}

/// An optional constrained string (the models' newtypes over `String`) as text.
fn text<T: std::ops::Deref<Target = String>>(value: Option<&T>) -> Option<String> {
    value.map(|v| String::clone(v))
}

fn new(sql: &str) -> Query<Sqlite> {
    Query::new(sql)
}

/// Writes one change (`balance_move`: see [`balance_moves`]).
fn write_change(
    connection: &Connection,
    tenant: TenantId,
    at: DateTime<Utc>,
    change: &Change,
    balance_move: Option<i64>,
) -> Result<(), Failure> {
    let tenant = tenant.0;
    let now = micros(at);
    match change {
        Change::OpenBalance { id, currency, name } => {
            let mut q = new("INSERT INTO balances (seq, id, tenant_id, currency, name, amount, created) VALUES (");
            push_new_seq(&mut q, "balances", at);
            q.push(", ").binds([(*id).into(), tenant.into(), currency.clone().into(), name.clone().into()]);
            q.push(", 0, ").bind(now).push(")");
            run(connection, q)?;
        }
        Change::RenameBalance { id, name } => {
            let mut q = new("UPDATE balances SET name = ");
            q.bind(name.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            guarded_run(connection, q, change)?;
        }
        Change::Post { balance, transaction, kind, delta } => {
            // Invariant: credits add, debits take, and no entry is zero.
            if *delta == 0 || kind.is_credit() != (*delta > 0) {
                let message = format!("a {} ledger entry cannot be {delta}", kind.as_str());
                return Err(Failure::Database(StoreError::Invariant(message)));
            }
            // A debit below zero fails the `funds` check; a balance that is not the tenant's,
            // the guard. The first posting of a run moves the balance for all of them.
            if let Some(moved) = balance_move {
                let mut q = new("UPDATE balances SET amount = amount + ");
                q.bind(moved).push(" WHERE id = ").bind(*balance).push(" AND tenant_id = ").bind(tenant);
                guarded_run(connection, q, change)?;
            }
            let mut q = new("INSERT INTO ledger (balance_id, transaction_id, kind, delta, created) VALUES (");
            q.binds([(*balance).into(), (*transaction).into(), kind.as_str().into(), (*delta).into(), now.into()])
                .push(")");
            run(connection, q)?;
        }
        Change::InsertRecipient(recipient) => {
            let mut q = new(
                "INSERT INTO recipients (seq, id, tenant_id, type, country, alias, default_reference, bank_account, \
                 created) VALUES (",
            );
            push_new_seq(&mut q, "recipients", recipient.created);
            q.push(", ").binds([
                recipient.id.into(),
                tenant.into(),
                recipient.type_.to_string().into(),
                recipient.country.to_string().into(),
                text(recipient.alias.as_ref()).into(),
                text(recipient.default_reference.as_ref()).into(),
                to_json(&recipient.bank_account)?.into(),
                micros(recipient.created).into(),
            ]);
            q.push(")");
            run(connection, q)?;
        }
        Change::SetRecipientAlias { id, alias } => {
            let mut q = new("UPDATE recipients SET alias = ");
            q.bind(alias.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            q.push(" AND deleted = FALSE");
            guarded_run(connection, q, change)?;
        }
        Change::DeleteRecipient { id } => {
            let mut q = new("UPDATE recipients SET deleted = TRUE WHERE id = ");
            q.bind(*id).push(" AND tenant_id = ").bind(tenant).push(" AND deleted = FALSE");
            guarded_run(connection, q, change)?;
        }
        Change::InsertPaymentRequest { request, idempotency } => {
            let (key, canonical) = key_and_request(idempotency);
            let mut q = new(
                "INSERT INTO payment_requests (seq, id, tenant_id, reference_id, request, market, currency, amount, \
                 settlement_balance_id, reference, status, payment_url, qr_code_url, return_url, created) VALUES (",
            );
            push_new_seq(&mut q, "payment_requests", request.created);
            q.push(", ").binds([
                request.id.into(),
                tenant.into(),
                key.into(),
                canonical.into(),
                request.market.to_string().into(),
                request.currency.to_string().into(),
                request.amount.as_ref().map(amount_value).transpose()?.into(),
                request.settlement_balance_id.into(),
                text(request.reference.as_ref()).into(),
                request.status.to_string().into(),
                request.payment_url.clone().into(),
                request.qr_code_url.clone().into(),
                request.return_url.clone().into(),
                micros(request.created).into(),
            ]);
            q.push(")");
            run(connection, q)?;
        }
        Change::SetPaymentRequestStatus { id, from, to, paid } => {
            let mut q = new("UPDATE payment_requests SET status = ");
            q.bind(to.to_string());
            if let Some(paid) = paid {
                q.push(", amount = ").bind(amount_value(paid)?);
            }
            q.push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            q.push(" AND status = ").bind(from.to_string());
            if let Some(paid) = paid {
                q.push(" AND (amount IS NULL OR amount = ").bind(amount_value(paid)?).push(")");
            }
            guarded_run(connection, q, change)?;
        }
        Change::InsertTransaction { transaction, idempotency } => {
            run(connection, insert_transaction(tenant, transaction, idempotency)?)?;
        }
        Change::SetTransactionStatus { id, from, to, failure_reason } => {
            let mut q = new("UPDATE transactions SET status = ");
            q.bind(to.to_string()).push(", failure_reason = ").bind(failure_reason.clone());
            q.push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            q.push(" AND status = ").bind(from.to_string());
            guarded_run(connection, q, change)?;
        }
        Change::InsertVirtualAccount { account, idempotency } => {
            let (key, canonical) = key_and_request(idempotency);
            let mut q = new("INSERT INTO virtual_accounts (seq, id, tenant_id, reference_id, request, currency, \
                 settlement_balance_id, account_name, bank_name, account_number, supported_channels, type, status, \
                 created) VALUES (");
            push_new_seq(&mut q, "virtual_accounts", account.created);
            q.push(", ").binds([
                account.id.into(),
                tenant.into(),
                key.into(),
                canonical.into(),
                account.currency.to_string().into(),
                account.settlement_balance_id.into(),
                account.account_name.to_string().into(),
                account.details.bank_name.clone().into(),
                account.details.account_number.clone().into(),
                to_json(&account.supported_channels)?.into(),
                account.type_.to_string().into(),
                account.status.to_string().into(),
                micros(account.created).into(),
            ]);
            q.push(")");
            run(connection, q)?;
            // The row just inserted: an account's seq is its rowid.
            let mut q =
                new("INSERT INTO virtual_account_search (rowid, account_name, account_number, bank_name) VALUES (");
            q.binds([
                connection.last_insert_rowid().into(),
                account.account_name.to_string().into(),
                account.details.account_number.clone().into(),
                account.details.bank_name.clone().into(),
            ]);
            q.push(")");
            run(connection, q)?;
        }
        Change::SetVirtualAccountStatus { id, from, to } => {
            let mut q = new("UPDATE virtual_accounts SET status = ");
            q.bind(to.to_string()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            q.push(" AND status = ").bind(from.to_string());
            guarded_run(connection, q, change)?;
        }
        Change::RenameVirtualAccount { id, name } => {
            let mut q = new("UPDATE virtual_accounts SET account_name = ");
            q.bind(name.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            guarded_run(connection, q, change)?;
            let mut q = new("UPDATE virtual_account_search SET account_name = ");
            q.bind(name.clone()).push(" WHERE rowid = (SELECT seq FROM virtual_accounts WHERE id = ");
            q.bind(*id).push(")");
            run(connection, q)?;
        }
        Change::ExpectVirtualAccountStatus { id, status } => {
            // The writer is the only one writing: the account keeps that status until the commit.
            let mut q = new("SELECT 1 FROM virtual_accounts WHERE id = ");
            q.bind(*id).push(" AND tenant_id = ").bind(tenant).push(" AND status = ").bind(status.to_string());
            if rows(connection, q, |_| Ok(()), Some(1))?.is_empty() {
                let (resource, id) = guarded(change);
                return Err(Failure::Refused(StoreError::Stale { resource, id }));
            }
        }
        Change::InsertWebhookEndpoint { endpoint, secret } => {
            let mut q =
                new("INSERT INTO webhook_endpoints (seq, id, tenant_id, url, all_events, secret, created) VALUES (");
            push_new_seq(&mut q, "webhook_endpoints", endpoint.created);
            q.push(", ").binds([
                endpoint.id.into(),
                tenant.into(),
                endpoint.url.to_string().into(),
                endpoint.events.is_none().into(),
                secret.clone().into(),
                micros(endpoint.created).into(),
            ]);
            q.push(")");
            run(connection, q)?;
            for (position, event) in endpoint.events.iter().flatten().enumerate() {
                let mut q = new("INSERT INTO webhook_subscriptions (endpoint_id, position, event) VALUES (");
                q.binds([endpoint.id.into(), (position as i64).into(), event.to_string().into()]).push(")");
                run(connection, q)?;
            }
        }
        Change::DeleteWebhookEndpoint { id } => {
            let mut q = new("UPDATE webhook_endpoints SET deleted = TRUE WHERE id = ");
            q.bind(*id).push(" AND tenant_id = ").bind(tenant).push(" AND deleted = FALSE");
            guarded_run(connection, q, change)?;
            let mut q = new("UPDATE notifications SET status = 'discarded', next_attempt = NULL WHERE endpoint_id = ");
            q.bind(*id).push(" AND next_attempt IS NOT NULL");
            run(connection, q)?;
        }
        Change::SetWebhookSecret { id, secret } => {
            let mut q = new("UPDATE webhook_endpoints SET secret = ");
            q.bind(secret.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            q.push(" AND deleted = FALSE");
            guarded_run(connection, q, change)?;
        }
        Change::Event { event, data } => {
            // An event is kept only when an endpoint subscribes to it, with a notification (due
            // at once) for each such endpoint: nothing is written for a tenant without endpoints.
            let event = event.to_string();
            let mut q = new("INSERT INTO events (tenant_id, event, created, data) SELECT ");
            q.binds([tenant.into(), event.clone().into(), now.into(), data.clone().into()]);
            q.push(" WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE ");
            push_subscribed(&mut q, tenant, &event);
            q.push(")");
            if run(connection, q)? == 0 {
                return Ok(());
            }
            // The notifications take consecutive keys after those already made in this
            // millisecond (the writer is the only one writing).
            let event_seq = connection.last_insert_rowid();
            let mut q =
                new("INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, next_attempt, \
                 created) SELECT ");
            push_new_seq(&mut q, "notifications", at);
            q.push(format!(" + row_number() OVER (ORDER BY e.seq) - 1, {NEW_UUID}, e.tenant_id, e.id, "));
            q.binds([event_seq.into(), "pending".into(), now.into(), now.into()]);
            q.push(" FROM webhook_endpoints e WHERE ");
            push_subscribed(&mut q, tenant, &event);
            run(connection, q)?;
        }
        Change::Ping { id, endpoint, data } => {
            let mut q = new("INSERT INTO events (tenant_id, event, created, data) VALUES (");
            q.binds([tenant.into(), types::WebhookEvent::Ping.to_string().into(), now.into(), data.clone().into()]);
            q.push(")");
            run(connection, q)?;
            let event_seq = connection.last_insert_rowid();
            let mut q =
                new("INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, next_attempt, \
                 created) VALUES (");
            push_new_seq(&mut q, "notifications", at);
            q.push(", ").binds([
                (*id).into(),
                tenant.into(),
                (*endpoint).into(),
                event_seq.into(),
                "pending".into(),
                now.into(),
                now.into(),
            ]);
            q.push(")");
            run(connection, q)?;
        }
    }
    Ok(())
}

fn insert_transaction(
    tenant: i64,
    transaction: &types::Transaction,
    idempotency: &Option<Idempotency>,
) -> Result<Query<Sqlite>> {
    let (key, canonical) = key_and_request(idempotency);
    let recipient = transaction.recipient.as_ref();
    let rate = |value: std::num::NonZeroU64| {
        i64::try_from(value.get()).map_err(|_| StoreError::TooLarge { what: "rate", value: value.to_string() })
    };
    let rates = transaction.exchange_rate.as_ref();
    let mut q = new(
        "INSERT INTO transactions (seq, id, tenant_id, order_id, request, transaction_type, payment_method, status, \
         failure_reason, balance_id, currency, amount, fees, to_currency, to_amount, rate, single_rate, \
         rate_decimal, single_rate_decimal, \
         virtual_account_id, recipient_id, recipient_country, recipient, payer_name, reference, payment_reference, \
         created) VALUES (",
    );
    push_new_seq(&mut q, "transactions", transaction.created);
    let values: [Value; 26] = [
        transaction.id.into(),
        tenant.into(),
        key.into(),
        canonical.into(),
        transaction.transaction_type.to_string().into(),
        transaction.payment_method.to_string().into(),
        transaction.status.to_string().into(),
        transaction.failure_reason.clone().into(),
        transaction.balance_id.into(),
        transaction.currency.to_string().into(),
        amount_value(&transaction.amount)?.into(),
        transaction.fees.into(),
        transaction.to_currency.to_string().into(),
        amount_value(&transaction.to_amount)?.into(),
        rates.map(|r| rate(r.rate)).transpose()?.into(),
        rates.map(|r| rate(r.single_rate)).transpose()?.into(),
        rates.map(|r| r.rate_decimal.to_string()).into(),
        rates.map(|r| r.single_rate_decimal.to_string()).into(),
        transaction.virtual_account_id.into(),
        recipient.map(|r| r.id).into(),
        recipient.map(|r| r.country.to_string()).into(),
        recipient.map(to_json).transpose()?.into(),
        transaction.payer_name.clone().into(),
        text(transaction.reference.as_ref()).into(),
        text(transaction.payment_reference.as_ref()).into(),
        micros(transaction.created).into(),
    ];
    q.push(", ").binds(values).push(")");
    Ok(q)
}

/// What `search` looks in for one transaction (see `transactions::SEARCHED`), stored in
/// `transaction_search` under the transaction's seq.
pub struct Searchable {
    seq: i64,
    fields: [Option<String>; 6],
}

impl Searchable {
    fn of(seq: i64, transaction: &types::Transaction) -> Self {
        let recipient = transaction.recipient.as_ref();
        let reference = text(transaction.reference.as_ref());
        // A payment reference that repeats the reference (the usual case) is found through it.
        let payment_reference = text(transaction.payment_reference.as_ref()).filter(|p| Some(p) != reference.as_ref());
        Self {
            seq,
            fields: [
                reference,
                payment_reference,
                text(transaction.order_id.as_ref()),
                transaction.payer_name.clone(),
                recipient.and_then(|r| text(r.bank_account.account_name.as_ref())),
                recipient.and_then(|r| text(r.alias.as_ref())),
            ],
        }
    }
}

/// Writes the search rows of a batch's transactions, oldest first.
pub fn index(connection: &Connection, rows: &[Searchable]) -> Result<()> {
    for row in rows {
        let mut insert =
            new("INSERT INTO transaction_search (rowid, reference, payment_reference, order_id, payer_name, \
             account_name, alias) VALUES (");
        let fields = row.fields.iter().map(|field| Value::from(field.clone()));
        insert.binds(std::iter::once(row.seq.into()).chain(fields)).push(")");
        execute(connection, insert)?;
    }
    Ok(())
}

fn push_subscribed(query: &mut Query<Sqlite>, tenant: i64, event: &str) {
    let mut parts = SUBSCRIBED.split('?');
    query.push(parts.next().unwrap_or_default()).bind(tenant);
    query.push(parts.next().unwrap_or_default()).bind(event.to_owned());
    query.push(parts.next().unwrap_or_default());
}
