//! Group commit on PostgreSQL: the changesets queued while a batch was being written are written
//! together in one transaction, sent as one pipeline, and committed with one flush of
//! PostgreSQL's log.
//!
//! Why: every payment from one balance updates its row, and PostgreSQL keeps that row locked
//! from the update to the commit, so payments from one balance, one transaction each, queue on
//! the row: one at a time, each with its own flush and its own round trips, whatever the number
//! of connections or instances. sqlx waits for each statement's answer before it sends the
//! next, and a round trip between two processes costs about 200 µs on a busy 2-core machine:
//! a payment's six statements held the row for over a millisecond (about 700 payments/s from
//! one balance, with a third of the CPU idle). Here a batch takes the row once, its statements
//! go out back to back without waiting (tokio-postgres pipelines what is sent before it is
//! answered), and it flushes once.
//!
//! Changesets go to one of [`LANES`] lanes by tenant, each a task with a connection of its own
//! that writes one batch at a time: a tenant's writes (which share balances, and so locks) batch
//! together, and different tenants' run side by side. Within a batch each changeset is atomic by
//! itself, in a savepoint of its own: one refused (stale, funds, a taken key) is rolled back,
//! with whatever the pipeline ran after it, and the rest are sent again. Nobody is answered
//! before the commit: a refusal may be due to a changeset earlier in the batch (a key it took),
//! and the caller acting on it (reading the original) must find that one committed. A batch
//! that loses a deadlock or serialization race is written again whole; one that fails in the
//! database answers every changeset in it with the failure, and none of them was kept.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;

use tokio::sync::{mpsc, oneshot};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Config, NoTls, Statement};
use uuid::Uuid;

use super::IDLE_IN_TRANSACTION;
use super::changes::{self, posted_balances, unique_key};
use super::params::type_of;
use crate::plan::posting_totals;
use crate::reads::{Query, Value};
use crate::{Changeset, Result, StoreError};

/// Lanes per instance: how many batches of different tenants are written at once.
pub const LANES: usize = 4;
/// Changesets in one batch at most. Each is a subtransaction; PostgreSQL caches 64 of them per
/// transaction, past which every other session's visibility checks read `pg_subtrans`.
const BATCH: usize = 32;
/// Changesets waiting in one lane at most; more wait for room (backpressure, not memory).
const QUEUE: usize = 1024;
/// Attempts at a batch that keeps losing deadlock or serialization races.
const ATTEMPTS: usize = 8;

type Job = (Changeset, oneshot::Sender<Result<()>>);

pub struct Writer {
    lanes: Vec<mpsc::Sender<Job>>,
}

impl Writer {
    /// Connects the lanes and starts them on the current runtime; each ends once the `Writer`
    /// is dropped and what it holds is written.
    pub async fn start(url: &str, shown: &str) -> Result<Self, String> {
        let mut config = Config::from_str(url).map_err(|e| format!("{shown} is not a PostgreSQL URL: {e}"))?;
        config.options(format!("-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION}"));
        let mut lanes = Vec::with_capacity(LANES);
        for _ in 0..LANES {
            let mut lane = Lane { config: config.clone(), client: None, prepared: HashMap::new() };
            lane.client().await.map_err(|e| super::cannot_connect(shown, &e))?;
            let (jobs, queue) = mpsc::channel(QUEUE);
            tokio::spawn(lane.run(queue));
            lanes.push(jobs);
        }
        Ok(Self { lanes })
    }

    /// Writes `changes` with whatever else its lane has queued; answers once committed. The
    /// lane writes it to the end whatever becomes of the caller.
    pub async fn apply(&self, changes: Changeset) -> Result<()> {
        let lane = &self.lanes[changes.tenant.0.unsigned_abs() as usize % LANES];
        let (answer, answered) = oneshot::channel();
        lane.send((changes, answer)).await.map_err(|_| not_made())?;
        answered.await.map_err(|_| not_made())?
    }
}

fn not_made() -> StoreError {
    StoreError::Database("the write was not made: the database failed (see the log)".into())
}

/// A statement ready to send, and the row it must change (else its changeset is stale).
struct Rendered {
    sql: String,
    values: Vec<Value>,
    guards: Option<Guard>,
}

impl Rendered {
    fn new(query: Query<sqlx::Postgres>, guards: Option<Guard>) -> Self {
        let (sql, values) = query.prepared();
        Self { sql, values, guards }
    }
}

