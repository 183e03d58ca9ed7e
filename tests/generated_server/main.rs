//! The generated server and client meet: a small in-memory implementation of the generated
//! `Api` trait, served by the generated router on an ephemeral port, called through the
//! generated client — one operation or more of every tag — and every failure the router
//! produces itself, sent raw where the client would refuse to send it.

mod in_memory;

use std::sync::Arc;

use in_memory::{Context, InMemory, Result};
use payments_client::{Client, types};
use payments_server::{Api, ApiError};
use payments_tests::sandbox::client_error;
use payments_tests::{assert_error, raw, serve};
use serde_json::{Value, json};
use uuid::Uuid;

async fn start() -> String {
    let addr = serve(payments_server::router(Arc::new(InMemory::default()))).await;
    format!("http://{addr}")
}

fn gbp() -> types::CurrencyCode {
    "GBP".parse().unwrap()
}

/// The status and message of an error the generated client received.
#[tokio::test]
async fn every_tag_through_the_generated_client() {
    let base = start().await;
    let client: Client = payments_client::with_token(&base, "tok_alice");

    // Balances: create (201), read, rename, list with a filter.
    let created = client
        .create_balance()
        .body(types::BalanceCreate::builder().currency(gbp()).name(Some("Main".parse().unwrap())))
        .send()
        .await
        .unwrap();
    assert_eq!(created.status().as_u16(), 201);
    let balance = created.into_inner();
    assert_eq!(balance.balance, 0);
    let renamed = client
        .update_balance()
        .id(balance.id)
        .body(types::BalanceUpdate::builder().name("Payroll".to_string()))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(renamed.name.as_str(), "Payroll");
    let listed =
        client.list_balances().currency(gbp()).limit(std::num::NonZeroU32::new(5).unwrap()).send().await.unwrap();
    assert_eq!(listed.into_inner(), vec![renamed.clone()]);
    assert_eq!(client.get_balance().id(balance.id).send().await.unwrap().into_inner(), renamed);

    // Reference data.
    let countries = client.list_countries().send().await.unwrap().into_inner();
    assert_eq!(countries[0].alpha2.as_str(), "GB");
    let fields = client
        .list_bank_fields()
        .country("GB".parse::<types::CountryCode>().unwrap())
        .currency(gbp())
        .send()
        .await
        .unwrap();
    assert_eq!(fields.into_inner()[0].name, "sort_code");

    // Payment requests: create, read, cancel, cancel again (the implementer's 409).
    let request = client
        .create_payment_request()
        .body(
            types::PaymentRequestCreate::builder()
                .amount(types::Amount::new(2500).unwrap())
                .currency(Some(gbp()))
                .reference_id(Some("inv-1".parse().unwrap())),
        )
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(request.amount.map(|a| a.get()), Some(2500));
    assert_eq!(request.status, types::PaymentRequestStatus::Initiated);
    let cancelled = client.cancel_payment_request().id(request.id).send().await.unwrap().into_inner();
    assert_eq!(cancelled.result, types::ResultOkResult::Ok);
    let (status, message) = client_error(client.cancel_payment_request().id(request.id).send().await);
    assert_eq!((status, message.as_str()), (409, "Conflict: payment request is \"cancelled\""));
    let filtered = client.list_payment_requests().status(types::PaymentRequestStatus::Cancelled).send().await.unwrap();
    assert_eq!(filtered.into_inner().len(), 1);

    // Recipients.
    let recipient = client
        .create_recipient()
        .body(
            types::RecipientCreate::builder()
                .type_(types::RecipientType::Personal)
                .country("GB".parse::<types::CountryCode>().unwrap())
                .bank_account(
                    types::BankAccount::builder()
                        .currency(gbp())
                        .sort_code(Some("040004".parse().unwrap()))
                        .account_number(Some("12345678".parse().unwrap())),
                ),
        )
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(client.get_recipient().id(recipient.id).send().await.unwrap().into_inner(), recipient);

    // Transactions.
    let payment = client
        .create_transaction()
        .body(
            types::TransactionCreate::builder()
                .transaction_type(types::TransactionCreateTransactionType::Payment)
                .amount(Some(types::Amount::new(100).unwrap()))
                .balance_id(balance.id)
                .recipient_id(recipient.id),
        )
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(payment.recipient.as_ref().map(|r| r.id), Some(recipient.id));
    assert_eq!(client.get_transaction().id(payment.id).send().await.unwrap().into_inner(), payment);

    // Virtual accounts and a sandbox control.
    let account = client
        .create_virtual_account()
        .body(types::VirtualAccountCreate::builder().currency(Some("NGN".parse::<types::CurrencyCode>().unwrap())))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(account.status, types::VirtualAccountStatus::Initiated);
    let advanced = client.advance_sandbox().send().await.unwrap().into_inner();
    assert_eq!(advanced.virtual_accounts_activated, 1);
    let account = client.get_virtual_account().id(account.id).send().await.unwrap().into_inner();
    assert_eq!(account.status, types::VirtualAccountStatus::Active);
    // An optional body may be left out.
    let paid = client.simulate_payment().id(request.id).send().await.unwrap().into_inner();
    assert_eq!(paid.status, types::PaymentRequestStatus::Processed);

    // Webhook endpoints and webhooks.
    let endpoint = client
        .create_webhook_endpoint()
        .body(
            types::WebhookEndpointCreate::builder()
                .url("https://hooks.example/p".to_string())
                .events(vec![types::WebhookEvent::TransactionProcessed]),
        )
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(endpoint.secret, "whsec_test");
    let ping =
        client.send_test_webhook().body(types::WebhookPing::builder().endpoint_id(endpoint.id)).send().await.unwrap();
    assert_eq!(ping.status().as_u16(), 201);
    assert_eq!(ping.into_inner().event, types::WebhookEvent::Ping);
    assert!(client.list_webhooks().send().await.unwrap().into_inner().is_empty());

    // Another tenant sees none of it: 404, exactly as for an unknown id.
    let bob = payments_client::with_token(&base, "tok_bob");
    let (status, message) = client_error(bob.get_balance().id(balance.id).send().await);
    assert_eq!(status, 404);
    assert!(message.contains(&balance.id.to_string()));
    assert!(bob.list_balances().send().await.unwrap().into_inner().is_empty());
}

