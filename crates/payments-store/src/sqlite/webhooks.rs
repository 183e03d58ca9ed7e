//! The delivery worker's writes to the outbox: claiming what is due under a lease, and (at
//! start-up, this process being the file's only deliverer) ending claims a crash left behind.

use chrono::{DateTime, Utc};
use sqlx::sqlite::SqliteConnection;
use uuid::Uuid;

use crate::reads::micros;
use crate::reads::webhooks::{attempts, claimed};
use crate::{Attempt, Result};

/// Claims up to `limit` due notifications of one endpoint in one statement: the lease and what
/// to post come back together. The limit is written into the SQL, not bound (see
/// `reads::finish_page`).
pub async fn claim(
    connection: &mut SqliteConnection,
    endpoint: Uuid,
    now: DateTime<Utc>,
    limit: usize,
    lease_until: DateTime<Utc>,
) -> Result<Vec<Attempt>> {
    let sql = format!(
        "UPDATE notifications SET lease_until = $1
         WHERE seq IN (SELECT seq FROM notifications WHERE endpoint_id = $2 AND next_attempt <= $3
                       AND (lease_until IS NULL OR lease_until <= $3) ORDER BY next_attempt, seq LIMIT {limit})
         RETURNING {}",
        claimed("notifications")
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(micros(lease_until))
        .bind(endpoint)
        .bind(micros(now))
        .fetch_all(&mut *connection)
        .await?;
    attempts(&rows)
}

pub async fn release_claims(connection: &mut SqliteConnection) -> Result<u64> {
    let done = sqlx::query("UPDATE notifications SET lease_until = NULL WHERE lease_until IS NOT NULL")
        .execute(connection)
        .await?;
    Ok(done.rows_affected())
}
