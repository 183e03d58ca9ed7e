//! What the store keeps and is asked for, as the rest of the sandbox sees it: records, list
//! filters and pages, and the [`Changeset`] every write is made of. Resources are the API's own
//! models (`payments_types`), so what is stored is what the API shows; balances are a record of
//! their own because part of what the API shows of them is derived (the default-currency value
//! and the account address).

use chrono::{DateTime, Utc};
use payments_types as types;
use uuid::Uuid;

/// A tenant, as the database knows it: callers never see this number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TenantId(pub i64);

impl std::fmt::Display for TenantId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// The SHA-256 of a bearer token: tokens are stored only as this.
pub type TokenHash = [u8; 32];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TenantRecord {
    pub id: TenantId,
    pub name: String,
    /// An ISO 4217 code.
    pub default_currency: String,
}

/// What [`crate::Store::ensure_tenant`] found or made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnsuredTenant {
    pub tenant: TenantRecord,
    /// `true` when this call created it.
    pub created: bool,
}

/// A balance: what it holds (in minor units) and what describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BalanceRecord {
    pub id: Uuid,
    pub name: String,
    /// An ISO 4217 code.
    pub currency: String,
    pub amount: i64,
    pub created: DateTime<Utc>,
}

/// A balance whose amount differs from the sum of its ledger entries (there should be none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreconciled {
    pub balance: Uuid,
    pub amount: i64,
    pub ledger_total: i64,
}

/// Why a balance changed. Every change of a balance is one ledger entry of one of these kinds,
/// written in the same database transaction as the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LedgerEntryKind {
    /// A payment's amount leaving the balance.
    Payment,
    /// A payment's fee leaving the balance.
    Fee,
    /// A failed, cancelled or refunded payment's amount coming back.
    Refund,
    /// That payment's fee coming back.
    FeeRefund,
    /// A paid payment request's money arriving.
    Collection,
    /// A bank transfer to a virtual account arriving.
    Deposit,
}

impl LedgerEntryKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Payment => "payment",
            Self::Fee => "fee",
            Self::Refund => "refund",
            Self::FeeRefund => "fee_refund",
            Self::Collection => "collection",
            Self::Deposit => "deposit",
        }
    }

    /// Whether entries of this kind add to the balance (the others take from it).
    pub fn is_credit(self) -> bool {
        !matches!(self, Self::Payment | Self::Fee)
    }
}

/// A create request's idempotency key (`order_id`, `reference_id`) and the canonical JSON of the
/// request that used it, so a retry can be told from a different request reusing the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Idempotency {
    pub key: String,
    pub request: String,
}

/// A resource found by its idempotency key, with the request that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyed<T> {
    pub resource: T,
    pub request: String,
}

/// A page of a list, newest first: at most `limit` items older than `starting_after`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Page {
    pub limit: u32,
    pub starting_after: Option<Uuid>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BalanceFilter {
    pub currency: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaymentRequestFilter {
    pub reference_id: Option<String>,
    pub currency: Option<String>,
    pub settlement_balance_id: Option<Uuid>,
    pub status: Option<types::PaymentRequestStatus>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TransactionFilter {
    pub order_id: Option<String>,
    pub recipient_id: Option<Uuid>,
    pub recipient_country: Option<String>,
    pub balance_id: Option<Uuid>,
    pub virtual_account_id: Option<Uuid>,
    /// The interface's filter; no operation makes scheduled payments, so it matches nothing.
    pub scheduled_payment_id: Option<Uuid>,
    pub transaction_type: Option<types::TransactionType>,
    pub currency: Option<String>,
    pub to_currency: Option<String>,
    pub status: Option<types::TransactionStatus>,
    /// Created at or after.
    pub created_from: Option<DateTime<Utc>>,
    /// Created before.
    pub created_before: Option<DateTime<Utc>>,
    /// A substring, in any case, of the reference, payment reference, order id, payer name,
    /// or the recipient's account name or alias.
    pub search: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VirtualAccountFilter {
    pub reference_id: Option<String>,
    pub currency: Option<String>,
    pub settlement_balance_id: Option<Uuid>,
    pub status: Option<types::VirtualAccountStatus>,
    /// A substring, in any case, of the account name, account number or bank name.
    pub search: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NotificationFilter {
    pub endpoint_id: Option<Uuid>,
    pub created_from: Option<DateTime<Utc>>,
    pub created_before: Option<DateTime<Utc>>,
}

/// A webhook endpoint with its signing secret (which the API shows only at creation and
/// rotation).
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointRecord {
    pub endpoint: types::WebhookEndpoint,
    pub secret: String,
}

/// What the simulated rails still have to move: accounts to activate, payments to advance.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OnRails {
    pub initiated_accounts: Vec<(TenantId, types::VirtualAccount)>,
    pub initiated_payments: Vec<(TenantId, types::Transaction)>,
    pub processing_payments: Vec<(TenantId, types::Transaction)>,
}

/// One notification to post, as claimed from the outbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub notification: Uuid,
    pub endpoint: Uuid,
    pub url: String,
    pub secret: String,
    /// Attempts made before this one: the `X-Service-Retry-Count` to send.
    pub retry_count: i64,
    /// The exact body to post and sign: `{"id","event","created","data"}`.
    pub body: String,
}

/// What [`crate::Store::prune`] deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pruned {
    pub notifications: u64,
    pub events: u64,
}

/// The tables retention prunes, in the order it prunes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prunable {
    Notifications,
    Events,
}

