//! The generated client's retries, against a server that fails on purpose: a real HTTP/1.1
//! server on an ephemeral port that reads each request whole, records it, and then answers
//! what its script says — a status with or without `Retry-After`, or a connection reset.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use payments_client::retry::{Cause, RetryBudget, RetryPolicy};
use payments_client::tokens::{BoxError, BoxFuture, TokenSource};
use payments_client::{Client, Config, Credentials, Error, types};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the server does with one request.
#[derive(Clone)]
enum Reply {
    /// This status, with this `Retry-After` (if any) and body.
    Answer(u16, Option<String>, String),
    /// The connection is reset once the request has been read.
    Reset,
    /// This status and body, the connection kept open for the next request.
    KeptAlive(u16, String),
    /// The connection closed, unanswered, once the request has been read: a server closing a
    /// kept-alive connection it held idle as a request arrives on it.
    Close,
}

fn refused(status: u16, retry_after: Option<&str>) -> Reply {
    let body = format!(r#"{{"request":"error","code":{status},"message":"not now"}}"#);
    Reply::Answer(status, retry_after.map(str::to_owned), body)
}

fn transaction(order_id: &str) -> Reply {
    Reply::Answer(201, None, transaction_body(order_id))
}

/// A transaction with `order_id`, as the server answers it.
fn transaction_body(order_id: &str) -> String {
    serde_json::json!({
        "id": "0c5d8e2a-6b7f-4f1e-9d3c-2a1b0c9d8e7f", "amount": 10000, "fees": 20, "currency": "GBP",
        "to_amount": 10000, "to_currency": "GBP", "balance_id": "5d0c7f8e-1c0a-4b55-9a8e-9a1f6a4b2c11",
        "virtual_account_id": null, "order_id": order_id, "payment_reference": null, "status": "processed",
        "failure_reason": null, "transaction_type": "payment", "payment_method": "balance", "recipient": null,
        "payer_name": null, "exchange_rate": null, "reference": null, "created": "2026-11-21T10:15:30.123Z"
    })
    .to_string()
}

/// One request as the server read it.
struct Seen {
    at: Instant,
    head: String,
    body: Vec<u8>,
}

struct Server {
    url: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    /// Answers by `script`, then `otherwise` to every request after it.
    async fn start(script: Vec<Reply>, otherwise: Reply) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let recorded = seen.clone();
        tokio::spawn(async move {
            loop {
                let (mut stream, _) = listener.accept().await.unwrap();
                let (recorded, script, otherwise) = (recorded.clone(), script.clone(), otherwise.clone());
                tokio::spawn(async move {
                    loop {
                        let Some((head, body)) = read_request(&mut stream).await else { return };
                        recorded.lock().unwrap().push(Seen { at: Instant::now(), head, body });
                        let reply = script.lock().unwrap().pop_front().unwrap_or_else(|| otherwise.clone());
                        if !answer(&mut stream, reply).await {
                            return;
                        }
                    }
                });
            }
        });
        Self { url, seen }
    }

    /// The bearer token of each request.
    fn tokens(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap();
        let token =
            |head: &str| head.lines().find_map(|line| line.strip_prefix("authorization: bearer ")).map(str::to_owned);
        seen.iter().map(|seen| token(&seen.head).unwrap_or_default()).collect()
    }

    fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// The gaps between consecutive requests.
    fn gaps(&self) -> Vec<Duration> {
        let seen = self.seen.lock().unwrap();
        seen.windows(2).map(|pair| pair[1].at - pair[0].at).collect()
    }

    /// Each request's body, after checking it carried the client's credential.
    fn bodies(&self) -> Vec<Vec<u8>> {
        let seen = self.seen.lock().unwrap();
        assert!(seen.iter().all(|seen| seen.head.contains("\r\nauthorization: bearer tok\r\n")));
        seen.iter().map(|seen| seen.body.clone()).collect()
    }

    fn client(&self, policy: RetryPolicy) -> Client {
        payments_client::install_crypto_provider();
        Client::new(&self.url, Config::from(Credentials::new().bearer_auth("tok")).retry(policy))
    }
}

