//! Transactions: payments out of a balance (priced, debited with their fee at once, moved along
//! by the rail), and money arriving (collections of paid payment requests, deposits to virtual
//! accounts), processed at once and free.

use payments_store::{Change, Changeset, Idempotency, LedgerEntryKind, Page, StoreError, TransactionFilter, UniqueKey};
use payments_types as types;
use types::TransactionStatus as Status;
use types::WebhookEvent as Event;
use uuid::Uuid;

use super::error::{Error, Result, listing};
use super::idempotency::{canonical, or_replay, replay};
use super::{Now, Sandbox, Tenant, changeset, json, money, reference, typed};

/// Whether the rail may move a payment from `from` to `to` (the table under *Transactions* in
/// the document).
pub(super) fn transition_allowed(from: Status, to: Status) -> bool {
    use Status::*;
    matches!(
        (from, to),
        (Initiated, Processing | Pending | Cancelled)
            | (Pending, Processing | Cancelled)
            | (Processing, Processed | Failed)
            | (Processed, Refunded)
    )
}

/// The event a transaction emits on reaching `status`.
pub(super) fn event_for(status: Status) -> Event {
    match status {
        Status::Initiated => Event::TransactionInitiated,
        Status::Pending => Event::TransactionPending,
        Status::Processing => Event::TransactionProcessing,
        Status::Processed => Event::TransactionProcessed,
        Status::Cancelled => Event::TransactionCancelled,
        Status::Failed => Event::TransactionFailed,
        Status::Refunded => Event::TransactionRefunded,
        // What a client reads from a newer server; the sandbox sets and stores only these.
        Status::Unknown => unreachable!("the sandbox moves transactions only to the statuses it knows"),
    }
}

/// Whether reaching `status` gives the payment's money back: amount and fees return to the
/// balance when it failed, was cancelled or refunded.
pub(super) fn returns_money(status: Status) -> bool {
    matches!(status, Status::Failed | Status::Cancelled | Status::Refunded)
}

/// The changes that move `payment` to `to` (returning its money when `to` says so), and the
/// payment as it then is. Refused with `409` when the payment is not a payment or the table
/// forbids the move.
pub(super) fn move_payment(
    changes: &mut Changeset,
    mut payment: types::Transaction,
    to: Status,
    failure_reason: Option<String>,
) -> Result<types::Transaction> {
    if payment.transaction_type != types::TransactionType::Payment {
        return Err(Error::conflict(format!(
            "transaction {} is a {}; only payments change status",
            payment.id, payment.transaction_type
        )));
    }
    if !transition_allowed(payment.status, to) {
        return Err(Error::conflict(format!(
            "transaction {} is {} and cannot become {to}",
            payment.id, payment.status
        )));
    }
    let from = payment.status;
    payment.status = to;
    payment.failure_reason = failure_reason.clone();
    changes.push(Change::SetTransactionStatus { id: payment.id, from, to, failure_reason });
    if returns_money(to) {
        let amount = i64::try_from(payment.amount.get()).map_err(Error::internal)?;
        changes.push(Change::Post {
            balance: payment.balance_id,
            transaction: payment.id,
            kind: LedgerEntryKind::Refund,
            delta: amount,
        });
        if payment.fees > 0 {
            changes.push(Change::Post {
                balance: payment.balance_id,
                transaction: payment.id,
                kind: LedgerEntryKind::FeeRefund,
                delta: payment.fees,
            });
        }
    }
    changes.push(Change::Event { event: event_for(to), data: json(&payment)? });
    Ok(payment)
}

/// Money arriving in a balance: a collection (a paid payment request) or a deposit (a transfer
/// to a virtual account).
pub(super) struct Incoming {
    pub kind: IncomingKind,
    pub amount: types::Amount,
    pub currency: types::CurrencyCode,
    pub balance_id: Uuid,
    pub payer_name: Option<String>,
    pub reference: Option<String>,
}

pub(super) enum IncomingKind {
    /// A payer paid a payment request.
    Collection,
    /// A bank transfer to a virtual account, deposited in its settlement balance.
    Deposit { virtual_account_id: Uuid },
    /// A bank transfer to a balance's own bank address.
    Transfer,
}

