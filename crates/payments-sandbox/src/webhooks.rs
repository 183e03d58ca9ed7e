//! Webhook endpoints and stored notifications: the database side of webhooks. Every recorded
//! event is fanned out here, in the transaction that records it, into one notification per
//! subscribed endpoint (the outbox); `delivery` posts them.

use std::net::IpAddr;

use payments_server::{ApiError, ListWebhooksQuery};
use payments_types as types;
use rusqlite::{OptionalExtension, params};
use uuid::Uuid;

use crate::service::{Now, typed};
use crate::store::{Page, Tx, db_error};

/// Who may be a delivery target.
#[derive(Debug, Clone, Copy, Default)]
pub struct TargetPolicy {
    /// Admit loopback addresses, and plain `http://` to them (local development and tests).
    pub allow_loopback: bool,
}

/// Why an address may not be a target: loopback, private, link-local, metadata and the other
/// special-purpose ranges, so the sandbox can't be pointed at its own network.
pub fn forbidden_address(ip: IpAddr, policy: TargetPolicy) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    };
    if ip.is_loopback() {
        return (!policy.allow_loopback).then_some("a loopback address");
    }
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_private() {
                Some("a private address")
            } else if v4.is_link_local() {
                Some("a link-local or metadata address")
            } else if v4.is_unspecified() || v4.is_broadcast() || v4.is_multicast() || a == 0 || a >= 240 {
                Some("a reserved address")
            } else if a == 100 && (64..128).contains(&b) {
                Some("a shared (carrier-grade NAT) address")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let first = v6.segments()[0];
            if v6.is_unspecified() || v6.is_multicast() {
                Some("a reserved address")
            } else if first & 0xfe00 == 0xfc00 {
                Some("a private (unique local) address")
            } else if first & 0xffc0 == 0xfe80 {
                Some("a link-local address")
            } else {
                None
            }
        }
    }
}

/// Checks an endpoint URL: `https://` (or `http://` to loopback when allowed), and a host that
/// is not a forbidden literal address. Names are checked again when they are resolved, at each
/// delivery.
pub fn check_url(raw: &str, policy: TargetPolicy) -> Result<url::Url, String> {
    let url = url::Url::parse(raw).map_err(|e| format!("url: {raw:?} is not a URL ({e})"))?;
    let host = url.host().ok_or_else(|| "url: has no host".to_owned())?;
    let literal: Option<IpAddr> = match host {
        url::Host::Ipv4(v4) => Some(v4.into()),
        url::Host::Ipv6(v6) => Some(v6.into()),
        url::Host::Domain(name) => (name.eq_ignore_ascii_case("localhost")).then(|| [127, 0, 0, 1].into()),
    };
    let loopback = literal.is_some_and(|ip| ip.is_loopback());
    match url.scheme() {
        "https" => {}
        "http" if loopback && policy.allow_loopback => {}
        _ => return Err("url: must be an https:// URL".into()),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("url: must not carry credentials".into());
    }
    if let Some(reason) = literal.and_then(|ip| forbidden_address(ip, policy)) {
        return Err(format!("url: {host} is {reason}, which cannot receive notifications"));
    }
    Ok(url)
}

/// At registration, a name that resolves only to forbidden addresses is refused at once (the
/// caller learns now, not from failed deliveries). A name that does not resolve (yet) is
/// accepted: deliveries check again, on the address they connect to.
pub async fn check_resolution(raw: &str, policy: TargetPolicy) -> Result<(), String> {
    let url = check_url(raw, policy)?;
    let Some(url::Host::Domain(name)) = url.host() else { return Ok(()) };
    let port = url.port_or_known_default().unwrap_or(443);
    let lookup = tokio::time::timeout(std::time::Duration::from_secs(3), tokio::net::lookup_host((name, port))).await;
    let Ok(Ok(addresses)) = lookup else { return Ok(()) };
    let addresses: Vec<IpAddr> = addresses.map(|a| a.ip()).collect();
    match only_forbidden(&addresses, policy) {
        Some(reason) => Err(format!("url: {name} resolves to {reason}, which cannot receive notifications")),
        None => Ok(()),
    }
}

/// Why none of `addresses` may be a target, or `None` when one may.
fn only_forbidden(addresses: &[IpAddr], policy: TargetPolicy) -> Option<&'static str> {
    let reasons: Vec<_> = addresses.iter().map(|ip| forbidden_address(*ip, policy)).collect();
    if reasons.is_empty() || reasons.iter().any(Option::is_none) { None } else { reasons[0] }
}

