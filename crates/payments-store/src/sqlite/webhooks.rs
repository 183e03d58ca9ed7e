//! The delivery worker's writes to the outbox: claiming what is due under a lease, and (at
//! start-up, this process being the file's only deliverer) ending claims a crash left behind.

use super::prepared::PreparedConnection;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::statements::{execute, rows};
use crate::reads::webhooks::{claimed, claimed_attempt, due, in_order};
use crate::reads::{Query, micros};
use crate::{Attempt, AttemptOutcome, NextClaim, Result};

/// Claims up to `limit` due notifications of one endpoint in one statement, leaving out
/// `except`: the lease and what to post come back together.
pub(super) fn claim(
    connection: &PreparedConnection,
    endpoint: Uuid,
    now: DateTime<Utc>,
    limit: usize,
    lease_until: DateTime<Utc>,
    except: Option<Uuid>,
) -> Result<Vec<Attempt>> {
    let mut query = Query::new("UPDATE notifications SET lease_until = ");
    query.bind(micros(lease_until)).push(" WHERE seq IN (");
    due(&mut query, endpoint, now, limit, except);
    query.push(format!(") RETURNING {}", claimed("notifications")));
    Ok(in_order(rows(connection, query, |row| claimed_attempt(row), None)?))
}

/// Records an attempt, then claims the endpoint's next due notification when `next` says so:
/// one write, so one commit.
pub(super) fn record_attempt(
    connection: &PreparedConnection,
    notification: Uuid,
    outcome: AttemptOutcome,
    next: Option<NextClaim>,
) -> Result<Option<Attempt>> {
    execute(connection, crate::reads::webhooks::record_attempt(notification, outcome))?;
    let Some(next) = next else { return Ok(None) };
    Ok(claim(connection, next.endpoint, next.now, 1, next.lease_until, Some(notification))?.pop())
}

pub(super) fn release_claims(connection: &PreparedConnection) -> Result<u64> {
    let released =
        connection.execute("UPDATE notifications SET lease_until = NULL WHERE lease_until IS NOT NULL", [])?;
    Ok(released as u64)
}