impl Pruned {
    pub fn add(&mut self, table: Prunable, deleted: u64) {
        match table {
            Prunable::Notifications => self.notifications += deleted,
            Prunable::Events => self.events += deleted,
        }
    }
}

/// A claim on an endpoint's next due notification, made with the record of an attempt (see
/// [`crate::Store::record_attempt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextClaim {
    pub endpoint: Uuid,
    /// Due means due at this instant.
    pub now: DateTime<Utc>,
    /// The claim's lease, as [`crate::Store::claim`] takes it.
    pub lease_until: DateTime<Utc>,
}

/// What became of one attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// The receiver answered `2xx` (the status).
    Delivered { response_code: u16 },
    /// It answered something else (the status), or nothing (`None`): try again at `retry_at`,
    /// unless `max_retries` redeliveries have failed already, then discard it.
    Failed { response_code: Option<u16>, retry_at: DateTime<Utc>, max_retries: i64 },
}

/// One change of a write (resources boxed: a changeset is mostly small changes). A [`Changeset`] is applied whole or not at all, in one database
/// transaction, and every change in it concerns the changeset's tenant only.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    OpenBalance {
        id: Uuid,
        currency: String,
        name: String,
    },
    RenameBalance {
        id: Uuid,
        name: String,
    },
    /// Adds `delta` to a balance, with its ledger entry. A debit (`delta < 0`) that the balance
    /// does not cover fails the changeset with [`crate::StoreError::InsufficientFunds`].
    Post {
        balance: Uuid,
        transaction: Uuid,
        kind: LedgerEntryKind,
        delta: i64,
    },
    InsertRecipient(Box<types::Recipient>),
    SetRecipientAlias {
        id: Uuid,
        alias: Option<String>,
    },
    DeleteRecipient {
        id: Uuid,
    },
    /// Fails with [`crate::StoreError::Duplicate`] when the `reference_id` is taken.
    InsertPaymentRequest {
        request: Box<types::PaymentRequest>,
        idempotency: Option<Idempotency>,
    },
    /// Fails with [`crate::StoreError::Stale`] unless the request is `from` when applied (and,
    /// with `paid`, has no amount or that amount).
    SetPaymentRequestStatus {
        id: Uuid,
        from: types::PaymentRequestStatus,
        to: types::PaymentRequestStatus,
        /// The amount paid, recorded on an open request.
        paid: Option<types::Amount>,
    },
    /// Fails with [`crate::StoreError::Duplicate`] when the `order_id` is taken.
    InsertTransaction {
        transaction: Box<types::Transaction>,
        idempotency: Option<Idempotency>,
    },
    /// Fails with [`crate::StoreError::Stale`] unless the transaction is `from` when applied.
    SetTransactionStatus {
        id: Uuid,
        from: types::TransactionStatus,
        to: types::TransactionStatus,
        failure_reason: Option<String>,
    },
    /// Fails with [`crate::StoreError::Duplicate`] when the `reference_id` or the account number
    /// is taken.
    InsertVirtualAccount {
        account: Box<types::VirtualAccount>,
        idempotency: Option<Idempotency>,
    },
    /// Fails with [`crate::StoreError::Stale`] unless the account is `from` when applied.
    SetVirtualAccountStatus {
        id: Uuid,
        from: types::VirtualAccountStatus,
        to: types::VirtualAccountStatus,
    },
    RenameVirtualAccount {
        id: Uuid,
        name: String,
    },
    /// Changes nothing; fails with [`crate::StoreError::Stale`] unless the account is `status`
    /// when applied (a deposit is kept only if its account is still active).
    ExpectVirtualAccountStatus {
        id: Uuid,
        status: types::VirtualAccountStatus,
    },
    InsertWebhookEndpoint {
        endpoint: Box<types::WebhookEndpoint>,
        secret: String,
    },
    /// Deletes the endpoint and discards what was still to be delivered to it.
    DeleteWebhookEndpoint {
        id: Uuid,
    },
    SetWebhookSecret {
        id: Uuid,
        secret: String,
    },
    /// Records an event: a notification for every endpoint of the tenant subscribed to it, due
    /// at once. `data` is the resource's JSON at that moment.
    Event {
        event: types::WebhookEvent,
        data: String,
    },
    /// A `ping` notification `id` for one endpoint, due at once.
    Ping {
        id: Uuid,
        endpoint: Uuid,
        data: String,
    },
}

/// The changes of one write, all for one tenant, made at one instant.
#[derive(Debug, Clone, PartialEq)]
pub struct Changeset {
    pub tenant: TenantId,
    pub now: DateTime<Utc>,
    pub changes: Vec<Change>,
}

impl Changeset {
    pub fn new(tenant: TenantId, now: DateTime<Utc>) -> Self {
        Self { tenant, now, changes: Vec::new() }
    }

    pub fn push(&mut self, change: Change) -> &mut Self {
        self.changes.push(change);
        self
    }

    pub fn with(mut self, change: Change) -> Self {
        self.changes.push(change);
        self
    }
}