fn new_secret() -> String {
    format!("whsec_{}", hex::encode(rand::random::<[u8; 32]>()))
}

struct EndpointRow {
    id: Uuid,
    url: String,
    events: Option<String>,
    created: String,
    secret: String,
}

/// A row of `SELECT id, url, events, created, secret FROM webhook_endpoints`.
fn endpoint_row(row: &rusqlite::Row) -> rusqlite::Result<EndpointRow> {
    Ok(EndpointRow {
        id: row.get::<_, String>(0)?.parse().unwrap_or_default(),
        url: row.get(1)?,
        events: row.get(2)?,
        created: row.get(3)?,
        secret: row.get(4)?,
    })
}

fn find_endpoint(tx: &Tx, tenant: Uuid, id: Uuid) -> Result<EndpointRow, ApiError> {
    tx.sql()
        .query_row(
            "SELECT id, url, events, created, secret FROM webhook_endpoints WHERE id = ? AND tenant_id = ? AND deleted = 0",
            params![id.to_string(), tenant.to_string()],
            endpoint_row,
        )
        .optional()
        .map_err(db_error)?
        .ok_or_else(|| ApiError::not_found(format!("webhook endpoint {id}")))
}

fn endpoint(row: &EndpointRow) -> Result<types::WebhookEndpoint, ApiError> {
    Ok(types::WebhookEndpoint {
        id: row.id,
        url: typed(&row.url)?,
        events: row.events.as_deref().map(serde_json::from_str).transpose().map_err(db_error)?,
        created: typed(&row.created)?,
    })
}

fn with_secret(row: &EndpointRow) -> Result<types::WebhookEndpointWithSecret, ApiError> {
    let plain = endpoint(row)?;
    Ok(types::WebhookEndpointWithSecret {
        id: plain.id,
        url: typed(&row.url)?,
        events: plain.events,
        created: plain.created,
        secret: row.secret.clone(),
    })
}

pub fn create_endpoint(
    tx: &Tx,
    now: Now,
    tenant: Uuid,
    body: types::WebhookEndpointCreate,
    policy: TargetPolicy,
) -> Result<types::WebhookEndpointWithSecret, ApiError> {
    check_url(&body.url, policy).map_err(ApiError::bad_request)?;
    let events = body.events.as_ref().map(serde_json::to_string).transpose().map_err(db_error)?;
    let row = EndpointRow {
        id: Uuid::new_v4(),
        url: body.url.to_string(),
        events,
        created: now.text(),
        secret: new_secret(),
    };
    tx.sql()
        .execute(
            "INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret, created) VALUES (?, ?, ?, ?, ?, ?)",
            params![row.id.to_string(), tenant.to_string(), row.url, row.events, row.secret, row.created],
        )
        .map_err(db_error)?;
    with_secret(&row)
}

pub fn list_endpoints(tx: &Tx, tenant: Uuid, page: &Page) -> Result<Vec<types::WebhookEndpoint>, ApiError> {
    let after = match page.starting_after {
        Some(id) => tx.cursor(
            "SELECT seq FROM webhook_endpoints WHERE id = ?1 AND tenant_id = ?2 AND deleted = 0",
            params![id.to_string(), tenant.to_string()],
            id,
            "webhook endpoint",
        )?,
        None => i64::MAX,
    };
    let mut statement = tx
        .sql()
        .prepare_cached(
            "SELECT id, url, events, created, secret FROM webhook_endpoints
             WHERE tenant_id = ? AND deleted = 0 AND seq < ? ORDER BY seq DESC LIMIT ?",
        )
        .map_err(db_error)?;
    let rows = statement.query_map(params![tenant.to_string(), after, page.limit], endpoint_row).map_err(db_error)?;
    rows.map(|row| endpoint(&row.map_err(db_error)?)).collect()
}

pub fn get_endpoint(tx: &Tx, tenant: Uuid, id: Uuid) -> Result<types::WebhookEndpoint, ApiError> {
    endpoint(&find_endpoint(tx, tenant, id)?)
}