/// Why one attempt at a batch, or one changeset in it, failed.
enum Failure {
    /// Refused for a reason the caller acts on.
    Refused(StoreError),
    /// A debit failed the funds check: what the balance holds is read once rolled back.
    Funds,
    /// A deadlock or serialization failure: the batch is written again.
    Retry,
    Database(String),
}

impl From<tokio_postgres::Error> for Failure {
    fn from(error: tokio_postgres::Error) -> Self {
        let Some(database) = error.as_db_error() else { return Self::Database(error.to_string()) };
        let code = database.code();
        if *code == SqlState::T_R_DEADLOCK_DETECTED || *code == SqlState::T_R_SERIALIZATION_FAILURE {
            Self::Retry
        } else if *code == SqlState::CHECK_VIOLATION && database.constraint() == Some("funds") {
            Self::Funds
        } else if let (true, Some(key)) =
            (*code == SqlState::UNIQUE_VIOLATION, database.constraint().and_then(unique_key))
        {
            Self::Refused(StoreError::Duplicate(key))
        } else {
            Self::Database(database.to_string())
        }
    }
}

type Sent<'a> = Pin<Box<dyn Future<Output = Result<u64, tokio_postgres::Error>> + Send + 'a>>;
/// The row a statement must change: its resource and id.
type Guard = (&'static str, Uuid);

/// A statement in a pipeline: whose it is (`None` for the transaction's own) and what it guards.
struct Sending<'a> {
    future: Sent<'a>,
    owner: Option<usize>,
    guards: Option<Guard>,
}

/// A statement's answer, with whose it is and what it guards.
struct Answered {
    result: Result<u64, tokio_postgres::Error>,
    owner: Option<usize>,
    guards: Option<Guard>,
}

struct Lane {
    config: Config,
    /// `None` once the connection is lost: the next batch connects again.
    client: Option<Client>,
    /// The statements prepared on this connection, by their text.
    prepared: HashMap<String, Statement>,
}

impl Lane {
    async fn run(mut self, mut queue: mpsc::Receiver<Job>) {
        let mut batch = Vec::with_capacity(BATCH);
        while queue.recv_many(&mut batch, BATCH).await > 0 {
            let (changesets, answers): (Vec<Changeset>, Vec<_>) = std::mem::take(&mut batch).into_iter().unzip();
            let outcomes = self.write(&changesets).await;
            for (answer, outcome) in answers.into_iter().zip(outcomes) {
                let _ = answer.send(outcome);
            }
        }
    }

    async fn client(&mut self) -> Result<&Client, tokio_postgres::Error> {
        if self.client.as_ref().is_none_or(Client::is_closed) {
            self.prepared.clear();
            let (client, connection) = self.config.connect(NoTls).await?;
            tokio::spawn(async move {
                if let Err(error) = connection.await {
                    tracing::warn!(%error, "a write connection to PostgreSQL ended");
                }
            });
            self.client = Some(client);
        }
        Ok(self.client.as_ref().expect("connected above"))
    }

    /// Writes `batch`: for each changeset, `Ok` once committed, or why it was refused.
    async fn write(&mut self, batch: &[Changeset]) -> Vec<Result<()>> {
        let plans: Vec<Result<Vec<Rendered>>> = batch
            .iter()
            .map(|changes| {
                let steps = changes::statements(changes)?;
                Ok(steps.into_iter().map(|step| Rendered::new(step.query, step.guards)).collect())
            })
            .collect();
        let mut attempt = 0;
        let failure = loop {
            attempt += 1;
            let failure = match self.attempt(batch, &plans).await {
                Ok(outcomes) => return outcomes,
                Err(failure) => failure,
            };
            // Whatever failed, the transaction ends here, so the next attempt (or batch) does
            // not run inside it. (Outside a transaction, PostgreSQL only warns.)
            if let Some(client) = self.client.as_ref().filter(|client| !client.is_closed()) {
                let _ = client.batch_execute("ROLLBACK").await;
            }
            match failure {
                Failure::Retry if attempt < ATTEMPTS => continue,
                Failure::Retry => break StoreError::Database("a batch of writes kept losing deadlock races".into()),
                Failure::Database(error) => break StoreError::Database(error),
                Failure::Refused(error) => break error,
                Failure::Funds => break StoreError::Database("the funds check failed outside a changeset".into()),
            }
        };
        tracing::error!(error = %failure, changesets = batch.len(), "a write transaction failed; it was rolled back");
        batch.iter().map(|_| Err(failure.clone())).collect()
    }

