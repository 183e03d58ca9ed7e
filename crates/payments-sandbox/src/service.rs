//! The operations: the generated [`Api`] trait implemented over the [`Store`]. Each operation is
//! one database transaction (see `store`), so a refused request changes nothing and every change
//! is recorded with its event and, for money, its ledger entries.

use std::num::NonZeroU32;
use std::sync::Arc;

use chrono::{DateTime, SubsecRound, Utc};
use payments_server::{self as server, ApiError};
use payments_types as types;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use types::{PaymentRequestStatus as PrStatus, TransactionStatus as TxStatus, VirtualAccountStatus as VaStatus};
use uuid::Uuid;

use crate::reference::{self, CurrencyInfo};
use crate::store::{Filter, Kind, Page, Store, Tx, db_error};
use crate::webhooks;

type Limiter = governor::DefaultKeyedRateLimiter<Uuid>;

/// The payments service. Cheap to clone; clones share the database.
#[derive(Clone)]
pub struct Sandbox {
    store: Store,
    /// Base of the pay links (`{public_url}/pay/{id}`).
    public_url: Arc<str>,
    limiter: Option<Arc<Limiter>>,
    webhook_policy: webhooks::TargetPolicy,
}

/// The caller, as its bearer token identifies it.
#[derive(Debug, Clone, Copy)]
pub struct Tenant {
    pub id: Uuid,
    pub default_currency: &'static CurrencyInfo,
}

impl Sandbox {
    pub fn new(store: Store, options: &crate::Options) -> Self {
        let limiter = options.rate_limit.map(|per_second: NonZeroU32| {
            let burst = per_second.saturating_mul(NonZeroU32::new(2).expect("2 is not zero"));
            Arc::new(governor::RateLimiter::keyed(governor::Quota::per_second(per_second).allow_burst(burst)))
        });
        Self {
            store,
            public_url: options.public_url.trim_end_matches('/').into(),
            limiter,
            webhook_policy: options.webhooks.policy,
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    pub fn payment_url(&self, id: Uuid) -> String {
        format!("{}/pay/{id}", self.public_url)
    }

    /// Runs `work` in one database transaction, with the operation's timestamp.
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Tx, Now) -> Result<T, ApiError> + Send + 'static,
    ) -> Result<T, ApiError> {
        self.store.run(move |tx| work(tx, Now::new())).await
    }
}

/// The instant of one operation, in the precision the API shows (milliseconds).
#[derive(Clone, Copy)]
pub struct Now(pub DateTime<Utc>);

impl Default for Now {
    fn default() -> Self {
        Self::new()
    }
}

impl Now {
    pub fn new() -> Self {
        Self(Utc::now().trunc_subsecs(3))
    }

    pub fn text(&self) -> String {
        self.0.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
    }
}

/// The SHA-256 of a token: tokens are stored only as this.
pub fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// A new random token, `sk_sandbox_` and 32 hex characters.
pub fn new_token() -> String {
    format!("sk_sandbox_{}", hex::encode(rand::random::<[u8; 16]>()))
}

/// Converts a value the service produced or already validated into its constrained type.
pub fn typed<T: std::str::FromStr>(value: &str) -> Result<T, ApiError>
where
    T::Err: std::fmt::Display,
{
    value.parse().map_err(|e| db_error(format!("{value:?}: {e}")))
}

fn checked_amount(value: i64) -> Result<types::Amount, ApiError> {
    u64::try_from(value)
        .ok()
        .and_then(|v| (v as u128 <= reference::MAX_AMOUNT).then_some(v))
        .and_then(types::Amount::new)
        .ok_or_else(|| ApiError::bad_request(format!("the converted amount {value} is outside 1..=100000000000")))
}

/// The filters of a list, from its optional query parameters: absent ones filter nothing.
#[derive(Default)]
struct Filters(Vec<Filter>);

impl Filters {
    /// `doc` field `path` equals `value`.
    fn equal(mut self, path: &str, value: Option<String>) -> Self {
        if let Some(value) = value {
            self.0.push(Filter::equals(path, value));
        }
        self
    }

    /// `needle` is a case-insensitive substring of one of the `doc` fields at `paths`.
    fn search(mut self, paths: &[&str], needle: Option<String>) -> Self {
        if let Some(needle) = needle {
            let condition = paths
                .iter()
                .map(|p| format!("contains_ci(json_extract(doc, '{p}'), ?)"))
                .collect::<Vec<_>>()
                .join(" OR ");
            self.0.push(Filter::sql(&format!("({condition})"), vec![needle.into(); paths.len()]));
        }
        self
    }

    /// Created in `[from, to)`.
    fn created(mut self, from: Option<DateTime<Utc>>, to: Option<DateTime<Utc>>) -> Self {
        if let Some(from) = from {
            self.0.push(Filter::sql("created_us >= ?", vec![from.timestamp_micros().into()]));
        }
        if let Some(to) = to {
            self.0.push(Filter::sql("created_us < ?", vec![to.timestamp_micros().into()]));
        }
        self
    }
}

/// A query parameter as the text stored in `doc`.
fn text(value: Option<impl std::fmt::Display>) -> Option<String> {
    value.map(|v| v.to_string())
}

fn page(limit: i32, starting_after: Option<Uuid>) -> Page {
    Page { limit, starting_after }
}

/// The canonical JSON of a create request, compared on a retry with the same idempotency key.
fn canonical<T: serde::Serialize>(body: &T) -> Result<String, ApiError> {
    serde_json::to_string(body).map_err(db_error)
}