/// Deletes the endpoint and discards what was still to be delivered to it.
pub fn delete_endpoint(tx: &Tx, tenant: Uuid, id: Uuid) -> Result<(), ApiError> {
    find_endpoint(tx, tenant, id)?;
    tx.sql()
        .execute("UPDATE webhook_endpoints SET deleted = 1 WHERE id = ?", params![id.to_string()])
        .map_err(db_error)?;
    tx.sql()
        .execute(
            "UPDATE notifications SET status = 'discarded', next_attempt_us = NULL
             WHERE endpoint_id = ? AND next_attempt_us IS NOT NULL",
            params![id.to_string()],
        )
        .map_err(db_error)?;
    Ok(())
}

pub fn rotate_secret(tx: &Tx, tenant: Uuid, id: Uuid) -> Result<types::WebhookEndpointWithSecret, ApiError> {
    let mut row = find_endpoint(tx, tenant, id)?;
    row.secret = new_secret();
    tx.sql()
        .execute("UPDATE webhook_endpoints SET secret = ? WHERE id = ?", params![row.secret, id.to_string()])
        .map_err(db_error)?;
    with_secret(&row)
}

/// Queues `event` (with `data`, already JSON) for every endpoint of `tenant` subscribed to it,
/// due at once.
pub fn enqueue(tx: &Tx, tenant: Uuid, event: &str, now: &str, data: &str) -> Result<(), ApiError> {
    let endpoints: Vec<String> = {
        let mut statement = tx
            .sql()
            .prepare_cached(
                "SELECT id FROM webhook_endpoints WHERE tenant_id = ? AND deleted = 0
                 AND (events IS NULL OR EXISTS (SELECT 1 FROM json_each(events) WHERE value = ?))",
            )
            .map_err(db_error)?;
        let rows = statement.query_map(params![tenant.to_string(), event], |row| row.get(0)).map_err(db_error)?;
        rows.collect::<Result<_, _>>().map_err(db_error)?
    };
    for endpoint in endpoints {
        insert_notification(tx, tenant, &endpoint, Uuid::new_v4(), event, now, data)?;
    }
    Ok(())
}

fn insert_notification(
    tx: &Tx,
    tenant: Uuid,
    endpoint: &str,
    id: Uuid,
    event: &str,
    now: &str,
    data: &str,
) -> Result<(), ApiError> {
    let created: chrono::DateTime<chrono::Utc> = typed(now)?;
    tx.sql()
        .execute(
            "INSERT INTO notifications (id, tenant_id, endpoint_id, event, created, created_us, data, status, next_attempt_us)
             VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?)",
            params![id.to_string(), tenant.to_string(), endpoint, event, now, created.timestamp_micros(), data, created.timestamp_micros()],
        )
        .map_err(db_error)?;
    Ok(())
}

/// `POST /webhooks`: a `ping` for one endpoint, queued like any notification.
pub fn ping(tx: &Tx, now: Now, tenant: Uuid, endpoint_id: Uuid) -> Result<types::Notification, ApiError> {
    find_endpoint(tx, tenant, endpoint_id)?;
    let id = Uuid::new_v4();
    let data = serde_json::json!({"message": "ping", "endpoint_id": endpoint_id});
    insert_notification(tx, tenant, &endpoint_id.to_string(), id, "ping", &now.text(), &data.to_string())?;
    Ok(types::Notification {
        id,
        event: types::WebhookEvent::Ping,
        created: now.0,
        data: data.as_object().cloned().unwrap_or_default(),
    })
}

const NOTIFICATION_COLUMNS: &str =
    "id, endpoint_id, event, created, data, response_code, MAX(attempts - 1, 0), status, next_attempt_us";

/// A `notifications` row in the order of [`NOTIFICATION_COLUMNS`].
type NotificationRow = (String, String, String, String, String, Option<i32>, i32, String, Option<i64>);

fn notification(row: &rusqlite::Row) -> rusqlite::Result<NotificationRow> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        row.get(2)?,
        row.get(3)?,
        row.get(4)?,
        row.get(5)?,
        row.get(6)?,
        row.get(7)?,
        row.get(8)?,
    ))
}

fn webhook(row: NotificationRow) -> Result<types::Webhook, ApiError> {
    let (id, endpoint_id, event, created, data, response_code, retry_count, status, next_attempt_us) = row;
    Ok(types::Webhook {
        id: typed(&id)?,
        endpoint_id: typed(&endpoint_id)?,
        event: typed(&event)?,
        created: typed(&created)?,
        data: serde_json::from_str(&data).map_err(db_error)?,
        response_code,
        retry_count,
        status: typed(&status)?,
        next_attempt: next_attempt_us.and_then(chrono::DateTime::from_timestamp_micros),
    })
}

