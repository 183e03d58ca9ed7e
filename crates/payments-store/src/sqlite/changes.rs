//! Applying a [`Changeset`]: one or two statements per change, on the writer's connection, in
//! the transaction the writer opened. A change that cannot apply to the state it was decided on
//! (a status that moved, a debit not covered, a key taken) fails the whole changeset.

use payments_types as types;
use sqlx::sqlite::SqliteConnection;
use uuid::Uuid;

use super::codec::{amount_value, micros, to_json, unique_violation};
use super::transactions;
use crate::{Change, Changeset, Idempotency, LedgerEntryKind, Result, StoreError, TenantId, UniqueKey};

pub async fn apply(connection: &mut SqliteConnection, changes: &Changeset) -> Result<()> {
    let now = micros(changes.now);
    let mut posted = Posted::default();
    for change in &changes.changes {
        apply_one(connection, changes.tenant, now, change, &mut posted).await?;
    }
    Ok(())
}

/// What this changeset has posted to each balance so far: a debit it cannot cover is reported
/// with what the balance held before the changeset (which is all that the caller ever sees).
type Posted = std::collections::HashMap<Uuid, i64>;

/// `Ok` when a guarded statement changed its row, [`StoreError::Stale`] when it found none in
/// the expected state.
fn guarded(done: sqlx::sqlite::SqliteQueryResult, resource: &'static str, id: Uuid) -> Result<()> {
    if done.rows_affected() == 1 { Ok(()) } else { Err(StoreError::Stale { resource, id }) }
}

fn key_and_request(idempotency: &Option<Idempotency>) -> (Option<&str>, Option<&str>) {
    idempotency.as_ref().map(|i| (i.key.as_str(), i.request.as_str())).unzip()
}