/// `Some(original)` when `key` was used by the same request before, `409` when it was used by a
/// different one, `None` when it is new.
fn replay<T: DeserializeOwned>(
    tx: &Tx,
    kind: Kind,
    tenant: Uuid,
    field: &str,
    key: Option<&str>,
    request: &str,
) -> Result<Option<T>, ApiError> {
    let Some(key) = key else { return Ok(None) };
    match tx.find_by_idempotency_key::<T>(kind, tenant, key)? {
        Some((original, earlier)) if earlier == request => Ok(Some(original)),
        Some(_) => Err(ApiError::conflict(format!("{field} {key:?} was already used by a different request"))),
        None => Ok(None),
    }
}

// ---------------------------------------------------------------------------------------------
// Balances

fn load_balance(tx: &Tx, tenant: &Tenant, id: Uuid) -> Result<types::Balance, ApiError> {
    let balance = tx.get(Kind::Balance, tenant.id, id)?;
    with_amount(tx, tenant, balance)
}

fn with_amount(tx: &Tx, tenant: &Tenant, mut balance: types::Balance) -> Result<types::Balance, ApiError> {
    let held = tx.balance_amount(balance.id)?;
    let currency = reference::currency(&balance.currency.to_string()).ok_or_else(ApiError::internal)?;
    balance.balance = held;
    balance.default_currency = typed(tenant.default_currency.code)?;
    balance.default_currency_balance =
        i64::try_from(reference::value_in(held as u128, currency, tenant.default_currency)).map_err(db_error)?;
    Ok(balance)
}

/// A GBP balance's own UK account, derived from its id so it never changes.
fn local_address(id: Uuid, name: &str) -> types::BalanceAddress {
    let number = reference::fnv1a(id.as_bytes()) % 100_000_000;
    types::BalanceAddress {
        active: true,
        details: types::AddressDetails {
            account_name: name.into(),
            account_number: format!("{number:08}"),
            sort_code: "040004".into(),
        },
        supported_channels: vec!["FP".into(), "BACS".into(), "CHAPS".into()],
        type_: types::AddressType::Local,
    }
}