pub fn get_notification(tx: &Tx, tenant: Uuid, id: Uuid) -> Result<types::Webhook, ApiError> {
    let row = tx
        .sql()
        .query_row(
            &format!("SELECT {NOTIFICATION_COLUMNS} FROM notifications WHERE id = ? AND tenant_id = ?"),
            params![id.to_string(), tenant.to_string()],
            notification,
        )
        .optional()
        .map_err(db_error)?
        .ok_or_else(|| ApiError::not_found(format!("webhook {id}")))?;
    webhook(row)
}

pub fn list_notifications(tx: &Tx, tenant: Uuid, query: &ListWebhooksQuery) -> Result<Vec<types::Webhook>, ApiError> {
    let mut sql = format!("SELECT {NOTIFICATION_COLUMNS} FROM notifications WHERE tenant_id = ?");
    let mut values: Vec<rusqlite::types::Value> = vec![tenant.to_string().into()];
    if let Some(after) = query.starting_after {
        let seq = tx.cursor(
            "SELECT seq FROM notifications WHERE id = ?1 AND tenant_id = ?2",
            params![after.to_string(), tenant.to_string()],
            after,
            "webhook",
        )?;
        sql.push_str(" AND seq < ?");
        values.push(seq.into());
    }
    if let Some(endpoint) = query.endpoint_id {
        sql.push_str(" AND endpoint_id = ?");
        values.push(endpoint.to_string().into());
    }
    if let Some(from) = query.from_datetime {
        sql.push_str(" AND created_us >= ?");
        values.push(from.timestamp_micros().into());
    }
    if let Some(to) = query.to_datetime {
        sql.push_str(" AND created_us < ?");
        values.push(to.timestamp_micros().into());
    }
    sql.push_str(" ORDER BY seq DESC LIMIT ?");
    values.push(i64::from(query.limit).into());
    let mut statement = tx.sql().prepare_cached(&sql).map_err(db_error)?;
    let rows = statement.query_map(rusqlite::params_from_iter(values), notification).map_err(db_error)?;
    rows.map(|row| webhook(row.map_err(db_error)?)).collect()
}

// ---------------------------------------------------------------------------------------------
// The delivery side of the outbox

/// One notification to post, as claimed from the outbox.
#[derive(Debug, Clone)]
pub struct Attempt {
    pub id: String,
    pub endpoint_id: String,
    pub url: String,
    pub secret: String,
    /// Attempts made before this one: the `X-Service-Retry-Count` to send.
    pub retry_count: i64,
    /// The exact body to post and sign.
    pub body: String,
}

/// Endpoints with notifications due at `now_us`, not already being delivered.
pub fn due_endpoints(tx: &Tx, now_us: i64) -> Result<Vec<String>, ApiError> {
    let mut statement = tx
        .sql()
        .prepare_cached("SELECT DISTINCT endpoint_id FROM notifications WHERE next_attempt_us <= ? AND in_flight = 0")
        .map_err(db_error)?;
    let rows = statement.query_map(params![now_us], |row| row.get(0)).map_err(db_error)?;
    rows.collect::<Result<_, _>>().map_err(db_error)
}

/// Claims up to `limit` due notifications of one endpoint, oldest due first, marking them in
/// flight.
pub fn claim(tx: &Tx, endpoint: &str, now_us: i64, limit: usize) -> Result<Vec<Attempt>, ApiError> {
    let attempts: Vec<Attempt> = {
        let mut statement = tx
            .sql()
            .prepare_cached(
                "SELECT n.id, n.endpoint_id, e.url, e.secret, n.attempts, n.event, n.created, n.data
                 FROM notifications n JOIN webhook_endpoints e ON e.id = n.endpoint_id
                 WHERE n.endpoint_id = ? AND n.next_attempt_us <= ? AND n.in_flight = 0
                 ORDER BY n.next_attempt_us, n.seq LIMIT ?",
            )
            .map_err(db_error)?;
        let rows = statement
            .query_map(params![endpoint, now_us, limit as i64], |row| {
                let (id, event, created, data): (String, String, String, String) =
                    (row.get(0)?, row.get(5)?, row.get(6)?, row.get(7)?);
                Ok(Attempt {
                    body: notification_body(&id, &event, &created, &data),
                    id,
                    endpoint_id: row.get(1)?,
                    url: row.get(2)?,
                    secret: row.get(3)?,
                    retry_count: row.get(4)?,
                })
            })
            .map_err(db_error)?;
        rows.collect::<Result<_, _>>().map_err(db_error)?
    };
    for attempt in &attempts {
        tx.sql()
            .execute("UPDATE notifications SET in_flight = 1 WHERE id = ?", params![attempt.id])
            .map_err(db_error)?;
    }
    Ok(attempts)
}

