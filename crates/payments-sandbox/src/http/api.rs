//! The generated [`server::Api`] trait, implemented as a mapping and nothing more: each
//! operation turns its path, query and body into a domain call, and the domain's answer into
//! the response or the error object. The per-tenant rate limit is applied here, with
//! authentication, because `429` is an HTTP answer.

use std::num::NonZeroU32;
use std::sync::Arc;

use payments_server::{self as server, ApiError};
use payments_types as types;
use uuid::Uuid;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use payments_server::runtime::Prepared;
use tokio::sync::OnceCell;

use crate::domain::error::Outage;
use crate::domain::{
    BalanceFilter, Error, NotificationFilter, Page, PaymentRequestFilter, Sandbox, Tenant, TenantId, TransactionFilter,
    VirtualAccountFilter, outages,
};

type Limiter = governor::DefaultKeyedRateLimiter<TenantId>;
/// What each operation knows of its request: the tenant calling, headers, request id.
type Context = server::RequestContext<Tenant>;

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

/// Reference data is compiled in, so its answer is the same every time: written once, then
/// answered as written (serializing it again was most of a `GET /currencies`: instructions per
/// request, BENCHMARKS.md).
async fn prepared<R: IntoResponse + Clone>(
    answer: &'static OnceCell<R>,
    make: impl FnOnce() -> R,
    wrap: fn(Prepared<R>) -> R,
) -> Result<R, ApiError> {
    let written = answer.get_or_try_init(|| async { Prepared::new(make()).await.map(wrap) }).await;
    written.cloned().map_err(|_| ApiError::internal())
}

/// The domain's refusal as the error object; a failure is logged and answered `500`; an outage
/// is reported (see `domain::outages`) and answered `503` (`507` for a full disk, `504` when a
/// commit's outcome is unknown) with `Retry-After`.
impl From<Error> for ApiError {
    fn from(error: Error) -> Self {
        outages::report(&error, "a request");
        error_object(error)
    }
}

/// The error object for `error`, as `From<Error>` answers it, without reporting an outage (for
/// `GET /readyz`, whose checks are not failures of their own).
pub fn error_object(error: Error) -> ApiError {
    match error {
        Error::Invalid(message) => ApiError::bad_request(message),
        Error::NotFound(message) => ApiError::not_found(message),
        Error::Conflict(message) => ApiError::conflict(message),
        Error::Internal(_) | Error::Store(_) => {
            tracing::error!(id = super::edge::request_id_answered(), error = %error.chain(), "internal error");
            ApiError::internal()
        }
        Error::Unavailable { outage, .. } => {
            let (status, seconds) = match outage {
                Outage::DiskFull => (StatusCode::INSUFFICIENT_STORAGE, 30),
                Outage::ReadOnly => (StatusCode::SERVICE_UNAVAILABLE, 30),
                Outage::Unreachable | Outage::Io => (StatusCode::SERVICE_UNAVAILABLE, 5),
                Outage::Busy => (StatusCode::SERVICE_UNAVAILABLE, 1),
            };
            let reason = status.canonical_reason().unwrap_or("Unavailable");
            ApiError::new(
                status,
                format!(
                    "{reason}: {outage}, so nothing was changed. Retry after {seconds} seconds: a request retried \
                     with the same order_id or reference_id is made at most once"
                ),
            )
            .retry_after(seconds)
        }
        Error::OutcomeUnknown(_) => ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "Gateway timeout: the connection to the database was lost while this change was being committed, \
                 so it may or may not have been made. Retry it with the same order_id or reference_id to find out \
                 (one already made is answered, not made again); for a change without such a key, read the \
                 resource before retrying",
        )
        .retry_after(5),
    }
}

fn page(limit: i32, starting_after: Option<Uuid>) -> Page {
    // The router has checked `limit` against the document's bounds (1..=100).
    Page { limit: u32::try_from(limit).unwrap_or(1), starting_after }
}

fn text(value: Option<impl std::fmt::Display>) -> Option<String> {
    value.map(|v| v.to_string())
}