/// The changes that record `incoming` as a `processed` transaction and credit its balance, and
/// that transaction. Money arriving is free.
pub(super) fn receive(changes: &mut Changeset, now: Now, incoming: Incoming) -> Result<types::Transaction> {
    let (transaction_type, payment_method, virtual_account_id, kind) = match incoming.kind {
        IncomingKind::Collection => {
            (types::TransactionType::Collection, types::PaymentMethod::PaymentLink, None, LedgerEntryKind::Collection)
        }
        IncomingKind::Transfer => {
            (types::TransactionType::Collection, types::PaymentMethod::BankTransfer, None, LedgerEntryKind::Collection)
        }
        IncomingKind::Deposit { virtual_account_id } => (
            types::TransactionType::Deposit,
            types::PaymentMethod::BankTransfer,
            Some(virtual_account_id),
            LedgerEntryKind::Deposit,
        ),
    };
    let transaction = types::Transaction {
        id: Uuid::new_v4(),
        amount: incoming.amount.clone(),
        fees: 0,
        currency: incoming.currency.clone(),
        to_amount: incoming.amount.clone(),
        to_currency: incoming.currency,
        balance_id: incoming.balance_id,
        virtual_account_id,
        order_id: None,
        payment_reference: incoming.reference.as_deref().map(typed).transpose()?,
        status: Status::Processed,
        failure_reason: None,
        transaction_type,
        payment_method,
        recipient: None,
        payer_name: Some(incoming.payer_name.unwrap_or_else(|| "Sandbox Payer".into())),
        exchange_rate: None,
        reference: incoming.reference.as_deref().map(typed).transpose()?,
        created: now.0,
    };
    let credit = i64::try_from(incoming.amount.get()).map_err(Error::internal)?;
    changes.push(Change::InsertTransaction { transaction: Box::new(transaction.clone()), idempotency: None });
    changes.push(Change::Post { balance: transaction.balance_id, transaction: transaction.id, kind, delta: credit });
    Ok(transaction)
}

impl Sandbox {
    pub async fn list_transactions(
        &self,
        tenant: Tenant,
        filter: TransactionFilter,
        page: Page,
    ) -> Result<Vec<types::Transaction>> {
        self.store.transactions(tenant.id, &filter, page).await.map_err(listing("transaction"))
    }

    pub async fn get_transaction(&self, tenant: Tenant, id: Uuid) -> Result<types::Transaction> {
        self.store.transaction(tenant.id, id).await?.ok_or_else(|| Error::not_found(format!("transaction {id}")))
    }

    /// Pays a recipient from a balance: priced (`money::price`), and `amount + fees` debited at
    /// once, atomically — a balance that does not cover it is refused and nothing changes.
    pub async fn create_transaction(
        &self,
        tenant: Tenant,
        body: types::TransactionCreate,
    ) -> Result<types::Transaction> {
        let request = canonical(&body)?;
        let key = body.order_id.as_ref().map(|o| o.to_string());
        let made = self.pay_recipient(tenant, &body, key.as_deref(), &request).await;
        or_replay(made, key.as_deref(), |key| self.replay_payment(tenant, key, &request)).await
    }

    /// The payment itself, for [`Sandbox::create_transaction`].
    async fn pay_recipient(
        &self,
        tenant: Tenant,
        body: &types::TransactionCreate,
        key: Option<&str>,
        request: &str,
    ) -> Result<types::Transaction> {
        let from = self.balance_currency(tenant, body.balance_id, "balance_id: ").await?;
        let recipient = self
            .store
            .recipient(tenant.id, body.recipient_id)
            .await?
            .ok_or_else(|| Error::not_found(format!("recipient_id: recipient {}", body.recipient_id)))?;
        let to = reference::supported_currency("recipient", &recipient.bank_account.currency)?;
        let priced = money::price(from, to, body.amount.as_ref(), body.to_amount.as_ref())?;
        let reference = body.reference.as_ref().map(|r| r.to_string());
        let payment_reference =
            reference.clone().or_else(|| recipient.default_reference.as_ref().map(|r| r.to_string()));
        let now = Now::new();
        let debit = priced.debit()?;
        let payment = types::Transaction {
            id: Uuid::new_v4(),
            amount: priced.amount.clone(),
            fees: priced.fees,
            currency: typed(from.code)?,
            to_amount: priced.to_amount.clone(),
            to_currency: recipient.bank_account.currency.clone(),
            balance_id: body.balance_id,
            virtual_account_id: None,
            order_id: key.map(typed).transpose()?,
            payment_reference: payment_reference.as_deref().map(typed).transpose()?,
            status: Status::Initiated,
            failure_reason: None,
            transaction_type: types::TransactionType::Payment,
            payment_method: types::PaymentMethod::Balance,
            recipient: Some(recipient),
            payer_name: None,
            exchange_rate: priced.exchange_rate.clone(),
            reference: reference.as_deref().map(typed).transpose()?,
            created: now.0,
        };
        let amount = debit - priced.fees;
        let mut changes = changeset(tenant.id, now);
        changes.push(Change::InsertTransaction {
            transaction: Box::new(payment.clone()),
            idempotency: key.map(|key| Idempotency { key: key.to_owned(), request: request.to_owned() }),
        });
        changes.push(Change::Post {
            balance: body.balance_id,
            transaction: payment.id,
            kind: LedgerEntryKind::Payment,
            delta: -amount,
        });
        if priced.fees > 0 {
            changes.push(Change::Post {
                balance: body.balance_id,
                transaction: payment.id,
                kind: LedgerEntryKind::Fee,
                delta: -priced.fees,
            });
        }
        changes.push(Change::Event { event: Event::TransactionInitiated, data: json(&payment)? });
        match self.apply(changes).await {
            Ok(()) => Ok(payment),
            Err(StoreError::InsufficientFunds { balance, available }) => Err(Error::invalid(format!(
                "insufficient funds: balance {balance} holds {available}, this payment needs {debit} ({amount} plus {} fees)",
                priced.fees
            ))),
            // Taken by an earlier request: the caller answers from it.
            Err(StoreError::Duplicate(UniqueKey::OrderId)) => Err(Error::internal("order_id is taken")),
            Err(other) => Err(other.into()),
        }
    }

