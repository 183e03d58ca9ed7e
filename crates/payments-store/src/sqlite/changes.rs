//! Applying a [`Changeset`]: compiled into one SQL script — a savepoint, one or two statements
//! per change, the savepoint released — and run in one call on the writer's connection, since
//! each call to SQLite costs a thread hand-off and the statements cost next to nothing. A change
//! that cannot apply to the state it was decided on stops the script with an error: a status
//! that moved or a row that is gone trips a guard (`guard <n>`, n its index), a debit the
//! balance does not cover trips the `funds` check, a taken key its unique index. The savepoint
//! is then rolled back, so nothing of the changeset remains.
//!
//! The search rows of the transactions a changeset inserts are not written by its script: the
//! writer writes them for its whole batch, after the last savepoint ([`index`]).

use chrono::{DateTime, Utc};
use payments_types as types;
use sqlx::sqlite::SqliteConnection;
use sqlx::{QueryBuilder, Sqlite};
use uuid::Uuid;

use super::codec::{push_new_seq, unique_key};
use crate::plan::{balance_moves, guarded, posting_totals};
use crate::reads::{amount_value, micros, to_json};
use crate::{Change, Changeset, Idempotency, Result, StoreError, TenantId};

/// A fresh version-4 UUID for each row an `INSERT ... SELECT` makes (notifications fanned out
/// to several endpoints): random hex with the version (`4`) and variant (`8`–`b`) digits set.
const NEW_UUID: &str = "unhex(hex(randomblob(6)) || '4' || substr(hex(randomblob(2)), 2) \
     || substr('89ab', 1 + (random() & 3), 1) || substr(hex(randomblob(2)), 2) || hex(randomblob(6)))";

/// The endpoints of tenant `?` subscribed to event `?` (binds: tenant, event).
const SUBSCRIBED: &str = "tenant_id = ? AND deleted = FALSE AND (all_events OR EXISTS \
     (SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = e.id AND s.event = ?))";

/// Applies `changes`, and gives the search rows of the transactions it inserted, for [`index`].
pub async fn apply(connection: &mut SqliteConnection, changes: &Changeset) -> Result<Vec<Searchable>> {
    let mut script = QueryBuilder::<Sqlite>::new("SAVEPOINT change;");
    let moves = balance_moves(&changes.changes);
    let mut searchable = Vec::new();
    for (index, change) in changes.changes.iter().enumerate() {
        push(&mut script, changes.tenant, changes.now, index, change, moves[index])?;
        if let Change::InsertTransaction { transaction, .. } = change {
            searchable.push(Searchable::of(transaction));
        }
    }
    script.push(" RELEASE change;");
    let Err(error) = script.build().execute(&mut *connection).await else { return Ok(searchable) };
    // Nothing of the changeset may remain. If even that fails, the writer's whole transaction
    // is in doubt: a `Database` error tells the writer to roll it all back.
    sqlx::raw_sql("ROLLBACK TO change; RELEASE change").execute(&mut *connection).await?;
    Err(why(connection, changes, error).await)
}

/// What a failed script means, read off its error (and, for funds, off the balances now that
/// the changeset is rolled back).
async fn why(connection: &mut SqliteConnection, changes: &Changeset, error: sqlx::Error) -> StoreError {
    let sqlx::Error::Database(database) = &error else { return error.into() };
    let message = database.message();
    if let Some(index) = message.strip_prefix("guard ").and_then(|n| n.parse::<usize>().ok())
        && let Some(change) = changes.changes.get(index)
    {
        let (resource, id) = guarded(change);
        return StoreError::Stale { resource, id };
    }
    if message == "CHECK constraint failed: funds" {
        return match uncovered(connection, changes).await {
            Ok(Some((balance, available))) => StoreError::InsufficientFunds { balance, available },
            Ok(None) => StoreError::Database("a debit failed the funds check, yet every balance covers it".into()),
            Err(error) => error,
        };
    }
    if database.is_unique_violation()
        && let Some(key) = unique_key(message)
    {
        return StoreError::Duplicate(key);
    }
    error.into()
}