impl server::Api<Tenant> for Api {
    async fn authenticate(&self, credentials: &[server::Credential<'_>]) -> Result<Tenant, ApiError> {
        // The document's one scheme: a bearer token.
        let [server::Credential::BearerAuth(token)] = credentials else { return Err(ApiError::unauthorized()) };
        let tenant =
            self.sandbox.authenticate(token).await.map_err(ApiError::from)?.ok_or_else(ApiError::unauthorized)?;
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
        context: Context,
        query: server::ListBalancesQuery,
    ) -> Result<server::ListBalancesResponse, ApiError> {
        let filter = BalanceFilter { currency: text(query.currency.as_deref()) };
        self.sandbox
            .list_balances(context.caller, filter, page(query.limit, query.starting_after))
            .await
            .map(Into::into)
            .map_err(ApiError::from)
    }

    async fn create_balance(
        &self,
        context: Context,
        body: types::BalanceCreate,
    ) -> Result<server::CreateBalanceResponse, ApiError> {
        self.sandbox.create_balance(context.caller, body).await.map(Into::into).map_err(ApiError::from)
    }

    async fn get_balance(&self, context: Context, id: Uuid) -> Result<server::GetBalanceResponse, ApiError> {
        self.sandbox.get_balance(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }

    async fn update_balance(
        &self,
        context: Context,
        id: Uuid,
        body: types::BalanceUpdate,
    ) -> Result<server::UpdateBalanceResponse, ApiError> {
        self.sandbox.update_balance(context.caller, id, body).await.map(Into::into).map_err(ApiError::from)
    }

    // -- reference data ---------------------------------------------------------------------

    async fn list_bank_fields(
        &self,
        _: Context,
        query: server::ListBankFieldsQuery,
    ) -> Result<server::ListBankFieldsResponse, ApiError> {
        crate::domain::reference::bank_fields(&query.country, &query.currency).map(Into::into).map_err(ApiError::from)
    }

    async fn list_countries(&self, _: Context) -> Result<server::ListCountriesResponse, ApiError> {
        static ANSWER: OnceCell<server::ListCountriesResponse> = OnceCell::const_new();
        prepared(&ANSWER, || crate::domain::reference::countries().into(), server::ListCountriesResponse::Prepared)
            .await
    }

    async fn list_currencies(&self, _: Context) -> Result<server::ListCurrenciesResponse, ApiError> {
        static ANSWER: OnceCell<server::ListCurrenciesResponse> = OnceCell::const_new();
        prepared(&ANSWER, || crate::domain::reference::currencies().into(), server::ListCurrenciesResponse::Prepared)
            .await
    }

    // -- payment requests -------------------------------------------------------------------

    async fn list_payment_requests(
        &self,
        context: Context,
        query: server::ListPaymentRequestsQuery,
    ) -> Result<server::ListPaymentRequestsResponse, ApiError> {
        let filter = PaymentRequestFilter {
            reference_id: text(query.reference_id.as_deref()),
            currency: text(query.currency.as_deref()),
            settlement_balance_id: query.settlement_balance_id,
            status: query.status,
        };
        self.sandbox
            .list_payment_requests(context.caller, filter, page(query.limit, query.starting_after))
            .await
            .map(Into::into)
            .map_err(ApiError::from)
    }

    async fn create_payment_request(
        &self,
        context: Context,
        body: types::PaymentRequestCreate,
    ) -> Result<server::CreatePaymentRequestResponse, ApiError> {
        self.sandbox.create_payment_request(context.caller, body).await.map(Into::into).map_err(ApiError::from)
    }

    async fn get_payment_request(
        &self,
        context: Context,
        id: Uuid,
    ) -> Result<server::GetPaymentRequestResponse, ApiError> {
        self.sandbox.get_payment_request(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }

    async fn cancel_payment_request(
        &self,
        context: Context,
        id: Uuid,
    ) -> Result<server::CancelPaymentRequestResponse, ApiError> {
        self.sandbox.cancel_payment_request(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }

    // -- recipients -------------------------------------------------------------------------

    async fn list_recipients(
        &self,
        context: Context,
        query: server::ListRecipientsQuery,
    ) -> Result<server::ListRecipientsResponse, ApiError> {
        self.sandbox
            .list_recipients(context.caller, page(query.limit, query.starting_after))
            .await
            .map(Into::into)
            .map_err(ApiError::from)
    }

    async fn create_recipient(
        &self,
        context: Context,
        body: types::RecipientCreate,
    ) -> Result<server::CreateRecipientResponse, ApiError> {
        self.sandbox.create_recipient(context.caller, body).await.map(Into::into).map_err(ApiError::from)
    }

    async fn validate_recipient(
        &self,
        _: Context,
        body: types::RecipientValidate,
    ) -> Result<server::ValidateRecipientResponse, ApiError> {
        self.sandbox.validate_recipient(body).map(Into::into).map_err(ApiError::from)
    }

    async fn get_recipient(&self, context: Context, id: Uuid) -> Result<server::GetRecipientResponse, ApiError> {
        self.sandbox.get_recipient(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }

    async fn delete_recipient(&self, context: Context, id: Uuid) -> Result<server::DeleteRecipientResponse, ApiError> {
        self.sandbox.delete_recipient(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }

    async fn update_recipient(
        &self,
        context: Context,
        id: Uuid,
        body: types::RecipientUpdate,
    ) -> Result<server::UpdateRecipientResponse, ApiError> {
        self.sandbox.update_recipient(context.caller, id, body).await.map(Into::into).map_err(ApiError::from)
    }

    // -- sandbox controls -------------------------------------------------------------------

    async fn advance_sandbox(&self, context: Context) -> Result<server::AdvanceSandboxResponse, ApiError> {
        self.sandbox.advance_sandbox(context.caller).await.map(Into::into).map_err(ApiError::from)
    }

    async fn simulate_payment(
        &self,
        context: Context,
        id: Uuid,
        body: Option<types::SimulatePayment>,
    ) -> Result<server::SimulatePaymentResponse, ApiError> {
        self.sandbox.simulate_payment(context.caller, id, body).await.map(Into::into).map_err(ApiError::from)
    }

    async fn simulate_transaction_status(
        &self,
        context: Context,
        id: Uuid,
        body: types::SimulateTransactionStatus,
    ) -> Result<server::SimulateTransactionStatusResponse, ApiError> {
        self.sandbox.simulate_transaction_status(context.caller, id, body).await.map(Into::into).map_err(ApiError::from)
    }

    async fn simulate_virtual_account_status(
        &self,
        context: Context,
        id: Uuid,
        body: types::SimulateVirtualAccountStatus,
    ) -> Result<server::SimulateVirtualAccountStatusResponse, ApiError> {
        self.sandbox
            .simulate_virtual_account_status(context.caller, id, body)
            .await
            .map(Into::into)
            .map_err(ApiError::from)
    }

    async fn simulate_balance_transfer(
        &self,
        context: Context,
        id: Uuid,
        body: types::SimulateBalanceTransfer,
    ) -> Result<server::SimulateBalanceTransferResponse, ApiError> {
        self.sandbox.simulate_balance_transfer(context.caller, id, body).await.map(Into::into).map_err(ApiError::from)
    }

    async fn simulate_inbound_transfer(
        &self,
        context: Context,
        id: Uuid,
        body: types::SimulateInboundTransfer,
    ) -> Result<server::SimulateInboundTransferResponse, ApiError> {
        self.sandbox.simulate_inbound_transfer(context.caller, id, body).await.map(Into::into).map_err(ApiError::from)
    }

    // -- transactions -----------------------------------------------------------------------

    async fn list_transactions(
        &self,
        context: Context,
        query: server::ListTransactionsQuery,
    ) -> Result<server::ListTransactionsResponse, ApiError> {
        let filter = TransactionFilter {
            order_id: text(query.order_id.as_deref()),
            recipient_id: query.recipient_id,
            recipient_country: text(query.recipient_country.as_deref()),
            balance_id: query.balance_id,
            virtual_account_id: query.virtual_account_id,
            scheduled_payment_id: query.scheduled_payment_id,
            transaction_type: query.transaction_type,
            currency: text(query.currency.as_deref()),
            to_currency: text(query.to_currency.as_deref()),
            status: query.status,
            created_from: query.from_datetime,
            created_before: query.to_datetime,
            search: query.search,
        };
        self.sandbox
            .list_transactions(context.caller, filter, page(query.limit, query.starting_after))
            .await
            .map(Into::into)
            .map_err(ApiError::from)
    }

    async fn create_transaction(
        &self,
        context: Context,
        body: types::TransactionCreate,
    ) -> Result<server::CreateTransactionResponse, ApiError> {
        self.sandbox.create_transaction(context.caller, body).await.map(Into::into).map_err(ApiError::from)
    }

    async fn get_transaction(&self, context: Context, id: Uuid) -> Result<server::GetTransactionResponse, ApiError> {
        self.sandbox.get_transaction(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }

    // -- virtual accounts -------------------------------------------------------------------

    async fn list_virtual_accounts(
        &self,
        context: Context,
        query: server::ListVirtualAccountsQuery,
    ) -> Result<server::ListVirtualAccountsResponse, ApiError> {
        let filter = VirtualAccountFilter {
            reference_id: text(query.reference_id.as_deref()),
            currency: text(query.currency.as_deref()),
            settlement_balance_id: query.settlement_balance_id,
            status: query.status,
            search: query.search,
        };
        self.sandbox
            .list_virtual_accounts(context.caller, filter, page(query.limit, query.starting_after))
            .await
            .map(Into::into)
            .map_err(ApiError::from)
    }

    async fn create_virtual_account(
        &self,
        context: Context,
        body: types::VirtualAccountCreate,
    ) -> Result<server::CreateVirtualAccountResponse, ApiError> {
        self.sandbox.create_virtual_account(context.caller, body).await.map(Into::into).map_err(ApiError::from)
    }

    async fn get_virtual_account(
        &self,
        context: Context,
        id: Uuid,
    ) -> Result<server::GetVirtualAccountResponse, ApiError> {
        self.sandbox.get_virtual_account(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }

    async fn close_virtual_account(
        &self,
        context: Context,
        id: Uuid,
    ) -> Result<server::CloseVirtualAccountResponse, ApiError> {
        self.sandbox.close_virtual_account(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }

    async fn update_virtual_account(
        &self,
        context: Context,
        id: Uuid,
        body: types::VirtualAccountUpdate,
    ) -> Result<server::UpdateVirtualAccountResponse, ApiError> {
        self.sandbox.update_virtual_account(context.caller, id, body).await.map(Into::into).map_err(ApiError::from)
    }

    // -- webhook endpoints and notifications ------------------------------------------------

    async fn list_webhook_endpoints(
        &self,
        context: Context,
        query: server::ListWebhookEndpointsQuery,
    ) -> Result<server::ListWebhookEndpointsResponse, ApiError> {
        self.sandbox
            .list_webhook_endpoints(context.caller, page(query.limit, query.starting_after))
            .await
            .map(Into::into)
            .map_err(ApiError::from)
    }

    async fn create_webhook_endpoint(
        &self,
        context: Context,
        body: types::WebhookEndpointCreate,
    ) -> Result<server::CreateWebhookEndpointResponse, ApiError> {
        self.sandbox.create_webhook_endpoint(context.caller, body).await.map(Into::into).map_err(ApiError::from)
    }

    async fn get_webhook_endpoint(
        &self,
        context: Context,
        id: Uuid,
    ) -> Result<server::GetWebhookEndpointResponse, ApiError> {
        self.sandbox.get_webhook_endpoint(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }

    async fn delete_webhook_endpoint(
        &self,
        context: Context,
        id: Uuid,
    ) -> Result<server::DeleteWebhookEndpointResponse, ApiError> {
        self.sandbox.delete_webhook_endpoint(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }

    async fn rotate_webhook_endpoint_secret(
        &self,
        context: Context,
        id: Uuid,
    ) -> Result<server::RotateWebhookEndpointSecretResponse, ApiError> {
        self.sandbox.rotate_webhook_endpoint_secret(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }

    async fn list_webhooks(
        &self,
        context: Context,
        query: server::ListWebhooksQuery,
    ) -> Result<server::ListWebhooksResponse, ApiError> {
        let filter = NotificationFilter {
            endpoint_id: query.endpoint_id,
            created_from: query.from_datetime,
            created_before: query.to_datetime,
        };
        self.sandbox
            .list_webhooks(context.caller, filter, page(query.limit, query.starting_after))
            .await
            .map(Into::into)
            .map_err(ApiError::from)
    }

    async fn send_test_webhook(
        &self,
        context: Context,
        body: types::WebhookPing,
    ) -> Result<server::SendTestWebhookResponse, ApiError> {
        self.sandbox.send_test_webhook(context.caller, body).await.map(Into::into).map_err(ApiError::from)
    }

    async fn get_webhook(&self, context: Context, id: Uuid) -> Result<server::GetWebhookResponse, ApiError> {
        self.sandbox.get_webhook(context.caller, id).await.map(Into::into).map_err(ApiError::from)
    }
}
