//! The sandbox as the tests run it: in this process on an ephemeral port with a fresh database
//! of the test binary's backend (see `database`).

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use payments_client::{Client, types};
use payments_sandbox::{DeliveryOptions, Limits, Options, Server};
use uuid::Uuid;

pub use crate::database::{Backend, TestDatabase, assert_ledger_reconciles, backend};

pub const ALICE: &str = "tok_alice";
pub const BOB: &str = "tok_bob";

/// A sandbox served in this process. Dropping it stops the server; a directory it made for its
/// database goes with it.
pub struct TestSandbox {
    pub url: String,
    pub addr: SocketAddr,
    /// What `--database` would take: a file path or a `postgres://` URL.
    pub database: String,
    _database: Option<TestDatabase>,
    _shutdown: tokio::sync::oneshot::Sender<()>,
}

/// Options the tests start from: rails left to `POST /sandbox/advance`, no rate limit, the
/// connection limits of the command line's defaults.
pub fn test_options() -> Options {
    Options {
        public_url: String::new(),
        rate_limit: None,
        rail_interval: None,
        webhooks: DeliveryOptions::default(),
        limits: Limits::default(),
    }
}

/// A sandbox with tenants for [`ALICE`] and [`BOB`].
pub async fn start_sandbox() -> TestSandbox {
    start_sandbox_with(test_options()).await
}

pub async fn start_sandbox_with(options: Options) -> TestSandbox {
    let database = TestDatabase::fresh();
    let mut sandbox = start_sandbox_on(&database.location, options).await;
    sandbox._database = Some(database);
    sandbox
}

/// A sandbox on `database` (a file, created when missing, or a PostgreSQL URL), with tenants
/// for [`ALICE`] and [`BOB`] (made when missing).
pub async fn start_sandbox_on(database: &str, mut options: Options) -> TestSandbox {
    payments_client::install_crypto_provider();
    // The sandbox's logs in the test's output, as `RUST_LOG` asks (errors and warnings otherwise).
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into());
    let _ = tracing_subscriber::fmt().with_env_filter(filter).with_test_writer().try_init();
    let store = payments_sandbox::open_store(database).await.expect("the database opens");
    let listener = payments_sandbox::http::serve::listen(([127, 0, 0, 1], 0).into()).expect("an ephemeral port");
    let addr = listener.local_addr().expect("a bound address");
    let url = format!("http://{addr}");
    if options.public_url.is_empty() {
        options.public_url = url.clone();
    }
    let server = Server::new(store, options).expect("the sandbox starts");
    for token in [ALICE, BOB] {
        server.sandbox().ensure_tenant(token, "Test tenant").await.expect("a tenant");
    }
    let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(server.run(listener, async move {
        let _ = stop.await;
    }));
    TestSandbox { url, addr, database: database.to_owned(), _database: None, _shutdown: shutdown }
}

impl TestSandbox {
    pub fn client(&self, token: &str) -> Client {
        payments_client::with_token(&self.url, token)
    }
}

/// Status and message of an error response; panics on anything else.
pub fn client_error<T: std::fmt::Debug>(result: Result<T, payments_client::Error<types::Error>>) -> (u16, String) {
    match result {
        Err(payments_client::Error::ErrorResponse(response)) => {
            let status = response.status().as_u16();
            let body = response.into_inner();
            assert_eq!(body.request, types::ErrorRequest::Error);
            assert_eq!(i64::from(body.code), i64::from(status));
            (status, body.message)
        }
        other => panic!("expected an error response, got {other:?}"),
    }
}

/// Asserts an error response with `status` whose message mentions `needle`.
#[track_caller]
pub fn assert_refused<T: std::fmt::Debug>(
    result: Result<T, payments_client::Error<types::Error>>,
    status: u16,
    needle: &str,
) {
    let (got, message) = client_error(result);
    assert_eq!(got, status, "status; message {message:?}");
    assert!(message.to_lowercase().contains(&needle.to_lowercase()), "message {message:?} should mention {needle:?}");
}

pub fn code<T: std::str::FromStr>(value: &str) -> T
where
    T::Err: std::fmt::Debug,
{
    value.parse().expect("a valid value")
}

pub fn amount(value: u64) -> types::Amount {
    types::Amount::new(value).expect("a positive amount")
}

pub fn limit(value: u32) -> NonZeroU32 {
    NonZeroU32::new(value).expect("a positive limit")
}

pub async fn open_balance(client: &Client, currency: &str) -> types::Balance {
    client
        .create_balance()
        .body(types::BalanceCreate::builder().currency(code::<types::CurrencyCode>(currency)))
        .send()
        .await
        .expect("a balance")
        .into_inner()
}

/// Puts `value` into `balance` the way money arrives: a payment request, paid.
pub async fn fund(client: &Client, balance: &types::Balance, value: u64) {
    let request = client
        .create_payment_request()
        .body(types::PaymentRequestCreate::builder().amount(amount(value)).settlement_balance_id(Some(balance.id)))
        .send()
        .await
        .expect("a payment request")
        .into_inner();
    let paid = client.simulate_payment().id(request.id).send().await.expect("paid").into_inner();
    assert_eq!(paid.status, types::PaymentRequestStatus::Processed);
}

