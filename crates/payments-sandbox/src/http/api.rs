//! The generated [`server::Api`] trait, implemented as a mapping and nothing more: each
//! operation turns its path, query and body into a domain call, and the domain's answer into
//! the response or the error object. The per-tenant rate limit is applied here, with
//! authentication, because `429` is an HTTP answer.

use std::num::NonZeroU32;
use std::sync::Arc;

use payments_server::{self as server, ApiError};
use payments_types as types;
use uuid::Uuid;

use crate::domain::{
    BalanceFilter, Error, NotificationFilter, Page, PaymentRequestFilter, Sandbox, Tenant, TenantId, TransactionFilter,
    VirtualAccountFilter,
};

type Limiter = governor::DefaultKeyedRateLimiter<TenantId>;

/// The API as HTTP sees it: the domain, and the rate limit in front of it.
#[derive(Clone)]
pub struct Api {
    sandbox: Sandbox,
    limiter: Option<Arc<Limiter>>,
}

impl Api {
    /// `rate_limit`: requests per second per tenant, bursts of twice that; `None` for no limit.
    pub fn new(sandbox: Sandbox, rate_limit: Option<NonZeroU32>) -> Self {
        let limiter = rate_limit.map(|per_second| {
            let burst = per_second.saturating_mul(NonZeroU32::new(2).expect("2 is not zero"));
            Arc::new(governor::RateLimiter::keyed(governor::Quota::per_second(per_second).allow_burst(burst)))
        });
        Self { sandbox, limiter }
    }
}

/// The domain's refusal as the error object; a failure is logged and answered `500`.
pub fn api_error(error: Error) -> ApiError {
    match error {
        Error::Invalid(message) => ApiError::bad_request(message),
        Error::NotFound(message) => ApiError::not_found(message),
        Error::Conflict(message) => ApiError::conflict(message),
        Error::Internal(message) => {
            tracing::error!(error = %message, "internal error");
            ApiError::internal()
        }
    }
}

fn page(limit: i32, starting_after: Option<Uuid>) -> Page {
    // The router has checked `limit` against the document's bounds (1..=100).
    Page { limit: u32::try_from(limit).unwrap_or(1), starting_after }
}

fn text(value: Option<impl std::fmt::Display>) -> Option<String> {
    value.map(|v| v.to_string())
}

impl server::Api for Api {
    type Principal = Tenant;

    async fn authenticate(&self, token: &str) -> Result<Tenant, ApiError> {
        let tenant = self.sandbox.authenticate(token).await.map_err(api_error)?.ok_or_else(ApiError::unauthorized)?;
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
        let filter = BalanceFilter { currency: text(query.currency.as_deref()) };
        self.sandbox.list_balances(tenant, filter, page(query.limit, query.starting_after)).await.map_err(api_error)
    }

    async fn create_balance(&self, tenant: Tenant, body: types::BalanceCreate) -> Result<types::Balance, ApiError> {
        self.sandbox.create_balance(tenant, body).await.map_err(api_error)
    }

    async fn get_balance(&self, tenant: Tenant, id: Uuid) -> Result<types::Balance, ApiError> {
        self.sandbox.get_balance(tenant, id).await.map_err(api_error)
    }

    async fn update_balance(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::BalanceUpdate,
    ) -> Result<types::Balance, ApiError> {
        self.sandbox.update_balance(tenant, id, body).await.map_err(api_error)
    }

    // -- reference data ---------------------------------------------------------------------

    async fn list_bank_fields(
        &self,
        _: Tenant,
        query: server::ListBankFieldsQuery,
    ) -> Result<Vec<types::BankField>, ApiError> {
        crate::domain::reference::bank_fields(&query.country, &query.currency).map_err(api_error)
    }

    async fn list_countries(&self, _: Tenant) -> Result<Vec<types::Country>, ApiError> {
        Ok(crate::domain::reference::countries())
    }

    async fn list_currencies(&self, _: Tenant) -> Result<Vec<types::Currency>, ApiError> {
        Ok(crate::domain::reference::currencies())
    }

    // -- payment requests -------------------------------------------------------------------

    async fn list_payment_requests(
        &self,
        tenant: Tenant,
        query: server::ListPaymentRequestsQuery,
    ) -> Result<Vec<types::PaymentRequest>, ApiError> {
        let filter = PaymentRequestFilter {
            reference_id: text(query.reference_id.as_deref()),
            currency: text(query.currency.as_deref()),
            settlement_balance_id: query.settlement_balance_id,
            status: query.status,
        };
        self.sandbox
            .list_payment_requests(tenant, filter, page(query.limit, query.starting_after))
            .await
            .map_err(api_error)
    }

