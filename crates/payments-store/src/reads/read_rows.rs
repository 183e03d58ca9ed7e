//! [`crate::Reads`] written once for both backends, over what each gives it: [`ReadRows`], a
//! query run on the backend's read connections and its rows decoded.

use std::future::Future;

use super::{Cells, Dialect, Query};
use crate::{Page, Result, TenantId};

/// What a backend gives the reads: a query for its [`Dialect`] run on its read connections, each
/// row read as `decode` reads it (a record, from the [`Cells`] every backend's rows answer).
pub trait ReadRows: Send + Sync {
    type Dialect: Dialect + Send;
    type Row<'r>: Cells;

    /// The row `query` finds, if any.
    fn one<T: Send>(
        &self,
        query: Query<Self::Dialect>,
        decode: impl for<'r> Fn(&Self::Row<'r>) -> Result<T> + Send,
    ) -> impl Future<Output = Result<Option<T>>> + Send;

    /// The rows `query` finds.
    fn all<T: Send>(
        &self,
        query: Query<Self::Dialect>,
        decode: impl for<'r> Fn(&Self::Row<'r>) -> Result<T> + Send,
    ) -> impl Future<Output = Result<Vec<T>>> + Send;

    /// A page of a list: `(table, visible)` say where its cursor must be, `list` builds the
    /// query from where the page starts.
    fn page<T: Send + 'static>(
        &self,
        at: (&str, &str),
        tenant: TenantId,
        page: Page,
        list: impl FnOnce(Option<i64>) -> Query<Self::Dialect> + Send,
        decode: impl for<'r> Fn(&Self::Row<'r>) -> Result<T> + Send + 'static,
    ) -> impl Future<Output = Result<Vec<T>>> + Send;
}

#[async_trait::async_trait]
impl<S: ReadRows> crate::Reads for S {
    async fn balance(&self, tenant: TenantId, id: uuid::Uuid) -> Result<Option<crate::BalanceRecord>> {
        self.one(crate::reads::balances::get(tenant, id), |row| crate::reads::balances::record(row)).await
    }

    async fn balances(
        &self,
        tenant: TenantId,
        filter: &crate::BalanceFilter,
        page: Page,
    ) -> Result<Vec<crate::BalanceRecord>> {
        let list = |start| crate::reads::balances::list(tenant, filter, start, page);
        self.page(crate::reads::balances::TABLE, tenant, page, list, |row| crate::reads::balances::record(row)).await
    }

    async fn oldest_balance(&self, tenant: TenantId, currency: &str) -> Result<Option<crate::BalanceRecord>> {
        self.one(crate::reads::balances::oldest(tenant, currency), |row| crate::reads::balances::record(row)).await
    }

    async fn recipient(&self, tenant: TenantId, id: uuid::Uuid) -> Result<Option<payments_types::Recipient>> {
        self.one(crate::reads::recipients::get(tenant, id), |row| crate::reads::recipients::record(row)).await
    }

    async fn recipients(&self, tenant: TenantId, page: Page) -> Result<Vec<payments_types::Recipient>> {
        let list = |start| crate::reads::recipients::list(tenant, start, page);
        self.page(crate::reads::recipients::TABLE, tenant, page, list, |row| crate::reads::recipients::record(row))
            .await
    }

    async fn payment_request(
        &self,
        tenant: TenantId,
        id: uuid::Uuid,
    ) -> Result<Option<payments_types::PaymentRequest>> {
        self.one(crate::reads::payment_requests::get(tenant, id), |row| crate::reads::payment_requests::record(row))
            .await
    }

    async fn payment_request_for_payer(
        &self,
        id: uuid::Uuid,
    ) -> Result<Option<(TenantId, payments_types::PaymentRequest)>> {
        self.one(crate::reads::payment_requests::for_payer(id), |row| {
            crate::reads::owned(row, crate::reads::payment_requests::record)
        })
        .await
    }

    async fn payment_request_by_reference_id(
        &self,
        tenant: TenantId,
        reference_id: &str,
    ) -> Result<Option<crate::Keyed<payments_types::PaymentRequest>>> {
        self.one(crate::reads::payment_requests::by_reference_id(tenant, reference_id), |row| {
            crate::reads::keyed(row, crate::reads::payment_requests::record)
        })
        .await
    }

    async fn payment_requests(
        &self,
        tenant: TenantId,
        filter: &crate::PaymentRequestFilter,
        page: Page,
    ) -> Result<Vec<payments_types::PaymentRequest>> {
        let list = |start| crate::reads::payment_requests::list(tenant, filter, start, page);
        self.page(crate::reads::payment_requests::TABLE, tenant, page, list, |row| {
            crate::reads::payment_requests::record(row)
        })
        .await
    }