/// Does what `reply` says, and answers whether the connection stays open for another request.
async fn answer(stream: &mut tokio::net::TcpStream, reply: Reply) -> bool {
    let (status, retry_after, body, kept) = match reply {
        Reply::Reset => {
            stream.set_zero_linger().unwrap();
            return false;
        }
        Reply::Close => {
            let _ = stream.shutdown().await;
            return false;
        }
        Reply::Answer(status, retry_after, body) => (status, retry_after, body, false),
        Reply::KeptAlive(status, body) => (status, None, body, true),
    };
    let retry_after = retry_after.map(|value| format!("retry-after: {value}\r\n")).unwrap_or_default();
    let close = if kept { "" } else { "connection: close\r\n" };
    let response = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{retry_after}{close}\r\n{body}",
        body.len(),
    );
    let written = stream.write_all(response.as_bytes()).await.is_ok();
    if !kept {
        let _ = stream.shutdown().await;
    }
    kept && written
}

/// A request's head (as text) and its body (by `Content-Length`); `None` when the connection
/// closed first.
async fn read_request(stream: &mut tokio::net::TcpStream) -> Option<(String, Vec<u8>)> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") {
            break end + 4;
        }
        let read = stream.read(&mut chunk).await.ok().filter(|read| *read > 0)?;
        bytes.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&bytes[..end]).to_lowercase();
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |value| value.trim().parse::<usize>().unwrap());
    while bytes.len() < end + length {
        let read = stream.read(&mut chunk).await.ok().filter(|read| *read > 0)?;
        bytes.extend_from_slice(&chunk[..read]);
    }
    Some((head, bytes[end..end + length].to_vec()))
}

fn payment(order_id: Option<&str>) -> types::TransactionCreate {
    serde_json::from_value(serde_json::json!({
        "transaction_type": "payment", "amount": 10000, "order_id": order_id,
        "balance_id": "5d0c7f8e-1c0a-4b55-9a8e-9a1f6a4b2c11", "recipient_id": "1e2b7f0c-8a4e-4c4f-b5a1-0a3d5c9e7b21"
    }))
    .unwrap()
}

fn status<T: std::fmt::Debug>(outcome: Result<T, Error<types::Error>>) -> u16 {
    match outcome {
        Err(Error::ErrorResponse(response)) => response.status().as_u16(),
        other => panic!("expected an error response, got {other:?}"),
    }
}

#[tokio::test]
async fn a_keyed_payment_waits_out_two_503s_as_retry_after_says_and_arrives_once() {
    let server = Server::start(
        vec![refused(503, Some("1")), refused(503, Some("1")), transaction("order-1")],
        refused(500, None),
    )
    .await;
    let retries = Arc::new(Mutex::new(Vec::new()));
    let observed = retries.clone();
    let policy = RetryPolicy::default().on_retry(move |retry| observed.lock().unwrap().push(*retry));
    let made = server.client(policy).create_transaction().body(payment(Some("order-1"))).send().await.unwrap();
    assert_eq!(serde_json::to_value(&made.order_id).unwrap(), "order-1");
    assert_eq!(server.requests(), 3);
    let bodies = server.bodies();
    assert!(bodies.iter().all(|body| *body == bodies[0]), "every attempt sends the same order_id");
    // `Retry-After: 1` is a floor; the jittered wait (at most 0.5 s, then 1 s) does not raise it.
    for gap in server.gaps() {
        assert!(gap >= Duration::from_secs(1) && gap < Duration::from_millis(1500), "{gap:?}");
    }
    let retries = retries.lock().unwrap();
    assert_eq!(
        retries.iter().map(|retry| (retry.attempt, retry.cause)).collect::<Vec<_>>(),
        [(2, Cause::Status(503)), (3, Cause::Status(503))]
    );
    assert!(
        retries.iter().all(|retry| retry.operation == "create_transaction" && retry.delay == Duration::from_secs(1))
    );
}

#[tokio::test]
async fn a_post_without_its_key_is_not_sent_again_but_a_read_is() {
    let server = Server::start(vec![refused(503, Some("0"))], transaction("-")).await;
    let client = server.client(RetryPolicy::default());
    assert_eq!(status(client.create_transaction().body(payment(None)).send().await), 503);
    assert_eq!(server.requests(), 1, "a payment without order_id could be made twice: it is not retried");

    let server =
        Server::start(vec![refused(503, Some("0")), refused(502, None)], Reply::Answer(200, None, "[]".into())).await;
    let currencies = server.client(RetryPolicy::default()).list_currencies().send().await.unwrap();
    assert!(currencies.is_empty());
    assert_eq!(server.requests(), 3);
}