/// The first balance that this changeset's debits overdraw, with what it holds.
async fn uncovered(connection: &mut SqliteConnection, changes: &Changeset) -> Result<Option<(Uuid, i64)>> {
    for (balance, total) in posting_totals(&changes.changes) {
        let held: Option<i64> = sqlx::query_scalar("SELECT amount FROM balances WHERE id = ? AND tenant_id = ?")
            .bind(balance)
            .bind(changes.tenant.0)
            .fetch_optional(&mut *connection)
            .await?;
        if let Some(held) = held
            && held + total < 0
        {
            return Ok(Some((balance, held)));
        }
    }
    Ok(None)
}

/// Fails the script with `guard <index>` unless the statement just before changed a row.
fn guard(script: &mut QueryBuilder<Sqlite>, index: usize) {
    script.push(" INSERT INTO guards (change) SELECT ").push_bind(index as i64).push(" WHERE changes() = 0;");
}

fn key_and_request(idempotency: &Option<Idempotency>) -> (Option<String>, Option<String>) {
    idempotency.as_ref().map(|i| (i.key.clone(), i.request.clone())).unzip()
}

/// An optional constrained string (the models' newtypes over `String`) as text.
fn text<T: std::ops::Deref<Target = String>>(value: Option<&T>) -> Option<String> {
    value.map(|v| String::clone(v))
}