    async fn replay_payment(&self, tenant: Tenant, key: &str, request: &str) -> Result<Option<types::Transaction>> {
        replay("order_id", key, self.store.transaction_by_order_id(tenant.id, key).await?, request)
    }

    /// `POST /sandbox/transactions/{id}/status`: what the rail or the bank would do.
    pub async fn simulate_transaction_status(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::SimulateTransactionStatus,
    ) -> Result<types::Transaction> {
        let to: Status = typed(&body.status.to_string())?;
        let reason = body.failure_reason.map(|r| r.to_string());
        match (to, &reason) {
            (Status::Failed, None) => return Err(Error::invalid("failure_reason is required with status failed")),
            (Status::Failed, Some(_)) | (_, None) => {}
            (_, Some(_)) => return Err(Error::invalid("failure_reason is only allowed with status failed")),
        }
        self.decide_and_apply(|| async {
            let payment = self.get_transaction(tenant, id).await?;
            let mut changes = changeset(tenant.id, Now::new());
            let moved = move_payment(&mut changes, payment, to, reason.clone())?;
            Ok((changes, moved))
        })
        .await
    }

    /// `POST /sandbox/virtualaccounts/{id}/transfers`: a bank transfer arrives in an active
    /// virtual account, and is deposited in its settlement balance.
    pub async fn simulate_inbound_transfer(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::SimulateInboundTransfer,
    ) -> Result<types::Transaction> {
        self.decide_and_apply(|| async {
            let account = self.virtual_account(tenant, id).await?;
            if account.status != types::VirtualAccountStatus::Active {
                return Err(Error::conflict(format!(
                    "virtual account {id} is {}; the bank returns transfers to it",
                    account.status
                )));
            }
            let now = Now::new();
            let mut changes = changeset(tenant.id, now);
            // Written only if the account is still active then.
            changes.push(Change::ExpectVirtualAccountStatus { id, status: account.status });
            let deposit = receive(
                &mut changes,
                now,
                Incoming {
                    kind: IncomingKind::Deposit { virtual_account_id: id },
                    amount: body.amount.clone(),
                    currency: account.currency.clone(),
                    balance_id: account.settlement_balance_id,
                    payer_name: body.payer_name.as_ref().map(|n| n.to_string()),
                    reference: body.reference.as_ref().map(|r| r.to_string()),
                },
            )?;
            changes.push(Change::Event { event: Event::TransactionProcessed, data: json(&deposit)? });
            Ok((changes, deposit))
        })
        .await
    }
}

