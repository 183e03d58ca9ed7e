//! What a [`Changeset`] writes on PostgreSQL: its statements, one per row written, each with
//! what it must find when it must find something (else its changeset is refused); and the
//! statements a batch of changesets begins and ends with (see `writer.rs` for how a batch is
//! sent and committed). A guarded update that finds no row in the expected state is stale; a
//! taken key fails its unique index.
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

use chrono::{DateTime, Utc};
use payments_types as types;
use sqlx::Postgres;
use uuid::Uuid;

use crate::plan::{balance_moves, guarded};
use crate::reads::{Query, SEQ_BITS, amount_value, micros, seq_floor, to_json};
use crate::{Change, Changeset, Idempotency, Result, StoreError, UniqueKey};

/// One statement of a changeset, and the row it must change (else the changeset is stale).
pub struct Step {
    pub query: Query<Postgres>,
    pub guards: Option<(&'static str, Uuid)>,
}

/// The unique key a constraint of that name keeps; `None` for one no caller can take.
pub fn unique_key(constraint: &str) -> Option<UniqueKey> {
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

/// The statements of `changes`, in order, but for its balances' moves (see [`moves`]); refused
/// at once when a change is not one the ledger can take.
pub fn statements(changes: &Changeset) -> Result<Vec<Step>> {
    let mut steps = Vec::with_capacity(changes.changes.len());
    for change in &changes.changes {
        write_change(&mut steps, changes.tenant.0, changes.now, change)?;
    }
    Ok(steps)
}

/// What `changes` moves balances by, move by move in order (consecutive postings to one balance,
/// a payment and its fee, are one move).
pub fn moves(changes: &Changeset) -> Vec<(Uuid, i64)> {
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
pub fn funds_check(tenant: i64, balance: Uuid, need: i64) -> Query<Postgres> {
    let mut q = new("SELECT 1 FROM balances WHERE id = ");
    q.bind(balance).push(" AND tenant_id = ").bind(tenant).push(" AND amount >= ").bind(need);
    q
}

/// What the tenant's balance `balance` holds (in a batch that holds its lock).
pub fn balance_amount(tenant: i64, balance: Uuid) -> Query<Postgres> {
    let mut q = new("SELECT amount FROM balances WHERE id = ");
    q.bind(balance).push(" AND tenant_id = ").bind(tenant);
    q
}

/// Moves the tenant's balance `balance` by `delta`: what a batch's accepted changesets moved it.
pub fn move_balance(tenant: i64, balance: Uuid, delta: i64) -> Query<Postgres> {
    let mut q = new("UPDATE balances SET amount = amount + ");
    q.bind(delta).push(" WHERE id = ").bind(balance).push(" AND tenant_id = ").bind(tenant);
    q
}

/// Locks `balances` (id, tenant) in the order given (`FOR NO KEY UPDATE`): nobody else moves
/// them until the batch ends, and the batch's own foreign keys to them find them locked by the
/// batch already.
pub fn lock_balances(balances: &[(Uuid, i64)]) -> Query<Postgres> {
    let mut q = new("SELECT b.id FROM balances b WHERE (b.id, b.tenant_id) IN (");
    for (i, (balance, tenant)) in balances.iter().enumerate() {
        q.push(if i == 0 { "(" } else { ", (" }).bind(*balance).push(", ").bind(*tenant).push(")");
    }
    q.push(") ORDER BY b.id FOR NO KEY UPDATE");
    q
}

/// Locks `tenants` against deletion for the batch (`FOR KEY SHARE`, what each row's foreign key
/// to its tenant takes), once at the top of the batch rather than once per row inside each
/// changeset's savepoint.
pub fn lock_tenants(tenants: &[i64]) -> Query<Postgres> {
    let mut q = new("SELECT t.id FROM tenants t WHERE t.id IN (");
    let mut ids = q.separated(", ");
    for tenant in tenants {
        ids.bind(*tenant);
    }
    q.push(") ORDER BY t.id FOR KEY SHARE");
    q
}

/// The balances `changes` posts to, with its tenant.
pub fn posted_balances(changes: &Changeset) -> impl Iterator<Item = (Uuid, i64)> + '_ {
    changes.changes.iter().filter_map(|change| match change {
        Change::Post { balance, .. } => Some((*balance, changes.tenant.0)),
        _ => None,
    })
}

fn step(steps: &mut Vec<Step>, query: Query<Postgres>) {
    steps.push(Step { query, guards: None });
}

/// A statement that must change a row, else the change is stale.
fn guarded_step(steps: &mut Vec<Step>, query: Query<Postgres>, change: &Change) {
    steps.push(Step { query, guards: Some(guarded(change)) });
}

fn key_and_request(idempotency: &Option<Idempotency>) -> (Option<String>, Option<String>) {
    idempotency.as_ref().map(|i| (i.key.clone(), i.request.clone())).unzip()
}

fn text<T: std::ops::Deref<Target = String>>(value: Option<&T>) -> Option<String> {
    value.map(|v| String::clone(v))
}

fn new(sql: &str) -> Query<Postgres> {
    Query::new(sql)
}

fn write_change(steps: &mut Vec<Step>, tenant: i64, at: DateTime<Utc>, change: &Change) -> Result<()> {
    let now = micros(at);
    match change {
        Change::OpenBalance { id, currency, name } => {
            let mut q = new("INSERT INTO balances (seq, id, tenant_id, currency, name, amount, created) VALUES (");
            push_new_seq(&mut q, at);
            q.push(", ").bind(*id).push(", ").bind(tenant).push(", ").bind(currency.clone());
            q.push(", ").bind(name.clone()).push(", 0, ").bind(now).push(")");
            step(steps, q);
        }
        Change::RenameBalance { id, name } => {
            let mut q = new("UPDATE balances SET name = ");
            q.bind(name.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            guarded_step(steps, q, change);
        }
        Change::Post { balance, transaction, kind, delta } => {
            // Invariant: credits add, debits take, and no entry is zero.
            if *delta == 0 || kind.is_credit() != (*delta > 0) {
                return Err(StoreError::Invariant(format!("a {} ledger entry cannot be {delta}", kind.as_str())));
            }
            // The balance itself moves once for the whole batch (see the module comment).
            let mut q = new("INSERT INTO ledger (balance_id, transaction_id, kind, delta, created) VALUES (");
            q.bind(*balance).push(", ").bind(*transaction).push(", ").bind(kind.as_str());
            q.push(", ").bind(*delta).push(", ").bind(now).push(")");
            step(steps, q);
        }
        Change::InsertRecipient(recipient) => {
            let mut q = new(
                "INSERT INTO recipients (seq, id, tenant_id, type, country, alias, default_reference, bank_account, \
                 created) VALUES (",
            );
            push_new_seq(&mut q, recipient.created);
            q.push(", ");
            let mut values = q.separated(", ");
            values.bind(recipient.id).bind(tenant).bind(recipient.type_.to_string());
            values.bind(recipient.country.to_string()).bind(text(recipient.alias.as_ref()));
            values.bind(text(recipient.default_reference.as_ref())).bind(to_json(&recipient.bank_account)?);
            values.bind(micros(recipient.created));
            q.push(")");
            step(steps, q);
        }
        Change::SetRecipientAlias { id, alias } => {
            let mut q = new("UPDATE recipients SET alias = ");
            q.bind(alias.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            q.push(" AND deleted = FALSE");
            guarded_step(steps, q, change);
        }
        Change::DeleteRecipient { id } => {
            let mut q = new("UPDATE recipients SET deleted = TRUE WHERE id = ");
            q.bind(*id).push(" AND tenant_id = ").bind(tenant).push(" AND deleted = FALSE");
            guarded_step(steps, q, change);
        }
        Change::InsertPaymentRequest { request, idempotency } => {
            let (key, canonical) = key_and_request(idempotency);
            let mut q = new(
                "INSERT INTO payment_requests (seq, id, tenant_id, reference_id, request, market, currency, amount, \
                 settlement_balance_id, reference, status, payment_url, qr_code_url, return_url, created) VALUES (",
            );
            push_new_seq(&mut q, request.created);
            q.push(", ");
            let mut values = q.separated(", ");
            values.bind(request.id).bind(tenant).bind(key).bind(canonical);
            values.bind(request.market.to_string()).bind(request.currency.to_string());
            values.bind(request.amount.as_ref().map(amount_value).transpose()?).bind(request.settlement_balance_id);
            values.bind(text(request.reference.as_ref())).bind(request.status.to_string());
            values.bind(request.payment_url.clone()).bind(request.qr_code_url.clone());
            values.bind(request.return_url.clone()).bind(micros(request.created));
            q.push(")");
            step(steps, q);
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
            guarded_step(steps, q, change);
        }
        Change::InsertTransaction { transaction, idempotency } => {
            step(steps, insert_transaction(tenant, transaction, idempotency)?);
        }
        Change::SetTransactionStatus { id, from, to, failure_reason } => {
            let mut q = new("UPDATE transactions SET status = ");
            q.bind(to.to_string()).push(", failure_reason = ").bind(failure_reason.clone());
            q.push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            q.push(" AND status = ").bind(from.to_string());
            guarded_step(steps, q, change);
        }
        Change::InsertVirtualAccount { account, idempotency } => {
            let (key, canonical) = key_and_request(idempotency);
            let mut q = new("INSERT INTO virtual_accounts (seq, id, tenant_id, reference_id, request, currency, \
                 settlement_balance_id, account_name, bank_name, account_number, supported_channels, type, status, \
                 created) VALUES (");
            push_new_seq(&mut q, account.created);
            q.push(", ");
            let mut values = q.separated(", ");
            values.bind(account.id).bind(tenant).bind(key).bind(canonical);
            values.bind(account.currency.to_string()).bind(account.settlement_balance_id);
            values.bind(account.account_name.to_string()).bind(account.details.bank_name.clone());
            values.bind(account.details.account_number.clone()).bind(to_json(&account.supported_channels)?);
            values.bind(account.type_.to_string()).bind(account.status.to_string());
            values.bind(micros(account.created));
            q.push(")");
            step(steps, q);
        }
        Change::SetVirtualAccountStatus { id, from, to } => {
            let mut q = new("UPDATE virtual_accounts SET status = ");
            q.bind(to.to_string()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            q.push(" AND status = ").bind(from.to_string());
            guarded_step(steps, q, change);
        }
        Change::RenameVirtualAccount { id, name } => {
            let mut q = new("UPDATE virtual_accounts SET account_name = ");
            q.bind(name.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            guarded_step(steps, q, change);
        }
        Change::ExpectVirtualAccountStatus { id, status } => {
            // FOR SHARE: the account keeps that status until this transaction ends.
            let mut q = new("SELECT 1 FROM virtual_accounts WHERE id = ");
            q.bind(*id).push(" AND tenant_id = ").bind(tenant).push(" AND status = ");
            q.bind(status.to_string()).push(" FOR SHARE");
            guarded_step(steps, q, change);
        }
        Change::InsertWebhookEndpoint { endpoint, secret } => {
            let mut q =
                new("INSERT INTO webhook_endpoints (seq, id, tenant_id, url, all_events, secret, created) VALUES (");
            push_new_seq(&mut q, endpoint.created);
            q.push(", ");
            let mut values = q.separated(", ");
            values.bind(endpoint.id).bind(tenant).bind(endpoint.url.to_string());
            values.bind(endpoint.events.is_none()).bind(secret.clone()).bind(micros(endpoint.created));
            q.push(")");
            step(steps, q);
            for (position, event) in endpoint.events.iter().flatten().enumerate() {
                let mut q = new("INSERT INTO webhook_subscriptions (endpoint_id, position, event) VALUES (");
                q.bind(endpoint.id).push(", ").bind(position as i64).push(", ").bind(event.to_string());
                q.push(")");
                step(steps, q);
            }
        }
        Change::DeleteWebhookEndpoint { id } => {
            let mut q = new("UPDATE webhook_endpoints SET deleted = TRUE WHERE id = ");
            q.bind(*id).push(" AND tenant_id = ").bind(tenant).push(" AND deleted = FALSE");
            guarded_step(steps, q, change);
            let mut q = new("UPDATE notifications SET status = 'discarded', next_attempt = NULL WHERE endpoint_id = ");
            q.bind(*id).push(" AND next_attempt IS NOT NULL");
            step(steps, q);
        }
        Change::SetWebhookSecret { id, secret } => {
            let mut q = new("UPDATE webhook_endpoints SET secret = ");
            q.bind(secret.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
            q.push(" AND deleted = FALSE");
            guarded_step(steps, q, change);
        }
        Change::Event { event, data } => {
            // An event is kept only when an endpoint subscribes to it, with a notification (due
            // at once) for each such endpoint: nothing is written for a tenant without endpoints.
            let event = event.to_string();
            let mut q = new("WITH e AS (INSERT INTO events (tenant_id, event, created, data) SELECT ");
            q.bind(tenant).push(", ").bind(event.clone()).push(", ").bind(now).push(", ");
            q.bind(data.clone()).push(" WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE ");
            push_subscribed(&mut q, tenant, &event);
            q.push(") RETURNING seq) INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, ");
            q.push("next_attempt, created) SELECT ");
            push_new_seq(&mut q, at);
            q.push(", gen_random_uuid(), w.tenant_id, w.id, e.seq, 'pending', ").bind(now).push(", ");
            q.bind(now).push(" FROM e CROSS JOIN webhook_endpoints w WHERE ");
            push_subscribed(&mut q, tenant, &event);
            step(steps, q);
        }
        Change::Ping { id, endpoint, data } => {
            let mut q = new("WITH e AS (INSERT INTO events (tenant_id, event, created, data) VALUES (");
            q.bind(tenant).push(", ").bind(types::WebhookEvent::Ping.to_string()).push(", ");
            q.bind(now).push(", ").bind(data.clone()).push(") RETURNING seq) ");
            q.push("INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, next_attempt, created) ");
            q.push("SELECT ");
            push_new_seq(&mut q, at);
            q.push(", ").bind(*id).push(", ").bind(tenant).push(", ").bind(*endpoint);
            q.push(", e.seq, 'pending', ").bind(now).push(", ").bind(now).push(" FROM e");
            step(steps, q);
        }
    }
    Ok(())
}

fn insert_transaction(
    tenant: i64,
    transaction: &types::Transaction,
    idempotency: &Option<Idempotency>,
) -> Result<Query<Postgres>> {
    let (key, canonical) = key_and_request(idempotency);
    let recipient = transaction.recipient.as_ref();
    let rate = |value: std::num::NonZeroU64| {
        i64::try_from(value.get()).map_err(|_| StoreError::TooLarge { what: "rate", value: value.to_string() })
    };
    let mut q = new(
        "INSERT INTO transactions (seq, id, tenant_id, order_id, request, transaction_type, payment_method, status, \
         failure_reason, balance_id, currency, amount, fees, to_currency, to_amount, rate, single_rate, \
         rate_decimal, single_rate_decimal, \
         virtual_account_id, recipient_id, recipient_country, recipient, recipient_account_name, recipient_alias, \
         payer_name, reference, payment_reference, created) VALUES (",
    );
    push_new_seq(&mut q, transaction.created);
    q.push(", ");
    let mut values = q.separated(", ");
    values.bind(transaction.id).bind(tenant).bind(key).bind(canonical);
    values.bind(transaction.transaction_type.to_string()).bind(transaction.payment_method.to_string());
    values.bind(transaction.status.to_string()).bind(transaction.failure_reason.clone());
    values.bind(transaction.balance_id).bind(transaction.currency.to_string());
    values.bind(amount_value(&transaction.amount)?).bind(transaction.fees);
    values.bind(transaction.to_currency.to_string()).bind(amount_value(&transaction.to_amount)?);
    values.bind(transaction.exchange_rate.as_ref().map(|r| rate(r.rate)).transpose()?);
    values.bind(transaction.exchange_rate.as_ref().map(|r| rate(r.single_rate)).transpose()?);
    values.bind(transaction.exchange_rate.as_ref().map(|r| r.rate_decimal.to_string()));
    values.bind(transaction.exchange_rate.as_ref().map(|r| r.single_rate_decimal.to_string()));
    values.bind(transaction.virtual_account_id).bind(recipient.map(|r| r.id));
    values.bind(recipient.map(|r| r.country.to_string())).bind(recipient.map(to_json).transpose()?);
    values.bind(recipient.and_then(|r| text(r.bank_account.account_name.as_ref())));
    values.bind(recipient.and_then(|r| text(r.alias.as_ref())));
    values.bind(transaction.payer_name.clone()).bind(text(transaction.reference.as_ref()));
    values.bind(text(transaction.payment_reference.as_ref())).bind(micros(transaction.created));
    q.push(")");
    Ok(q)
}