/// Appends the statements of change `index` (`balance_move`: see [`balance_moves`]).
fn push(
    script: &mut QueryBuilder<Sqlite>,
    tenant: TenantId,
    at: DateTime<Utc>,
    index: usize,
    change: &Change,
    balance_move: Option<i64>,
) -> Result<()> {
    let tenant = tenant.0;
    let now = micros(at);
    match change {
        Change::OpenBalance { id, currency, name } => {
            script.push(" INSERT INTO balances (seq, id, tenant_id, currency, name, amount, created) VALUES (");
            push_new_seq(script, "balances", at);
            script.push(", ").push_bind(*id).push(", ").push_bind(tenant).push(", ").push_bind(currency.clone());
            script.push(", ").push_bind(name.clone()).push(", 0, ").push_bind(now).push(");");
        }
        Change::RenameBalance { id, name } => {
            script.push(" UPDATE balances SET name = ").push_bind(name.clone());
            script.push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant).push(";");
            guard(script, index);
        }
        Change::Post { balance, transaction, kind, delta } => {
            // Invariant: credits add, debits take, and no entry is zero.
            if *delta == 0 || kind.is_credit() != (*delta > 0) {
                return Err(StoreError::Database(format!("a {} ledger entry cannot be {delta}", kind.as_str())));
            }
            // A debit below zero fails the `funds` check; a balance that is not the tenant's,
            // the guard. The first posting of a run moves the balance for all of them.
            if let Some(moved) = balance_move {
                script.push(" UPDATE balances SET amount = amount + ").push_bind(moved);
                script.push(" WHERE id = ").push_bind(*balance).push(" AND tenant_id = ").push_bind(tenant).push(";");
                guard(script, index);
            }
            script.push(" INSERT INTO ledger (balance_id, transaction_id, kind, delta, created) VALUES (");
            script.push_bind(*balance).push(", ").push_bind(*transaction).push(", ").push_bind(kind.as_str());
            script.push(", ").push_bind(*delta).push(", ").push_bind(now).push(");");
        }
        Change::InsertRecipient(recipient) => {
            script.push(
                " INSERT INTO recipients (seq, id, tenant_id, type, country, alias, default_reference, bank_account, \
                 created) VALUES (",
            );
            push_new_seq(script, "recipients", recipient.created);
            script.push(", ");
            let mut values = script.separated(", ");
            values.push_bind(recipient.id).push_bind(tenant).push_bind(recipient.type_.to_string());
            values.push_bind(recipient.country.to_string()).push_bind(text(recipient.alias.as_ref()));
            values.push_bind(text(recipient.default_reference.as_ref())).push_bind(to_json(&recipient.bank_account)?);
            values.push_bind(micros(recipient.created));
            script.push(");");
        }
        Change::SetRecipientAlias { id, alias } => {
            script.push(" UPDATE recipients SET alias = ").push_bind(alias.clone());
            script.push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            script.push(" AND deleted = FALSE;");
            guard(script, index);
        }
        Change::DeleteRecipient { id } => {
            script.push(" UPDATE recipients SET deleted = TRUE WHERE id = ").push_bind(*id);
            script.push(" AND tenant_id = ").push_bind(tenant).push(" AND deleted = FALSE;");
            guard(script, index);
        }
        Change::InsertPaymentRequest { request, idempotency } => {
            let (key, canonical) = key_and_request(idempotency);
            script.push(
                " INSERT INTO payment_requests (seq, id, tenant_id, reference_id, request, market, currency, amount, \
                 settlement_balance_id, reference, status, payment_url, qr_code_url, return_url, created) VALUES (",
            );
            push_new_seq(script, "payment_requests", request.created);
            script.push(", ");
            let mut values = script.separated(", ");
            values.push_bind(request.id).push_bind(tenant).push_bind(key).push_bind(canonical);
            values.push_bind(request.market.to_string()).push_bind(request.currency.to_string());
            values
                .push_bind(request.amount.as_ref().map(amount_value).transpose()?)
                .push_bind(request.settlement_balance_id);
            values.push_bind(text(request.reference.as_ref())).push_bind(request.status.to_string());
            values.push_bind(request.payment_url.clone()).push_bind(request.qr_code_url.clone());
            values.push_bind(request.return_url.clone()).push_bind(micros(request.created));
            script.push(");");
        }
        Change::SetPaymentRequestStatus { id, from, to, paid } => {
            script.push(" UPDATE payment_requests SET status = ").push_bind(to.to_string());
            if let Some(paid) = paid {
                script.push(", amount = ").push_bind(amount_value(paid)?);
            }
            script.push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            script.push(" AND status = ").push_bind(from.to_string());
            if let Some(paid) = paid {
                script.push(" AND (amount IS NULL OR amount = ").push_bind(amount_value(paid)?).push(")");
            }
            script.push(";");
            guard(script, index);
        }
        Change::InsertTransaction { transaction, idempotency } => {
            push_transaction(script, tenant, transaction, idempotency)?
        }
        Change::SetTransactionStatus { id, from, to, failure_reason } => {
            script.push(" UPDATE transactions SET status = ").push_bind(to.to_string());
            script.push(", failure_reason = ").push_bind(failure_reason.clone());
            script.push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            script.push(" AND status = ").push_bind(from.to_string()).push(";");
            guard(script, index);
        }
        Change::InsertVirtualAccount { account, idempotency } => {
            let (key, canonical) = key_and_request(idempotency);
            script.push(
                " INSERT INTO virtual_accounts (seq, id, tenant_id, reference_id, request, currency, \
                 settlement_balance_id, account_name, bank_name, account_number, supported_channels, type, status, \
                 created) VALUES (",
            );
            push_new_seq(script, "virtual_accounts", account.created);
            script.push(", ");
            let mut values = script.separated(", ");
            values.push_bind(account.id).push_bind(tenant).push_bind(key).push_bind(canonical);
            values.push_bind(account.currency.to_string()).push_bind(account.settlement_balance_id);
            values.push_bind(account.account_name.to_string()).push_bind(account.details.bank_name.clone());
            values.push_bind(account.details.account_number.clone()).push_bind(to_json(&account.supported_channels)?);
            values.push_bind(account.type_.to_string()).push_bind(account.status.to_string());
            values.push_bind(micros(account.created));
            script.push(");");
            script
                .push(" INSERT INTO virtual_account_search (rowid, account_name, account_number, bank_name) VALUES (");
            script.push("last_insert_rowid(), ").push_bind(account.account_name.to_string());
            script.push(", ").push_bind(account.details.account_number.clone());
            script.push(", ").push_bind(account.details.bank_name.clone()).push(");");
        }
        Change::SetVirtualAccountStatus { id, from, to } => {
            script.push(" UPDATE virtual_accounts SET status = ").push_bind(to.to_string());
            script.push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            script.push(" AND status = ").push_bind(from.to_string()).push(";");
            guard(script, index);
        }
        Change::RenameVirtualAccount { id, name } => {
            script.push(" UPDATE virtual_accounts SET account_name = ").push_bind(name.clone());
            script.push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant).push(";");
            guard(script, index);
            script.push(" UPDATE virtual_account_search SET account_name = ").push_bind(name.clone());
            script.push(" WHERE rowid = (SELECT seq FROM virtual_accounts WHERE id = ").push_bind(*id).push(");");
        }
        Change::ExpectVirtualAccountStatus { id, status } => {
            script.push(" INSERT INTO guards (change) SELECT ").push_bind(index as i64);
            script.push(" WHERE NOT EXISTS (SELECT 1 FROM virtual_accounts WHERE id = ").push_bind(*id);
            script.push(" AND tenant_id = ").push_bind(tenant).push(" AND status = ").push_bind(status.to_string());
            script.push(");");
        }
        Change::InsertWebhookEndpoint { endpoint, secret } => {
            script
                .push(" INSERT INTO webhook_endpoints (seq, id, tenant_id, url, all_events, secret, created) VALUES (");
            push_new_seq(script, "webhook_endpoints", endpoint.created);
            script.push(", ");
            let mut values = script.separated(", ");
            values.push_bind(endpoint.id).push_bind(tenant).push_bind(endpoint.url.to_string());
            values.push_bind(endpoint.events.is_none()).push_bind(secret.clone()).push_bind(micros(endpoint.created));
            script.push(");");
            for (position, event) in endpoint.events.iter().flatten().enumerate() {
                script.push(" INSERT INTO webhook_subscriptions (endpoint_id, position, event) VALUES (");
                script.push_bind(endpoint.id).push(", ").push_bind(position as i64);
                script.push(", ").push_bind(event.to_string()).push(");");
            }
        }
        Change::DeleteWebhookEndpoint { id } => {
            script.push(" UPDATE webhook_endpoints SET deleted = TRUE WHERE id = ").push_bind(*id);
            script.push(" AND tenant_id = ").push_bind(tenant).push(" AND deleted = FALSE;");
            guard(script, index);
            script.push(" UPDATE notifications SET status = 'discarded', next_attempt = NULL WHERE endpoint_id = ");
            script.push_bind(*id).push(" AND next_attempt IS NOT NULL;");
        }
        Change::SetWebhookSecret { id, secret } => {
            script.push(" UPDATE webhook_endpoints SET secret = ").push_bind(secret.clone());
            script.push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            script.push(" AND deleted = FALSE;");
            guard(script, index);
        }
        Change::Event { event, data } => push_event(script, tenant, at, *event, data),
        Change::Ping { id, endpoint, data } => {
            script.push(" INSERT INTO events (tenant_id, event, created, data) VALUES (");
            script.push_bind(tenant).push(", ").push_bind(types::WebhookEvent::Ping.to_string());
            script.push(", ").push_bind(now).push(", ").push_bind(data.clone()).push(");");
            // `last_insert_rowid()`: the event just written (the key's look-up inserts nothing).
            script.push(
                " INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, next_attempt, created) \
                 VALUES (",
            );
            push_new_seq(script, "notifications", at);
            script.push(", ").push_bind(*id).push(", ").push_bind(tenant).push(", ").push_bind(*endpoint);
            script.push(", last_insert_rowid(), 'pending', ").push_bind(now).push(", ").push_bind(now).push(");");
        }
    }
    Ok(())
}