async fn apply_one(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    now: i64,
    change: &Change,
    posted: &mut Posted,
) -> Result<()> {
    match change {
        Change::OpenBalance { id, currency, name } => {
            sqlx::query(
                "INSERT INTO balances (id, tenant_id, currency, name, amount, created) VALUES ($1, $2, $3, $4, 0, $5)",
            )
            .bind(id)
            .bind(tenant.0)
            .bind(currency)
            .bind(name)
            .bind(now)
            .execute(connection)
            .await?;
        }
        Change::RenameBalance { id, name } => {
            let done = sqlx::query("UPDATE balances SET name = $1 WHERE id = $2 AND tenant_id = $3")
                .bind(name)
                .bind(id)
                .bind(tenant.0)
                .execute(connection)
                .await?;
            guarded(done, "balance", *id)?;
        }
        Change::Post { balance, transaction, kind, delta } => {
            post(connection, tenant, now, (*balance, *transaction), *kind, *delta, posted).await?
        }
        Change::InsertRecipient(recipient) => {
            sqlx::query(
                "INSERT INTO recipients (id, tenant_id, type, country, alias, default_reference, bank_account, created)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            )
            .bind(recipient.id)
            .bind(tenant.0)
            .bind(recipient.type_.to_string())
            .bind(recipient.country.to_string())
            .bind(recipient.alias.as_ref().map(|a| a.to_string()))
            .bind(recipient.default_reference.as_ref().map(|r| r.to_string()))
            .bind(to_json(&recipient.bank_account)?)
            .bind(micros(recipient.created))
            .execute(connection)
            .await?;
        }
        Change::SetRecipientAlias { id, alias } => {
            let done =
                sqlx::query("UPDATE recipients SET alias = $1 WHERE id = $2 AND tenant_id = $3 AND deleted = FALSE")
                    .bind(alias)
                    .bind(id)
                    .bind(tenant.0)
                    .execute(connection)
                    .await?;
            guarded(done, "recipient", *id)?;
        }
        Change::DeleteRecipient { id } => {
            let done = sqlx::query(
                "UPDATE recipients SET deleted = TRUE WHERE id = $1 AND tenant_id = $2 AND deleted = FALSE",
            )
            .bind(id)
            .bind(tenant.0)
            .execute(connection)
            .await?;
            guarded(done, "recipient", *id)?;
        }
        Change::InsertPaymentRequest { request, idempotency } => {
            let (key, canonical) = key_and_request(idempotency);
            sqlx::query(
                "INSERT INTO payment_requests (id, tenant_id, reference_id, request, market, currency, amount,
                     settlement_balance_id, reference, status, payment_url, qr_code_url, return_url, created)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            )
            .bind(request.id)
            .bind(tenant.0)
            .bind(key)
            .bind(canonical)
            .bind(request.market.to_string())
            .bind(request.currency.to_string())
            .bind(amount_value(&request.amount)?)
            .bind(request.settlement_balance_id)
            .bind(request.reference.as_ref().map(|r| r.to_string()))
            .bind(request.status.to_string())
            .bind(&request.payment_url)
            .bind(&request.qr_code_url)
            .bind(&request.return_url)
            .bind(micros(request.created))
            .execute(connection)
            .await
            .map_err(|e| unique_violation(e, |_| Some(UniqueKey::PaymentRequestReferenceId)))?;
        }
        Change::SetPaymentRequestStatus { id, from, to } => {
            let done =
                sqlx::query("UPDATE payment_requests SET status = $1 WHERE id = $2 AND tenant_id = $3 AND status = $4")
                    .bind(to.to_string())
                    .bind(id)
                    .bind(tenant.0)
                    .bind(from.to_string())
                    .execute(connection)
                    .await?;
            guarded(done, "payment request", *id)?;
        }
        Change::InsertTransaction { transaction, idempotency } => {
            insert_transaction(connection, tenant, transaction, idempotency).await?
        }
        Change::SetTransactionStatus { id, from, to, failure_reason } => {
            let done = sqlx::query(
                "UPDATE transactions SET status = $1, failure_reason = $2 WHERE id = $3 AND tenant_id = $4 AND status = $5",
            )
            .bind(to.to_string())
            .bind(failure_reason)
            .bind(id)
            .bind(tenant.0)
            .bind(from.to_string())
            .execute(connection)
            .await?;
            guarded(done, "transaction", *id)?;
        }
        Change::InsertVirtualAccount { account, idempotency } => {
            let (key, canonical) = key_and_request(idempotency);
            let seq: i64 = sqlx::query_scalar(
                "INSERT INTO virtual_accounts (id, tenant_id, reference_id, request, currency, settlement_balance_id,
                     account_name, bank_name, account_number, supported_channels, type, status, created)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING seq",
            )
            .bind(account.id)
            .bind(tenant.0)
            .bind(key)
            .bind(canonical)
            .bind(account.currency.to_string())
            .bind(account.settlement_balance_id)
            .bind(account.account_name.to_string())
            .bind(&account.details.bank_name)
            .bind(&account.details.account_number)
            .bind(to_json(&account.supported_channels)?)
            .bind(account.type_.to_string())
            .bind(account.status.to_string())
            .bind(micros(account.created))
            .fetch_one(&mut *connection)
            .await
            .map_err(|e| {
                unique_violation(e, |message| {
                    Some(if message.contains("account_number") {
                        UniqueKey::AccountNumber
                    } else {
                        UniqueKey::VirtualAccountReferenceId
                    })
                })
            })?;
            sqlx::query("INSERT INTO virtual_account_search (rowid, account_name, account_number, bank_name) VALUES ($1, $2, $3, $4)")
                .bind(seq)
                .bind(account.account_name.to_string())
                .bind(&account.details.account_number)
                .bind(&account.details.bank_name)
                .execute(connection)
                .await?;
        }
        Change::SetVirtualAccountStatus { id, from, to } => {
            let done =
                sqlx::query("UPDATE virtual_accounts SET status = $1 WHERE id = $2 AND tenant_id = $3 AND status = $4")
                    .bind(to.to_string())
                    .bind(id)
                    .bind(tenant.0)
                    .bind(from.to_string())
                    .execute(connection)
                    .await?;
            guarded(done, "virtual account", *id)?;
        }
        Change::RenameVirtualAccount { id, name } => {
            let seq: Option<i64> = sqlx::query_scalar(
                "UPDATE virtual_accounts SET account_name = $1 WHERE id = $2 AND tenant_id = $3 RETURNING seq",
            )
            .bind(name)
            .bind(id)
            .bind(tenant.0)
            .fetch_optional(&mut *connection)
            .await?;
            let seq = seq.ok_or(StoreError::Stale { resource: "virtual account", id: *id })?;
            sqlx::query("UPDATE virtual_account_search SET account_name = $1 WHERE rowid = $2")
                .bind(name)
                .bind(seq)
                .execute(connection)
                .await?;
        }
        Change::ExpectVirtualAccountStatus { id, status } => {
            let found: Option<i64> =
                sqlx::query_scalar("SELECT 1 FROM virtual_accounts WHERE id = $1 AND tenant_id = $2 AND status = $3")
                    .bind(id)
                    .bind(tenant.0)
                    .bind(status.to_string())
                    .fetch_optional(connection)
                    .await?;
            found.ok_or(StoreError::Stale { resource: "virtual account", id: *id })?;
        }
        Change::InsertWebhookEndpoint { endpoint, secret } => {
            sqlx::query(
                "INSERT INTO webhook_endpoints (id, tenant_id, url, all_events, secret, created) VALUES ($1, $2, $3, $4, $5, $6)",
            )
            .bind(endpoint.id)
            .bind(tenant.0)
            .bind(endpoint.url.to_string())
            .bind(endpoint.events.is_none())
            .bind(secret)
            .bind(micros(endpoint.created))
            .execute(&mut *connection)
            .await?;
            for (position, event) in endpoint.events.iter().flatten().enumerate() {
                sqlx::query("INSERT INTO webhook_subscriptions (endpoint_id, position, event) VALUES ($1, $2, $3)")
                    .bind(endpoint.id)
                    .bind(i64::try_from(position).unwrap_or(i64::MAX))
                    .bind(event.to_string())
                    .execute(&mut *connection)
                    .await?;
            }
        }
        Change::DeleteWebhookEndpoint { id } => {
            let done = sqlx::query(
                "UPDATE webhook_endpoints SET deleted = TRUE WHERE id = $1 AND tenant_id = $2 AND deleted = FALSE",
            )
            .bind(id)
            .bind(tenant.0)
            .execute(&mut *connection)
            .await?;
            guarded(done, "webhook endpoint", *id)?;
            sqlx::query(
                "UPDATE notifications SET status = 'discarded', next_attempt = NULL
                 WHERE endpoint_id = $1 AND next_attempt IS NOT NULL",
            )
            .bind(id)
            .execute(connection)
            .await?;
        }
        Change::SetWebhookSecret { id, secret } => {
            let done = sqlx::query(
                "UPDATE webhook_endpoints SET secret = $1 WHERE id = $2 AND tenant_id = $3 AND deleted = FALSE",
            )
            .bind(secret)
            .bind(id)
            .bind(tenant.0)
            .execute(connection)
            .await?;
            guarded(done, "webhook endpoint", *id)?;
        }
        Change::Event { event, data } => record_event(connection, tenant, now, *event, data).await?,
        Change::Ping { id, endpoint, data } => {
            let event_seq = insert_event(connection, tenant, now, types::WebhookEvent::Ping, data).await?;
            insert_notification(connection, tenant, now, *id, *endpoint, event_seq).await?;
        }
    }
    Ok(())
}