    async fn create_payment_request(
        &self,
        tenant: Tenant,
        body: types::PaymentRequestCreate,
    ) -> Result<types::PaymentRequest, ApiError> {
        self.sandbox.create_payment_request(tenant, body).await.map_err(api_error)
    }

    async fn get_payment_request(&self, tenant: Tenant, id: Uuid) -> Result<types::PaymentRequest, ApiError> {
        self.sandbox.get_payment_request(tenant, id).await.map_err(api_error)
    }

    async fn cancel_payment_request(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk, ApiError> {
        self.sandbox.cancel_payment_request(tenant, id).await.map_err(api_error)
    }

    // -- recipients -------------------------------------------------------------------------

    async fn list_recipients(
        &self,
        tenant: Tenant,
        query: server::ListRecipientsQuery,
    ) -> Result<Vec<types::Recipient>, ApiError> {
        self.sandbox.list_recipients(tenant, page(query.limit, query.starting_after)).await.map_err(api_error)
    }

    async fn create_recipient(
        &self,
        tenant: Tenant,
        body: types::RecipientCreate,
    ) -> Result<types::Recipient, ApiError> {
        self.sandbox.create_recipient(tenant, body).await.map_err(api_error)
    }

    async fn validate_recipient(
        &self,
        _: Tenant,
        body: types::RecipientValidate,
    ) -> Result<types::RecipientValidation, ApiError> {
        self.sandbox.validate_recipient(body).map_err(api_error)
    }

    async fn get_recipient(&self, tenant: Tenant, id: Uuid) -> Result<types::Recipient, ApiError> {
        self.sandbox.get_recipient(tenant, id).await.map_err(api_error)
    }

    async fn delete_recipient(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk, ApiError> {
        self.sandbox.delete_recipient(tenant, id).await.map_err(api_error)
    }

    async fn update_recipient(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::RecipientUpdate,
    ) -> Result<types::Recipient, ApiError> {
        self.sandbox.update_recipient(tenant, id, body).await.map_err(api_error)
    }

    // -- sandbox controls -------------------------------------------------------------------

    async fn advance_sandbox(&self, tenant: Tenant) -> Result<types::SandboxAdvance, ApiError> {
        self.sandbox.advance_sandbox(tenant).await.map_err(api_error)
    }

    async fn simulate_payment(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: Option<types::SimulatePayment>,
    ) -> Result<types::PaymentRequest, ApiError> {
        self.sandbox.simulate_payment(tenant, id, body).await.map_err(api_error)
    }

    async fn simulate_transaction_status(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::SimulateTransactionStatus,
    ) -> Result<types::Transaction, ApiError> {
        self.sandbox.simulate_transaction_status(tenant, id, body).await.map_err(api_error)
    }

    async fn simulate_virtual_account_status(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::SimulateVirtualAccountStatus,
    ) -> Result<types::VirtualAccount, ApiError> {
        self.sandbox.simulate_virtual_account_status(tenant, id, body).await.map_err(api_error)
    }

    async fn simulate_balance_transfer(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::SimulateBalanceTransfer,
    ) -> Result<types::Transaction, ApiError> {
        self.sandbox.simulate_balance_transfer(tenant, id, body).await.map_err(api_error)
    }

    async fn simulate_inbound_transfer(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::SimulateInboundTransfer,
    ) -> Result<types::Transaction, ApiError> {
        self.sandbox.simulate_inbound_transfer(tenant, id, body).await.map_err(api_error)
    }

    // -- transactions -----------------------------------------------------------------------

    async fn list_transactions(
        &self,
        tenant: Tenant,
        query: server::ListTransactionsQuery,
    ) -> Result<Vec<types::Transaction>, ApiError> {
        let filter = TransactionFilter {
            order_id: text(query.order_id.as_deref()),
            recipient_id: query.recipient_id,
            recipient_country: text(query.recipient_country.as_deref()),
            balance_id: query.balance_id,
            virtual_account_id: query.virtual_account_id,
            transaction_type: query.transaction_type,
            currency: text(query.currency.as_deref()),
            to_currency: text(query.to_currency.as_deref()),
            status: query.status,
            created_from: query.from_datetime,
            created_before: query.to_datetime,
            search: query.search,
        };
        self.sandbox.list_transactions(tenant, filter, page(query.limit, query.starting_after)).await.map_err(api_error)
    }

    async fn create_transaction(
        &self,
        tenant: Tenant,
        body: types::TransactionCreate,
    ) -> Result<types::Transaction, ApiError> {
        self.sandbox.create_transaction(tenant, body).await.map_err(api_error)
    }

    async fn get_transaction(&self, tenant: Tenant, id: Uuid) -> Result<types::Transaction, ApiError> {
        self.sandbox.get_transaction(tenant, id).await.map_err(api_error)
    }

    // -- virtual accounts -------------------------------------------------------------------

    async fn list_virtual_accounts(
        &self,
        tenant: Tenant,
        query: server::ListVirtualAccountsQuery,
    ) -> Result<Vec<types::VirtualAccount>, ApiError> {
        let filter = VirtualAccountFilter {
            reference_id: text(query.reference_id.as_deref()),
            currency: text(query.currency.as_deref()),
            settlement_balance_id: query.settlement_balance_id,
            status: query.status,
            search: query.search,
        };
        self.sandbox
            .list_virtual_accounts(tenant, filter, page(query.limit, query.starting_after))
            .await
            .map_err(api_error)
    }

    async fn create_virtual_account(
        &self,
        tenant: Tenant,
        body: types::VirtualAccountCreate,
    ) -> Result<types::VirtualAccount, ApiError> {
        self.sandbox.create_virtual_account(tenant, body).await.map_err(api_error)
    }

    async fn get_virtual_account(&self, tenant: Tenant, id: Uuid) -> Result<types::VirtualAccount, ApiError> {
        self.sandbox.get_virtual_account(tenant, id).await.map_err(api_error)
    }

    async fn close_virtual_account(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk, ApiError> {
        self.sandbox.close_virtual_account(tenant, id).await.map_err(api_error)
    }

    async fn update_virtual_account(
        &self,
        tenant: Tenant,
        id: Uuid,
        body: types::VirtualAccountUpdate,
    ) -> Result<types::VirtualAccount, ApiError> {
        self.sandbox.update_virtual_account(tenant, id, body).await.map_err(api_error)
    }

    // -- webhook endpoints and notifications ------------------------------------------------

    async fn list_webhook_endpoints(
        &self,
        tenant: Tenant,
        query: server::ListWebhookEndpointsQuery,
    ) -> Result<Vec<types::WebhookEndpoint>, ApiError> {
        self.sandbox.list_webhook_endpoints(tenant, page(query.limit, query.starting_after)).await.map_err(api_error)
    }

    async fn create_webhook_endpoint(
        &self,
        tenant: Tenant,
        body: types::WebhookEndpointCreate,
    ) -> Result<types::WebhookEndpointWithSecret, ApiError> {
        self.sandbox.create_webhook_endpoint(tenant, body).await.map_err(api_error)
    }

    async fn get_webhook_endpoint(&self, tenant: Tenant, id: Uuid) -> Result<types::WebhookEndpoint, ApiError> {
        self.sandbox.get_webhook_endpoint(tenant, id).await.map_err(api_error)
    }

    async fn delete_webhook_endpoint(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk, ApiError> {
        self.sandbox.delete_webhook_endpoint(tenant, id).await.map_err(api_error)
    }

    async fn rotate_webhook_endpoint_secret(
        &self,
        tenant: Tenant,
        id: Uuid,
    ) -> Result<types::WebhookEndpointWithSecret, ApiError> {
        self.sandbox.rotate_webhook_endpoint_secret(tenant, id).await.map_err(api_error)
    }

    async fn list_webhooks(
        &self,
        tenant: Tenant,
        query: server::ListWebhooksQuery,
    ) -> Result<Vec<types::Webhook>, ApiError> {
        let filter = NotificationFilter {
            endpoint_id: query.endpoint_id,
            created_from: query.from_datetime,
            created_before: query.to_datetime,
        };
        self.sandbox.list_webhooks(tenant, filter, page(query.limit, query.starting_after)).await.map_err(api_error)
    }

    async fn send_test_webhook(&self, tenant: Tenant, body: types::WebhookPing) -> Result<types::Webhook, ApiError> {
        self.sandbox.send_test_webhook(tenant, body).await.map_err(api_error)
    }

    async fn get_webhook(&self, tenant: Tenant, id: Uuid) -> Result<types::Webhook, ApiError> {
        self.sandbox.get_webhook(tenant, id).await.map_err(api_error)
    }
}
