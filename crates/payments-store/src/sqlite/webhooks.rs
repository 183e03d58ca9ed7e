//! Webhook endpoints, their notifications (the outbox), and the delivery worker's side of it:
//! claiming what is due under a lease and recording each attempt.

use chrono::{DateTime, SecondsFormat, Utc};
use payments_types as types;
use sqlx::sqlite::{SqliteConnection, SqliteRow};
use sqlx::{QueryBuilder, Row, Sqlite};
use uuid::Uuid;

use super::codec::{corrupt, cursor, finish_page, instant, micros, parsed, push_created};
use crate::{Attempt, AttemptOutcome, EndpointRecord, NotificationFilter, Page, Result, TenantId};

/// The endpoint's columns, with its `events` list as a JSON array (NULL for every event).
const ENDPOINT_COLUMNS: &str = "id, url, secret, created, CASE WHEN all_events THEN NULL ELSE \
     (SELECT json_group_array(event) FROM (SELECT event FROM webhook_subscriptions s \
      WHERE s.endpoint_id = w.id ORDER BY position)) END AS events";

fn endpoint(row: &SqliteRow) -> Result<EndpointRecord> {
    let events: Option<String> = row.try_get("events")?;
    Ok(EndpointRecord {
        endpoint: types::WebhookEndpoint {
            id: row.try_get("id")?,
            url: parsed(row, "url")?,
            events: events.map(|text| serde_json::from_str(&text).map_err(|_| corrupt("events", text))).transpose()?,
            created: instant(row.try_get("created")?)?,
        },
        secret: row.try_get("secret")?,
    })
}

pub async fn endpoint_get(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    id: Uuid,
) -> Result<Option<EndpointRecord>> {
    let sql = format!(
        "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE id = $1 AND tenant_id = $2 AND deleted = FALSE"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).bind(tenant.0).fetch_optional(connection).await?;
    row.as_ref().map(endpoint).transpose()
}

pub async fn endpoint_list(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    page: Page,
) -> Result<Vec<types::WebhookEndpoint>> {
    let start = match page.starting_after {
        Some(after) => Some(cursor(&mut *connection, "webhook_endpoints", "deleted = FALSE", tenant.0, after).await?),
        None => None,
    };
    let mut query = QueryBuilder::<Sqlite>::new(format!(
        "SELECT {ENDPOINT_COLUMNS} FROM webhook_endpoints w WHERE deleted = FALSE AND tenant_id = "
    ));
    query.push_bind(tenant.0);
    finish_page(&mut query, "seq", start, page);
    let rows = query.build().fetch_all(connection).await?;
    rows.iter().map(|row| Ok(endpoint(row)?.endpoint)).collect()
}

/// A notification with its event, in the order of [`notification`].
const NOTIFICATION_COLUMNS: &str = "n.id, n.endpoint_id, e.event, n.created, e.data, n.response_code, \
     MAX(n.attempts - 1, 0) AS retry_count, n.status, n.next_attempt";

fn notification(row: &SqliteRow) -> Result<types::Webhook> {
    let data: String = row.try_get("data")?;
    let next_attempt: Option<i64> = row.try_get("next_attempt")?;
    let response_code: Option<i64> = row.try_get("response_code")?;
    let retry_count: i64 = row.try_get("retry_count")?;
    Ok(types::Webhook {
        id: row.try_get("id")?,
        endpoint_id: row.try_get("endpoint_id")?,
        event: parsed(row, "event")?,
        created: instant(row.try_get("created")?)?,
        data: serde_json::from_str(&data).map_err(|_| corrupt("data", &data))?,
        response_code: response_code
            .map(|code| i32::try_from(code).map_err(|_| corrupt("response_code", code)))
            .transpose()?,
        retry_count: i32::try_from(retry_count).map_err(|_| corrupt("attempts", retry_count))?,
        status: parsed(row, "status")?,
        next_attempt: next_attempt.map(instant).transpose()?,
    })
}

pub async fn notification_get(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    id: Uuid,
) -> Result<Option<types::Webhook>> {
    let sql = format!(
        "SELECT {NOTIFICATION_COLUMNS} FROM notifications n JOIN events e ON e.seq = n.event_seq
         WHERE n.id = $1 AND n.tenant_id = $2"
    );
    let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).bind(tenant.0).fetch_optional(connection).await?;
    row.as_ref().map(notification).transpose()
}

pub async fn notification_list(
    connection: &mut SqliteConnection,
    tenant: TenantId,
    filter: &NotificationFilter,
    page: Page,
) -> Result<Vec<types::Webhook>> {
    let start = match page.starting_after {
        Some(after) => Some(cursor(&mut *connection, "notifications", "TRUE", tenant.0, after).await?),
        None => None,
    };
    let rows = notification_list_query(tenant, filter, start, page).build().fetch_all(connection).await?;
    rows.iter().map(notification).collect()
}

/// The page of the tenant's notifications that `filter` selects, newest first: cut from
/// `notifications` alone (its indexes), then joined with the events.
pub fn notification_list_query(
    tenant: TenantId,
    filter: &NotificationFilter,
    start: Option<i64>,
    page: Page,
) -> QueryBuilder<Sqlite> {
    let mut query = QueryBuilder::<Sqlite>::new(format!(
        "SELECT {NOTIFICATION_COLUMNS} FROM (SELECT * FROM notifications WHERE tenant_id = "
    ));
    query.push_bind(tenant.0);
    if let Some(endpoint) = filter.endpoint_id {
        query.push(" AND endpoint_id = ").push_bind(endpoint);
    }
    push_created(&mut query, "seq", "created", filter.created_from, filter.created_before);
    finish_page(&mut query, "seq", start, page);
    query.push(") n JOIN events e ON e.seq = n.event_seq ORDER BY n.seq DESC");
    query
}

