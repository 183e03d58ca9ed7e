//! The delivery worker's claims on the outbox. Every instance delivers: a claim takes the due
//! notifications no other instance holds (`FOR UPDATE SKIP LOCKED`: rows another claim is
//! taking are passed over, not waited for) and leases them; a lease that runs out (its instance
//! died) makes them due again for whoever claims next.

use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use crate::reads::micros;
use crate::reads::webhooks::{attempts, claimed};
use crate::{Attempt, Result};

pub async fn claim(
    pool: &PgPool,
    endpoint: Uuid,
    now: DateTime<Utc>,
    limit: usize,
    lease_until: DateTime<Utc>,
) -> Result<Vec<Attempt>> {
    let sql = format!(
        "UPDATE notifications AS n SET lease_until = $1
         FROM (SELECT seq FROM notifications WHERE endpoint_id = $2 AND next_attempt <= $3
               AND (lease_until IS NULL OR lease_until <= $3) ORDER BY next_attempt, seq LIMIT $4
               FOR UPDATE SKIP LOCKED) AS due
         WHERE n.seq = due.seq
         RETURNING {}",
        claimed("n")
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(micros(lease_until))
        .bind(endpoint)
        .bind(micros(now))
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(pool)
        .await?;
    attempts(&rows)
}
