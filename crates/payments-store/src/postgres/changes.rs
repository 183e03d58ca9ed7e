//! Applying a [`Changeset`]: one transaction, one statement per row written, so that any number
//! of instances can write at once. A change that cannot apply to the state it was decided on
//! rolls the transaction back: a guarded update that finds no row in the expected state is
//! stale, a debit the balance does not cover fails the `funds` check (the update holds the
//! balance row's lock, so concurrent debits from other instances queue on it), a taken key
//! fails its unique index. Two transactions that wait for each other's rows (a deadlock) or
//! lose a serialization race are retried whole: nothing of them was kept.

use chrono::{DateTime, Utc};
use payments_types as types;
use sqlx::postgres::PgConnection;
use sqlx::{PgPool, Postgres, QueryBuilder};

use crate::plan::{balance_moves, guarded, posting_totals};
use crate::reads::{SEQ_BITS, amount_value, micros, seq_floor, to_json};
use crate::{Change, Changeset, Idempotency, Result, StoreError, TenantId, UniqueKey};

/// Attempts at a changeset that keeps losing deadlock or serialization races.
const ATTEMPTS: usize = 8;

/// The endpoints (aliased `w`) of tenant `$t` subscribed to event `$e`.
fn push_subscribed(query: &mut QueryBuilder<Postgres>, tenant: i64, event: &str) {
    query.push("w.tenant_id = ").push_bind(tenant).push(" AND w.deleted = FALSE AND (w.all_events OR EXISTS ");
    query.push("(SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = w.id AND s.event = ");
    query.push_bind(event.to_owned()).push("))");
}

/// A new row's key: the millisecond it was created, and the next number of `row_order` within
/// it (distinct across instances without asking them: the sequence is the database's).
fn push_new_seq(query: &mut QueryBuilder<Postgres>, created: DateTime<Utc>) {
    query
        .push("(")
        .push_bind(seq_floor(created))
        .push(format!("::bigint + nextval('row_order') % {})", 1_i64 << SEQ_BITS));
}

/// Why one attempt at a changeset failed.
enum Failure {
    /// Refused for a reason the caller acts on.
    Refused(StoreError),
    /// A debit failed the funds check: what the balance holds is read once rolled back.
    Funds,
    /// A deadlock or serialization failure: try again.
    Retry,
    Database(sqlx::Error),
}

impl From<sqlx::Error> for Failure {
    fn from(error: sqlx::Error) -> Self {
        let sqlx::Error::Database(database) = &error else { return Self::Database(error) };
        match database.code().as_deref() {
            Some("40P01" | "40001") => Self::Retry,
            Some("23514") if database.constraint() == Some("funds") => Self::Funds,
            Some("23505") => match unique_key(database.as_ref()) {
                Some(key) => Self::Refused(StoreError::Duplicate(key)),
                None => Self::Database(error),
            },
            _ => Self::Database(error),
        }
    }
}

/// The unique key a failed statement collided with, from its constraint's name; `None` for one
/// no caller can take.
pub fn unique_key(error: &dyn sqlx::error::DatabaseError) -> Option<UniqueKey> {
    if !error.is_unique_violation() {
        return None;
    }
    Some(match error.constraint()? {
        "transactions_order_id" => UniqueKey::OrderId,
        "payment_requests_reference_id" => UniqueKey::PaymentRequestReferenceId,
        "virtual_accounts_reference_id" => UniqueKey::VirtualAccountReferenceId,
        "virtual_accounts_account_number" => UniqueKey::AccountNumber,
        "tokens_hash" => UniqueKey::Token,
        _ => return None,
    })
}