pub async fn due_endpoints(connection: &mut SqliteConnection, now: DateTime<Utc>) -> Result<Vec<Uuid>> {
    let ids = sqlx::query_scalar(
        "SELECT DISTINCT endpoint_id FROM notifications
         WHERE next_attempt <= $1 AND (lease_until IS NULL OR lease_until <= $1)",
    )
    .bind(micros(now))
    .fetch_all(connection)
    .await?;
    Ok(ids)
}

/// The body posted: `{"id","event","created","data"}`, with `data` exactly as stored.
fn body(id: Uuid, event: &str, created: DateTime<Utc>, data: &str) -> String {
    let text = |value: &str| serde_json::Value::String(value.to_owned()).to_string();
    format!(
        r#"{{"id":{},"event":{},"created":{},"data":{data}}}"#,
        text(&id.to_string()),
        text(event),
        text(&created.to_rfc3339_opts(SecondsFormat::Millis, true))
    )
}

/// Claims up to `limit` due notifications of one endpoint in one statement: the lease and what
/// to post come back together.
pub async fn claim(
    connection: &mut SqliteConnection,
    endpoint: Uuid,
    now: DateTime<Utc>,
    limit: usize,
    lease_until: DateTime<Utc>,
) -> Result<Vec<Attempt>> {
    let rows = sqlx::query(
        "UPDATE notifications SET lease_until = $1
         WHERE seq IN (SELECT seq FROM notifications WHERE endpoint_id = $2 AND next_attempt <= $3
                       AND (lease_until IS NULL OR lease_until <= $3) ORDER BY next_attempt, seq LIMIT $4)
         RETURNING id, endpoint_id, attempts, next_attempt, seq,
                   (SELECT url FROM webhook_endpoints w WHERE w.id = notifications.endpoint_id) AS url,
                   (SELECT secret FROM webhook_endpoints w WHERE w.id = notifications.endpoint_id) AS secret,
                   (SELECT event FROM events e WHERE e.seq = notifications.event_seq) AS event,
                   (SELECT created FROM events e WHERE e.seq = notifications.event_seq) AS event_created,
                   (SELECT data FROM events e WHERE e.seq = notifications.event_seq) AS data",
    )
    .bind(micros(lease_until))
    .bind(endpoint)
    .bind(micros(now))
    .bind(i64::try_from(limit).unwrap_or(i64::MAX))
    .fetch_all(&mut *connection)
    .await?;
    let mut due: Vec<(i64, i64, Attempt)> = Vec::with_capacity(rows.len());
    for row in &rows {
        let id: Uuid = row.try_get("id")?;
        let event: String = row.try_get("event")?;
        let data: String = row.try_get("data")?;
        let attempt = Attempt {
            notification: id,
            endpoint: row.try_get("endpoint_id")?,
            url: row.try_get("url")?,
            secret: row.try_get("secret")?,
            retry_count: row.try_get("attempts")?,
            body: body(id, &event, instant(row.try_get("event_created")?)?, &data),
        };
        due.push((row.try_get("next_attempt")?, row.try_get("seq")?, attempt));
    }
    // RETURNING comes in no particular order: oldest due first.
    due.sort_by_key(|(next, seq, _)| (*next, *seq));
    Ok(due.into_iter().map(|(.., attempt)| attempt).collect())
}

/// Records an attempt and ends its claim, in one statement. A notification discarded meanwhile
/// (its endpoint deleted) only loses its claim.
pub async fn record_attempt(connection: &mut SqliteConnection, id: Uuid, outcome: AttemptOutcome) -> Result<()> {
    let (delivered, response_code, retry_at, max_retries) = match outcome {
        AttemptOutcome::Delivered { response_code } => (true, Some(response_code), None, 0),
        AttemptOutcome::Failed { response_code, retry_at, max_retries } => {
            (false, response_code, Some(micros(retry_at)), max_retries)
        }
    };
    sqlx::query(
        "UPDATE notifications SET lease_until = NULL,
             response_code = CASE WHEN status = 'discarded' THEN response_code ELSE $1 END,
             attempts = CASE WHEN status = 'discarded' THEN attempts ELSE attempts + 1 END,
             status = CASE WHEN status = 'discarded' THEN status
                           WHEN $2 THEN 'delivered'
                           WHEN attempts + 1 > $3 THEN 'discarded'
                           ELSE 'failed' END,
             next_attempt = CASE WHEN status = 'discarded' OR $2 OR attempts + 1 > $3 THEN NULL ELSE $4 END
         WHERE id = $5",
    )
    .bind(response_code.map(i64::from))
    .bind(delivered)
    .bind(max_retries)
    .bind(retry_at)
    .bind(id)
    .execute(connection)
    .await?;
    Ok(())
}

pub async fn release_claims(connection: &mut SqliteConnection) -> Result<u64> {
    let done = sqlx::query("UPDATE notifications SET lease_until = NULL WHERE lease_until IS NOT NULL")
        .execute(connection)
        .await?;
    Ok(done.rows_affected())
}