#[tokio::test]
async fn a_429_with_an_http_date_is_waited_out() {
    let when = httpdate::fmt_http_date(SystemTime::now() + Duration::from_secs(2));
    let server = Server::start(vec![refused(429, Some(&when))], Reply::Answer(200, None, "[]".into())).await;
    let started = Instant::now();
    server.client(RetryPolicy::default()).list_currencies().send().await.unwrap();
    assert_eq!(server.requests(), 2);
    // The date has whole seconds: the wait is between one and two seconds.
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(1000) && waited < Duration::from_millis(2600), "{waited:?}");
}

#[tokio::test]
async fn a_connection_reset_after_the_request_was_read_is_retried_only_with_a_key() {
    let server = Server::start(vec![Reply::Reset], transaction("order-2")).await;
    let made = server.client(RetryPolicy::default()).create_transaction().body(payment(Some("order-2"))).send().await;
    assert_eq!(serde_json::to_value(&made.unwrap().order_id).unwrap(), "order-2");
    assert_eq!(server.requests(), 2);
    let bodies = server.bodies();
    assert_eq!(bodies[0], bodies[1]);

    let server = Server::start(vec![Reply::Reset], transaction("-")).await;
    let outcome = server.client(RetryPolicy::default()).create_transaction().body(payment(None)).send().await;
    assert!(matches!(outcome, Err(Error::CommunicationError(_))), "{outcome:?}");
    assert_eq!(server.requests(), 1, "the request was read: sending it again could pay twice");
}

/// A server closes a kept-alive connection it has held idle as a request arrives on it: the
/// connection closes with no answer. A keyed payment is sent again at once on a new connection
/// without counting as an attempt — here it still has its three for the two `503`s that follow —
/// while a `POST` without its key is not sent again (the server may have acted on it).
#[tokio::test]
async fn a_kept_alive_connection_closed_unanswered_costs_a_keyed_payment_no_attempt() {
    let kept_alive = || Reply::KeptAlive(201, transaction_body("order-0"));
    let script = vec![kept_alive(), Reply::Close, refused(503, Some("0")), refused(503, Some("0"))];
    let server = Server::start(script, transaction("order-4")).await;
    let client = server.client(RetryPolicy::default().backoff(Duration::from_millis(1), Duration::from_millis(1)));
    client.create_transaction().body(payment(Some("order-0"))).send().await.unwrap();
    let made = client.create_transaction().body(payment(Some("order-4"))).send().await;
    assert_eq!(serde_json::to_value(&made.unwrap().order_id).unwrap(), "order-4");
    assert_eq!(server.requests(), 5, "the kept-alive call, then a close, two 503s and the payment");
    let bodies = server.bodies();
    assert!(bodies[1..].iter().all(|body| *body == bodies[1]), "the same payment every time");

    let server = Server::start(vec![kept_alive(), Reply::Close], transaction("-")).await;
    let client = server.client(RetryPolicy::default());
    client.create_transaction().body(payment(Some("order-0"))).send().await.unwrap();
    let outcome = client.create_transaction().body(payment(None)).send().await;
    assert!(matches!(outcome, Err(Error::CommunicationError(_))), "{outcome:?}");
    assert_eq!(server.requests(), 2, "the request was read: sending it again could pay twice");
}

#[tokio::test]
async fn a_504_after_a_commit_is_retried_with_the_key_and_the_payment_comes_back() {
    let server = Server::start(vec![refused(504, Some("0"))], transaction("order-3")).await;
    let made = server.client(RetryPolicy::default()).create_transaction().body(payment(Some("order-3"))).send().await;
    assert_eq!(serde_json::to_value(&made.unwrap().order_id).unwrap(), "order-3");
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn the_deadline_is_kept_and_retries_can_be_turned_off_per_call() {
    let server = Server::start(vec![], refused(503, Some("1"))).await;
    let client = server.client(RetryPolicy::default().max_attempts(10).deadline(Duration::from_millis(1500)));
    let started = Instant::now();
    assert_eq!(status(client.list_currencies().send().await), 503);
    // Attempts at 0 s and 1 s; the next would start past the deadline, so the 503 is returned.
    assert_eq!(server.requests(), 2);
    assert!(started.elapsed() < Duration::from_millis(1500), "{:?}", started.elapsed());

    assert_eq!(status(client.with_retry(RetryPolicy::none()).list_currencies().send().await), 503);
    assert_eq!(server.requests(), 3, "one attempt with retries off");
}

#[tokio::test]
async fn the_budget_holds_a_long_outage_to_a_few_retries_more_than_calls() {
    let quick = || RetryPolicy::default().backoff(Duration::from_millis(1), Duration::from_millis(2));
    let calls = 200;
    let mut sent = Vec::new();
    for budget in [RetryBudget::default(), RetryBudget::unlimited()] {
        let server = Server::start(vec![], refused(503, None)).await;
        let config = Config::from(Credentials::new().bearer_auth("tok")).retry(quick()).retry_budget(budget);
        payments_client::install_crypto_provider();
        let client = Client::new(&server.url, config);
        for _ in 0..calls {
            assert_eq!(status(client.list_currencies().send().await), 503);
        }
        sent.push(server.requests());
    }
    // Ten tokens, and no success to refill them: ten retries in all. Without the budget every
    // call makes its three attempts.
    assert_eq!(sent, [calls + 10, 3 * calls]);
}

/// Tokens `tok-1`, `tok-2`, … : a new one each time it is asked (`renewable`: after a `401` too).
struct Rotating {
    asked: Mutex<u32>,
    renewable: bool,
}

impl TokenSource for Rotating {
    fn token(&self) -> BoxFuture<'_, Result<String, BoxError>> {
        let mut asked = self.asked.lock().unwrap();
        *asked += 1;
        Box::pin(std::future::ready(Ok(format!("tok-{asked}"))))
    }

    fn renew(&self) -> BoxFuture<'_, bool> {
        Box::pin(std::future::ready(self.renewable))
    }
}