pub async fn apply(pool: &PgPool, changes: &Changeset) -> Result<()> {
    let mut attempt = 0;
    loop {
        attempt += 1;
        let mut transaction = pool.begin().await?;
        // Rolled back at once when refused: its row locks go with it, and its connection goes
        // back to the pool before anything else is read.
        let outcome = match write(&mut transaction, changes).await {
            Ok(()) => transaction.commit().await.map_err(Failure::from),
            Err(failure) => {
                let _ = transaction.rollback().await;
                Err(failure)
            }
        };
        match outcome {
            Ok(()) => return Ok(()),
            Err(Failure::Retry) if attempt < ATTEMPTS => continue,
            Err(Failure::Retry) => return Err(StoreError::Database("a changeset kept losing deadlock races".into())),
            Err(Failure::Refused(error)) => return Err(error),
            Err(Failure::Database(error)) => return Err(error.into()),
            Err(Failure::Funds) => return Err(uncovered(pool, changes).await),
        }
    }
}

/// The first balance that this changeset's debits overdraw, with what it holds now. Should none
/// overdraw by now (another payment was refunded meanwhile), the refusal stands — the state it
/// was decided on is gone — and names the first balance debited, with what it holds.
async fn uncovered(pool: &PgPool, changes: &Changeset) -> StoreError {
    let mut first = None;
    for (balance, total) in posting_totals(&changes.changes).into_iter().filter(|(_, total)| *total < 0) {
        let held: Result<Option<i64>, sqlx::Error> =
            sqlx::query_scalar("SELECT amount FROM balances WHERE id = $1 AND tenant_id = $2")
                .bind(balance)
                .bind(changes.tenant.0)
                .fetch_optional(pool)
                .await;
        match held {
            Ok(Some(held)) if held + total < 0 => return StoreError::InsufficientFunds { balance, available: held },
            Ok(held) => {
                first.get_or_insert((balance, held.unwrap_or(0)));
            }
            Err(error) => return error.into(),
        }
    }
    match first {
        Some((balance, available)) => StoreError::InsufficientFunds { balance, available },
        None => StoreError::Database("the funds check failed on a changeset that debits nothing".into()),
    }
}

/// Every row but the balances first, then the balances' updates, in the changeset's order, just
/// before the commit. An update holds its balance row's lock until the transaction ends, and
/// every payment from one balance queues on it: with the updates last, a payment holds the lock
/// for its updates and the commit, not for all its other statements' round trips too.
async fn write(connection: &mut PgConnection, changes: &Changeset) -> Result<(), Failure> {
    for change in &changes.changes {
        write_change(connection, changes.tenant, changes.now, change).await?;
    }
    let moves = balance_moves(&changes.changes);
    for (change, moved) in changes.changes.iter().zip(moves) {
        if let (Change::Post { balance, .. }, Some(moved)) = (change, moved) {
            let mut q = new("UPDATE balances SET amount = amount + ");
            q.push_bind(moved)
                .push(" WHERE id = ")
                .push_bind(*balance)
                .push(" AND tenant_id = ")
                .push_bind(changes.tenant.0);
            guarded_run(connection, q, change).await?;
        }
    }
    Ok(())
}

async fn run(connection: &mut PgConnection, mut query: QueryBuilder<Postgres>) -> Result<u64, Failure> {
    Ok(query.build().execute(connection).await?.rows_affected())
}

/// Runs a guarded statement: it must change a row, else the change is stale.
async fn guarded_run(
    connection: &mut PgConnection,
    query: QueryBuilder<Postgres>,
    change: &Change,
) -> Result<(), Failure> {
    if run(connection, query).await? == 0 {
        let (resource, id) = guarded(change);
        return Err(Failure::Refused(StoreError::Stale { resource, id }));
    }
    Ok(())
}

fn key_and_request(idempotency: &Option<Idempotency>) -> (Option<String>, Option<String>) {
    idempotency.as_ref().map(|i| (i.key.clone(), i.request.clone())).unzip()
}

fn text<T: std::ops::Deref<Target = String>>(value: Option<&T>) -> Option<String> {
    value.map(|v| String::clone(v))
}

fn new(sql: &str) -> QueryBuilder<Postgres> {
    QueryBuilder::new(sql)
}

