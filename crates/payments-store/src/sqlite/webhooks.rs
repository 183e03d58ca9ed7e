//! The delivery worker's writes to the outbox: claiming what is due under a lease, and (at
//! start-up, this process being the file's only deliverer) ending claims a crash left behind.

use chrono::{DateTime, Utc};
use rusqlite::Connection;
use uuid::Uuid;

use crate::reads::micros;
use crate::reads::webhooks::{claimed, claimed_attempt, in_order};
use crate::{Attempt, Result};

/// Claims up to `limit` due notifications of one endpoint in one statement: the lease and what
/// to post come back together. The limit is written into the SQL, not bound (see
/// `reads::finish_page`).
pub fn claim(
    connection: &Connection,
    endpoint: Uuid,
    now: DateTime<Utc>,
    limit: usize,
    lease_until: DateTime<Utc>,
) -> Result<Vec<Attempt>> {
    let sql = format!(
        "UPDATE notifications SET lease_until = ?1
         WHERE seq IN (SELECT seq FROM notifications WHERE endpoint_id = ?2 AND next_attempt <= ?3
                       AND (lease_until IS NULL OR lease_until <= ?3) ORDER BY next_attempt, seq LIMIT {limit})
         RETURNING {}",
        claimed("notifications")
    );
    let mut statement = connection.prepare_cached(&sql)?;
    let mut rows = statement.query(rusqlite::params![micros(lease_until), endpoint, micros(now)])?;
    let mut due = Vec::new();
    while let Some(row) = rows.next()? {
        due.push(claimed_attempt(row)?);
    }
    in_order(due)
}

pub fn release_claims(connection: &Connection) -> Result<u64> {
    let released =
        connection.execute("UPDATE notifications SET lease_until = NULL WHERE lease_until IS NOT NULL", [])?;
    Ok(released as u64)
}