impl Sandbox {
    /// `POST /sandbox/balances/{id}/transfers`: a bank transfer arrives at a balance's own bank
    /// address (GBP balances have one), and is credited to it.
    pub async fn simulate_balance_transfer(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::SimulateBalanceTransfer,
    ) -> Result<types::Transaction> {
        let balance = self.get_balance(tenant, id).await?;
        if balance.addresses.is_empty() {
            return Err(Error::conflict(format!(
                "balance {id} holds {} and has no bank address to send to (GBP balances have one)",
                balance.currency.as_str()
            )));
        }
        let now = Now::new();
        let mut changes = changeset(tenant.id, now);
        let collection = receive(
            &mut changes,
            now,
            Incoming {
                kind: IncomingKind::Transfer,
                amount: body.amount,
                currency: balance.currency,
                balance_id: id,
                payer_name: Some(body.sender_name.to_string()),
                reference: body.reference.as_ref().map(|r| r.to_string()),
            },
        )?;
        changes.push(Change::Event { event: Event::TransactionProcessed, data: json(&collection)? });
        self.apply(changes).await?;
        Ok(collection)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use payments_store::TenantId;

    fn payment(status: Status) -> types::Transaction {
        types::Transaction {
            id: Uuid::new_v4(),
            amount: types::Amount::new(1_000).unwrap(),
            fees: 20,
            currency: "GBP".parse().unwrap(),
            to_amount: types::Amount::new(1_000).unwrap(),
            to_currency: "GBP".parse().unwrap(),
            balance_id: Uuid::new_v4(),
            virtual_account_id: None,
            order_id: None,
            payment_reference: None,
            status,
            failure_reason: None,
            transaction_type: types::TransactionType::Payment,
            payment_method: types::PaymentMethod::Balance,
            recipient: None,
            payer_name: None,
            exchange_rate: None,
            reference: None,
            created: Utc::now(),
        }
    }

    const ALL: [Status; 7] = [
        Status::Initiated,
        Status::Pending,
        Status::Processing,
        Status::Processed,
        Status::Cancelled,
        Status::Failed,
        Status::Refunded,
    ];

    #[test]
    fn the_transition_table() {
        let allowed: Vec<(Status, Status)> = ALL
            .iter()
            .flat_map(|&f| ALL.iter().map(move |&t| (f, t)))
            .filter(|&(f, t)| transition_allowed(f, t))
            .collect();
        use Status::*;
        assert_eq!(
            allowed,
            [
                (Initiated, Pending),
                (Initiated, Processing),
                (Initiated, Cancelled),
                (Pending, Processing),
                (Pending, Cancelled),
                (Processing, Processed),
                (Processing, Failed),
                (Processed, Refunded),
            ]
        );
    }

    #[test]
    fn a_move_changes_the_status_returns_money_when_it_should_and_emits_its_event() {
        for to in [Status::Failed, Status::Processed] {
            let mut changes = Changeset::new(TenantId(1), Utc::now());
            let before = payment(Status::Processing);
            let moved = move_payment(&mut changes, before.clone(), to, None).unwrap();
            assert_eq!(moved.status, to);
            let mut expected = vec![Change::SetTransactionStatus {
                id: before.id,
                from: Status::Processing,
                to,
                failure_reason: None,
            }];
            if to == Status::Failed {
                expected.push(Change::Post {
                    balance: before.balance_id,
                    transaction: before.id,
                    kind: LedgerEntryKind::Refund,
                    delta: 1_000,
                });
                expected.push(Change::Post {
                    balance: before.balance_id,
                    transaction: before.id,
                    kind: LedgerEntryKind::FeeRefund,
                    delta: 20,
                });
            }
            expected.push(Change::Event { event: event_for(to), data: serde_json::to_string(&moved).unwrap() });
            assert_eq!(changes.changes, expected);
        }
    }

    #[test]
    fn forbidden_moves_and_non_payments_are_conflicts_and_change_nothing() {
        let mut changes = Changeset::new(TenantId(1), Utc::now());
        let refused = move_payment(&mut changes, payment(Status::Processed), Status::Failed, Some("x".into()));
        assert!(matches!(refused, Err(Error::Conflict(m)) if m.contains("is processed and cannot become failed")));
        let mut deposit = payment(Status::Processed);
        deposit.transaction_type = types::TransactionType::Deposit;
        let refused = move_payment(&mut changes, deposit, Status::Refunded, None);
        assert!(matches!(refused, Err(Error::Conflict(m)) if m.contains("only payments change status")));
        assert!(changes.changes.is_empty());
    }

    #[test]
    fn money_arriving_is_a_processed_free_transaction_credited_with_its_ledger_entry() {
        let mut changes = Changeset::new(TenantId(1), Utc::now());
        let balance = Uuid::new_v4();
        let account = Uuid::new_v4();
        let incoming = Incoming {
            kind: IncomingKind::Deposit { virtual_account_id: account },
            amount: types::Amount::new(2_500).unwrap(),
            currency: "NGN".parse().unwrap(),
            balance_id: balance,
            payer_name: None,
            reference: Some("School fees".into()),
        };
        let deposit = receive(&mut changes, Now::new(), incoming).unwrap();
        assert_eq!((deposit.status, deposit.fees, deposit.virtual_account_id), (Status::Processed, 0, Some(account)));
        assert_eq!(deposit.payer_name.as_deref(), Some("Sandbox Payer"));
        assert_eq!(
            changes.changes[1],
            Change::Post { balance, transaction: deposit.id, kind: LedgerEntryKind::Deposit, delta: 2_500 }
        );
    }
}