/// Changes a balance by `delta` and writes its ledger entry. The update itself checks that a
/// debit is covered, so two debits racing for one balance cannot both pass.
async fn post(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    now: i64,
    (balance, transaction): (Uuid, Uuid),
    kind: LedgerEntryKind,
    delta: i64,
    posted: &mut Posted,
) -> Result<()> {
    // Invariant: credits add, debits take, and no entry is zero.
    if delta == 0 || kind.is_credit() != (delta > 0) {
        return Err(StoreError::Database(format!("a {} ledger entry cannot be {delta}", kind.as_str())));
    }
    let done =
        sqlx::query("UPDATE balances SET amount = amount + $1 WHERE id = $2 AND tenant_id = $3 AND amount + $1 >= 0")
            .bind(delta)
            .bind(balance)
            .bind(tenant.0)
            .execute(&mut *connection)
            .await?;
    if done.rows_affected() != 1 {
        let available: Option<i64> = sqlx::query_scalar("SELECT amount FROM balances WHERE id = $1 AND tenant_id = $2")
            .bind(balance)
            .bind(tenant.0)
            .fetch_optional(&mut *connection)
            .await?;
        return Err(match available {
            Some(now) => {
                StoreError::InsufficientFunds { balance, available: now - posted.get(&balance).copied().unwrap_or(0) }
            }
            None => StoreError::Stale { resource: "balance", id: balance },
        });
    }
    *posted.entry(balance).or_default() += delta;
    sqlx::query("INSERT INTO ledger (balance_id, transaction_id, kind, delta, created) VALUES ($1, $2, $3, $4, $5)")
        .bind(balance)
        .bind(transaction)
        .bind(kind.as_str())
        .bind(delta)
        .bind(now)
        .execute(connection)
        .await?;
    Ok(())
}

