//! A small in-memory implementation of the generated `Api` trait: resources as JSON per tenant
//! and kind, enough behaviour to tell the router's layers from the implementation's.

use std::collections::HashMap;
use std::sync::Mutex;

use payments_client::types;
use payments_server::{Api, ApiError};
use serde_json::{Value, json};
use uuid::Uuid;

/// Resources as JSON, per tenant and kind; enough behaviour to tell the layers apart.
#[derive(Default)]
pub(crate) struct InMemory {
    resources: Mutex<HashMap<(String, &'static str), Vec<Value>>>,
}

pub(crate) type Result<T> = std::result::Result<T, ApiError>;

pub(crate) fn model<T: serde::de::DeserializeOwned>(value: Value) -> Result<T> {
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

/// What each operation knows of its request: the tenant's name, headers, request id.
pub(crate) type Context = payments_server::RequestContext<String>;

impl Api<String> for InMemory {
    async fn authenticate(&self, credentials: &[payments_server::Credential<'_>]) -> Result<String> {
        match credentials {
            [payments_server::Credential::BearerAuth(token @ ("tok_alice" | "tok_bob"))] => {
                Ok(token.trim_start_matches("tok_").to_string())
            }
            _ => Err(ApiError::unauthorized()),
        }
    }

    async fn list_balances(
        &self,
        context: Context,
        query: payments_server::ListBalancesQuery,
    ) -> Result<payments_server::ListBalancesResponse> {
        let currency = query.currency.map(|c| c.to_string());
        let page: Vec<types::Balance> = self
            .list(&context.caller, "balance", query.limit, |v| currency.as_ref().is_none_or(|c| v["currency"] == *c))
            .into_iter()
            .map(model)
            .collect::<Result<_>>()?;
        Ok(page.into())
    }

    async fn create_balance(
        &self,
        context: Context,
        body: types::BalanceCreate,
    ) -> Result<payments_server::CreateBalanceResponse> {
        let currency = body.currency.to_string();
        let name = body.name.map(|n| n.to_string()).unwrap_or_else(|| format!("{currency} balance"));
        Ok(model::<types::Balance>(self.insert(
            &context.caller,
            "balance",
            json!({
                "id": Uuid::new_v4(), "name": name, "currency": currency, "balance": 0,
                "default_currency": "GBP", "default_currency_balance": 0, "addresses": [], "created": now(),
            }),
        ))?
        .into())
    }

    async fn get_balance(&self, context: Context, id: Uuid) -> Result<payments_server::GetBalanceResponse> {
        Ok(model::<types::Balance>(self.find(&context.caller, "balance", id)?)?.into())
    }

    async fn update_balance(
        &self,
        context: Context,
        id: Uuid,
        body: types::BalanceUpdate,
    ) -> Result<payments_server::UpdateBalanceResponse> {
        Ok(model::<types::Balance>(self.update(&context.caller, "balance", id, |v| {
            v["name"] = json!(body.name.to_string());
            Ok(())
        })?)?
        .into())
    }

    async fn list_bank_fields(
        &self,
        _: Context,
        query: payments_server::ListBankFieldsQuery,
    ) -> Result<payments_server::ListBankFieldsResponse> {
        if query.country.to_string() != "GB" {
            return Err(ApiError::bad_request(format!("country {} is not supported", *query.country)));
        }
        Ok(model::<Vec<types::BankField>>(
            json!([{"name": "sort_code", "label": "Sort code", "type": "number", "length": 6}]),
        )?
        .into())
    }

    async fn list_countries(&self, _: Context) -> Result<payments_server::ListCountriesResponse> {
        Ok(model::<Vec<types::Country>>(
            json!([{"country_name": "United Kingdom", "alpha2": "GB", "currencies": ["GBP"]}]),
        )?
        .into())
    }

    async fn list_payment_requests(
        &self,
        context: Context,
        query: payments_server::ListPaymentRequestsQuery,
    ) -> Result<payments_server::ListPaymentRequestsResponse> {
        let status = query.status.map(|s| s.to_string());
        let page: Vec<types::PaymentRequest> = self
            .list(&context.caller, "payment request", query.limit, |v| {
                status.as_ref().is_none_or(|s| v["status"] == *s)
            })
            .into_iter()
            .map(model)
            .collect::<Result<_>>()?;
        Ok(page.into())
    }

    async fn create_payment_request(
        &self,
        context: Context,
        body: types::PaymentRequestCreate,
    ) -> Result<payments_server::CreatePaymentRequestResponse> {
        let id = Uuid::new_v4();
        Ok(model::<types::PaymentRequest>(self.insert(&context.caller, "payment request", json!({
            "id": id, "market": "GB", "currency": body.currency.map(|c| c.to_string()).unwrap_or("GBP".into()),
            "amount": body.amount.map(|a| a.get()), "settlement_balance_id": body.settlement_balance_id.unwrap_or_default(),
            "reference_id": body.reference_id.map(|r| r.to_string()), "reference": body.reference.map(|r| r.to_string()),
            "status": "initiated", "payment_url": format!("http://pay.test/{id}"),
            "qr_code_url": format!("http://pay.test/{id}/qr.svg"), "return_url": null, "created": now(),
        })))?.into())
    }

    async fn get_payment_request(
        &self,
        context: Context,
        id: Uuid,
    ) -> Result<payments_server::GetPaymentRequestResponse> {
        Ok(model::<types::PaymentRequest>(self.find(&context.caller, "payment request", id)?)?.into())
    }

    async fn cancel_payment_request(
        &self,
        context: Context,
        id: Uuid,
    ) -> Result<payments_server::CancelPaymentRequestResponse> {
        self.update(&context.caller, "payment request", id, |v| {
            if v["status"] != "initiated" {
                return Err(ApiError::conflict(format!("payment request is {}", v["status"])));
            }
            v["status"] = json!("cancelled");
            Ok(())
        })?;
        Ok(model::<types::ResultOk>(json!({"result": "ok"}))?.into())
    }

    async fn list_recipients(
        &self,
        context: Context,
        query: payments_server::ListRecipientsQuery,
    ) -> Result<payments_server::ListRecipientsResponse> {
        let page: Vec<types::Recipient> = self
            .list(&context.caller, "recipient", query.limit, |_| true)
            .into_iter()
            .map(model)
            .collect::<Result<_>>()?;
        Ok(page.into())
    }

    async fn create_recipient(
        &self,
        context: Context,
        body: types::RecipientCreate,
    ) -> Result<payments_server::CreateRecipientResponse> {
        Ok(model::<types::Recipient>(self.insert(
            &context.caller,
            "recipient",
            json!({
                "id": Uuid::new_v4(), "country": body.country, "default_reference": null,
                "alias": body.alias, "type": body.type_, "created": now(), "bank_account": body.bank_account,
            }),
        ))?
        .into())
    }

    async fn get_recipient(&self, context: Context, id: Uuid) -> Result<payments_server::GetRecipientResponse> {
        Ok(model::<types::Recipient>(self.find(&context.caller, "recipient", id)?)?.into())
    }

    async fn advance_sandbox(&self, context: Context) -> Result<payments_server::AdvanceSandboxResponse> {
        let mut activated = 0;
        if let Some(accounts) = self.resources.lock().unwrap().get_mut(&(context.caller, "virtual account")) {
            for account in accounts.iter_mut().filter(|a| a["status"] == "initiated") {
                account["status"] = json!("active");
                activated += 1;
            }
        }
        Ok(model::<types::SandboxAdvance>(
            json!({"virtual_accounts_activated": activated, "transactions_advanced": 0}),
        )?
        .into())
    }

    async fn simulate_payment(
        &self,
        context: Context,
        id: Uuid,
        body: Option<types::SimulatePayment>,
    ) -> Result<payments_server::SimulatePaymentResponse> {
        let outcome = body.map(|b| b.outcome.to_string()).unwrap_or("processed".into());
        Ok(model::<types::PaymentRequest>(self.update(&context.caller, "payment request", id, |v| {
            v["status"] = json!(outcome);
            Ok(())
        })?)?
        .into())
    }

    async fn list_transactions(
        &self,
        context: Context,
        query: payments_server::ListTransactionsQuery,
    ) -> Result<payments_server::ListTransactionsResponse> {
        let page: Vec<types::Transaction> = self
            .list(&context.caller, "transaction", query.limit, |_| true)
            .into_iter()
            .map(model)
            .collect::<Result<_>>()?;
        Ok(page.into())
    }

    async fn create_transaction(
        &self,
        context: Context,
        body: types::TransactionCreate,
    ) -> Result<payments_server::CreateTransactionResponse> {
        let balance = self.find(&context.caller, "balance", body.balance_id)?;
        let recipient = self.find(&context.caller, "recipient", body.recipient_id)?;
        let amount = body.amount.ok_or_else(|| ApiError::bad_request("amount is required here"))?;
        Ok(model::<types::Transaction>(self.insert(
            &context.caller,
            "transaction",
            json!({
                "id": Uuid::new_v4(), "amount": amount.get(), "fees": 0, "currency": balance["currency"],
                "to_amount": amount.get(), "to_currency": balance["currency"], "balance_id": body.balance_id,
                "virtual_account_id": null, "order_id": body.order_id, "payment_reference": body.reference,
                "status": "initiated", "failure_reason": null, "transaction_type": "payment",
                "payment_method": "balance", "recipient": recipient, "payer_name": null,
                "exchange_rate": null, "reference": body.reference, "created": now(),
            }),
        ))?
        .into())
    }

    async fn get_transaction(&self, context: Context, id: Uuid) -> Result<payments_server::GetTransactionResponse> {
        Ok(model::<types::Transaction>(self.find(&context.caller, "transaction", id)?)?.into())
    }

    async fn list_virtual_accounts(
        &self,
        context: Context,
        query: payments_server::ListVirtualAccountsQuery,
    ) -> Result<payments_server::ListVirtualAccountsResponse> {
        let page: Vec<types::VirtualAccount> = self
            .list(&context.caller, "virtual account", query.limit, |_| true)
            .into_iter()
            .map(model)
            .collect::<Result<_>>()?;
        Ok(page.into())
    }

    async fn create_virtual_account(
        &self,
        context: Context,
        body: types::VirtualAccountCreate,
    ) -> Result<payments_server::CreateVirtualAccountResponse> {
        Ok(model::<types::VirtualAccount>(self.insert(
            &context.caller,
            "virtual account",
            json!({
                "id": Uuid::new_v4(), "account_name": body.account_name.map(|n| n.to_string()).unwrap_or("Acme".into()),
                "currency": body.currency, "settlement_balance_id": body.settlement_balance_id.unwrap_or_default(),
                "reference_id": body.reference_id, "type": "local", "supported_channels": ["NIP"],
                "details": {"bank_name": "Test Bank", "account_name": "Acme", "account_number": "9912345678"},
                "status": "initiated", "created": now(),
            }),
        ))?
        .into())
    }

    async fn get_virtual_account(
        &self,
        context: Context,
        id: Uuid,
    ) -> Result<payments_server::GetVirtualAccountResponse> {
        Ok(model::<types::VirtualAccount>(self.find(&context.caller, "virtual account", id)?)?.into())
    }

    async fn list_webhook_endpoints(
        &self,
        context: Context,
        query: payments_server::ListWebhookEndpointsQuery,
    ) -> Result<payments_server::ListWebhookEndpointsResponse> {
        let page: Vec<types::WebhookEndpoint> = self
            .list(&context.caller, "endpoint", query.limit, |_| true)
            .into_iter()
            .map(model)
            .collect::<Result<_>>()?;
        Ok(page.into())
    }

    async fn create_webhook_endpoint(
        &self,
        context: Context,
        body: types::WebhookEndpointCreate,
    ) -> Result<payments_server::CreateWebhookEndpointResponse> {
        let endpoint = self.insert(
            &context.caller,
            "endpoint",
            json!({
                "id": Uuid::new_v4(), "url": body.url, "events": body.events, "created": now(),
            }),
        );
        let mut with_secret = endpoint;
        with_secret["secret"] = json!("whsec_test");
        Ok(model::<types::WebhookEndpointWithSecret>(with_secret)?.into())
    }

    async fn get_webhook_endpoint(
        &self,
        context: Context,
        id: Uuid,
    ) -> Result<payments_server::GetWebhookEndpointResponse> {
        Ok(model::<types::WebhookEndpoint>(self.find(&context.caller, "endpoint", id)?)?.into())
    }

    async fn list_webhooks(
        &self,
        context: Context,
        query: payments_server::ListWebhooksQuery,
    ) -> Result<payments_server::ListWebhooksResponse> {
        let page: Vec<types::Webhook> = self
            .list(&context.caller, "webhook", query.limit, |_| true)
            .into_iter()
            .map(model)
            .collect::<Result<_>>()?;
        Ok(page.into())
    }

    async fn send_test_webhook(
        &self,
        context: Context,
        body: types::WebhookPing,
    ) -> Result<payments_server::SendTestWebhookResponse> {
        self.find(&context.caller, "endpoint", body.endpoint_id)?;
        Ok(model::<types::Webhook>(json!({
            "id": Uuid::new_v4(), "endpoint_id": body.endpoint_id, "event": "ping", "created": now(),
            "data": {"message": "ping", "endpoint_id": body.endpoint_id},
            "response_code": null, "retry_count": 0, "status": "pending", "next_attempt": now(),
        }))?
        .into())
    }

    async fn get_webhook(&self, context: Context, id: Uuid) -> Result<payments_server::GetWebhookResponse> {
        Ok(model::<types::Webhook>(self.find(&context.caller, "webhook", id)?)?.into())
    }
}
