//! Group commit on PostgreSQL: the changesets queued while a batch was being written are written
//! together in one transaction, sent as one pipeline, and committed with one flush of
//! PostgreSQL's log.
//!
//! Why: every payment from one balance updates its row, and PostgreSQL keeps that row locked
//! from the update to the commit, so payments from one balance, one transaction each, queue on
//! the row: one at a time, each with its own flush and its own round trips, whatever the number
//! of connections or instances. sqlx waits for each statement's answer before it sends the
//! next, so a payment's six statements held the row for six round trips, with CPU left idle
//! (BENCHMARKS.md, *Why, measured: PostgreSQL group commit*). Here a batch takes the row once, its statements
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

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;

use tokio::sync::{mpsc, oneshot};
use tokio_postgres::error::SqlState;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, Config, Statement};
use uuid::Uuid;

use super::IDLE_IN_TRANSACTION;
use super::changes::{self, posted_balances, unique_key};
use super::params::{params, type_of};
use crate::reads::{Postgres, Query, Value};
use crate::writes::Check;
use crate::{Changeset, Outage, Result, StoreError};

/// Lanes per instance: how many batches of different tenants are written at once.
pub(super) const LANES: usize = 4;
/// Changesets in one batch at most. Each is a subtransaction; PostgreSQL caches 64 of them per
/// transaction, past which every other session's visibility checks read `pg_subtrans`.
const BATCH: usize = 32;
/// Changesets waiting in one lane at most; more wait for room (backpressure, not memory).
const QUEUE: usize = 1024;
/// Attempts at a batch that keeps losing deadlock or serialization races.
const ATTEMPTS: usize = 8;

type Job = (Changeset, oneshot::Sender<Result<()>>);

pub(super) struct Writer {
    lanes: Vec<mpsc::Sender<Job>>,
}

impl Writer {
    /// Connects the lanes and starts them on the current runtime; each ends once the `Writer`
    /// is dropped and what it holds is written.
    pub(super) async fn start(url: &str, shown: &str) -> Result<Self, crate::OpenError> {
        let mut config = Config::from_str(url)
            .map_err(|e| crate::OpenError::failed(format!("{shown} is not a PostgreSQL URL"), e))?;
        config.options(format!("-c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION}"));
        let mut lanes = Vec::with_capacity(LANES);
        for _ in 0..LANES {
            let mut lane = Lane { config: config.clone(), client: None, prepared: HashMap::new() };
            lane.client().await.map_err(|e| super::cannot_connect(shown, e))?;
            let (jobs, queue) = mpsc::channel(QUEUE);
            tokio::spawn(lane.run(queue));
            lanes.push(jobs);
        }
        Ok(Self { lanes })
    }

    /// Writes `changes` with whatever else its lane has queued; answers once committed. The
    /// lane writes it to the end whatever becomes of the caller.
    pub(super) async fn apply(&self, changes: Changeset) -> Result<()> {
        let lane = &self.lanes[changes.tenant.0.unsigned_abs() as usize % LANES];
        let (answer, answered) = oneshot::channel();
        lane.send((changes, answer)).await.map_err(|_| not_made())?;
        answered.await.map_err(|_| not_made())?
    }
}

fn not_made() -> StoreError {
    StoreError::Stopped("the write was not made: the writer has stopped")
}

/// What a statement must find, else its changeset is refused.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// The row it changes, in the state the change was decided on (else stale).
    Row(&'static str, Uuid),
    /// The balance, holding what the changeset's debits need (else refused for funds, or stale
    /// when the balance is not there).
    Funds(Uuid),
}

/// A statement ready to send, and what it must find.
struct Rendered {
    sql: String,
    values: Vec<Value>,
    expects: Option<Expect>,
}

impl Rendered {
    fn new(query: Query<Postgres>, expects: Option<Expect>) -> Self {
        let (sql, values) = query.prepared();
        Self { sql, values, expects }
    }
}

/// A statement of a round: the transaction's own (text), one of a plan's, or one made for the
/// round (a funds check).
enum Outgoing<'p> {
    Simple(String),
    Planned(&'p Rendered),
    Made(Rendered),
}

impl Outgoing<'_> {
    fn statement(&self) -> Option<&Rendered> {
        match self {
            Self::Simple(_) => None,
            Self::Planned(rendered) => Some(rendered),
            Self::Made(rendered) => Some(rendered),
        }
    }

    fn text(&self) -> &str {
        match self {
            Self::Simple(text) => text,
            Self::Planned(rendered) => &rendered.sql,
            Self::Made(rendered) => &rendered.sql,
        }
    }
}