async fn insert_transaction(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    transaction: &types::Transaction,
    idempotency: &Option<Idempotency>,
) -> Result<()> {
    let (key, canonical) = key_and_request(idempotency);
    let recipient = transaction.recipient.as_ref();
    let seq: i64 = sqlx::query_scalar(
        "INSERT INTO transactions (id, tenant_id, order_id, request, transaction_type, payment_method, status,
             failure_reason, balance_id, currency, amount, fees, to_currency, to_amount, rate, single_rate,
             virtual_account_id, recipient_id, recipient_country, recipient, payer_name, reference, payment_reference,
             created)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
                 $23, $24)
         RETURNING seq",
    )
    .bind(transaction.id)
    .bind(tenant.0)
    .bind(key)
    .bind(canonical)
    .bind(transaction.transaction_type.to_string())
    .bind(transaction.payment_method.to_string())
    .bind(transaction.status.to_string())
    .bind(&transaction.failure_reason)
    .bind(transaction.balance_id)
    .bind(transaction.currency.to_string())
    .bind(amount_value(&transaction.amount)?)
    .bind(transaction.fees)
    .bind(transaction.to_currency.to_string())
    .bind(amount_value(&transaction.to_amount)?)
    .bind(transaction.exchange_rate.as_ref().map(|r| rate(r.rate)).transpose()?)
    .bind(transaction.exchange_rate.as_ref().map(|r| rate(r.single_rate)).transpose()?)
    .bind(transaction.virtual_account_id)
    .bind(recipient.map(|r| r.id))
    .bind(recipient.map(|r| r.country.to_string()))
    .bind(recipient.map(to_json).transpose()?)
    .bind(&transaction.payer_name)
    .bind(transaction.reference.as_ref().map(|r| r.to_string()))
    .bind(transaction.payment_reference.as_ref().map(|r| r.to_string()))
    .bind(micros(transaction.created))
    .fetch_one(&mut *connection)
    .await
    .map_err(|e| unique_violation(e, |_| Some(UniqueKey::OrderId)))?;
    let searched: [Option<String>; 6] = [
        transaction.reference.as_ref().map(|r| r.to_string()),
        transaction.payment_reference.as_ref().map(|r| r.to_string()),
        transaction.order_id.as_ref().map(|o| o.to_string()),
        transaction.payer_name.clone(),
        recipient.and_then(|r| r.bank_account.account_name.as_ref().map(|n| n.to_string())),
        recipient.and_then(|r| r.alias.as_ref().map(|a| a.to_string())),
    ];
    debug_assert_eq!(searched.len(), transactions::SEARCHED.len());
    let [reference, payment_reference, order_id, payer_name, account_name, alias] = searched;
    sqlx::query(
        "INSERT INTO transaction_search (rowid, reference, payment_reference, order_id, payer_name, account_name, alias)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(seq)
    .bind(reference)
    .bind(payment_reference)
    .bind(order_id)
    .bind(payer_name)
    .bind(account_name)
    .bind(alias)
    .execute(connection)
    .await?;
    Ok(())
}

fn rate(value: std::num::NonZeroU64) -> Result<i64> {
    i64::try_from(value.get()).map_err(|_| StoreError::Database(format!("rate {value} too large")))
}

/// Records `event` for every endpoint of the tenant subscribed to it. With none, nothing is
/// kept: an event only exists to be delivered.
async fn record_event(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    now: i64,
    event: types::WebhookEvent,
    data: &str,
) -> Result<()> {
    let endpoints: Vec<Uuid> = sqlx::query_scalar(
        "SELECT id FROM webhook_endpoints e WHERE tenant_id = $1 AND deleted = FALSE
         AND (all_events OR EXISTS (SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = e.id AND s.event = $2))
         ORDER BY seq",
    )
    .bind(tenant.0)
    .bind(event.to_string())
    .fetch_all(&mut *connection)
    .await?;
    if endpoints.is_empty() {
        return Ok(());
    }
    let event_seq = insert_event(connection, tenant, now, event, data).await?;
    for endpoint in endpoints {
        insert_notification(connection, tenant, now, Uuid::new_v4(), endpoint, event_seq).await?;
    }
    Ok(())
}

async fn insert_event(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    now: i64,
    event: types::WebhookEvent,
    data: &str,
) -> Result<i64> {
    let seq = sqlx::query_scalar(
        "INSERT INTO events (tenant_id, event, created, data) VALUES ($1, $2, $3, $4) RETURNING seq",
    )
    .bind(tenant.0)
    .bind(event.to_string())
    .bind(now)
    .bind(data)
    .fetch_one(connection)
    .await?;
    Ok(seq)
}

/// A notification of `event_seq` for `endpoint`, due at once.
async fn insert_notification(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    now: i64,
    id: Uuid,
    endpoint: Uuid,
    event_seq: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO notifications (id, tenant_id, endpoint_id, event_seq, status, next_attempt, created)
         VALUES ($1, $2, $3, $4, 'pending', $5, $5)",
    )
    .bind(id)
    .bind(tenant.0)
    .bind(endpoint)
    .bind(event_seq)
    .bind(now)
    .execute(connection)
    .await?;
    Ok(())
}
