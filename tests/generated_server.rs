//! The generated server and client meet: a small in-memory implementation of the generated
//! `Api` trait, served by the generated router on an ephemeral port, called through the
//! generated client — one operation or more of every tag — and every failure the router
//! produces itself, sent raw where the client would refuse to send it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use payments_client::{Client, types};
use payments_server::{Api, ApiError};
use payments_tests::sandbox::client_error;
use payments_tests::{assert_error, raw, serve};
use serde_json::{Value, json};
use uuid::Uuid;

/// Resources as JSON, per tenant and kind; enough behaviour to tell the layers apart.
#[derive(Default)]
struct InMemory {
    resources: Mutex<HashMap<(String, &'static str), Vec<Value>>>,
}

type Result<T> = std::result::Result<T, ApiError>;

fn model<T: serde::de::DeserializeOwned>(value: Value) -> Result<T> {
    serde_json::from_value(value).map_err(|e| {
        eprintln!("fixture built an invalid model: {e}");
        ApiError::internal()
    })
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

impl InMemory {
    fn insert(&self, tenant: &str, kind: &'static str, value: Value) -> Value {
        let mut resources = self.resources.lock().unwrap();
        resources.entry((tenant.to_string(), kind)).or_default().insert(0, value.clone());
        value
    }

    fn find(&self, tenant: &str, kind: &'static str, id: Uuid) -> Result<Value> {
        let resources = self.resources.lock().unwrap();
        resources
            .get(&(tenant.to_string(), kind))
            .and_then(|list| list.iter().find(|v| v["id"] == id.to_string()).cloned())
            .ok_or_else(|| ApiError::not_found(format!("no {kind} {id}")))
    }

    fn update(
        &self,
        tenant: &str,
        kind: &'static str,
        id: Uuid,
        change: impl FnOnce(&mut Value) -> Result<()>,
    ) -> Result<Value> {
        let mut resources = self.resources.lock().unwrap();
        let item = resources
            .get_mut(&(tenant.to_string(), kind))
            .and_then(|list| list.iter_mut().find(|v| v["id"] == id.to_string()))
            .ok_or_else(|| ApiError::not_found(format!("no {kind} {id}")))?;
        change(item)?;
        Ok(item.clone())
    }

    fn list(&self, tenant: &str, kind: &'static str, limit: i32, keep: impl Fn(&Value) -> bool) -> Vec<Value> {
        let resources = self.resources.lock().unwrap();
        resources
            .get(&(tenant.to_string(), kind))
            .map(|list| list.iter().filter(|v| keep(v)).take(limit as usize).cloned().collect())
            .unwrap_or_default()
    }
}

fn unsupported<T>() -> Result<T> {
    Err(ApiError::new(StatusCode::NOT_IMPLEMENTED, "not part of this fixture"))
}

impl Api for InMemory {
    type Principal = String;

    async fn authenticate(&self, token: &str) -> Result<String> {
        match token {
            "tok_alice" | "tok_bob" => Ok(token.trim_start_matches("tok_").to_string()),
            _ => Err(ApiError::unauthorized()),
        }
    }

    async fn list_balances(
        &self,
        tenant: String,
        query: payments_server::ListBalancesQuery,
    ) -> Result<Vec<types::Balance>> {
        let currency = query.currency.map(|c| c.to_string());
        self.list(&tenant, "balance", query.limit, |v| currency.as_ref().is_none_or(|c| v["currency"] == *c))
            .into_iter()
            .map(model)
            .collect()
    }

    async fn create_balance(&self, tenant: String, body: types::BalanceCreate) -> Result<types::Balance> {
        let currency = body.currency.to_string();
        let name = body.name.map(|n| n.to_string()).unwrap_or_else(|| format!("{currency} balance"));
        model(self.insert(
            &tenant,
            "balance",
            json!({
                "id": Uuid::new_v4(), "name": name, "currency": currency, "balance": 0,
                "default_currency": "GBP", "default_currency_balance": 0, "addresses": [], "created": now(),
            }),
        ))
    }

    async fn get_balance(&self, tenant: String, id: Uuid) -> Result<types::Balance> {
        model(self.find(&tenant, "balance", id)?)
    }

    async fn update_balance(&self, tenant: String, id: Uuid, body: types::BalanceUpdate) -> Result<types::Balance> {
        model(self.update(&tenant, "balance", id, |v| {
            v["name"] = json!(body.name.to_string());
            Ok(())
        })?)
    }

    async fn list_bank_fields(
        &self,
        _: String,
        query: payments_server::ListBankFieldsQuery,
    ) -> Result<Vec<types::BankField>> {
        if query.country.to_string() != "GB" {
            return Err(ApiError::bad_request(format!("country {} is not supported", *query.country)));
        }
        model(json!([{"name": "sort_code", "label": "Sort code", "type": "number", "length": 6}]))
    }

    async fn list_countries(&self, _: String) -> Result<Vec<types::Country>> {
        model(json!([{"country_name": "United Kingdom", "alpha2": "GB", "currencies": ["GBP"]}]))
    }

    async fn list_currencies(&self, _: String) -> Result<Vec<types::Currency>> {
        unsupported()
    }

    async fn list_payment_requests(
        &self,
        tenant: String,
        query: payments_server::ListPaymentRequestsQuery,
    ) -> Result<Vec<types::PaymentRequest>> {
        let status = query.status.map(|s| s.to_string());
        self.list(&tenant, "payment request", query.limit, |v| status.as_ref().is_none_or(|s| v["status"] == *s))
            .into_iter()
            .map(model)
            .collect()
    }

    async fn create_payment_request(
        &self,
        tenant: String,
        body: types::PaymentRequestCreate,
    ) -> Result<types::PaymentRequest> {
        let id = Uuid::new_v4();
        model(self.insert(&tenant, "payment request", json!({
            "id": id, "market": "GB", "currency": body.currency.map(|c| c.to_string()).unwrap_or("GBP".into()),
            "amount": body.amount.map(|a| a.get()), "settlement_balance_id": body.settlement_balance_id.unwrap_or_default(),
            "reference_id": body.reference_id.map(|r| r.to_string()), "reference": body.reference.map(|r| r.to_string()),
            "status": "initiated", "payment_url": format!("http://pay.test/{id}"),
            "qr_code_url": format!("http://pay.test/{id}/qr.svg"), "return_url": null, "created": now(),
        })))
    }

    async fn get_payment_request(&self, tenant: String, id: Uuid) -> Result<types::PaymentRequest> {
        model(self.find(&tenant, "payment request", id)?)
    }

    async fn cancel_payment_request(&self, tenant: String, id: Uuid) -> Result<types::ResultOk> {
        self.update(&tenant, "payment request", id, |v| {
            if v["status"] != "initiated" {
                return Err(ApiError::conflict(format!("payment request is {}", v["status"])));
            }
            v["status"] = json!("cancelled");
            Ok(())
        })?;
        model(json!({"result": "ok"}))
    }

    async fn list_recipients(
        &self,
        tenant: String,
        query: payments_server::ListRecipientsQuery,
    ) -> Result<Vec<types::Recipient>> {
        self.list(&tenant, "recipient", query.limit, |_| true).into_iter().map(model).collect()
    }

    async fn create_recipient(&self, tenant: String, body: types::RecipientCreate) -> Result<types::Recipient> {
        model(self.insert(
            &tenant,
            "recipient",
            json!({
                "id": Uuid::new_v4(), "country": body.country, "default_reference": null,
                "alias": body.alias, "type": body.type_, "created": now(), "bank_account": body.bank_account,
            }),
        ))
    }

    async fn validate_recipient(&self, _: String, _: types::RecipientValidate) -> Result<types::RecipientValidation> {
        unsupported()
    }

    async fn get_recipient(&self, tenant: String, id: Uuid) -> Result<types::Recipient> {
        model(self.find(&tenant, "recipient", id)?)
    }

    async fn delete_recipient(&self, _: String, _: Uuid) -> Result<types::ResultOk> {
        unsupported()
    }

    async fn update_recipient(&self, _: String, _: Uuid, _: types::RecipientUpdate) -> Result<types::Recipient> {
        unsupported()
    }

    async fn advance_sandbox(&self, tenant: String) -> Result<types::SandboxAdvance> {
        let mut activated = 0;
        if let Some(accounts) = self.resources.lock().unwrap().get_mut(&(tenant, "virtual account")) {
            for account in accounts.iter_mut().filter(|a| a["status"] == "initiated") {
                account["status"] = json!("active");
                activated += 1;
            }
        }
        model(json!({"virtual_accounts_activated": activated, "transactions_advanced": 0}))
    }

    async fn simulate_payment(
        &self,
        tenant: String,
        id: Uuid,
        body: Option<types::SimulatePayment>,
    ) -> Result<types::PaymentRequest> {
        let outcome = body.map(|b| b.outcome.to_string()).unwrap_or("processed".into());
        model(self.update(&tenant, "payment request", id, |v| {
            v["status"] = json!(outcome);
            Ok(())
        })?)
    }

    async fn simulate_transaction_status(
        &self,
        _: String,
        _: Uuid,
        _: types::SimulateTransactionStatus,
    ) -> Result<types::Transaction> {
        unsupported()
    }

    async fn simulate_virtual_account_status(
        &self,
        _: String,
        _: Uuid,
        _: types::SimulateVirtualAccountStatus,
    ) -> Result<types::VirtualAccount> {
        unsupported()
    }

    async fn simulate_inbound_transfer(
        &self,
        _: String,
        _: Uuid,
        _: types::SimulateInboundTransfer,
    ) -> Result<types::Transaction> {
        unsupported()
    }

    async fn simulate_balance_transfer(
        &self,
        _: String,
        _: Uuid,
        _: types::SimulateBalanceTransfer,
    ) -> Result<types::Transaction> {
        unsupported()
    }

    async fn list_transactions(
        &self,
        tenant: String,
        query: payments_server::ListTransactionsQuery,
    ) -> Result<Vec<types::Transaction>> {
        self.list(&tenant, "transaction", query.limit, |_| true).into_iter().map(model).collect()
    }

    async fn create_transaction(&self, tenant: String, body: types::TransactionCreate) -> Result<types::Transaction> {
        let balance = self.find(&tenant, "balance", body.balance_id)?;
        let recipient = self.find(&tenant, "recipient", body.recipient_id)?;
        let amount = body.amount.ok_or_else(|| ApiError::bad_request("amount is required here"))?;
        model(self.insert(
            &tenant,
            "transaction",
            json!({
                "id": Uuid::new_v4(), "amount": amount.get(), "fees": 0, "currency": balance["currency"],
                "to_amount": amount.get(), "to_currency": balance["currency"], "balance_id": body.balance_id,
                "virtual_account_id": null, "order_id": body.order_id, "payment_reference": body.reference,
                "status": "initiated", "failure_reason": null, "transaction_type": "payment",
                "payment_method": "balance", "recipient": recipient, "payer_name": null,
                "exchange_rate": null, "reference": body.reference, "created": now(),
            }),
        ))
    }

    async fn get_transaction(&self, tenant: String, id: Uuid) -> Result<types::Transaction> {
        model(self.find(&tenant, "transaction", id)?)
    }

    async fn list_virtual_accounts(
        &self,
        tenant: String,
        query: payments_server::ListVirtualAccountsQuery,
    ) -> Result<Vec<types::VirtualAccount>> {
        self.list(&tenant, "virtual account", query.limit, |_| true).into_iter().map(model).collect()
    }

    async fn create_virtual_account(
        &self,
        tenant: String,
        body: types::VirtualAccountCreate,
    ) -> Result<types::VirtualAccount> {
        model(self.insert(
            &tenant,
            "virtual account",
            json!({
                "id": Uuid::new_v4(), "account_name": body.account_name.map(|n| n.to_string()).unwrap_or("Acme".into()),
                "currency": body.currency, "settlement_balance_id": body.settlement_balance_id.unwrap_or_default(),
                "reference_id": body.reference_id, "type": "local", "supported_channels": ["NIP"],
                "details": {"bank_name": "Test Bank", "account_name": "Acme", "account_number": "9912345678"},
                "status": "initiated", "created": now(),
            }),
        ))
    }

    async fn get_virtual_account(&self, tenant: String, id: Uuid) -> Result<types::VirtualAccount> {
        model(self.find(&tenant, "virtual account", id)?)
    }

    async fn close_virtual_account(&self, _: String, _: Uuid) -> Result<types::ResultOk> {
        unsupported()
    }

    async fn update_virtual_account(
        &self,
        _: String,
        _: Uuid,
        _: types::VirtualAccountUpdate,
    ) -> Result<types::VirtualAccount> {
        unsupported()
    }

    async fn list_webhook_endpoints(
        &self,
        tenant: String,
        query: payments_server::ListWebhookEndpointsQuery,
    ) -> Result<Vec<types::WebhookEndpoint>> {
        self.list(&tenant, "endpoint", query.limit, |_| true).into_iter().map(model).collect()
    }

    async fn create_webhook_endpoint(
        &self,
        tenant: String,
        body: types::WebhookEndpointCreate,
    ) -> Result<types::WebhookEndpointWithSecret> {
        let endpoint = self.insert(
            &tenant,
            "endpoint",
            json!({
                "id": Uuid::new_v4(), "url": body.url, "events": body.events, "created": now(),
            }),
        );
        let mut with_secret = endpoint;
        with_secret["secret"] = json!("whsec_test");
        model(with_secret)
    }

    async fn get_webhook_endpoint(&self, tenant: String, id: Uuid) -> Result<types::WebhookEndpoint> {
        model(self.find(&tenant, "endpoint", id)?)
    }

    async fn delete_webhook_endpoint(&self, _: String, _: Uuid) -> Result<types::ResultOk> {
        unsupported()
    }

    async fn rotate_webhook_endpoint_secret(&self, _: String, _: Uuid) -> Result<types::WebhookEndpointWithSecret> {
        unsupported()
    }

    async fn list_webhooks(
        &self,
        tenant: String,
        query: payments_server::ListWebhooksQuery,
    ) -> Result<Vec<types::Webhook>> {
        self.list(&tenant, "webhook", query.limit, |_| true).into_iter().map(model).collect()
    }

    async fn send_test_webhook(&self, tenant: String, body: types::WebhookPing) -> Result<types::Webhook> {
        self.find(&tenant, "endpoint", body.endpoint_id)?;
        model(json!({
            "id": Uuid::new_v4(), "endpoint_id": body.endpoint_id, "event": "ping", "created": now(),
            "data": {"message": "ping", "endpoint_id": body.endpoint_id},
            "response_code": null, "retry_count": 0, "status": "pending", "next_attempt": now(),
        }))
    }

    async fn get_webhook(&self, tenant: String, id: Uuid) -> Result<types::Webhook> {
        model(self.find(&tenant, "webhook", id)?)
    }
}

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
    assert_eq!(missing.headers["www-authenticate"], "Bearer realm=\"payments\"");
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

    // The implementer's own errors keep their status and message.
    assert_error(&raw("GET", &format!("{base}/currencies"), token, None, "").await, 501, "not part of this fixture");
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