/// A changeset as the lane writes it: its statements, and how it moves balances.
struct Plan {
    steps: Vec<Rendered>,
    /// Each move of a balance (of this tenant), in order.
    moves: Vec<(Uuid, i64)>,
}

/// Why one attempt at a batch, or one changeset in it, failed.
enum Failure {
    /// Refused for a reason the caller acts on.
    Refused(StoreError),
    /// A debit the balance does not cover (or a balance that is not there): what it holds is
    /// read once rolled back.
    Funds(Uuid),
    /// A deadlock or serialization failure: the batch is written again.
    Retry,
    /// The database failed, or is out ([`StoreError::Database`], [`StoreError::Unavailable`],
    /// [`StoreError::OutcomeUnknown`]).
    Database(StoreError),
}

impl From<tokio_postgres::Error> for Failure {
    fn from(error: tokio_postgres::Error) -> Self {
        let Some(database) = error.as_db_error() else { return Self::Database(error.into()) };
        let code = database.code();
        if *code == SqlState::T_R_DEADLOCK_DETECTED || *code == SqlState::T_R_SERIALIZATION_FAILURE {
            Self::Retry
        } else if let (true, Some(key)) =
            (*code == SqlState::UNIQUE_VIOLATION, database.constraint().and_then(unique_key))
        {
            Self::Refused(StoreError::Duplicate(key))
        } else {
            Self::Database(error.into())
        }
    }
}

type Sent<'a> = Pin<Box<dyn Future<Output = Result<u64, tokio_postgres::Error>> + Send + 'a>>;

/// A statement in a pipeline: whose it is (`None` for the transaction's own) and what it must
/// find.
struct Sending<'a> {
    future: Sent<'a>,
    owner: Option<usize>,
    expects: Option<Expect>,
}

/// A statement's answer, with whose it is and what it must have found.
struct Answered {
    result: Result<u64, tokio_postgres::Error>,
    owner: Option<usize>,
    expects: Option<Expect>,
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

    /// The connection, made again if it was lost (which forgets what was prepared on the lost
    /// one). Only between attempts: see [`Lane::current`].
    async fn client(&mut self) -> Result<&Client, tokio_postgres::Error> {
        if self.client.as_ref().is_none_or(Client::is_closed) {
            self.prepared.clear();
            self.client = Some(super::connect(&self.config, "write").await?);
        }
        Ok(self.client.as_ref().expect("connected above"))
    }

    /// The connection an attempt began on. Never a new one: a batch's transaction lives on its
    /// connection, and statements sent on another would run outside it, each committed on its
    /// own (a batch's balance moves once landed without its changesets that way).
    fn current(&self) -> Result<&Client, Failure> {
        self.client.as_ref().filter(|client| !client.is_closed()).ok_or_else(|| {
            Failure::Database(StoreError::unavailable(
                Outage::Unreachable,
                "the connection to PostgreSQL was lost in the middle of a batch",
            ))
        })
    }

