//! Webhook endpoints and their notifications. Every event is fanned out by the store, in the
//! transaction of the change it reports, into one notification per subscribed endpoint (the
//! outbox); `workers::delivery` posts them.

use payments_store::{Change, NotificationFilter, Page};
use payments_types as types;
use uuid::Uuid;

use super::error::{Error, Result, listing};
use super::webhook_targets::{check_resolution, check_url};
use super::{Now, Sandbox, Tenant, changeset, ok, typed};

/// A new signing secret: `whsec_` and 64 hex characters.
fn new_secret() -> String {
    format!("whsec_{}", hex::encode(rand::random::<[u8; 32]>()))
}

fn with_secret(endpoint: types::WebhookEndpoint, secret: String) -> Result<types::WebhookEndpointWithSecret> {
    Ok(types::WebhookEndpointWithSecret {
        id: endpoint.id,
        url: typed(&endpoint.url)?,
        events: endpoint.events,
        created: endpoint.created,
        secret,
    })
}

/// How long a receiver has to answer a notification before the attempt counts as failed.
pub const RECEIVER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long `POST /webhooks` with `wait` waits for the first attempt: under the 10 seconds
/// many HTTP clients wait for an answer, so a receiver that hangs leaves the ping `pending`
/// rather than the caller timing out.
const PING_WAIT: std::time::Duration = std::time::Duration::from_secs(9);

impl Sandbox {
    pub async fn list_webhook_endpoints(&self, tenant: Tenant, page: Page) -> Result<Vec<types::WebhookEndpoint>> {
        self.store.webhook_endpoints(tenant.id, page).await.map_err(listing("webhook endpoint"))
    }

    pub async fn get_webhook_endpoint(&self, tenant: Tenant, id: Uuid) -> Result<types::WebhookEndpoint> {
        Ok(self.endpoint_record(tenant, id).await?.endpoint)
    }

    async fn endpoint_record(&self, tenant: Tenant, id: Uuid) -> Result<payments_store::EndpointRecord> {
        self.store
            .webhook_endpoint(tenant.id, id)
            .await?
            .ok_or_else(|| Error::not_found(format!("webhook endpoint {id}")))
    }

    /// Registers an endpoint. Its URL must be a target the policy admits; a name that resolves
    /// only to forbidden addresses is refused now, rather than failing every delivery later.
    pub async fn create_webhook_endpoint(
        &self,
        tenant: Tenant,
        body: types::WebhookEndpointCreate,
    ) -> Result<types::WebhookEndpointWithSecret> {
        check_resolution(&body.url, self.webhook_policy).await.map_err(Error::invalid)?;
        check_url(&body.url, self.webhook_policy).map_err(Error::invalid)?;
        let now = Now::new();
        let endpoint =
            types::WebhookEndpoint { id: Uuid::new_v4(), url: typed(&body.url)?, events: body.events, created: now.0 };
        let secret = new_secret();
        let insert = Change::InsertWebhookEndpoint { endpoint: Box::new(endpoint.clone()), secret: secret.clone() };
        self.apply(changeset(tenant.id, now).with(insert)).await?;
        with_secret(endpoint, secret)
    }

    /// Deletes an endpoint; what was still to be delivered to it is discarded.
    pub async fn delete_webhook_endpoint(&self, tenant: Tenant, id: Uuid) -> Result<types::ResultOk> {
        self.decide_and_apply(|| async {
            self.endpoint_record(tenant, id).await?;
            Ok((changeset(tenant.id, Now::new()).with(Change::DeleteWebhookEndpoint { id }), ok()))
        })
        .await
    }

    /// A new secret, used for every delivery from now on (retries included).
    pub async fn rotate_webhook_endpoint_secret(
        &self,
        tenant: Tenant,
        id: Uuid,
    ) -> Result<types::WebhookEndpointWithSecret> {
        self.decide_and_apply(|| async {
            let record = self.endpoint_record(tenant, id).await?;
            let secret = new_secret();
            let changes =
                changeset(tenant.id, Now::new()).with(Change::SetWebhookSecret { id, secret: secret.clone() });
            Ok((changes, with_secret(record.endpoint, secret)?))
        })
        .await
    }

    pub async fn list_webhooks(
        &self,
        tenant: Tenant,
        filter: NotificationFilter,
        page: Page,
    ) -> Result<Vec<types::Webhook>> {
        self.store.notifications(tenant.id, &filter, page).await.map_err(listing("webhook"))
    }

    pub async fn get_webhook(&self, tenant: Tenant, id: Uuid) -> Result<types::Webhook> {
        self.store.notification(tenant.id, id).await?.ok_or_else(|| Error::not_found(format!("webhook {id}")))
    }

    /// `POST /webhooks`: a `ping` for one endpoint, queued like any notification, answered as
    /// written (`pending`, due at once); with `wait`, answered once its first attempt has ended
    /// (or, should no worker get to it, after [`PING_WAIT`], still `pending`). The store is read
    /// rather than a worker asked, so the attempt may be any instance's.
    pub async fn send_test_webhook(&self, tenant: Tenant, body: types::WebhookPing) -> Result<types::Webhook> {
        let endpoint = body.endpoint_id;
        self.endpoint_record(tenant, endpoint).await?;
        let now = Now::new();
        let id = Uuid::new_v4();
        let data = serde_json::json!({"message": "ping", "endpoint_id": endpoint});
        let ping = Change::Ping { id, endpoint, data: data.to_string() };
        self.apply(changeset(tenant.id, now).with(ping)).await?;
        if !body.wait {
            // The row as the change above wrote it: no read back on this path.
            return Ok(types::Webhook {
                id,
                endpoint_id: endpoint,
                event: types::WebhookEvent::Ping,
                created: now.0,
                data: data.as_object().cloned().unwrap_or_default(),
                response_code: None,
                retry_count: 0,
                status: types::DeliveryStatus::Pending,
                next_attempt: Some(now.0),
            });
        }
        let deadline = tokio::time::Instant::now() + PING_WAIT;
        loop {
            let stored = self.get_webhook(tenant, id).await?;
            if stored.status != types::DeliveryStatus::Pending || tokio::time::Instant::now() >= deadline {
                return Ok(stored);
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}
