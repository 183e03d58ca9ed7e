//! Webhook endpoints and their notifications (the outbox), as the API lists them, and what the
//! delivery worker reads: which endpoints have something due, and a claimed notification as
//! the attempt to make.

use chrono::{DateTime, SecondsFormat, Utc};
use payments_types as types;
use uuid::Uuid;

use super::{Cells, Dialect, Query, Selection, corrupt, micros, order_and_limit};
use crate::{Attempt, EndpointRecord, NotificationFilter, Page, Result, TenantId};

fn endpoint_columns<D: Dialect>() -> String {
    format!("w.id, w.url, w.secret, w.created, {} AS events", D::ENDPOINT_EVENTS)
}

pub(crate) fn endpoint(row: &impl Cells) -> Result<EndpointRecord> {
    Ok(EndpointRecord {
        endpoint: types::WebhookEndpoint {
            id: row.uuid("id")?,
            url: row.parsed("url")?,
            events: row
                .opt_text("events")?
                .map(|text| serde_json::from_str(&text).map_err(|_| corrupt("events", text)))
                .transpose()?,
            created: row.instant("created")?,
        },
        secret: row.text("secret")?,
    })
}

pub(crate) fn endpoint_get<D: Dialect>(tenant: TenantId, id: Uuid) -> Query<D> {
    let mut query = Query::new(format!("SELECT {} FROM webhook_endpoints w WHERE w.id = ", endpoint_columns::<D>()));
    query.bind(id).push(" AND w.tenant_id = ").bind(tenant.0).push(" AND w.deleted = FALSE");
    query
}

pub(crate) const ENDPOINTS: (&str, &str) = ("webhook_endpoints", "deleted = FALSE");

pub(crate) fn endpoint_list<D: Dialect>(tenant: TenantId, start: Option<i64>, page: Page) -> Query<D> {
    let mut query =
        Query::new(format!("SELECT {} FROM webhook_endpoints w WHERE w.deleted = FALSE AND ", endpoint_columns::<D>()));
    D::select(&mut query, &Selection::new(tenant, start), "w", "w.seq", page.limit);
    query
}

/// A notification with its event.
const NOTIFICATION_COLUMNS: &str =
    "n.id, n.endpoint_id, e.event, n.created, e.data, n.response_code, n.attempts, n.status, n.next_attempt";

pub(crate) fn notification(row: &impl Cells) -> Result<types::Webhook> {
    let data = row.text("data")?;
    let attempts = row.int("attempts")?;
    Ok(types::Webhook {
        id: row.uuid("id")?,
        endpoint_id: row.uuid("endpoint_id")?,
        event: row.parsed("event")?,
        created: row.instant("created")?,
        data: serde_json::from_str(&data).map_err(|_| corrupt("data", &data))?,
        response_code: row
            .opt_int("response_code")?
            .map(|code| i32::try_from(code).map_err(|_| corrupt("response_code", code)))
            .transpose()?,
        // The first attempt is not a retry.
        retry_count: i32::try_from((attempts - 1).max(0)).map_err(|_| corrupt("attempts", attempts))?,
        status: row.parsed("status")?,
        next_attempt: row.opt_int("next_attempt")?.map(super::instant).transpose()?,
    })
}

pub(crate) fn notification_get<D: Dialect>(tenant: TenantId, id: Uuid) -> Query<D> {
    let mut query = Query::new(format!(
        "SELECT {NOTIFICATION_COLUMNS} FROM notifications n JOIN events e ON e.seq = n.event_seq WHERE n.id = "
    ));
    query.bind(id).push(" AND n.tenant_id = ").bind(tenant.0);
    query
}

pub(crate) const NOTIFICATIONS: (&str, &str) = ("notifications", "TRUE");

