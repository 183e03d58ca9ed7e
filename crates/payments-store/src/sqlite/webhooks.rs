//! The delivery worker's writes to the outbox: claiming what is due under a lease, and (at
//! start-up, this process being the file's only deliverer) ending claims a crash left behind.

use chrono::{DateTime, Utc};
use rusqlite::Connection;
use uuid::Uuid;

use super::statements::rows;
use crate::reads::webhooks::{claimed, claimed_attempt, in_order};
use crate::reads::{Query, micros};
use crate::{Attempt, Result};

/// Claims up to `limit` due notifications of one endpoint in one statement: the lease and what
/// to post come back together. The limit is written into the SQL, not bound (see
/// `reads::order_and_limit`).
pub fn claim(
    connection: &Connection,
    endpoint: Uuid,
    now: DateTime<Utc>,
    limit: usize,
    lease_until: DateTime<Utc>,
) -> Result<Vec<Attempt>> {
    let mut query = Query::new("UPDATE notifications SET lease_until = ");
    query.bind(micros(lease_until)).push(" WHERE seq IN (SELECT seq FROM notifications WHERE endpoint_id = ");
    query.bind(endpoint).push(" AND next_attempt <= ").bind(micros(now));
    query.push(" AND (lease_until IS NULL OR lease_until <= ").bind(micros(now));
    query.push(format!(") ORDER BY next_attempt, seq LIMIT {limit}) RETURNING {}", claimed("notifications")));
    Ok(in_order(rows(connection, query, |row| claimed_attempt(row), None)?))
}

pub fn release_claims(connection: &Connection) -> Result<u64> {
    let released =
        connection.execute("UPDATE notifications SET lease_until = NULL WHERE lease_until IS NOT NULL", [])?;
    Ok(released as u64)
}