    /// One attempt at a batch, in one transaction: every changeset's statements are sent at
    /// once, each changeset behind a savepoint of its own; when one is refused, the
    /// transaction is rolled back to its savepoint (undoing it and everything sent after it),
    /// and those after it are sent again.
    async fn attempt(
        &mut self,
        batch: &[Changeset],
        plans: &[Result<Vec<Rendered>>],
    ) -> Result<Vec<Result<()>>, Failure> {
        let lock = lock_balances(batch, plans);
        self.prepare(lock.iter().chain(plans.iter().flatten().flatten()).collect()).await?;
        let client = self.client.as_ref().ok_or_else(|| Failure::Database("not connected".into()))?;
        let prepared = &self.prepared;

        let mut outcomes: Vec<Option<Result<()>>> =
            plans.iter().map(|plan| plan.as_ref().err().map(|e| Err(e.clone()))).collect();
        let mut pending: Vec<usize> = (0..batch.len()).filter(|&i| outcomes[i].is_none()).collect();
        let mut begun = false;
        while !pending.is_empty() {
            // What is sent, and whose each is: `None` for the transaction's own statements.
            let mut sent: Vec<Sending<'_>> = Vec::new();
            if !begun {
                sent.push(Sending { future: simple(client, "BEGIN".into()), owner: None, guards: None });
                if let Some(lock) = &lock {
                    sent.push(Sending { future: execute(client, prepared, lock), owner: None, guards: None });
                }
                begun = true;
            }
            for &i in &pending {
                let savepoint = simple(client, format!("SAVEPOINT c{i}"));
                sent.push(Sending { future: savepoint, owner: Some(i), guards: None });
                for step in plans[i].as_ref().expect("pending changesets have statements") {
                    sent.push(Sending { future: execute(client, prepared, step), owner: Some(i), guards: step.guards });
                }
            }
            let mut refused: Option<(usize, Failure)> = None;
            for Answered { result, owner, guards } in pipeline(sent).await {
                match (owner, result) {
                    (None, Err(error)) => return Err(Failure::from(error)),
                    (None, Ok(_)) => {}
                    (Some(_), _) if refused.is_some() => {}
                    (Some(i), Err(error)) => refused = Some((i, Failure::from(error))),
                    (Some(i), Ok(0)) if guards.is_some() => {
                        let (resource, id) = guards.expect("checked");
                        refused = Some((i, Failure::Refused(StoreError::Stale { resource, id })));
                    }
                    (Some(_), Ok(_)) => {}
                }
            }
            let Some((k, failure)) = refused else {
                pending.drain(..).for_each(|i| outcomes[i] = Some(Ok(())));
                break;
            };
            if matches!(failure, Failure::Retry) {
                return Err(Failure::Retry);
            }
            client.batch_execute(&format!("ROLLBACK TO SAVEPOINT c{k}")).await?;
            outcomes[k] = Some(Err(match failure {
                Failure::Refused(error) => error,
                Failure::Funds => uncovered(client, &batch[k]).await?,
                Failure::Database(error) => {
                    tracing::error!(%error, "a write failed in the database; it was rolled back");
                    StoreError::Database(error)
                }
                Failure::Retry => unreachable!("handled above"),
            }));
            let place = pending.iter().position(|&i| i == k).expect("the refused changeset was pending");
            pending.drain(..place).for_each(|i| outcomes[i] = Some(Ok(())));
            pending.remove(0);
        }
        if begun {
            client.batch_execute("COMMIT").await?;
        }
        Ok(outcomes.into_iter().map(|outcome| outcome.expect("every changeset answered")).collect())
    }

