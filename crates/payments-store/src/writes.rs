//! Every [`Change`] as SQL, written once for both backends: each change becomes its statements
//! here, in order, each with what it must change or find (else its changeset is stale); a
//! [`WriteDialect`] supplies what differs (how a new row's key is made, whether a changeset moves
//! its balances itself, how an event fans out to its notifications, the search rows a backend
//! keeps beside its tables). Each backend runs them its own way: SQLite's writer one at a time in
//! a savepoint (`sqlite/changes.rs`), PostgreSQL's lanes as one pipeline per batch
//! (`postgres/writer.rs`).

use chrono::{DateTime, Utc};
use payments_types as types;
use uuid::Uuid;

use crate::plan::{balance_moves, guarded};
use crate::reads::{Query, amount_value, micros, to_json};
use crate::{Change, Changeset, Idempotency, Result, StoreError};

/// One statement of a changeset.
pub(crate) struct Statement<D> {
    pub query: Query<D>,
    pub check: Check,
    /// It inserts the transaction of the changeset's change of this index.
    pub inserts_transaction: Option<usize>,
    /// It runs only when the statement before it changed a row (a backend that runs them one
    /// by one skips it; one that pipelines them runs it, and it must then change nothing).
    pub after_a_change: bool,
}

/// What a statement must do, else its change is stale (the row moved on, or is gone).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Check {
    /// Nothing: whatever it changes is right.
    None,
    /// It changes this row (which resource, and its id).
    Changes(&'static str, Uuid),
    /// It is a `SELECT` that finds this row.
    Finds(&'static str, Uuid),
}

/// What a backend's SQL for a change is its own.
pub(crate) trait WriteDialect: Sized {
    /// Whether a changeset moves its balances itself, one `UPDATE` per run of postings to a
    /// balance (SQLite), or leaves that to its batch (PostgreSQL: `postgres/changes.rs`).
    const MOVES_BALANCES: bool;
    /// What a `SELECT` that finds a row adds so that the row stays as found until the commit.
    const KEEP_FOUND: &'static str;

    /// Appends a new row's key in `table` (see `reads`: the millisecond of `created` and the
    /// row's place in it).
    fn push_new_seq(query: &mut Query<Self>, table: &'static str, created: DateTime<Utc>);

    /// Appends a transaction's columns beyond the ones both backends keep, and their values.
    fn transaction_columns(
        columns: &mut String,
        values: &mut Vec<crate::reads::Value>,
        transaction: &types::Transaction,
    );

    /// The statements that keep the virtual account just inserted (by the statement before)
    /// findable by a search, where the backend keeps that apart from the account's row.
    fn virtual_account_searchable(account: &types::VirtualAccount) -> Vec<Query<Self>>;

    /// The same, after account `id` was renamed `name`.
    fn virtual_account_renamed(id: Uuid, name: &str) -> Vec<Query<Self>>;

    /// The statements that keep event `event` of `tenant` (its `data` as JSON text) when an
    /// endpoint subscribes to it, with a notification due `at` for each such endpoint: nothing
    /// is written for a tenant whose endpoints do not want it. Each but the first may be marked
    /// to run only after a change (see [`Statement::after_a_change`]).
    fn event(tenant: i64, event: &str, data: &str, at: DateTime<Utc>) -> Vec<(Query<Self>, bool)>;

    /// The statements that keep a ping of `endpoint` and its notification `id`.
    fn ping(tenant: i64, id: Uuid, endpoint: Uuid, data: &str, at: DateTime<Utc>) -> Vec<Query<Self>>;
}

/// The statements of `changes`, in order; refused at once when a change is not one the ledger
/// can take.
pub(crate) fn statements<D: WriteDialect>(changes: &Changeset) -> Result<Vec<Statement<D>>> {
    let moves = if D::MOVES_BALANCES { balance_moves(&changes.changes) } else { vec![None; changes.changes.len()] };
    let mut out = Compiled { statements: Vec::with_capacity(changes.changes.len() + 2) };
    for (index, (change, moved)) in changes.changes.iter().zip(moves).enumerate() {
        out.change(changes.tenant.0, changes.now, index, change, moved)?;
    }
    Ok(out.statements)
}

/// Moves the tenant's balance `balance` by `delta`. Below zero, it fails the `funds` check.
pub(crate) fn move_balance<D>(tenant: i64, balance: Uuid, delta: i64) -> Query<D> {
    let mut q = Query::new("UPDATE balances SET amount = amount + ");
    q.bind(delta).push(" WHERE id = ").bind(balance).push(" AND tenant_id = ").bind(tenant);
    q
}

struct Compiled<D> {
    statements: Vec<Statement<D>>,
}

impl<D: WriteDialect> Compiled<D> {
    fn push(&mut self, query: Query<D>, check: Check) -> &mut Statement<D> {
        self.statements.push(Statement { query, check, inserts_transaction: None, after_a_change: false });
        self.statements.last_mut().expect("just pushed")
    }

    fn run(&mut self, query: Query<D>) {
        self.push(query, Check::None);
    }

    fn all(&mut self, queries: Vec<Query<D>>) {
        for query in queries {
            self.run(query);
        }
    }

    /// A statement that must change the row `change` is about.
    fn changes(&mut self, query: Query<D>, change: &Change) {
        let (resource, id) = guarded(change);
        self.push(query, Check::Changes(resource, id));
    }

    fn change(
        &mut self,
        tenant: i64,
        at: DateTime<Utc>,
        index: usize,
        change: &Change,
        balance_move: Option<i64>,
    ) -> Result<()> {
        let now = micros(at);
        match change {
            Change::OpenBalance { id, currency, name } => {
                let mut q = insert("balances", "seq, id, tenant_id, currency, name, amount, created");
                D::push_new_seq(&mut q, "balances", at);
                q.push(", ").binds([(*id).into(), tenant.into(), currency.clone().into(), name.clone().into()]);
                q.push(", 0, ").bind(now).push(")");
                self.run(q);
            }
            Change::RenameBalance { id, name } => {
                let mut q = Query::new("UPDATE balances SET name = ");
                q.bind(name.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
                self.changes(q, change);
            }
            Change::Post { balance, transaction, kind, delta } => {
                // Invariant: credits add, debits take, and no entry is zero.
                if *delta == 0 || kind.is_credit() != (*delta > 0) {
                    return Err(StoreError::Invariant(format!("a {} ledger entry cannot be {delta}", kind.as_str())));
                }
                // The first posting of a run moves the balance for all of them; a balance that
                // is not the tenant's changes nothing (stale).
                if let Some(moved) = balance_move {
                    self.changes(move_balance(tenant, *balance, moved), change);
                }
                let mut q = insert("ledger", "balance_id, transaction_id, kind, delta, created");
                q.binds([(*balance).into(), (*transaction).into(), kind.as_str().into(), (*delta).into(), now.into()]);
                q.push(")");
                self.run(q);
            }
            Change::InsertRecipient(recipient) => {
                let mut q = insert(
                    "recipients",
                    "seq, id, tenant_id, type, country, alias, default_reference, bank_account, created",
                );
                D::push_new_seq(&mut q, "recipients", recipient.created);
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
                self.run(q);
            }
            Change::SetRecipientAlias { id, alias } => {
                let mut q = Query::new("UPDATE recipients SET alias = ");
                q.bind(alias.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
                q.push(" AND deleted = FALSE");
                self.changes(q, change);
            }
            Change::DeleteRecipient { id } => {
                let mut q = Query::new("UPDATE recipients SET deleted = TRUE WHERE id = ");
                q.bind(*id).push(" AND tenant_id = ").bind(tenant).push(" AND deleted = FALSE");
                self.changes(q, change);
            }
            Change::InsertPaymentRequest { request, idempotency } => {
                let (key, canonical) = key_and_request(idempotency);
                let mut q = insert(
                    "payment_requests",
                    "seq, id, tenant_id, reference_id, request, market, currency, amount, settlement_balance_id, \
                     reference, status, payment_url, qr_code_url, return_url, created",
                );
                D::push_new_seq(&mut q, "payment_requests", request.created);
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
                self.run(q);
            }
            Change::SetPaymentRequestStatus { id, from, to, paid } => {
                let mut q = Query::new("UPDATE payment_requests SET status = ");
                q.bind(to.to_string());
                if let Some(paid) = paid {
                    q.push(", amount = ").bind(amount_value(paid)?);
                }
                q.push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
                q.push(" AND status = ").bind(from.to_string());
                if let Some(paid) = paid {
                    q.push(" AND (amount IS NULL OR amount = ").bind(amount_value(paid)?).push(")");
                }
                self.changes(q, change);
            }
            Change::InsertTransaction { transaction, idempotency } => {
                let query = insert_transaction(tenant, transaction, idempotency)?;
                self.push(query, Check::None).inserts_transaction = Some(index);
            }
            Change::SetTransactionStatus { id, from, to, failure_reason } => {
                let mut q = Query::new("UPDATE transactions SET status = ");
                q.bind(to.to_string()).push(", failure_reason = ").bind(failure_reason.clone());
                q.push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
                q.push(" AND status = ").bind(from.to_string());
                self.changes(q, change);
            }
            Change::InsertVirtualAccount { account, idempotency } => {
                let (key, canonical) = key_and_request(idempotency);
                let mut q = insert(
                    "virtual_accounts",
                    "seq, id, tenant_id, reference_id, request, currency, settlement_balance_id, account_name, \
                     bank_name, account_number, supported_channels, type, status, created",
                );
                D::push_new_seq(&mut q, "virtual_accounts", account.created);
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
                self.run(q);
                self.all(D::virtual_account_searchable(account));
            }
            Change::SetVirtualAccountStatus { id, from, to } => {
                let mut q = Query::new("UPDATE virtual_accounts SET status = ");
                q.bind(to.to_string()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
                q.push(" AND status = ").bind(from.to_string());
                self.changes(q, change);
            }
            Change::RenameVirtualAccount { id, name } => {
                let mut q = Query::new("UPDATE virtual_accounts SET account_name = ");
                q.bind(name.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
                self.changes(q, change);
                self.all(D::virtual_account_renamed(*id, name));
            }
            Change::ExpectVirtualAccountStatus { id, status } => {
                let mut q = Query::new("SELECT 1 FROM virtual_accounts WHERE id = ");
                q.bind(*id).push(" AND tenant_id = ").bind(tenant).push(" AND status = ").bind(status.to_string());
                q.push(D::KEEP_FOUND);
                let (resource, id) = guarded(change);
                self.push(q, Check::Finds(resource, id));
            }
            Change::InsertWebhookEndpoint { endpoint, secret } => {
                let mut q = insert("webhook_endpoints", "seq, id, tenant_id, url, all_events, secret, created");
                D::push_new_seq(&mut q, "webhook_endpoints", endpoint.created);
                q.push(", ").binds([
                    endpoint.id.into(),
                    tenant.into(),
                    endpoint.url.to_string().into(),
                    endpoint.events.is_none().into(),
                    secret.clone().into(),
                    micros(endpoint.created).into(),
                ]);
                q.push(")");
                self.run(q);
                for (position, event) in endpoint.events.iter().flatten().enumerate() {
                    let mut q = insert("webhook_subscriptions", "endpoint_id, position, event");
                    q.binds([endpoint.id.into(), (position as i64).into(), event.to_string().into()]).push(")");
                    self.run(q);
                }
            }
            Change::DeleteWebhookEndpoint { id } => {
                let mut q = Query::new("UPDATE webhook_endpoints SET deleted = TRUE WHERE id = ");
                q.bind(*id).push(" AND tenant_id = ").bind(tenant).push(" AND deleted = FALSE");
                self.changes(q, change);
                let mut q = Query::new(
                    "UPDATE notifications SET status = 'discarded', next_attempt = NULL WHERE endpoint_id = ",
                );
                q.bind(*id).push(" AND next_attempt IS NOT NULL");
                self.run(q);
            }
            Change::SetWebhookSecret { id, secret } => {
                let mut q = Query::new("UPDATE webhook_endpoints SET secret = ");
                q.bind(secret.clone()).push(" WHERE id = ").bind(*id).push(" AND tenant_id = ").bind(tenant);
                q.push(" AND deleted = FALSE");
                self.changes(q, change);
            }
            Change::Event { event, data } => {
                for (query, after_a_change) in D::event(tenant, &event.to_string(), data, at) {
                    self.push(query, Check::None).after_a_change = after_a_change;
                }
            }
            Change::Ping { id, endpoint, data } => self.all(D::ping(tenant, *id, *endpoint, data, at)),
        }
        Ok(())
    }
}

/// `INSERT INTO table (columns) VALUES (`, its values to follow.
fn insert<D>(table: &str, columns: &str) -> Query<D> {
    Query::new(format!("INSERT INTO {table} ({columns}) VALUES ("))
}

fn insert_transaction<D: WriteDialect>(
    tenant: i64,
    transaction: &types::Transaction,
    idempotency: &Option<Idempotency>,
) -> Result<Query<D>> {
    let (key, canonical) = key_and_request(idempotency);
    let recipient = transaction.recipient.as_ref();
    let rate = |value: std::num::NonZeroU64| {
        i64::try_from(value.get()).map_err(|_| StoreError::TooLarge { what: "rate", value: value.to_string() })
    };
    let rates = transaction.exchange_rate.as_ref();
    let mut columns = String::from(
        "seq, id, tenant_id, order_id, request, transaction_type, payment_method, status, failure_reason, \
         balance_id, currency, amount, fees, to_currency, to_amount, rate, single_rate, rate_decimal, \
         single_rate_decimal, virtual_account_id, recipient_id, recipient_country, recipient, payer_name, \
         reference, payment_reference, created",
    );
    let mut values = vec![
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
    D::transaction_columns(&mut columns, &mut values, transaction);
    let mut q = insert("transactions", &columns);
    D::push_new_seq(&mut q, "transactions", transaction.created);
    q.push(", ").binds(values).push(")");
    Ok(q)
}

fn key_and_request(idempotency: &Option<Idempotency>) -> (Option<String>, Option<String>) {
    idempotency.as_ref().map(|i| (i.key.clone(), i.request.clone())).unzip()
}

/// An optional constrained string (the models' newtypes over `String`) as text.
pub(crate) fn text<T: std::ops::Deref<Target = String>>(value: Option<&T>) -> Option<String> {
    value.map(|v| String::clone(v))
}