    async fn transaction(&self, tenant: TenantId, id: uuid::Uuid) -> Result<Option<payments_types::Transaction>> {
        self.one(crate::reads::transactions::get(tenant, id), |row| crate::reads::transactions::record(row)).await
    }

    async fn transaction_by_order_id(
        &self,
        tenant: TenantId,
        order_id: &str,
    ) -> Result<Option<crate::Keyed<payments_types::Transaction>>> {
        self.one(crate::reads::transactions::by_order_id(tenant, order_id), |row| {
            crate::reads::keyed(row, crate::reads::transactions::record)
        })
        .await
    }

    async fn transactions(
        &self,
        tenant: TenantId,
        filter: &crate::TransactionFilter,
        page: Page,
    ) -> Result<Vec<payments_types::Transaction>> {
        let list = |start| crate::reads::transactions::list(tenant, filter, start, page);
        self.page(crate::reads::transactions::TABLE, tenant, page, list, |row| crate::reads::transactions::record(row))
            .await
    }

    async fn virtual_account(
        &self,
        tenant: TenantId,
        id: uuid::Uuid,
    ) -> Result<Option<payments_types::VirtualAccount>> {
        self.one(crate::reads::virtual_accounts::get(tenant, id), |row| crate::reads::virtual_accounts::record(row))
            .await
    }

    async fn virtual_account_by_reference_id(
        &self,
        tenant: TenantId,
        reference_id: &str,
    ) -> Result<Option<crate::Keyed<payments_types::VirtualAccount>>> {
        self.one(crate::reads::virtual_accounts::by_reference_id(tenant, reference_id), |row| {
            crate::reads::keyed(row, crate::reads::virtual_accounts::record)
        })
        .await
    }

    async fn virtual_accounts(
        &self,
        tenant: TenantId,
        filter: &crate::VirtualAccountFilter,
        page: Page,
    ) -> Result<Vec<payments_types::VirtualAccount>> {
        let list = |start| crate::reads::virtual_accounts::list(tenant, filter, start, page);
        self.page(crate::reads::virtual_accounts::TABLE, tenant, page, list, |row| {
            crate::reads::virtual_accounts::record(row)
        })
        .await
    }

    async fn on_rails(&self, tenant: Option<TenantId>) -> Result<crate::OnRails> {
        use payments_types::TransactionStatus::{Initiated, Processing};
        Ok(crate::OnRails {
            initiated_accounts: self
                .all(crate::reads::virtual_accounts::initiated(tenant), |row| {
                    crate::reads::owned(row, crate::reads::virtual_accounts::record)
                })
                .await?,
            initiated_payments: self
                .all(crate::reads::transactions::on_rails(tenant, Initiated), |row| {
                    crate::reads::owned(row, crate::reads::transactions::record)
                })
                .await?,
            processing_payments: self
                .all(crate::reads::transactions::on_rails(tenant, Processing), |row| {
                    crate::reads::owned(row, crate::reads::transactions::record)
                })
                .await?,
        })
    }

    async fn webhook_endpoint(&self, tenant: TenantId, id: uuid::Uuid) -> Result<Option<crate::EndpointRecord>> {
        self.one(crate::reads::webhooks::endpoint_get(tenant, id), |row| crate::reads::webhooks::endpoint(row)).await
    }

    async fn webhook_endpoints(&self, tenant: TenantId, page: Page) -> Result<Vec<payments_types::WebhookEndpoint>> {
        let list = |start| crate::reads::webhooks::endpoint_list(tenant, start, page);
        self.page(crate::reads::webhooks::ENDPOINTS, tenant, page, list, |row| {
            Ok(crate::reads::webhooks::endpoint(row)?.endpoint)
        })
        .await
    }

    async fn notification(&self, tenant: TenantId, id: uuid::Uuid) -> Result<Option<payments_types::Webhook>> {
        self.one(crate::reads::webhooks::notification_get(tenant, id), |row| crate::reads::webhooks::notification(row))
            .await
    }

    async fn notifications(
        &self,
        tenant: TenantId,
        filter: &crate::NotificationFilter,
        page: Page,
    ) -> Result<Vec<payments_types::Webhook>> {
        let list = |start| crate::reads::webhooks::notification_list(tenant, filter, start, page);
        self.page(crate::reads::webhooks::NOTIFICATIONS, tenant, page, list, |row| {
            crate::reads::webhooks::notification(row)
        })
        .await
    }

    async fn due_endpoints(&self, now: chrono::DateTime<chrono::Utc>) -> Result<Vec<uuid::Uuid>> {
        self.all(crate::reads::webhooks::due_endpoints(now), |row| row.uuid("id")).await
    }
}