#[tokio::test]
async fn authentication_happens_once_before_anything_else() {
    let base = start().await;
    let url = format!("{base}/balances");
    let missing = raw("GET", &url, None, None, "").await;
    assert_error(&missing, 401, "credential");
    assert_eq!(missing.headers["www-authenticate"], "Bearer realm=\"Payments API\"");
    assert_error(&raw("GET", &url, Some("tok_mallory"), None, "").await, 401, "credential");
    // Basic credentials are not bearer credentials.
    let basic = reqwest::Client::new().get(&url).basic_auth("tok_alice", Some("x")).send().await.unwrap();
    assert_eq!(basic.status().as_u16(), 401);
    // A bad body behind a bad credential is still a 401: the body is never looked at.
    let unauth_bad_body = raw("POST", &url, None, Some("application/json"), "{not json").await;
    assert_error(&unauth_bad_body, 401, "credential");
    // The generated client gets the error object too.
    let client = payments_client::with_token(&base, "tok_wrong");
    let (status, _) = client_error(client.list_countries().send().await);
    assert_eq!(status, 401);
}

#[tokio::test]
async fn router_failures_answer_in_the_error_object() {
    let base = start().await;
    let token = Some("tok_alice");
    let json = Some("application/json");
    let balances = format!("{base}/balances");

    // Malformed JSON, and JSON of the wrong shape.
    assert_error(&raw("POST", &balances, token, json, "{\"currency\":").await, 400, "malformed JSON");
    assert_error(&raw("POST", &balances, token, json, "[]").await, 400, "Invalid request");
    assert_error(&raw("POST", &balances, token, json, "").await, 400, "malformed JSON");
    assert_error(&raw("POST", &balances, token, None, "").await, 400, "body is required");
    // Missing required field, unknown field, pattern broken, bound broken.
    assert_error(&raw("POST", &balances, token, json, "{}").await, 400, "\"currency\" is a required property");
    assert_error(&raw("POST", &balances, token, json, r#"{"currency":"GBP","colour":"red"}"#).await, 400, "colour");
    assert_error(
        &raw("POST", &balances, token, json, r#"{"currency":"gbp"}"#).await,
        400,
        "currency: \"gbp\" does not match",
    );
    let long_name = json!({"currency": "GBP", "name": "n".repeat(51)}).to_string();
    assert_error(&raw("POST", &balances, token, json, long_name).await, 400, "name: ");
    // 50 characters of a multi-byte letter are fine: bounds count characters, not bytes.
    let fifty = json!({"currency": "GBP", "name": "é".repeat(50)}).to_string();
    assert_eq!(raw("POST", &balances, token, json, fifty).await.status, 201);
    let zero = json!({"amount": 0, "currency": "GBP"}).to_string();
    assert_error(
        &raw("POST", &format!("{base}/paymentrequests"), token, json, zero).await,
        400,
        "amount: 0 is less than the minimum of 1",
    );
    let huge = json!({"amount": 100_000_000_001_u64, "currency": "GBP"}).to_string();
    assert_error(&raw("POST", &format!("{base}/paymentrequests"), token, json, huge).await, 400, "amount");
    let long_ref = json!({"amount": 1, "currency": "GBP", "reference_id": "r".repeat(51)}).to_string();
    assert_error(&raw("POST", &format!("{base}/paymentrequests"), token, json, long_ref).await, 400, "reference_id");
    let bad_uuid = json!({"amount": 1, "settlement_balance_id": "not-a-uuid"}).to_string();
    assert_error(
        &raw("POST", &format!("{base}/paymentrequests"), token, json, bad_uuid).await,
        400,
        "settlement_balance_id",
    );

    // Wrong content type: 415.
    assert_error(
        &raw("POST", &balances, token, Some("text/plain"), r#"{"currency":"GBP"}"#).await,
        415,
        "application/json",
    );
    assert_error(
        &raw("POST", &balances, token, Some("application/x-www-form-urlencoded"), "currency=GBP").await,
        415,
        "application/json",
    );
    // A charset parameter is fine.
    assert_eq!(
        raw("POST", &balances, token, Some("application/json; charset=utf-8"), r#"{"currency":"GBP"}"#).await.status,
        201
    );

    // Body too large: 413.
    let big = json!({"currency": "GBP", "name": "x".repeat(70 * 1024)}).to_string();
    assert_error(&raw("POST", &balances, token, json, big).await, 413, "larger than 65536 bytes");
    // One declared larger than the limit is refused before any of it is sent, and the
    // connection closed (its body is left unread).
    let address = base.trim_start_matches("http://");
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let head = format!(
        "POST /balances HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer tok_alice\r\n\
         Content-Type: application/json\r\nContent-Length: 1000000000000000\r\n\r\n"
    );
    tokio::io::AsyncWriteExt::write_all(&mut stream, head.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(
        std::time::Duration::from_secs(30),
        tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut answer),
    )
    .await
    .expect("answered without waiting for the body")
    .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        answer.contains(r#"{"request":"error","code":413,"message":"Request body larger than 65536 bytes"}"#),
        "{answer}"
    );

    // An id in a path that is not a UUID, or a UUID spelt otherwise than lower-case and
    // hyphenated: 404 before the implementer is asked; an unknown id: the implementer's 404.
    for id in
        ["not-a-uuid".to_owned(), Uuid::nil().simple().to_string(), Uuid::max().hyphenated().to_string().to_uppercase()]
    {
        assert_error(&raw("GET", &format!("{balances}/{id}"), token, None, "").await, 404, "lower-case hyphenated");
    }
    assert_error(&raw("GET", &format!("{balances}/{}", Uuid::nil()), token, None, "").await, 404, "no balance");

    // Bad queries: a wrong type, a broken bound, an unknown parameter, a bad enum value, a missing required one.
    assert_error(&raw("GET", &format!("{balances}?limit=abc"), token, None, "").await, 400, "query parameter `limit`");
    assert_error(
        &raw("GET", &format!("{balances}?limit=101"), token, None, "").await,
        400,
        "limit: 101 is greater than the maximum of 100",
    );
    assert_error(&raw("GET", &format!("{balances}?limit=0"), token, None, "").await, 400, "limit");
    assert_error(&raw("GET", &format!("{balances}?colour=red"), token, None, "").await, 400, "unknown field `colour`");
    assert_error(&raw("GET", &format!("{base}/paymentrequests?status=paid"), token, None, "").await, 400, "status");
    assert_error(
        &raw("GET", &format!("{base}/paymentrequests?reference_id={}", "r".repeat(51)), token, None, "").await,
        400,
        "reference_id",
    );
    assert_error(
        &raw("GET", &format!("{base}/transactions?from_datetime=yesterday"), token, None, "").await,
        400,
        "from_datetime",
    );
    assert_error(&raw("GET", &format!("{base}/bankfields?country=GB"), token, None, "").await, 400, "currency");

    // Unknown path: 401 without a valid credential, 404 with one; wrong method: 405 with the
    // allowed methods.
    assert_error(&raw("GET", &format!("{base}/nowhere"), None, None, "").await, 401, "credential");
    assert_error(&raw("GET", &format!("{base}/nowhere"), token, None, "").await, 404, "no such path /nowhere");
    let wrong_method = raw("PUT", &balances, token, json, "{}").await;
    assert_error(&wrong_method, 405, "Method not allowed; this path allows GET, HEAD, POST");
    assert_eq!(wrong_method.headers["allow"], "GET, HEAD, POST");
    let wrong_method = raw("DELETE", &format!("{base}/recipients/validate"), token, None, "").await;
    assert_error(&wrong_method, 405, "this path allows POST");
    assert_eq!(wrong_method.headers["allow"], "POST");

    // An operation not implemented answers 501 (the trait's default); the implementer's own
    // errors keep their status and message.
    assert_error(
        &raw("GET", &format!("{base}/currencies"), token, None, "").await,
        501,
        "Not implemented: listCurrencies",
    );
    assert_error(
        &raw("GET", &format!("{base}/bankfields?country=FR&currency=EUR"), token, None, "").await,
        400,
        "country FR is not supported",
    );
}

#[tokio::test]
async fn bounded_strings_are_refused_by_the_types_too() {
    // The models enforce the document's bounds when deserialised, on either side of the wire.
    let over = json!({"currency": "GBP", "name": "n".repeat(51)});
    let error = serde_json::from_value::<types::BalanceCreate>(over).unwrap_err().to_string();
    assert!(error.contains("longer than 50"), "{error}");
    let ok = json!({"currency": "GBP", "name": "n".repeat(50)});
    assert!(serde_json::from_value::<types::BalanceCreate>(ok).is_ok());
    assert!("gbp".parse::<types::CurrencyCode>().is_err());
    assert!(serde_json::from_value::<types::Amount>(json!(0)).is_err());
}

/// Implements nothing at all.
struct Nothing;

impl Api for Nothing {}

/// Implements the authentication hook and one operation, which answers with what its request
/// context holds.
struct Probe;

impl Api<String> for Probe {
    async fn authenticate(&self, credentials: &[payments_server::Credential<'_>]) -> Result<String> {
        let [payments_server::Credential::BearerAuth(token)] = credentials else {
            return Err(ApiError::unauthorized());
        };
        Ok(format!("caller of {token}"))
    }

    async fn get_balance(&self, context: Context, id: Uuid) -> Result<payments_server::GetBalanceResponse> {
        let echo = context.headers.get("x-echo").and_then(|v| v.to_str().ok()).unwrap_or("none");
        let message = format!("{} asked for {id} as {} ({echo})", context.caller, context.request_id());
        // A documented error in the error object: answered as `Err(ApiError)`, its one channel.
        Err(ApiError::new(axum::http::StatusCode::TOO_MANY_REQUESTS, message).retry_after(7))
    }
}

#[tokio::test]
async fn an_empty_implementation_compiles_and_serves() {
    // Until `authenticate` is written, every secured operation answers 401; nothing panics.
    let base = format!("http://{}", serve(payments_server::router(Arc::new(Nothing))).await);
    let token = Some("tok_anyone");
    assert_error(&raw("GET", &format!("{base}/balances"), token, None, "").await, 401, "credential");
    assert_error(&raw("GET", &format!("{base}/nowhere"), token, None, "").await, 401, "credential");

    // With the hook, every other operation answers 501 in the error object, naming itself;
    // requests are still parsed and validated first.
    let base = format!("http://{}", serve(payments_server::router(Arc::new(Probe))).await);
    let json = Some("application/json");
    assert_error(&raw("GET", &format!("{base}/balances"), token, None, "").await, 501, "Not implemented: listBalances");
    let payment = json!({"transaction_type": "payment", "amount": 100, "balance_id": Uuid::new_v4(),
        "recipient_id": Uuid::new_v4(), "order_id": "o-1"});
    let created = raw("POST", &format!("{base}/transactions"), token, json, payment.to_string()).await;
    assert_error(&created, 501, "Not implemented: createTransaction");
    let invalid = raw("POST", &format!("{base}/transactions"), token, json, r#"{"amount": 0}"#).await;
    assert_error(&invalid, 400, "Invalid request");
    assert_error(&raw("GET", &format!("{base}/nowhere"), token, None, "").await, 404, "no such path");
}

#[tokio::test]
async fn operations_see_their_request_and_answer_any_documented_status() {
    let base = format!("http://{}", serve(payments_server::router(Arc::new(Probe))).await);
    let id = Uuid::new_v4();
    let client = reqwest::Client::new();
    let send = |request_id: Option<&str>| {
        let mut request =
            client.get(format!("{base}/balances/{id}")).bearer_auth("tok_probe").header("x-echo", "echoed");
        if let Some(request_id) = request_id {
            request = request.header("x-request-id", request_id);
        }
        request.send()
    };

    // The caller from the hook, the request's headers and its id reach the operation; the
    // variant picks the status and sets its typed header.
    let response = send(Some("req-123")).await.unwrap();
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["message"], format!("caller of tok_probe asked for {id} as req-123 (echoed)"));

    // Without an `x-request-id`, the context makes one up.
    let body: Value = send(None).await.unwrap().json().await.unwrap();
    let message = body["message"].as_str().unwrap();
    let request_id = message.split(" as ").nth(1).and_then(|rest| rest.split(' ').next()).unwrap();
    assert!(Uuid::parse_str(request_id).is_ok(), "{message}");
}