/// The page of the tenant's notifications that `filter` selects, newest first: cut from
/// `notifications` alone (its indexes), then joined with the events.
pub(crate) fn notification_list<D: Dialect>(
    tenant: TenantId,
    filter: &NotificationFilter,
    start: Option<i64>,
    page: Page,
) -> Query<D> {
    let mut selection = Selection::new(tenant, start);
    selection.equal("endpoint_id", filter.endpoint_id).created(filter.created_from, filter.created_before);
    let mut query = Query::new("SELECT ");
    query.push(NOTIFICATION_COLUMNS).push(" FROM (SELECT * FROM notifications WHERE ");
    D::select(&mut query, &selection, "notifications", "notifications.seq", page.limit);
    query.push(") n JOIN events e ON e.seq = n.event_seq ORDER BY n.seq DESC");
    query
}

/// Endpoints with notifications due at `now` that nobody is delivering, found endpoint by
/// endpoint through the index of what is still to be delivered (`notifications_due`): the next
/// endpoint with anything pending, one index seek each, and for each whether one of its
/// notifications is due and free. Its cost is the number of endpoints with pending
/// notifications; `SELECT DISTINCT endpoint_id` over the due ones read every due notification,
/// at every wake of the delivery worker (once per delivery or so), so a backlog of 10,000
/// notifications made each delivery read 10,000 rows.
pub(crate) fn due_endpoints<D: Dialect>(now: DateTime<Utc>) -> Query<D> {
    let mut query = Query::new(
        "WITH RECURSIVE pending(id) AS (
             SELECT * FROM (SELECT endpoint_id FROM notifications WHERE next_attempt IS NOT NULL
                            ORDER BY endpoint_id LIMIT 1) first
             UNION ALL
             SELECT (SELECT n.endpoint_id FROM notifications n
                     WHERE n.next_attempt IS NOT NULL AND n.endpoint_id > pending.id
                     ORDER BY n.endpoint_id LIMIT 1)
             FROM pending WHERE pending.id IS NOT NULL)
         SELECT id FROM pending WHERE id IS NOT NULL AND EXISTS (SELECT 1 FROM notifications d
             WHERE d.endpoint_id = pending.id AND d.next_attempt <= ",
    );
    query.bind(micros(now)).push(" AND (d.lease_until IS NULL OR d.lease_until <= ").bind(micros(now)).push("))");
    query
}

/// Appends the seqs of `endpoint`'s notifications due at `now` that nobody holds, oldest due
/// first, at most `limit` of them, leaving out `except`: what a claim takes.
pub(crate) fn due<D>(query: &mut Query<D>, endpoint: Uuid, now: DateTime<Utc>, limit: usize, except: Option<Uuid>) {
    query.push("SELECT seq FROM notifications WHERE endpoint_id = ").bind(endpoint);
    query.push(" AND next_attempt <= ").bind(micros(now));
    query.push(" AND (lease_until IS NULL OR lease_until <= ").bind(micros(now)).push(")");
    if let Some(except) = except {
        query.push(" AND id <> ").bind(except);
    }
    order_and_limit(query, "next_attempt, seq", u32::try_from(limit).unwrap_or(u32::MAX));
}

/// What a claim returns of each notification it leased, after `RETURNING`; `n` names the
/// notification (its alias on PostgreSQL; SQLite takes only the table's name there).
pub(crate) fn claimed(n: &str) -> String {
    format!(
        "{n}.id, {n}.endpoint_id, {n}.attempts, {n}.next_attempt, {n}.seq,
         (SELECT url FROM webhook_endpoints w WHERE w.id = {n}.endpoint_id) AS url,
         (SELECT secret FROM webhook_endpoints w WHERE w.id = {n}.endpoint_id) AS secret,
         (SELECT event FROM events e WHERE e.seq = {n}.event_seq) AS event,
         (SELECT created FROM events e WHERE e.seq = {n}.event_seq) AS event_created,
         (SELECT data FROM events e WHERE e.seq = {n}.event_seq) AS data"
    )
}

/// The claimed rows (in [`claimed`]'s columns) as attempts, oldest due first.
pub(crate) fn attempts<R: Cells>(rows: &[R]) -> Result<Vec<Attempt>> {
    Ok(in_order(rows.iter().map(claimed_attempt).collect::<Result<_>>()?))
}