fn push_transaction(
    script: &mut QueryBuilder<Sqlite>,
    tenant: i64,
    transaction: &types::Transaction,
    idempotency: &Option<Idempotency>,
) -> Result<()> {
    let (key, canonical) = key_and_request(idempotency);
    let recipient = transaction.recipient.as_ref();
    let rate = |value: std::num::NonZeroU64| {
        i64::try_from(value.get()).map_err(|_| StoreError::Database(format!("rate {value} too large")))
    };
    script.push(
        " INSERT INTO transactions (seq, id, tenant_id, order_id, request, transaction_type, payment_method, status, \
         failure_reason, balance_id, currency, amount, fees, to_currency, to_amount, rate, single_rate, \
         rate_decimal, single_rate_decimal, \
         virtual_account_id, recipient_id, recipient_country, recipient, payer_name, reference, payment_reference, \
         created) VALUES (",
    );
    push_new_seq(script, "transactions", transaction.created);
    script.push(", ");
    let mut values = script.separated(", ");
    values.push_bind(transaction.id).push_bind(tenant).push_bind(key).push_bind(canonical);
    values.push_bind(transaction.transaction_type.to_string()).push_bind(transaction.payment_method.to_string());
    values.push_bind(transaction.status.to_string()).push_bind(transaction.failure_reason.clone());
    values.push_bind(transaction.balance_id).push_bind(transaction.currency.to_string());
    values.push_bind(amount_value(&transaction.amount)?).push_bind(transaction.fees);
    values.push_bind(transaction.to_currency.to_string()).push_bind(amount_value(&transaction.to_amount)?);
    values.push_bind(transaction.exchange_rate.as_ref().map(|r| rate(r.rate)).transpose()?);
    values.push_bind(transaction.exchange_rate.as_ref().map(|r| rate(r.single_rate)).transpose()?);
    values.push_bind(transaction.exchange_rate.as_ref().map(|r| r.rate_decimal.to_string()));
    values.push_bind(transaction.exchange_rate.as_ref().map(|r| r.single_rate_decimal.to_string()));
    values.push_bind(transaction.virtual_account_id).push_bind(recipient.map(|r| r.id));
    values.push_bind(recipient.map(|r| r.country.to_string())).push_bind(recipient.map(to_json).transpose()?);
    values.push_bind(transaction.payer_name.clone()).push_bind(text(transaction.reference.as_ref()));
    values.push_bind(text(transaction.payment_reference.as_ref())).push_bind(micros(transaction.created));
    script.push(");");
    Ok(())
}