/// A source whose vault is sealed: its own error type, not text.
struct Sealed;

#[derive(Debug)]
struct VaultSealed;

impl std::fmt::Display for VaultSealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the vault is sealed")
    }
}

impl std::error::Error for VaultSealed {}

impl TokenSource for Sealed {
    fn token(&self) -> BoxFuture<'_, Result<String, BoxError>> {
        Box::pin(std::future::ready(Err(VaultSealed.into())))
    }
}

#[tokio::test]
async fn a_source_that_gives_no_credential_fails_the_call_with_its_error_and_sends_nothing() {
    payments_client::install_crypto_provider();
    let server = Server::start(vec![], Reply::Answer(200, None, "[]".into())).await;
    let client = Client::new(&server.url, Config::from(Credentials::new().bearer_auth_from(Sealed)));
    match client.list_balances().send().await {
        Err(Error::InvalidRequest(message)) => {
            assert_eq!(message, "the credential's source failed: the vault is sealed")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.requests(), 0, "nothing was sent");
}

#[tokio::test]
async fn credentials_are_asked_for_at_every_attempt_and_renewed_once_after_a_401() {
    payments_client::install_crypto_provider();
    let with = |renewable| {
        let source = Rotating { asked: Mutex::new(0), renewable };
        Config::from(Credentials::new().bearer_auth_from(source)).retry(RetryPolicy::default())
    };
    let ok = Reply::Answer(200, None, "[]".into());

    let server = Server::start(vec![refused(503, Some("0"))], ok.clone()).await;
    Client::new(&server.url, with(false)).list_currencies().send().await.unwrap();
    assert_eq!(server.tokens(), ["tok-1", "tok-2"]);

    // A 401 is sent again at once with a renewed token — a POST without a key too: the server
    // refused it before doing anything — once: a second 401 is the answer.
    let server = Server::start(vec![refused(401, None)], Reply::Answer(201, None, BALANCE.into())).await;
    Client::new(&server.url, with(true)).create_balance().body(balance()).send().await.unwrap();
    assert_eq!(server.tokens(), ["tok-1", "tok-2"]);
    let server = Server::start(vec![], refused(401, None)).await;
    assert_eq!(status(Client::new(&server.url, with(true)).list_currencies().send().await), 401);
    assert_eq!(server.tokens(), ["tok-1", "tok-2"]);
    // A source that cannot renew: the 401 is the answer.
    let server = Server::start(vec![], refused(401, None)).await;
    assert_eq!(status(Client::new(&server.url, with(false)).list_currencies().send().await), 401);
    assert_eq!(server.tokens(), ["tok-1"]);
}

const BALANCE: &str = r#"{"id":"5d0c7f8e-1c0a-4b55-9a8e-9a1f6a4b2c11","name":"Main GBP","currency":"GBP",
    "balance":0,"default_currency":"GBP","default_currency_balance":0,"addresses":[],"created":"2026-11-21T10:15:30.123Z"}"#;

fn balance() -> types::BalanceCreate {
    serde_json::from_value(serde_json::json!({"currency": "GBP"})).unwrap()
}