async fn write_change(
    connection: &mut PgConnection,
    tenant: TenantId,
    at: DateTime<Utc>,
    change: &Change,
) -> Result<(), Failure> {
    let tenant = tenant.0;
    let now = micros(at);
    let refused = |e: StoreError| Failure::Refused(e);
    match change {
        Change::OpenBalance { id, currency, name } => {
            let mut q = new("INSERT INTO balances (seq, id, tenant_id, currency, name, amount, created) VALUES (");
            push_new_seq(&mut q, at);
            q.push(", ").push_bind(*id).push(", ").push_bind(tenant).push(", ").push_bind(currency.clone());
            q.push(", ").push_bind(name.clone()).push(", 0, ").push_bind(now).push(")");
            run(connection, q).await?;
        }
        Change::RenameBalance { id, name } => {
            let mut q = new("UPDATE balances SET name = ");
            q.push_bind(name.clone()).push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            guarded_run(connection, q, change).await?;
        }
        Change::Post { balance, transaction, kind, delta } => {
            // Invariant: credits add, debits take, and no entry is zero.
            if *delta == 0 || kind.is_credit() != (*delta > 0) {
                return Err(refused(StoreError::Database(format!(
                    "a {} ledger entry cannot be {delta}",
                    kind.as_str()
                ))));
            }
            // The balance itself moves in `write`, after every other row.
            let mut q = new("INSERT INTO ledger (balance_id, transaction_id, kind, delta, created) VALUES (");
            q.push_bind(*balance).push(", ").push_bind(*transaction).push(", ").push_bind(kind.as_str());
            q.push(", ").push_bind(*delta).push(", ").push_bind(now).push(")");
            run(connection, q).await?;
        }
        Change::InsertRecipient(recipient) => {
            let mut q = new(
                "INSERT INTO recipients (seq, id, tenant_id, type, country, alias, default_reference, bank_account, \
                 created) VALUES (",
            );
            push_new_seq(&mut q, recipient.created);
            q.push(", ");
            let mut values = q.separated(", ");
            values.push_bind(recipient.id).push_bind(tenant).push_bind(recipient.type_.to_string());
            values.push_bind(recipient.country.to_string()).push_bind(text(recipient.alias.as_ref()));
            values
                .push_bind(text(recipient.default_reference.as_ref()))
                .push_bind(to_json(&recipient.bank_account).map_err(refused)?);
            values.push_bind(micros(recipient.created));
            q.push(")");
            run(connection, q).await?;
        }
        Change::SetRecipientAlias { id, alias } => {
            let mut q = new("UPDATE recipients SET alias = ");
            q.push_bind(alias.clone()).push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            q.push(" AND deleted = FALSE");
            guarded_run(connection, q, change).await?;
        }
        Change::DeleteRecipient { id } => {
            let mut q = new("UPDATE recipients SET deleted = TRUE WHERE id = ");
            q.push_bind(*id).push(" AND tenant_id = ").push_bind(tenant).push(" AND deleted = FALSE");
            guarded_run(connection, q, change).await?;
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
            values.push_bind(request.id).push_bind(tenant).push_bind(key).push_bind(canonical);
            values.push_bind(request.market.to_string()).push_bind(request.currency.to_string());
            values
                .push_bind(request.amount.as_ref().map(amount_value).transpose().map_err(refused)?)
                .push_bind(request.settlement_balance_id);
            values.push_bind(text(request.reference.as_ref())).push_bind(request.status.to_string());
            values.push_bind(request.payment_url.clone()).push_bind(request.qr_code_url.clone());
            values.push_bind(request.return_url.clone()).push_bind(micros(request.created));
            q.push(")");
            run(connection, q).await?;
        }
        Change::SetPaymentRequestStatus { id, from, to, paid } => {
            let mut q = new("UPDATE payment_requests SET status = ");
            q.push_bind(to.to_string());
            if let Some(paid) = paid {
                q.push(", amount = ").push_bind(amount_value(paid).map_err(refused)?);
            }
            q.push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            q.push(" AND status = ").push_bind(from.to_string());
            if let Some(paid) = paid {
                q.push(" AND (amount IS NULL OR amount = ").push_bind(amount_value(paid).map_err(refused)?).push(")");
            }
            guarded_run(connection, q, change).await?;
        }
        Change::InsertTransaction { transaction, idempotency } => {
            run(connection, insert_transaction(tenant, transaction, idempotency).map_err(refused)?).await?;
        }
        Change::SetTransactionStatus { id, from, to, failure_reason } => {
            let mut q = new("UPDATE transactions SET status = ");
            q.push_bind(to.to_string()).push(", failure_reason = ").push_bind(failure_reason.clone());
            q.push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            q.push(" AND status = ").push_bind(from.to_string());
            guarded_run(connection, q, change).await?;
        }
        Change::InsertVirtualAccount { account, idempotency } => {
            let (key, canonical) = key_and_request(idempotency);
            let mut q = new("INSERT INTO virtual_accounts (seq, id, tenant_id, reference_id, request, currency, \
                 settlement_balance_id, account_name, bank_name, account_number, supported_channels, type, status, \
                 created) VALUES (");
            push_new_seq(&mut q, account.created);
            q.push(", ");
            let mut values = q.separated(", ");
            values.push_bind(account.id).push_bind(tenant).push_bind(key).push_bind(canonical);
            values.push_bind(account.currency.to_string()).push_bind(account.settlement_balance_id);
            values.push_bind(account.account_name.to_string()).push_bind(account.details.bank_name.clone());
            values
                .push_bind(account.details.account_number.clone())
                .push_bind(to_json(&account.supported_channels).map_err(refused)?);
            values.push_bind(account.type_.to_string()).push_bind(account.status.to_string());
            values.push_bind(micros(account.created));
            q.push(")");
            run(connection, q).await?;
        }
        Change::SetVirtualAccountStatus { id, from, to } => {
            let mut q = new("UPDATE virtual_accounts SET status = ");
            q.push_bind(to.to_string()).push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            q.push(" AND status = ").push_bind(from.to_string());
            guarded_run(connection, q, change).await?;
        }
        Change::RenameVirtualAccount { id, name } => {
            let mut q = new("UPDATE virtual_accounts SET account_name = ");
            q.push_bind(name.clone()).push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            guarded_run(connection, q, change).await?;
        }
        Change::ExpectVirtualAccountStatus { id, status } => {
            // FOR SHARE: the account keeps that status until this transaction ends.
            let mut q = new("SELECT 1 FROM virtual_accounts WHERE id = ");
            q.push_bind(*id).push(" AND tenant_id = ").push_bind(tenant).push(" AND status = ");
            q.push_bind(status.to_string()).push(" FOR SHARE");
            if q.build().fetch_optional(&mut *connection).await?.is_none() {
                let (resource, id) = guarded(change);
                return Err(refused(StoreError::Stale { resource, id }));
            }
        }
        Change::InsertWebhookEndpoint { endpoint, secret } => {
            let mut q =
                new("INSERT INTO webhook_endpoints (seq, id, tenant_id, url, all_events, secret, created) VALUES (");
            push_new_seq(&mut q, endpoint.created);
            q.push(", ");
            let mut values = q.separated(", ");
            values.push_bind(endpoint.id).push_bind(tenant).push_bind(endpoint.url.to_string());
            values.push_bind(endpoint.events.is_none()).push_bind(secret.clone()).push_bind(micros(endpoint.created));
            q.push(")");
            run(connection, q).await?;
            for (position, event) in endpoint.events.iter().flatten().enumerate() {
                let mut q = new("INSERT INTO webhook_subscriptions (endpoint_id, position, event) VALUES (");
                q.push_bind(endpoint.id).push(", ").push_bind(position as i64).push(", ").push_bind(event.to_string());
                q.push(")");
                run(connection, q).await?;
            }
        }
        Change::DeleteWebhookEndpoint { id } => {
            let mut q = new("UPDATE webhook_endpoints SET deleted = TRUE WHERE id = ");
            q.push_bind(*id).push(" AND tenant_id = ").push_bind(tenant).push(" AND deleted = FALSE");
            guarded_run(connection, q, change).await?;
            let mut q = new("UPDATE notifications SET status = 'discarded', next_attempt = NULL WHERE endpoint_id = ");
            q.push_bind(*id).push(" AND next_attempt IS NOT NULL");
            run(connection, q).await?;
        }
        Change::SetWebhookSecret { id, secret } => {
            let mut q = new("UPDATE webhook_endpoints SET secret = ");
            q.push_bind(secret.clone()).push(" WHERE id = ").push_bind(*id).push(" AND tenant_id = ").push_bind(tenant);
            q.push(" AND deleted = FALSE");
            guarded_run(connection, q, change).await?;
        }
        Change::Event { event, data } => {
            // An event is kept only when an endpoint subscribes to it, with a notification (due
            // at once) for each such endpoint: nothing is written for a tenant without endpoints.
            let event = event.to_string();
            let mut q = new("WITH e AS (INSERT INTO events (tenant_id, event, created, data) SELECT ");
            q.push_bind(tenant).push(", ").push_bind(event.clone()).push(", ").push_bind(now).push(", ");
            q.push_bind(data.clone()).push(" WHERE EXISTS (SELECT 1 FROM webhook_endpoints w WHERE ");
            push_subscribed(&mut q, tenant, &event);
            q.push(") RETURNING seq) INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, ");
            q.push("next_attempt, created) SELECT ");
            push_new_seq(&mut q, at);
            q.push(", gen_random_uuid(), w.tenant_id, w.id, e.seq, 'pending', ").push_bind(now).push(", ");
            q.push_bind(now).push(" FROM e CROSS JOIN webhook_endpoints w WHERE ");
            push_subscribed(&mut q, tenant, &event);
            run(connection, q).await?;
        }
        Change::Ping { id, endpoint, data } => {
            let mut q = new("WITH e AS (INSERT INTO events (tenant_id, event, created, data) VALUES (");
            q.push_bind(tenant).push(", ").push_bind(types::WebhookEvent::Ping.to_string()).push(", ");
            q.push_bind(now).push(", ").push_bind(data.clone()).push(") RETURNING seq) ");
            q.push("INSERT INTO notifications (seq, id, tenant_id, endpoint_id, event_seq, status, next_attempt, created) ");
            q.push("SELECT ");
            push_new_seq(&mut q, at);
            q.push(", ").push_bind(*id).push(", ").push_bind(tenant).push(", ").push_bind(*endpoint);
            q.push(", e.seq, 'pending', ").push_bind(now).push(", ").push_bind(now).push(" FROM e");
            run(connection, q).await?;
        }
    }
    Ok(())
}

fn insert_transaction(
    tenant: i64,
    transaction: &types::Transaction,
    idempotency: &Option<Idempotency>,
) -> Result<QueryBuilder<Postgres>> {
    let (key, canonical) = key_and_request(idempotency);
    let recipient = transaction.recipient.as_ref();
    let rate = |value: std::num::NonZeroU64| {
        i64::try_from(value.get()).map_err(|_| StoreError::Database(format!("rate {value} too large")))
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
    values.push_bind(recipient.and_then(|r| text(r.bank_account.account_name.as_ref())));
    values.push_bind(recipient.and_then(|r| text(r.alias.as_ref())));
    values.push_bind(transaction.payer_name.clone()).push_bind(text(transaction.reference.as_ref()));
    values.push_bind(text(transaction.payment_reference.as_ref())).push_bind(micros(transaction.created));
    q.push(")");
    Ok(q)
}