/// What most payments need first: a balance in `currency` holding `value`, and a recipient in
/// Britain to pay.
pub async fn funded_with_recipient(client: &Client, currency: &str, value: u64) -> (types::Balance, types::Recipient) {
    let balance = open_balance(client, currency).await;
    fund(client, &balance, value).await;
    (balance, gb_recipient(client).await)
}

pub async fn balance_of(client: &Client, id: Uuid) -> i64 {
    client.get_balance().id(id).send().await.expect("the balance").into_inner().balance
}

/// A webhook endpoint at `url`, subscribed to every event.
pub async fn webhook_endpoint(client: &Client, url: &str) -> types::WebhookEndpointWithSecret {
    client
        .create_webhook_endpoint()
        .body(types::WebhookEndpointCreate::builder().url(code::<types::WebhookEndpointCreateUrl>(url)))
        .send()
        .await
        .expect("a webhook endpoint")
        .into_inner()
}

/// A British recipient, in the name its bank holds ("Isla Wilson" for 04-00-04 12345678).
pub async fn gb_recipient(client: &Client) -> types::Recipient {
    client
        .create_recipient()
        .body(
            types::RecipientCreate::builder()
                .type_(types::RecipientType::Personal)
                .country(code::<types::CountryCode>("GB"))
                .bank_account(
                    types::BankAccount::builder()
                        .currency(code::<types::CurrencyCode>("GBP"))
                        .account_name(Some(code("Isla Wilson")))
                        .sort_code(Some(code("04-00-04")))
                        .account_number(Some(code("12345678"))),
                ),
        )
        .send()
        .await
        .expect("a recipient")
        .into_inner()
}

pub fn payment(balance: Uuid, recipient: Uuid, value: u64) -> types::builder::TransactionCreate {
    types::TransactionCreate::builder()
        .transaction_type(types::TransactionCreateTransactionType::Payment)
        .amount(Some(amount(value)))
        .balance_id(balance)
        .recipient_id(recipient)
}

/// Every transaction `filter` selects, read through the client's stream in pages of `size`.
pub async fn every_page<'c>(
    client: &'c Client,
    size: u32,
    filter: impl Fn(payments_client::builder::ListTransactions<'c>) -> payments_client::builder::ListTransactions<'c> + 'c,
) -> Vec<types::Transaction> {
    use futures::TryStreamExt;
    let pages = client.list_transactions_stream(move |request| filter(request).limit(limit(size)));
    pages.try_collect().await.expect("every page of transactions")
}

/// Waits until `condition` holds, checking every 50 ms, for at most `within`.
pub async fn eventually<F: Future<Output = bool>>(within: Duration, mut condition: impl FnMut() -> F) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if condition().await {
            return true;
        }
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Drives one tenant through every state change that has an event (all but `ping`, which needs
/// an endpoint): 18 events.
pub async fn make_every_event(client: &Client) {
    let gbp = open_balance(client, "GBP").await;
    fund(client, &gbp, 100_000).await; // paymentrequest.initiated, .processed, .settled
    let penny = || {
        let request = client
            .create_payment_request()
            .body(types::PaymentRequestCreate::builder().amount(amount(1)).currency(Some(code("GBP"))));
        async move { request.send().await.unwrap().into_inner() }
    };
    let failing = penny().await;
    client
        .simulate_payment()
        .id(failing.id)
        .body(types::SimulatePayment::builder().outcome(types::SimulatePaymentOutcome::Failed))
        .send()
        .await
        .unwrap();
    let cancelled = penny().await;
    client.cancel_payment_request().id(cancelled.id).send().await.unwrap();
    let recipient = gb_recipient(client).await;
    let spare = gb_recipient(client).await;
    client.delete_recipient().id(spare.id).send().await.unwrap();
    use types::SimulateTransactionStatusStatus as To;
    let step = |id: Uuid, to: To, reason: Option<&str>| {
        let request = client
            .simulate_transaction_status()
            .id(id)
            .body(types::SimulateTransactionStatus::builder().status(to).failure_reason(reason.map(code)));
        async move { request.send().await.unwrap().into_inner() }
    };
    let settled =
        client.create_transaction().body(payment(gbp.id, recipient.id, 100)).send().await.unwrap().into_inner();
    step(settled.id, To::Pending, None).await;
    step(settled.id, To::Processing, None).await;
    step(settled.id, To::Processed, None).await;
    step(settled.id, To::Refunded, None).await;
    let failed =
        client.create_transaction().body(payment(gbp.id, recipient.id, 100)).send().await.unwrap().into_inner();
    step(failed.id, To::Processing, None).await;
    step(failed.id, To::Failed, Some("Closed")).await;
    let stopped =
        client.create_transaction().body(payment(gbp.id, recipient.id, 100)).send().await.unwrap().into_inner();
    step(stopped.id, To::Cancelled, None).await;
    open_balance(client, "NGN").await;
    let account = client
        .create_virtual_account()
        .body(types::VirtualAccountCreate::builder().currency(Some(code("NGN"))))
        .send()
        .await
        .unwrap()
        .into_inner();
    client.advance_sandbox().send().await.unwrap();
    client
        .simulate_virtual_account_status()
        .id(account.id)
        .body(types::SimulateVirtualAccountStatus::builder().status(types::SimulateVirtualAccountStatusStatus::Blocked))
        .send()
        .await
        .unwrap();
    client.close_virtual_account().id(account.id).send().await.unwrap();
}