/// The settlement balance of a payment request or virtual account: the one given, or the
/// oldest in `currency`; when both are given they must agree.
fn settlement_balance(
    tx: &Tx,
    tenant: &Tenant,
    currency: Option<&types::CurrencyCode>,
    balance_id: Option<Uuid>,
) -> Result<types::Balance, ApiError> {
    match (currency, balance_id) {
        (None, None) => Err(ApiError::bad_request("give currency, settlement_balance_id, or both")),
        (currency, Some(id)) => {
            let balance: types::Balance = tx
                .find(Kind::Balance, tenant.id, id)?
                .ok_or_else(|| ApiError::not_found(format!("settlement_balance_id: balance {id}")))?;
            if let Some(currency) = currency.filter(|c| **c != balance.currency) {
                return Err(ApiError::bad_request(format!(
                    "currency {} does not match settlement balance {id}, which holds {}",
                    currency.as_str(),
                    balance.currency.as_str()
                )));
            }
            Ok(balance)
        }
        (Some(currency), None) => {
            reference::supported_currency("currency", currency)?;
            let oldest = tx.ids_where(Kind::Balance, Some(tenant.id), "$.currency", currency)?;
            let (_, id) = oldest.first().copied().ok_or_else(|| {
                ApiError::bad_request(format!(
                    "you have no {} balance: open one with POST /balances",
                    currency.as_str()
                ))
            })?;
            tx.get(Kind::Balance, tenant.id, id)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Payment requests

/// The payer pays (or fails to pay) an `initiated` request: what the hosted page's button and
/// `POST /sandbox/paymentrequests/{id}/pay` do.
pub fn pay(
    tx: &Tx,
    now: Now,
    tenant: Uuid,
    id: Uuid,
    succeeded: bool,
    payer_name: Option<String>,
) -> Result<types::PaymentRequest, ApiError> {
    let mut request: types::PaymentRequest = tx.get(Kind::PaymentRequest, tenant, id)?;
    if request.status != PrStatus::Initiated {
        return Err(ApiError::conflict(format!(
            "payment request {id} is {}; only an initiated request can be paid",
            request.status
        )));
    }
    if !succeeded {
        request.status = PrStatus::Failed;
        tx.update(Kind::PaymentRequest, id, &request)?;
        tx.record_event(tenant, "paymentrequest.failed", id, &now.text(), &request)?;
        return Ok(request);
    }
    request.status = PrStatus::Processed;
    tx.update(Kind::PaymentRequest, id, &request)?;
    tx.record_event(tenant, "paymentrequest.processed", id, &now.text(), &request)?;
    let collection = Incoming {
        transaction_type: types::TransactionType::Collection,
        payment_method: types::PaymentMethod::PaymentLink,
        amount: request.amount.clone(),
        currency: request.currency.clone(),
        balance_id: request.settlement_balance_id,
        virtual_account_id: None,
        payer_name,
        reference: request.reference.as_ref().map(|r| r.to_string()),
    };
    receive(tx, now, tenant, collection)?;
    tx.record_event(tenant, "paymentrequest.settled", id, &now.text(), &request)?;
    Ok(request)
}

// ---------------------------------------------------------------------------------------------
// Transactions

/// Money arriving in a balance: a collection (a paid payment request) or a deposit (a transfer
/// to a virtual account). Processed at once, free.
struct Incoming {
    transaction_type: types::TransactionType,
    payment_method: types::PaymentMethod,
    amount: types::Amount,
    currency: types::CurrencyCode,
    balance_id: Uuid,
    virtual_account_id: Option<Uuid>,
    payer_name: Option<String>,
    reference: Option<String>,
}

/// Records `incoming` as a `processed` transaction and credits its balance.
fn receive(tx: &Tx, now: Now, tenant: Uuid, incoming: Incoming) -> Result<types::Transaction, ApiError> {
    let transaction = types::Transaction {
        id: Uuid::new_v4(),
        amount: incoming.amount.clone(),
        fees: 0,
        currency: incoming.currency.clone(),
        to_amount: incoming.amount.clone(),
        to_currency: incoming.currency,
        balance_id: incoming.balance_id,
        virtual_account_id: incoming.virtual_account_id,
        order_id: None,
        payment_reference: incoming.reference.as_deref().map(typed).transpose()?,
        status: TxStatus::Processed,
        failure_reason: None,
        transaction_type: incoming.transaction_type,
        payment_method: incoming.payment_method,
        recipient: None,
        payer_name: Some(incoming.payer_name.unwrap_or_else(|| "Sandbox Payer".into())),
        exchange_rate: None,
        reference: incoming.reference.as_deref().map(typed).transpose()?,
        created: now.0,
    };
    tx.insert(Kind::Transaction, tenant, transaction.id, now.0, None, &transaction)?;
    let credit = i64::try_from(incoming.amount.get()).map_err(db_error)?;
    let entry = if incoming.transaction_type == types::TransactionType::Deposit { "deposit" } else { "collection" };
    tx.post(transaction.balance_id, transaction.id, entry, credit, &now.text())?;
    Ok(transaction)
}

/// Whether the rail may move a payment from `from` to `to` (the table under *Transactions*).
fn transition_allowed(from: TxStatus, to: TxStatus) -> bool {
    use TxStatus::*;
    matches!(
        (from, to),
        (Initiated, Processing | Pending | Cancelled)
            | (Pending, Processing | Cancelled)
            | (Processing, Processed | Failed)
            | (Processed, Refunded)
    )
}

/// Moves a payment to `to`, returning amount and fees to the balance when it failed, was
/// cancelled or refunded, and records the event.
fn move_payment(
    tx: &Tx,
    now: Now,
    tenant: Uuid,
    mut payment: types::Transaction,
    to: TxStatus,
    failure_reason: Option<String>,
) -> Result<types::Transaction, ApiError> {
    if payment.transaction_type != types::TransactionType::Payment {
        return Err(ApiError::conflict(format!(
            "transaction {} is a {}; only payments change status",
            payment.id, payment.transaction_type
        )));
    }
    if !transition_allowed(payment.status, to) {
        return Err(ApiError::conflict(format!(
            "transaction {} is {} and cannot become {to}",
            payment.id, payment.status
        )));
    }
    payment.status = to;
    payment.failure_reason = failure_reason;
    if matches!(to, TxStatus::Failed | TxStatus::Cancelled | TxStatus::Refunded) {
        let returned = i64::try_from(payment.amount.get()).map_err(db_error)?;
        tx.post(payment.balance_id, payment.id, "refund", returned, &now.text())?;
        if payment.fees > 0 {
            tx.post(payment.balance_id, payment.id, "fee refund", payment.fees, &now.text())?;
        }
    }
    tx.update(Kind::Transaction, payment.id, &payment)?;
    tx.record_event(tenant, &format!("transaction.{to}"), payment.id, &now.text(), &payment)?;
    Ok(payment)
}

/// What the rails do with time, at once: `initiated` virtual accounts become `active`;
/// `initiated` payments move to `processing` and `processing` ones to `processed` (one step each).
/// `tenant` `None` advances everyone's (the background rail).
pub fn advance(tx: &Tx, now: Now, tenant: Option<Uuid>) -> Result<types::SandboxAdvance, ApiError> {
    let mut activated = 0;
    for (owner, id) in tx.ids_where(Kind::VirtualAccount, tenant, "$.status", "initiated")? {
        let account: types::VirtualAccount = tx.get(Kind::VirtualAccount, owner, id)?;
        set_account_status(tx, now, owner, account, VaStatus::Active)?;
        activated += 1;
    }
    let mut advanced = 0;
    let processing = tx.ids_where(Kind::Transaction, tenant, "$.status", "processing")?;
    let initiated = tx.ids_where(Kind::Transaction, tenant, "$.status", "initiated")?;
    for ((owner, id), to) in processing
        .into_iter()
        .map(|p| (p, TxStatus::Processed))
        .chain(initiated.into_iter().map(|p| (p, TxStatus::Processing)))
    {
        let payment: types::Transaction = tx.get(Kind::Transaction, owner, id)?;
        if payment.transaction_type == types::TransactionType::Payment {
            move_payment(tx, now, owner, payment, to, None)?;
            advanced += 1;
        }
    }
    Ok(types::SandboxAdvance { virtual_accounts_activated: activated, transactions_advanced: advanced })
}

// ---------------------------------------------------------------------------------------------
// Virtual accounts

fn account_transition_allowed(from: VaStatus, to: VaStatus) -> bool {
    use VaStatus::*;
    matches!((from, to), (Initiated, Active | Closed) | (Active, Blocked | Closed) | (Blocked, Active | Closed))
}

fn set_account_status(
    tx: &Tx,
    now: Now,
    tenant: Uuid,
    mut account: types::VirtualAccount,
    to: VaStatus,
) -> Result<types::VirtualAccount, ApiError> {
    if !account_transition_allowed(account.status, to) {
        return Err(ApiError::conflict(format!(
            "virtual account {} is {} and cannot become {to}",
            account.id, account.status
        )));
    }
    account.status = to;
    tx.update(Kind::VirtualAccount, account.id, &account)?;
    tx.record_event(tenant, &format!("virtualaccount.{to}"), account.id, &now.text(), &account)?;
    Ok(account)
}

/// Bank details for a new virtual account in `currency`, unique among all accounts.
fn issue_account_details(
    tx: &Tx,
    currency: &str,
    name: &str,
) -> Result<(types::AccountDetails, Vec<String>), ApiError> {
    let (bank, prefix, digits, channels): (&str, &str, u32, &[&str]) = match currency {
        "NGN" => ("Sandbox Bank Nigeria", "99", 8, &["NIP"]),
        "INR" => ("Sandbox Bank India", "7700", 10, &["NEFT", "RTGS", "IMPS"]),
        _ => return Err(ApiError::internal()),
    };
    loop {
        let number = format!("{prefix}{:0width$}", rand::random_range(0..10u64.pow(digits)), width = digits as usize);
        if tx.ids_where(Kind::VirtualAccount, None, "$.details.account_number", &number)?.is_empty() {
            let details =
                types::AccountDetails { bank_name: bank.into(), account_name: name.into(), account_number: number };
            return Ok((details, channels.iter().map(|c| (*c).to_owned()).collect()));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The operations

impl server::Api for Sandbox {
    type Principal = Tenant;

    async fn authenticate(&self, token: &str) -> Result<Tenant, ApiError> {
        let hash = token_hash(token);
        let found = self.store.run(move |tx| tx.tenant_by_token_hash(&hash)).await?;
        let (stored, id, default_currency) = found.ok_or_else(ApiError::unauthorized)?;
        if !bool::from(stored.as_slice().ct_eq(&hash)) {
            return Err(ApiError::unauthorized());
        }
        let tenant = Tenant {
            id: id.parse().map_err(db_error)?,
            default_currency: reference::currency(&default_currency).ok_or_else(ApiError::internal)?,
        };
        if let Some(limiter) = &self.limiter
            && let Err(not_until) = limiter.check_key(&tenant.id)
        {
            use governor::clock::Clock;
            let wait = not_until.wait_time_from(governor::clock::DefaultClock::default().now());
            return Err(ApiError::too_many_requests(wait.as_secs_f64().ceil().max(1.0) as u64));
        }
        Ok(tenant)
    }

    // -- balances ---------------------------------------------------------------------------

    async fn list_balances(
        &self,
        tenant: Tenant,
        query: server::ListBalancesQuery,
    ) -> Result<Vec<types::Balance>, ApiError> {
        self.run(move |tx, _| {
            let filters = Filters::default().equal("$.currency", text(query.currency.as_deref())).0;
            let balances: Vec<types::Balance> =
                tx.list(Kind::Balance, tenant.id, filters, &page(query.limit, query.starting_after))?;
            balances.into_iter().map(|b| with_amount(tx, &tenant, b)).collect()
        })
        .await
    }

    async fn create_balance(&self, tenant: Tenant, body: types::BalanceCreate) -> Result<types::Balance, ApiError> {
        self.run(move |tx, now| {
            let currency = reference::supported_currency("currency", &body.currency)?;
            let name = body.name.map_or_else(|| format!("{} balance", currency.code), |n| n.to_string());
            let id = Uuid::new_v4();
            let addresses = if currency.code == "GBP" { vec![local_address(id, &name)] } else { vec![] };
            let balance = types::Balance {
                id,
                name: typed(&name)?,
                currency: body.currency,
                balance: 0,
                default_currency: typed(tenant.default_currency.code)?,
                default_currency_balance: 0,
                addresses,
                created: now.0,
            };
            tx.insert(Kind::Balance, tenant.id, id, now.0, None, &balance)?;
            tx.open_balance(id)?;
            with_amount(tx, &tenant, balance)
        })
        .await
    }

    async fn get_balance(&self, tenant: Tenant, id: Uuid) -> Result<types::Balance, ApiError> {
        self.run(move |tx, _| load_balance(tx, &tenant, id)).await
    }

    async fn update_balance(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::BalanceUpdate,
    ) -> Result<types::Balance, ApiError> {
        self.run(move |tx, _| {
            let mut balance: types::Balance = tx.get(Kind::Balance, tenant.id, id)?;
            balance.name = typed(&body.name)?;
            for address in &mut balance.addresses {
                address.details.account_name = body.name.to_string();
            }
            tx.update(Kind::Balance, id, &balance)?;
            with_amount(tx, &tenant, balance)
        })
        .await
    }

    // -- reference data ---------------------------------------------------------------------

    async fn list_bank_fields(
        &self,
        _: Tenant,
        query: server::ListBankFieldsQuery,
    ) -> Result<Vec<types::BankField>, ApiError> {
        reference::bank_fields(&query.country, &query.currency)
    }

    async fn list_countries(&self, _: Tenant) -> Result<Vec<types::Country>, ApiError> {
        Ok(reference::countries())
    }

    async fn list_currencies(&self, _: Tenant) -> Result<Vec<types::Currency>, ApiError> {
        Ok(reference::currencies())
    }

    // -- payment requests -------------------------------------------------------------------

    async fn list_payment_requests(
        &self,
        tenant: Tenant,
        query: server::ListPaymentRequestsQuery,
    ) -> Result<Vec<types::PaymentRequest>, ApiError> {
        self.run(move |tx, _| {
            let filters = Filters::default()
                .equal("$.reference_id", text(query.reference_id.as_deref()))
                .equal("$.currency", text(query.currency.as_deref()))
                .equal("$.settlement_balance_id", text(query.settlement_balance_id))
                .equal("$.status", text(query.status))
                .0;
            tx.list(Kind::PaymentRequest, tenant.id, filters, &page(query.limit, query.starting_after))
        })
        .await
    }

    async fn create_payment_request(
        &self,
        tenant: Tenant,
        body: types::PaymentRequestCreate,
    ) -> Result<types::PaymentRequest, ApiError> {
        let this = self.clone();
        self.run(move |tx, now| {
            let request_json = canonical(&body)?;
            let key = body.reference_id.as_ref().map(|r| r.to_string());
            if let Some(original) =
                replay(tx, Kind::PaymentRequest, tenant.id, "reference_id", key.as_deref(), &request_json)?
            {
                return Ok(original);
            }
            let balance = settlement_balance(tx, &tenant, body.currency.as_ref(), body.settlement_balance_id)?;
            let currency = reference::supported_currency("currency", &balance.currency)?;
            let market = currency.payment_request_market.ok_or_else(|| {
                ApiError::bad_request(format!(
                    "currency {} does not support payment requests (see GET /currencies)",
                    currency.code
                ))
            })?;
            if let Some(url) = &body.return_url
                && !(url.starts_with("https://") || url.starts_with("http://"))
            {
                return Err(ApiError::bad_request("return_url must be an http or https URL"));
            }
            let id = Uuid::new_v4();
            let payment_url = this.payment_url(id);
            let request = types::PaymentRequest {
                id,
                market: typed(market)?,
                currency: balance.currency.clone(),
                amount: body.amount,
                settlement_balance_id: balance.id,
                reference_id: key.as_deref().map(typed).transpose()?,
                reference: body.reference.as_ref().map(|r| typed(r)).transpose()?,
                status: PrStatus::Initiated,
                qr_code_url: format!("{payment_url}/qr.svg"),
                payment_url,
                return_url: body.return_url.as_ref().map(|u| u.to_string()),
                created: now.0,
            };
            let idempotency = key.as_deref().map(|k| (k, request_json.as_str()));
            tx.insert(Kind::PaymentRequest, tenant.id, id, now.0, idempotency, &request)?;
            tx.record_event(tenant.id, "paymentrequest.initiated", id, &now.text(), &request)?;
            Ok(request)
        })
        .await
    }

    async fn get_payment_request(&self, tenant: Tenant, id: Uuid) -> Result<types::PaymentRequest, ApiError> {
        self.run(move |tx, _| tx.get(Kind::PaymentRequest, tenant.id, id)).await
    }

    async fn cancel_payment_request(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk, ApiError> {
        self.run(move |tx, now| {
            let mut request: types::PaymentRequest = tx.get(Kind::PaymentRequest, tenant.id, id)?;
            if request.status != PrStatus::Initiated {
                return Err(ApiError::conflict(format!(
                    "payment request {id} is {}; only an initiated request can be cancelled",
                    request.status
                )));
            }
            request.status = PrStatus::Cancelled;
            tx.update(Kind::PaymentRequest, id, &request)?;
            tx.record_event(tenant.id, "paymentrequest.cancelled", id, &now.text(), &request)?;
            Ok(ok())
        })
        .await
    }

    // -- recipients -------------------------------------------------------------------------

    async fn list_recipients(
        &self,
        tenant: Tenant,
        query: server::ListRecipientsQuery,
    ) -> Result<Vec<types::Recipient>, ApiError> {
        self.run(move |tx, _| tx.list(Kind::Recipient, tenant.id, vec![], &page(query.limit, query.starting_after)))
            .await
    }

    async fn create_recipient(
        &self,
        tenant: Tenant,
        body: types::RecipientCreate,
    ) -> Result<types::Recipient, ApiError> {
        self.run(move |tx, now| {
            let checked = reference::check_bank_account(&body.country, &body.bank_account, true)?;
            let recipient = types::Recipient {
                id: Uuid::new_v4(),
                country: body.country,
                default_reference: body.default_reference.as_ref().map(|r| typed(r)).transpose()?,
                alias: body.alias.as_ref().map(|a| typed(a)).transpose()?,
                type_: body.type_,
                created: now.0,
                bank_account: checked.bank_account,
            };
            tx.insert(Kind::Recipient, tenant.id, recipient.id, now.0, None, &recipient)?;
            tx.record_event(tenant.id, "recipient.created", recipient.id, &now.text(), &recipient)?;
            Ok(recipient)
        })
        .await
    }

    async fn validate_recipient(
        &self,
        _: Tenant,
        body: types::RecipientValidate,
    ) -> Result<types::RecipientValidation, ApiError> {
        let checked = reference::check_bank_account(&body.country, &body.bank_account, false)?;
        let given = body.bank_account.account_name.as_ref().map(|n| n.trim().to_owned());
        Ok(types::RecipientValidation {
            bank_name: checked.bank_name,
            bank_id: checked.bank_id,
            account_name: checked.resolved_name.or(given),
            account_number: checked.account_number,
            currency: body.bank_account.currency,
        })
    }

    async fn get_recipient(&self, tenant: Tenant, id: Uuid) -> Result<types::Recipient, ApiError> {
        self.run(move |tx, _| tx.get(Kind::Recipient, tenant.id, id)).await
    }

    async fn delete_recipient(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk, ApiError> {
        self.run(move |tx, now| {
            let recipient: types::Recipient = tx.get(Kind::Recipient, tenant.id, id)?;
            tx.mark_deleted(Kind::Recipient, id)?;
            tx.record_event(tenant.id, "recipient.deleted", id, &now.text(), &recipient)?;
            Ok(ok())
        })
        .await
    }

    async fn update_recipient(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::RecipientUpdate,
    ) -> Result<types::Recipient, ApiError> {
        self.run(move |tx, _| {
            let mut recipient: types::Recipient = tx.get(Kind::Recipient, tenant.id, id)?;
            recipient.alias = body.alias.as_ref().map(|a| typed(a)).transpose()?;
            tx.update(Kind::Recipient, id, &recipient)?;
            Ok(recipient)
        })
        .await
    }

    // -- sandbox controls -------------------------------------------------------------------

    async fn advance_sandbox(&self, tenant: Tenant) -> Result<types::SandboxAdvance, ApiError> {
        self.run(move |tx, now| advance(tx, now, Some(tenant.id))).await
    }

    async fn simulate_payment(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: Option<types::SimulatePayment>,
    ) -> Result<types::PaymentRequest, ApiError> {
        self.run(move |tx, now| {
            let body = body.unwrap_or_default();
            let succeeded = body.outcome == types::SimulatePaymentOutcome::Processed;
            pay(tx, now, tenant.id, id, succeeded, body.payer_name.map(|n| n.to_string()))
        })
        .await
    }

    async fn simulate_transaction_status(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::SimulateTransactionStatus,
    ) -> Result<types::Transaction, ApiError> {
        self.run(move |tx, now| {
            let to: TxStatus = typed(&body.status.to_string())?;
            let reason = body.failure_reason.map(|r| r.to_string());
            match (to, &reason) {
                (TxStatus::Failed, None) => {
                    return Err(ApiError::bad_request("failure_reason is required with status failed"));
                }
                (TxStatus::Failed, Some(_)) | (_, None) => {}
                (_, Some(_)) => return Err(ApiError::bad_request("failure_reason is only allowed with status failed")),
            }
            let payment = tx.get(Kind::Transaction, tenant.id, id)?;
            move_payment(tx, now, tenant.id, payment, to, reason)
        })
        .await
    }

    async fn simulate_virtual_account_status(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::SimulateVirtualAccountStatus,
    ) -> Result<types::VirtualAccount, ApiError> {
        self.run(move |tx, now| {
            let account = tx.get(Kind::VirtualAccount, tenant.id, id)?;
            set_account_status(tx, now, tenant.id, account, typed(&body.status.to_string())?)
        })
        .await
    }

    async fn simulate_inbound_transfer(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::SimulateInboundTransfer,
    ) -> Result<types::Transaction, ApiError> {
        self.run(move |tx, now| {
            let account: types::VirtualAccount = tx.get(Kind::VirtualAccount, tenant.id, id)?;
            if account.status != VaStatus::Active {
                return Err(ApiError::conflict(format!(
                    "virtual account {id} is {}; the bank returns transfers to it",
                    account.status
                )));
            }
            let deposit = receive(
                tx,
                now,
                tenant.id,
                Incoming {
                    transaction_type: types::TransactionType::Deposit,
                    payment_method: types::PaymentMethod::BankTransfer,
                    amount: body.amount,
                    currency: account.currency.clone(),
                    balance_id: account.settlement_balance_id,
                    virtual_account_id: Some(id),
                    payer_name: body.payer_name.map(|n| n.to_string()),
                    reference: body.reference.map(|r| r.to_string()),
                },
            )?;
            tx.record_event(tenant.id, "transaction.processed", deposit.id, &now.text(), &deposit)?;
            Ok(deposit)
        })
        .await
    }

    // -- transactions -----------------------------------------------------------------------

    async fn list_transactions(
        &self,
        tenant: Tenant,
        query: server::ListTransactionsQuery,
    ) -> Result<Vec<types::Transaction>, ApiError> {
        self.run(move |tx, _| {
            let mut filters = Filters::default()
                .equal("$.order_id", text(query.order_id.as_deref()))
                .equal("$.recipient.id", text(query.recipient_id))
                .equal("$.recipient.country", text(query.recipient_country.as_deref()))
                .equal("$.balance_id", text(query.balance_id))
                .equal("$.virtual_account_id", text(query.virtual_account_id))
                .equal("$.transaction_type", text(query.transaction_type))
                .equal("$.currency", text(query.currency.as_deref()))
                .equal("$.to_currency", text(query.to_currency.as_deref()))
                .equal("$.status", text(query.status))
                .created(query.from_datetime, query.to_datetime)
                .search(
                    &[
                        "$.reference",
                        "$.payment_reference",
                        "$.order_id",
                        "$.payer_name",
                        "$.recipient.bank_account.account_name",
                        "$.recipient.alias",
                    ],
                    text(query.search.as_deref()),
                )
                .0;
            if query.scheduled_payment_id.is_some() {
                // Scheduled payments are not offered, so no transaction was made by one.
                filters.push(Filter::sql("0", vec![]));
            }
            tx.list(Kind::Transaction, tenant.id, filters, &page(query.limit, query.starting_after))
        })
        .await
    }

    async fn create_transaction(
        &self,
        tenant: Tenant,
        body: types::TransactionCreate,
    ) -> Result<types::Transaction, ApiError> {
        self.run(move |tx, now| {
            let request_json = canonical(&body)?;
            let key = body.order_id.as_ref().map(|o| o.to_string());
            if let Some(original) = replay(tx, Kind::Transaction, tenant.id, "order_id", key.as_deref(), &request_json)? {
                return Ok(original);
            }
            let balance: types::Balance = tx
                .find(Kind::Balance, tenant.id, body.balance_id)?
                .ok_or_else(|| ApiError::not_found(format!("balance_id: balance {}", body.balance_id)))?;
            let recipient: types::Recipient = tx
                .find(Kind::Recipient, tenant.id, body.recipient_id)?
                .ok_or_else(|| ApiError::not_found(format!("recipient_id: recipient {}", body.recipient_id)))?;
            let from = reference::supported_currency("balance", &balance.currency)?;
            let to = reference::supported_currency("recipient", &recipient.bank_account.currency)?;
            let (amount, to_amount, exchange_rate) = if from.code == to.code {
                let amount = match (body.amount, body.to_amount) {
                    (Some(a), None) | (None, Some(a)) => a,
                    _ => return Err(ApiError::bad_request("give exactly one of amount and to_amount")),
                };
                (amount.clone(), amount, None)
            } else {
                if !from.exchange_from {
                    return Err(ApiError::bad_request(format!(
                        "{} balances cannot pay in other currencies (exchange_from is false); the recipient is paid in {}",
                        from.code, to.code
                    )));
                }
                let single = reference::mid_rate(from, to);
                let rate = reference::customer_rate(single);
                let (amount, to_amount) = match (body.amount, body.to_amount) {
                    (Some(a), None) => (u128::from(a.get()), reference::convert(u128::from(a.get()), rate, from, to)),
                    (None, Some(t)) => (reference::amount_for(u128::from(t.get()), rate, from, to), u128::from(t.get())),
                    _ => return Err(ApiError::bad_request("give exactly one of amount and to_amount")),
                };
                if to_amount == 0 {
                    return Err(ApiError::bad_request(format!("amount is too small to convert into {}", to.code)));
                }
                let exchange_rate = types::ExchangeRate {
                    rate: u64::try_from(rate).ok().and_then(std::num::NonZeroU64::new).ok_or_else(ApiError::internal)?,
                    single_rate: u64::try_from(single).ok().and_then(std::num::NonZeroU64::new).ok_or_else(ApiError::internal)?,
                };
                let to_i64 = |v: u128| i64::try_from(v).map_err(|_| ApiError::bad_request("amount is too large"));
                (checked_amount(to_i64(amount)?)?, checked_amount(to_i64(to_amount)?)?, Some(exchange_rate))
            };
            let reference = body.reference.as_ref().map(|r| r.to_string());
            let payment_reference = reference.clone().or_else(|| recipient.default_reference.as_ref().map(|r| r.to_string()));
            let payment = types::Transaction {
                id: Uuid::new_v4(),
                amount: amount.clone(),
                fees: from.payment_fee,
                currency: balance.currency.clone(),
                to_amount,
                to_currency: recipient.bank_account.currency.clone(),
                balance_id: balance.id,
                virtual_account_id: None,
                order_id: key.as_deref().map(typed).transpose()?,
                payment_reference: payment_reference.as_deref().map(typed).transpose()?,
                status: TxStatus::Initiated,
                failure_reason: None,
                transaction_type: types::TransactionType::Payment,
                payment_method: types::PaymentMethod::Balance,
                recipient: Some(recipient),
                payer_name: None,
                exchange_rate,
                reference: reference.as_deref().map(typed).transpose()?,
                created: now.0,
            };
            let debit = i64::try_from(amount.get()).map_err(db_error)?;
            let total = debit + payment.fees;
            let held = tx.balance_amount(balance.id)?;
            if held < total {
                return Err(ApiError::bad_request(format!(
                    "insufficient funds: balance {} holds {held}, this payment needs {total} ({debit} plus {} fees)",
                    balance.id, payment.fees
                )));
            }
            let idempotency = key.as_deref().map(|k| (k, request_json.as_str()));
            tx.insert(Kind::Transaction, tenant.id, payment.id, now.0, idempotency, &payment)?;
            tx.post(balance.id, payment.id, "payment", -debit, &now.text())?;
            if payment.fees > 0 {
                tx.post(balance.id, payment.id, "fee", -payment.fees, &now.text())?;
            }
            tx.record_event(tenant.id, "transaction.initiated", payment.id, &now.text(), &payment)?;
            Ok(payment)
        })
        .await
    }

    async fn get_transaction(&self, tenant: Tenant, id: Uuid) -> Result<types::Transaction, ApiError> {
        self.run(move |tx, _| tx.get(Kind::Transaction, tenant.id, id)).await
    }

    // -- virtual accounts -------------------------------------------------------------------

    async fn list_virtual_accounts(
        &self,
        tenant: Tenant,
        query: server::ListVirtualAccountsQuery,
    ) -> Result<Vec<types::VirtualAccount>, ApiError> {
        self.run(move |tx, _| {
            let filters = Filters::default()
                .equal("$.reference_id", text(query.reference_id.as_deref()))
                .equal("$.currency", text(query.currency.as_deref()))
                .equal("$.settlement_balance_id", text(query.settlement_balance_id))
                .equal("$.status", text(query.status))
                .search(
                    &["$.account_name", "$.details.account_number", "$.details.bank_name"],
                    text(query.search.as_deref()),
                )
                .0;
            tx.list(Kind::VirtualAccount, tenant.id, filters, &page(query.limit, query.starting_after))
        })
        .await
    }

    async fn create_virtual_account(
        &self,
        tenant: Tenant,
        body: types::VirtualAccountCreate,
    ) -> Result<types::VirtualAccount, ApiError> {
        self.run(move |tx, now| {
            let request_json = canonical(&body)?;
            let key = body.reference_id.as_ref().map(|r| r.to_string());
            if let Some(original) =
                replay(tx, Kind::VirtualAccount, tenant.id, "reference_id", key.as_deref(), &request_json)?
            {
                return Ok(original);
            }
            let balance = settlement_balance(tx, &tenant, body.currency.as_ref(), body.settlement_balance_id)?;
            let currency = reference::supported_currency("currency", &balance.currency)?;
            if !currency.supports_virtual_account {
                return Err(ApiError::bad_request(format!(
                    "currency {} does not support virtual accounts (see GET /currencies)",
                    currency.code
                )));
            }
            let name = body.account_name.as_ref().map_or_else(|| balance.name.to_string(), |n| n.to_string());
            let (details, supported_channels) = issue_account_details(tx, currency.code, &name)?;
            let account = types::VirtualAccount {
                id: Uuid::new_v4(),
                account_name: typed(&name)?,
                currency: balance.currency.clone(),
                settlement_balance_id: balance.id,
                reference_id: key.as_deref().map(typed).transpose()?,
                details,
                type_: types::AddressType::Local,
                supported_channels,
                status: VaStatus::Initiated,
                created: now.0,
            };
            let idempotency = key.as_deref().map(|k| (k, request_json.as_str()));
            tx.insert(Kind::VirtualAccount, tenant.id, account.id, now.0, idempotency, &account)?;
            tx.record_event(tenant.id, "virtualaccount.initiated", account.id, &now.text(), &account)?;
            Ok(account)
        })
        .await
    }

    async fn get_virtual_account(&self, tenant: Tenant, id: Uuid) -> Result<types::VirtualAccount, ApiError> {
        self.run(move |tx, _| tx.get(Kind::VirtualAccount, tenant.id, id)).await
    }

    async fn close_virtual_account(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk, ApiError> {
        self.run(move |tx, now| {
            let account = tx.get(Kind::VirtualAccount, tenant.id, id)?;
            set_account_status(tx, now, tenant.id, account, VaStatus::Closed)?;
            Ok(ok())
        })
        .await
    }

    async fn update_virtual_account(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::VirtualAccountUpdate,
    ) -> Result<types::VirtualAccount, ApiError> {
        self.run(move |tx, _| {
            let mut account: types::VirtualAccount = tx.get(Kind::VirtualAccount, tenant.id, id)?;
            if account.status == VaStatus::Closed {
                return Err(ApiError::conflict(format!("virtual account {id} is closed")));
            }
            account.account_name = typed(&body.account_name)?;
            account.details.account_name = body.account_name.to_string();
            tx.update(Kind::VirtualAccount, id, &account)?;
            Ok(account)
        })
        .await
    }

    // -- webhook endpoints and notifications ------------------------------------------------

    async fn list_webhook_endpoints(
        &self,
        tenant: Tenant,
        query: server::ListWebhookEndpointsQuery,
    ) -> Result<Vec<types::WebhookEndpoint>, ApiError> {
        self.run(move |tx, _| webhooks::list_endpoints(tx, tenant.id, &page(query.limit, query.starting_after))).await
    }

    async fn create_webhook_endpoint(
        &self,
        tenant: Tenant,
        body: types::WebhookEndpointCreate,
    ) -> Result<types::WebhookEndpointWithSecret, ApiError> {
        let policy = self.webhook_policy;
        webhooks::check_resolution(&body.url, policy).await.map_err(ApiError::bad_request)?;
        self.run(move |tx, now| webhooks::create_endpoint(tx, now, tenant.id, body, policy)).await
    }

    async fn get_webhook_endpoint(&self, tenant: Tenant, id: Uuid) -> Result<types::WebhookEndpoint, ApiError> {
        self.run(move |tx, _| webhooks::get_endpoint(tx, tenant.id, id)).await
    }

    async fn delete_webhook_endpoint(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk, ApiError> {
        self.run(move |tx, _| webhooks::delete_endpoint(tx, tenant.id, id).map(|()| ok())).await
    }

    async fn rotate_webhook_endpoint_secret(
        &self,
        tenant: Tenant,
        id: Uuid,
    ) -> Result<types::WebhookEndpointWithSecret, ApiError> {
        self.run(move |tx, _| webhooks::rotate_secret(tx, tenant.id, id)).await
    }

    async fn list_webhooks(
        &self,
        tenant: Tenant,
        query: server::ListWebhooksQuery,
    ) -> Result<Vec<types::Webhook>, ApiError> {
        self.run(move |tx, _| webhooks::list_notifications(tx, tenant.id, &query)).await
    }

    async fn send_test_webhook(
        &self,
        tenant: Tenant,
        body: types::WebhookPing,
    ) -> Result<types::Notification, ApiError> {
        self.run(move |tx, now| webhooks::ping(tx, now, tenant.id, body.endpoint_id)).await
    }

    async fn get_webhook(&self, tenant: Tenant, id: Uuid) -> Result<types::Webhook, ApiError> {
        self.run(move |tx, _| webhooks::get_notification(tx, tenant.id, id)).await
    }
}

fn ok() -> types::ResultOk {
    types::ResultOk { result: types::ResultOkResult::Ok }
}