    /// Writes `batch`: for each changeset, `Ok` once committed, or why it was refused.
    async fn write(&mut self, batch: &[Changeset]) -> Vec<Result<()>> {
        let plans: Vec<Result<Plan>> = batch
            .iter()
            .map(|changes| {
                let steps = crate::writes::statements::<Postgres>(changes)?.into_iter().map(|step| {
                    let expects = match step.check {
                        Check::None => None,
                        Check::Changes(resource, id) | Check::Finds(resource, id) => Some(Expect::Row(resource, id)),
                    };
                    Rendered::new(step.query, expects)
                });
                Ok(Plan { steps: steps.collect(), moves: changes::moves(changes) })
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
            if let Ok(client) = self.current() {
                let _ = client.batch_execute("ROLLBACK").await;
            }
            match failure {
                Failure::Retry if attempt < ATTEMPTS => continue,
                Failure::Retry => break StoreError::Stopped("a batch of writes kept losing deadlock races"),
                Failure::Database(error) => break error,
                Failure::Refused(error) => break error,
                Failure::Funds(balance) => {
                    break StoreError::Inconsistent(format!(
                        "balance {balance} failed its funds check outside a changeset"
                    ));
                }
            }
        };
        // Outages are answered to every caller and reported by the sandbox, not logged per batch.
        if failure.outage().is_none() {
            tracing::error!(error = %failure, changesets = batch.len(), "a write transaction failed; it was rolled back");
        }
        batch.iter().map(|_| Err(failure.clone())).collect()
    }

    /// One attempt at a batch, in one transaction. It locks the batch's tenants and balances,
    /// then sends every changeset's statements at once, each changeset behind a savepoint of its
    /// own and with a funds check for each balance it posts to; when one is refused, the
    /// transaction is rolled back to its savepoint (undoing it and everything sent after it),
    /// and those after it are sent again. Last, each balance moves by what the accepted
    /// changesets moved it, and the transaction commits.
    async fn attempt(&mut self, batch: &[Changeset], plans: &[Result<Plan>]) -> Result<Vec<Result<()>>, Failure> {
        // The one place a lost connection is made again: before the transaction begins.
        self.client().await?;
        let mut outcomes: Vec<Option<Result<()>>> =
            plans.iter().map(|plan| plan.as_ref().err().map(|e| Err(e.clone()))).collect();
        let mut pending: Vec<usize> = (0..batch.len()).filter(|&i| outcomes[i].is_none()).collect();
        let opening: Vec<Rendered> =
            opening(batch, &pending).into_iter().map(|lock| Rendered::new(lock, None)).collect();
        // What the changesets accepted so far moved each balance by.
        let mut moved: BTreeMap<(Uuid, i64), i64> = BTreeMap::new();
        let mut first_savepoint: Option<usize> = None;
        while !pending.is_empty() {
            // What is sent, and whose each is: `None` for the transaction's own statements.
            let mut round: Vec<(Option<usize>, Outgoing<'_>)> = Vec::new();
            if first_savepoint.is_none() {
                round.push((None, Outgoing::Simple("BEGIN".into())));
                round.extend(opening.iter().map(|lock| (None, Outgoing::Planned(lock))));
                first_savepoint = pending.first().copied();
            }
            let mut running = moved.clone();
            for &i in &pending {
                round.push((Some(i), Outgoing::Simple(format!("SAVEPOINT c{i}"))));
                let plan = plans[i].as_ref().expect("pending changesets have a plan");
                for check in funds_checks(batch[i].tenant.0, &plan.moves, &mut running) {
                    round.push((Some(i), Outgoing::Made(check)));
                }
                round.extend(plan.steps.iter().map(|step| (Some(i), Outgoing::Planned(step))));
            }
            self.prepare(round.iter().filter_map(|(_, outgoing)| outgoing.statement()).collect()).await?;
            let client = self.current()?;
            let sent = round
                .iter()
                .map(|(owner, outgoing)| match outgoing.statement() {
                    Some(rendered) => Sending {
                        future: execute(client, &self.prepared, rendered),
                        owner: *owner,
                        expects: rendered.expects,
                    },
                    None => {
                        Sending { future: simple(client, outgoing.text().to_owned()), owner: *owner, expects: None }
                    }
                })
                .collect();
            let mut refused: Option<(usize, Failure)> = None;
            for Answered { result, owner, expects } in pipeline(sent).await {
                match (owner, result) {
                    (None, Err(error)) => return Err(Failure::from(error)),
                    (None, Ok(_)) => {}
                    (Some(_), _) if refused.is_some() => {}
                    (Some(i), Err(error)) => refused = Some((i, Failure::from(error))),
                    (Some(i), Ok(0)) => match expects {
                        Some(Expect::Row(resource, id)) => {
                            refused = Some((i, Failure::Refused(StoreError::Stale { resource, id })));
                        }
                        Some(Expect::Funds(balance)) => refused = Some((i, Failure::Funds(balance))),
                        None => {}
                    },
                    (Some(_), Ok(_)) => {}
                }
            }
            let Some((k, failure)) = refused else {
                pending.drain(..).for_each(|i| outcomes[i] = Some(Ok(())));
                moved = running;
                break;
            };
            if matches!(failure, Failure::Retry) {
                return Err(Failure::Retry);
            }
            let client = self.current()?;
            client.batch_execute(&format!("ROLLBACK TO SAVEPOINT c{k}")).await?;
            let place = pending.iter().position(|&i| i == k).expect("the refused changeset was pending");
            for i in pending.drain(..place) {
                outcomes[i] = Some(Ok(()));
                let plan = plans[i].as_ref().expect("pending changesets have a plan");
                for &(balance, delta) in &plan.moves {
                    *moved.entry((balance, batch[i].tenant.0)).or_default() += delta;
                }
            }
            pending.remove(0);
            outcomes[k] = Some(Err(match failure {
                Failure::Refused(error) => error,
                Failure::Funds(balance) => uncovered(client, batch[k].tenant.0, balance, &moved).await?,
                Failure::Database(error) => {
                    if error.outage().is_none() {
                        tracing::error!(%error, "a write failed in the database; it was rolled back");
                    }
                    error
                }
                Failure::Retry => unreachable!("handled above"),
            }));
        }
        if let Some(first) = first_savepoint {
            self.finish(first, &moved).await?;
        }
        Ok(outcomes.into_iter().map(|outcome| outcome.expect("every changeset answered")).collect())
    }

    /// Ends an attempt that began: back out of the changesets' savepoints (what they wrote
    /// stays), move each balance by what the accepted changesets moved it, and commit, in one
    /// pipeline.
    async fn finish(&mut self, first_savepoint: usize, moved: &BTreeMap<(Uuid, i64), i64>) -> Result<(), Failure> {
        let moves: Vec<Rendered> = moved
            .iter()
            .filter(|(_, delta)| **delta != 0)
            .map(|(&(balance, tenant), &delta)| {
                Rendered::new(crate::writes::move_balance(tenant, balance, delta), Some(Expect::Funds(balance)))
            })
            .collect();
        self.prepare(moves.iter().collect()).await?;
        let client = self.current()?;
        let mut sent = vec![Sending {
            future: simple(client, format!("RELEASE SAVEPOINT c{first_savepoint}")),
            owner: None,
            expects: None,
        }];
        sent.extend(moves.iter().map(|rendered| Sending {
            future: execute(client, &self.prepared, rendered),
            owner: None,
            expects: rendered.expects,
        }));
        sent.push(Sending { future: simple(client, "COMMIT".into()), owner: None, expects: None });
        for Answered { result, expects, .. } in pipeline(sent).await {
            // COMMIT went out in this pipeline: once the connection is lost, nobody can say
            // whether the server committed before it went.
            let lost = result.as_ref().is_err_and(|error| error.is_closed() || error.as_db_error().is_none());
            if lost && let Err(error) = result {
                return Err(Failure::Database(StoreError::outcome_unknown(error)));
            }
            match (result, expects) {
                // The funds check of the changesets makes this impossible; should the constraint
                // disagree, nothing of the batch is kept.
                (Err(error), Some(Expect::Funds(balance))) if is_funds_violation(&error) => {
                    return Err(Failure::Funds(balance));
                }
                (Err(error), _) => return Err(Failure::from(error)),
                (Ok(0), Some(Expect::Funds(balance))) => return Err(Failure::Funds(balance)),
                (Ok(_), _) => {}
            }
        }
        Ok(())
    }

    /// Prepares the statements not prepared on the attempt's connection yet, all at once.
    async fn prepare(&mut self, statements: Vec<&Rendered>) -> Result<(), Failure> {
        let mut missing: Vec<&Rendered> = Vec::new();
        for rendered in statements {
            if !self.prepared.contains_key(&rendered.sql) && !missing.iter().any(|m| m.sql == rendered.sql) {
                missing.push(rendered);
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        let client = self.current()?;
        let types: Vec<Vec<Type>> = missing.iter().map(|r| r.values.iter().map(type_of).collect()).collect();
        let preparing = missing.iter().zip(&types).map(|(rendered, types)| client.prepare_typed(&rendered.sql, types));
        let prepared = futures::future::try_join_all(preparing).await?;
        for (rendered, statement) in missing.into_iter().zip(prepared) {
            self.prepared.insert(rendered.sql.clone(), statement);
        }
        Ok(())
    }
}

/// The statements a batch begins with: its tenants locked against deletion, and the balances
/// it posts to locked, in the order of their ids. A batch takes several balances' locks and
/// holds them to its commit; batches of one tenant from several instances taking them in
/// their changesets' order could each wait for the other (a deadlock, which PostgreSQL breaks
/// only after a second).
fn opening(batch: &[Changeset], pending: &[usize]) -> Vec<Query<Postgres>> {
    let mut tenants: Vec<i64> = pending.iter().map(|&i| batch[i].tenant.0).collect();
    tenants.sort_unstable();
    tenants.dedup();
    let mut balances: Vec<(Uuid, i64)> = pending.iter().flat_map(|&i| posted_balances(&batch[i])).collect();
    balances.sort_unstable();
    balances.dedup();
    let mut opening = vec![changes::lock_tenants(&tenants)];
    if !balances.is_empty() {
        opening.push(changes::lock_balances(&balances));
    }
    opening
}

/// The funds check of each balance `moves` posts to: the balance must hold what its lowest
/// point comes to after the batch's moves so far (`running`, which this adds `moves` to) and
/// each of the changeset's own, in order. A balance only credited needs nothing it does not
/// hold already; it is looked for all the same (it must be there).
fn funds_checks(tenant: i64, moves: &[(Uuid, i64)], running: &mut BTreeMap<(Uuid, i64), i64>) -> Vec<Rendered> {
    let mut lowest: Vec<(Uuid, i64)> = Vec::new();
    for &(balance, delta) in moves {
        let now = running.entry((balance, tenant)).or_default();
        *now += delta;
        match lowest.iter_mut().find(|(b, _)| *b == balance) {
            Some((_, low)) => *low = (*low).min(*now),
            None => lowest.push((balance, (*now).min(*now - delta))),
        }
    }
    lowest
        .into_iter()
        .map(|(balance, low)| Rendered::new(changes::funds_check(tenant, balance, -low), Some(Expect::Funds(balance))))
        .collect()
}

/// Why a changeset's funds check found nothing: the balance is not there (stale), or what it
/// holds with the batch's accepted moves so far (`moved`, in the batch's transaction, which
/// holds its lock) does not cover the debit.
async fn uncovered(
    client: &Client,
    tenant: i64,
    balance: Uuid,
    moved: &BTreeMap<(Uuid, i64), i64>,
) -> Result<StoreError, Failure> {
    let (sql, values) = changes::balance_amount(tenant, balance).prepared();
    let held: Option<i64> = client.query_opt(&sql, &params(&values)).await?.map(|row| row.get(0));
    Ok(match held {
        None => StoreError::Stale { resource: "balance", id: balance },
        Some(held) => StoreError::InsufficientFunds {
            balance,
            available: held + moved.get(&(balance, tenant)).copied().unwrap_or(0),
        },
    })
}

fn is_funds_violation(error: &tokio_postgres::Error) -> bool {
    error.as_db_error().is_some_and(|e| *e.code() == SqlState::CHECK_VIOLATION && e.constraint() == Some("funds"))
}

fn simple(client: &Client, sql: String) -> Sent<'_> {
    Box::pin(async move { client.batch_execute(&sql).await.map(|()| 0) })
}

fn execute<'a>(client: &'a Client, prepared: &'a HashMap<String, Statement>, rendered: &'a Rendered) -> Sent<'a> {
    Box::pin(async move {
        let statement = prepared.get(&rendered.sql).expect("`Lane::prepare` prepared it on this connection");
        client.execute(statement, &params(&rendered.values)).await
    })
}

/// Sends every statement before waiting for any answer (each is sent when first polled, in
/// order), then takes the answers in order.
async fn pipeline(sent: Vec<Sending<'_>>) -> Vec<Answered> {
    let mut waiting = Vec::with_capacity(sent.len());
    for Sending { mut future, owner, expects } in sent {
        let answered = match futures::poll!(future.as_mut()) {
            std::task::Poll::Ready(answer) => Some(answer),
            std::task::Poll::Pending => None,
        };
        waiting.push((future, answered, owner, expects));
    }
    let mut answers = Vec::with_capacity(waiting.len());
    for (future, answered, owner, expects) in waiting {
        let result = match answered {
            Some(answer) => answer,
            None => future.await,
        };
        answers.push(Answered { result, owner, expects });
    }
    answers
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use uuid::Uuid;

    use super::funds_checks;
    use crate::reads::Value;

    /// The amount each funds check asks its balance to hold, by balance.
    fn needs(moves: &[(Uuid, i64)], running: &mut BTreeMap<(Uuid, i64), i64>) -> Vec<(Uuid, i64)> {
        funds_checks(7, moves, running)
            .into_iter()
            .map(|check| match check.values.as_slice() {
                [Value::Uuid(balance), Value::Int(7), Value::Int(need)] => (*balance, *need),
                other => panic!("a funds check's values: {other:?}"),
            })
            .collect()
    }

    #[test]
    fn each_changeset_needs_its_lowest_point_after_the_batch_so_far() {
        let (a, b) = (Uuid::from_u128(1), Uuid::from_u128(2));
        let mut running = BTreeMap::new();
        // A payment of 1,020 from a: a must hold it.
        assert_eq!(needs(&[(a, -1_020)], &mut running), [(a, 1_020)]);
        // The next one needs both; a credit to b needs nothing b does not hold (b is looked for).
        assert_eq!(needs(&[(a, -500), (b, 300)], &mut running), [(a, 1_520), (b, 0)]);
        // A credit before a debit in one changeset: the lowest point is the batch's so far.
        assert_eq!(needs(&[(a, 2_000), (a, -2_100)], &mut running), [(a, 1_620)]);
        // A debit before a credit: the lowest point is after the debit.
        assert_eq!(needs(&[(a, -100), (a, 5_000)], &mut running), [(a, 1_720)]);
        // Credits the batch made cover later debits: nothing needed beyond being there.
        assert_eq!(needs(&[(b, -300)], &mut running), [(b, 0)]);
        assert_eq!(running, BTreeMap::from([((a, 7), 3_280), ((b, 7), 0)]));
    }
}