/// What `search` looks in for one transaction (see `transactions::SEARCHED`), stored in
/// `transaction_search` under the transaction's seq.
pub struct Searchable {
    id: Uuid,
    fields: [Option<String>; 6],
}

impl Searchable {
    fn of(transaction: &types::Transaction) -> Self {
        let recipient = transaction.recipient.as_ref();
        let reference = text(transaction.reference.as_ref());
        // A payment reference that repeats the reference (the usual case) is found through it.
        let payment_reference = text(transaction.payment_reference.as_ref()).filter(|p| Some(p) != reference.as_ref());
        Self {
            id: transaction.id,
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

/// Writes the search rows of a batch's transactions in one statement, oldest first.
pub async fn index(connection: &mut SqliteConnection, rows: &[Searchable]) -> Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut insert = QueryBuilder::<Sqlite>::new(
        "INSERT INTO transaction_search (rowid, reference, payment_reference, order_id, payer_name, account_name, \
         alias) SELECT t.seq, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7 FROM (",
    );
    insert.push_values(rows, |mut values, row| {
        values.push_bind(row.id);
        for field in &row.fields {
            values.push_bind(field.clone());
        }
    });
    // CROSS JOIN: the few rows given are the outer loop, each transaction found by its id.
    insert.push(") v CROSS JOIN transactions t ON t.id = v.column1 ORDER BY t.seq");
    insert.build().execute(connection).await?;
    Ok(())
}

/// An event is kept only when an endpoint subscribes to it, with a notification (due at once)
/// for each such endpoint: nothing is written for a tenant without endpoints.
fn push_event(
    script: &mut QueryBuilder<Sqlite>,
    tenant: i64,
    at: DateTime<Utc>,
    event: types::WebhookEvent,
    data: &str,
) {
    let event = event.to_string();
    let now = micros(at);
    script.push(" INSERT INTO events (tenant_id, event, created, data) SELECT ").push_bind(tenant);
    script.push(", ").push_bind(event.clone()).push(", ").push_bind(now).push(", ").push_bind(data.to_owned());
    script.push(" WHERE EXISTS (SELECT 1 FROM webhook_endpoints e WHERE ");
    push_subscribed(script, tenant, &event);
    script.push(");");
    // The event just written is the newest: the writer is the only one writing. The
    // notifications take consecutive keys after those already made in this millisecond.
    script.push(
        " INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, next_attempt, created) ",
    );
    script.push("SELECT ");
    push_new_seq(script, "notifications", at);
    script.push(format!(
        " + row_number() OVER (ORDER BY e.seq) - 1, {NEW_UUID}, tenant_id, id, (SELECT max(seq) FROM events), 'pending', "
    ));
    script.push_bind(now).push(", ").push_bind(now).push(" FROM webhook_endpoints e WHERE ");
    push_subscribed(script, tenant, &event);
    script.push(";");
}

fn push_subscribed(script: &mut QueryBuilder<Sqlite>, tenant: i64, event: &str) {
    let mut parts = SUBSCRIBED.split('?');
    script.push(parts.next().unwrap_or_default()).push_bind(tenant);
    script.push(parts.next().unwrap_or_default()).push_bind(event.to_owned());
    script.push(parts.next().unwrap_or_default());
}
