//! The delivery worker's claims on the outbox. Every instance delivers: a claim takes the due
//! notifications no other instance holds (`FOR UPDATE SKIP LOCKED`: rows another claim is
//! taking are passed over, not waited for) and leases them; a lease that runs out (its instance
//! died) makes them due again for whoever claims next.

use chrono::{DateTime, Utc};
use deadpool_postgres::Pool;
use uuid::Uuid;

use super::{execute, rows};
use crate::reads::webhooks::{attempts, claimed, due};
use crate::reads::{Postgres, Query, micros};
use crate::{Attempt, AttemptOutcome, NextClaim, Result};

pub(super) async fn claim(
    pool: &Pool,
    endpoint: Uuid,
    now: DateTime<Utc>,
    limit: usize,
    lease_until: DateTime<Utc>,
) -> Result<Vec<Attempt>> {
    let mut query = Query::new("");
    leasing(&mut query, endpoint, now, limit, lease_until, None);
    attempts(&rows(&pool.get().await?, query).await?)
}

/// Records an attempt and, with `next`, claims the endpoint's next due notification, in one
/// statement (so one commit): the claim is the statement and the record a data-modifying `WITH`
/// before it. Both read the statement's one snapshot, where the recorded notification is still
/// leased, so the claim cannot take it again; it is left out by id all the same.
pub(super) async fn record_attempt(
    pool: &Pool,
    notification: Uuid,
    outcome: AttemptOutcome,
    next: Option<NextClaim>,
) -> Result<Option<Attempt>> {
    let recorded = crate::reads::webhooks::record_attempt::<Postgres>(notification, outcome);
    let Some(next) = next else {
        execute(&pool.get().await?, recorded).await?;
        return Ok(None);
    };
    let mut query = Query::new("WITH recorded AS (");
    query.append(recorded).push(") ");
    leasing(&mut query, next.endpoint, next.now, 1, next.lease_until, Some(notification));
    Ok(attempts(&rows(&pool.get().await?, query).await?)?.pop())
}

/// `UPDATE … RETURNING` the claimed notifications: what [`due`] finds, leased until
/// `lease_until`.
fn leasing(
    query: &mut Query<Postgres>,
    endpoint: Uuid,
    now: DateTime<Utc>,
    limit: usize,
    lease_until: DateTime<Utc>,
    except: Option<Uuid>,
) {
    query.push("UPDATE notifications AS n SET lease_until = ").bind(micros(lease_until)).push(" FROM (");
    due(query, endpoint, now, limit, except);
    query.push(format!(" FOR UPDATE SKIP LOCKED) AS due WHERE n.seq = due.seq RETURNING {}", claimed("n")));
}