/// A claimed row (in [`claimed`]'s columns): when it was due, its seq, and the attempt.
pub(crate) fn claimed_attempt<R: Cells>(row: &R) -> Result<(i64, i64, Attempt)> {
    let id = row.uuid("id")?;
    let attempt = Attempt {
        notification: id,
        endpoint: row.uuid("endpoint_id")?,
        url: row.text("url")?,
        secret: row.text("secret")?,
        retry_count: row.int("attempts")?,
        body: body(id, &row.text("event")?, row.instant("event_created")?, &row.text("data")?),
    };
    Ok((row.int("next_attempt")?, row.int("seq")?, attempt))
}

/// Claimed attempts oldest due first: RETURNING gives them in no particular order.
pub(crate) fn in_order(mut due: Vec<(i64, i64, Attempt)>) -> Vec<Attempt> {
    due.sort_by_key(|(next, seq, _)| (*next, *seq));
    due.into_iter().map(|(.., attempt)| attempt).collect()
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

/// Records an attempt and ends its claim, in one statement. A notification discarded meanwhile
/// (its endpoint deleted) only loses its claim. The same text on every backend.
pub(crate) fn record_attempt<D: Dialect>(id: Uuid, outcome: crate::AttemptOutcome) -> Query<D> {
    let (delivered, response_code, retry_at, max_retries) = match outcome {
        crate::AttemptOutcome::Delivered { response_code } => (true, Some(response_code), None, 0),
        crate::AttemptOutcome::Failed { response_code, retry_at, max_retries } => {
            (false, response_code, Some(micros(retry_at)), max_retries)
        }
    };
    // The outcome is spelled out as literals (it is one of a handful), not bound: booleans and
    // NULLs bind differently on each backend.
    let delivered = if delivered { "TRUE" } else { "FALSE" };
    // A NULL typed, or PostgreSQL takes a bare one in a CASE for text.
    let response_code = response_code.map_or("CAST(NULL AS BIGINT)".to_owned(), |code| code.to_string());
    let retry_at = retry_at.map_or("CAST(NULL AS BIGINT)".to_owned(), |at| at.to_string());
    let mut query = Query::new(format!(
        "UPDATE notifications SET lease_until = NULL,
             response_code = CASE WHEN status = 'discarded' THEN response_code ELSE {response_code} END,
             attempts = CASE WHEN status = 'discarded' THEN attempts ELSE attempts + 1 END,
             status = CASE WHEN status = 'discarded' THEN status
                           WHEN {delivered} THEN 'delivered'
                           WHEN attempts + 1 > {max_retries} THEN 'discarded'
                           ELSE 'failed' END,
             next_attempt = CASE WHEN status = 'discarded' OR {delivered} OR attempts + 1 > {max_retries} THEN NULL
                                 ELSE {retry_at} END
         WHERE id = "
    ));
    query.bind(id);
    query
}

/// Rows one prune statement deletes at most.
pub(crate) const PRUNE_BATCH: u64 = 1000;

/// Deletes up to [`PRUNE_BATCH`] rows of `table` that retention lets go (see
/// [`crate::Store::prune`]). The same text on every backend.
pub(crate) fn prune<D: Dialect>(table: crate::Prunable, before: DateTime<Utc>) -> Query<D> {
    let sql = match table {
        crate::Prunable::Notifications => format!(
            "DELETE FROM notifications WHERE seq IN (SELECT seq FROM notifications
             WHERE next_attempt IS NULL AND lease_until IS NULL AND created < {} LIMIT {PRUNE_BATCH})",
            micros(before)
        ),
        crate::Prunable::Events => format!(
            "DELETE FROM events WHERE seq IN (SELECT e.seq FROM events e WHERE e.created < {}
             AND NOT EXISTS (SELECT 1 FROM notifications n WHERE n.event_seq = e.seq) LIMIT {PRUNE_BATCH})",
            micros(before)
        ),
    };
    Query::new(sql)
}