    /// Prepares the statements not prepared on this connection yet, all at once. The connection
    /// is made again first if it was lost, which forgets what was prepared on the lost one.
    async fn prepare(&mut self, statements: Vec<&Rendered>) -> Result<(), Failure> {
        self.client().await?;
        let mut missing: Vec<&Rendered> = Vec::new();
        for rendered in statements {
            if !self.prepared.contains_key(&rendered.sql) && !missing.iter().any(|m| m.sql == rendered.sql) {
                missing.push(rendered);
            }
        }
        let client = self.client().await?;
        let types: Vec<Vec<Type>> = missing.iter().map(|r| r.values.iter().map(type_of).collect()).collect();
        let preparing = missing.iter().zip(&types).map(|(rendered, types)| client.prepare_typed(&rendered.sql, types));
        let prepared = futures::future::try_join_all(preparing).await?;
        for (rendered, statement) in missing.into_iter().zip(prepared) {
            self.prepared.insert(rendered.sql.clone(), statement);
        }
        Ok(())
    }
}

/// The statement that locks the balances a batch posts to, in the order of their ids, before
/// anything is written: a batch takes several balances' locks and holds them to its commit, and
/// batches of one tenant from several instances taking them in their changesets' order could
/// each wait for the other (a deadlock, which PostgreSQL breaks only after a second). One
/// balance needs no order, and no statement.
fn lock_balances(batch: &[Changeset], plans: &[Result<Vec<Rendered>>]) -> Option<Rendered> {
    let mut balances: Vec<(Uuid, i64)> = batch
        .iter()
        .zip(plans)
        .filter(|(_, plan)| plan.is_ok())
        .flat_map(|(changes, _)| posted_balances(changes))
        .collect();
    balances.sort_unstable();
    balances.dedup();
    if balances.len() < 2 {
        return None;
    }
    let mut query = Query::new("SELECT b.id FROM balances b WHERE (b.id, b.tenant_id) IN (");
    for (i, (balance, tenant)) in balances.into_iter().enumerate() {
        query.push(if i == 0 { "(" } else { ", (" }).bind(balance).push(", ").bind(tenant).push(")");
    }
    query.push(") ORDER BY b.id FOR NO KEY UPDATE");
    Some(Rendered::new(query, None))
}

/// The first balance that a changeset's debits overdraw, with what it holds now (read in the
/// batch's transaction, which holds its lock). Should none overdraw by now, the refusal stands
/// — the state it was decided on is gone — and names the first balance debited.
async fn uncovered(client: &Client, changes: &Changeset) -> Result<StoreError, Failure> {
    let mut first = None;
    for (balance, total) in posting_totals(&changes.changes).into_iter().filter(|(_, total)| *total < 0) {
        let row = client
            .query_opt("SELECT amount FROM balances WHERE id = $1 AND tenant_id = $2", &[&balance, &changes.tenant.0])
            .await?;
        let held: Option<i64> = row.map(|row| row.get(0));
        match held {
            Some(held) if held + total < 0 => return Ok(StoreError::InsufficientFunds { balance, available: held }),
            held => {
                first.get_or_insert((balance, held.unwrap_or(0)));
            }
        }
    }
    Ok(match first {
        Some((balance, available)) => StoreError::InsufficientFunds { balance, available },
        None => StoreError::Database("the funds check failed on a changeset that debits nothing".into()),
    })
}

fn simple(client: &Client, sql: String) -> Sent<'_> {
    Box::pin(async move { client.batch_execute(&sql).await.map(|()| 0) })
}

fn execute<'a>(client: &'a Client, prepared: &'a HashMap<String, Statement>, rendered: &'a Rendered) -> Sent<'a> {
    Box::pin(async move {
        let statement = prepared.get(&rendered.sql).expect("`Lane::prepare` prepared it on this connection");
        let params: Vec<&(dyn ToSql + Sync)> = rendered.values.iter().map(|v| v as &(dyn ToSql + Sync)).collect();
        client.execute(statement, &params).await
    })
}

/// Sends every statement before waiting for any answer (each is sent when first polled, in
/// order), then takes the answers in order.
async fn pipeline(sent: Vec<Sending<'_>>) -> Vec<Answered> {
    let mut waiting = Vec::with_capacity(sent.len());
    for Sending { mut future, owner, guards } in sent {
        let answered = match futures::poll!(future.as_mut()) {
            std::task::Poll::Ready(answer) => Some(answer),
            std::task::Poll::Pending => None,
        };
        waiting.push((future, answered, owner, guards));
    }
    let mut answers = Vec::with_capacity(waiting.len());
    for (future, answered, owner, guards) in waiting {
        let result = match answered {
            Some(answer) => answer,
            None => future.await,
        };
        answers.push(Answered { result, owner, guards });
    }
    answers
}