/// The body posted: `{"id","event","created","data"}`, with `data` exactly as stored.
fn notification_body(id: &str, event: &str, created: &str, data: &str) -> String {
    let text = |value: &str| serde_json::Value::String(value.to_owned()).to_string();
    format!(r#"{{"id":{},"event":{},"created":{},"data":{data}}}"#, text(id), text(event), text(created))
}

/// What happened to one attempt: the status code if the receiver answered, and whether it was
/// a success (`2xx`).
pub struct Outcome {
    pub response_code: Option<u16>,
    pub delivered: bool,
}

/// Records an attempt. A failure is retried at `next_retry_us` until `max_retries` redeliveries
/// have failed, then discarded. A notification discarded meanwhile (its endpoint deleted) stays so.
pub fn record(tx: &Tx, id: &str, outcome: &Outcome, next_retry_us: i64, max_retries: i64) -> Result<(), ApiError> {
    let code = outcome.response_code.map(i64::from);
    if outcome.delivered {
        tx.sql()
            .execute(
                "UPDATE notifications SET status = 'delivered', response_code = ?, attempts = attempts + 1,
                 in_flight = 0, next_attempt_us = NULL WHERE id = ? AND status != 'discarded'",
                params![code, id],
            )
            .map_err(db_error)?;
    } else {
        tx.sql()
            .execute(
                "UPDATE notifications SET response_code = ?, attempts = attempts + 1, in_flight = 0,
                 status = CASE WHEN attempts + 1 > ?2 THEN 'discarded' ELSE 'failed' END,
                 next_attempt_us = CASE WHEN attempts + 1 > ?2 THEN NULL ELSE ?3 END
                 WHERE id = ?4 AND status != 'discarded'",
                params![code, max_retries, next_retry_us, id],
            )
            .map_err(db_error)?;
    }
    // A notification discarded while under way (its endpoint deleted) matched neither update.
    tx.sql().execute("UPDATE notifications SET in_flight = 0 WHERE id = ?", params![id]).map_err(db_error)?;
    Ok(())
}

/// After a restart nothing is under way: what was in flight is due again.
pub fn release_in_flight(tx: &Tx) -> Result<usize, ApiError> {
    tx.sql().execute("UPDATE notifications SET in_flight = 0 WHERE in_flight = 1", []).map_err(db_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_refused_only_when_every_address_is_forbidden() {
        let strict = TargetPolicy { allow_loopback: false };
        let private: IpAddr = [10, 0, 0, 7].into();
        let public: IpAddr = [93, 184, 215, 14].into();
        let metadata: IpAddr = [169, 254, 169, 254].into();
        assert_eq!(only_forbidden(&[private], strict), Some("a private address"));
        assert_eq!(only_forbidden(&[metadata, private], strict), Some("a link-local or metadata address"));
        assert_eq!(only_forbidden(&[private, public], strict), None, "the public one is used");
        assert_eq!(only_forbidden(&[], strict), None);
        assert_eq!(only_forbidden(&["::1".parse().unwrap()], strict), Some("a loopback address"));
        assert_eq!(only_forbidden(&["::ffff:10.0.0.1".parse().unwrap()], strict), Some("a private address"));
        assert_eq!(
            only_forbidden(&["100.64.0.1".parse().unwrap()], strict),
            Some("a shared (carrier-grade NAT) address")
        );
    }

    #[tokio::test]
    async fn registration_refuses_loopback_and_accepts_names_that_do_not_resolve() {
        let strict = TargetPolicy { allow_loopback: false };
        assert!(check_resolution("https://localhost/x", strict).await.is_err());
        assert!(check_resolution("https://hooks.example/x", strict).await.is_ok(), "`.example` never resolves");
        assert!(check_resolution("https://localhost/x", TargetPolicy { allow_loopback: true }).await.is_ok());
    }
}
