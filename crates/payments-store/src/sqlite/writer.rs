//! The one connection that writes. SQLite admits one writer at a time anyway; owning it in one
//! thread makes every check-and-write (funds, unique keys, expected statuses) race-free, and lets
//! many writes share one commit (group commit): the writes queued while the previous commit was
//! on its way to disk are applied one after another in one transaction and committed with one
//! fsync. No write is answered before the commit that holds it is on disk (`synchronous = FULL`).
//!
//! The writer is an OS thread of its own that owns the connection and runs each batch's
//! statements straight through rusqlite: no statement crosses a thread, and the runtime's
//! workers never wait for the disk. (Through sqlx, each statement crossed to the driver's thread
//! and back, and that traffic took over a third of a payment's CPU.)
//!
//! Each write is atomic by itself (one statement, or several in their own savepoint — or, the
//! batch's only write, in the transaction itself — rolled back when one fails), so a write refused for a reason the caller can act on (a taken key, a stale
//! status, a debit not covered) leaves the others untouched. A write that fails in the database
//! (or for an outage, such as a full disk: [`StoreError::breaks_transaction`]) may have left the
//! transaction in doubt: the whole batch is then rolled back and every write in it answered
//! with that failure, so a caller is told the disk is full, not that "a write failed".
//!
//! After the last write of a batch, in its transaction, the search rows waiting to be indexed
//! are moved into the index once there are enough of them (`search_batches.rs`).

use std::panic::AssertUnwindSafe;

use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};

use super::prepared::PreparedConnection;
use super::{search_batches, statements};
use crate::reads::Query;
use crate::{Result, StoreError};

/// Writes taken into one commit at most.
const BATCH: usize = 256;
/// Writes waiting for the writer at most; more wait for room (backpressure, not memory).
const QUEUE: usize = 4096;

/// Answers the caller once the commit is known. A write that failed is answered with its own
/// error; one that succeeded, with the commit's outcome.
type Reply = Box<dyn FnOnce(Result<()>) + Send>;
/// A write: runs in the session's open transaction (or, given why there is none, fails with
/// that) and says what broke the transaction, if it did.
type Job = Box<dyn FnOnce(Result<&mut Session, &StoreError>) -> (Option<StoreError>, Reply) + Send>;

/// The writer's connection, and what the writes of the open transaction leave for its end.
pub(super) struct Session {
    pub connection: PreparedConnection,
    /// The search rows waiting to be indexed, as far as the writer knows (`None` once a batch
    /// was rolled back: counted again).
    pub search_waiting: Option<usize>,
    /// Whether the write running is its transaction's only one (see `changes::apply`).
    pub alone: bool,
}

pub(super) struct Writer {
    /// `None` only while dropping.
    jobs: Option<mpsc::Sender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Writer {
    /// Starts the writer thread on `connection`; it stops when the `Writer` is dropped.
    pub(super) fn start(connection: Connection) -> std::io::Result<Self> {
        let (jobs, queue) = mpsc::channel(QUEUE);
        let thread = std::thread::Builder::new().name("sqlite-writer".into()).spawn(move || run(connection, queue))?;
        Ok(Self { jobs: Some(jobs), thread: Some(thread) })
    }

    /// Runs `work` in the write transaction and answers once it is committed (or failed).
    pub(super) async fn write<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Session) -> Result<T> + Send + 'static,
    {
        let (answer, answered) = oneshot::channel();
        let job: Job = Box::new(move |session| {
            let result = match session {
                Ok(session) => work(session),
                Err(error) => Err(error.clone()),
            };
            let broke = result.as_ref().err().filter(|error| error.breaks_transaction()).cloned();
            let reply: Reply = Box::new(move |committed| {
                let _ = answer.send(result.and_then(|value| committed.map(|()| value)));
            });
            (broke, reply)
        });
        let jobs = self.jobs.as_ref().ok_or_else(not_made)?;
        jobs.send(job).await.map_err(|_| not_made())?;
        answered.await.map_err(|_| not_made())?
    }
}

impl Drop for Writer {
    /// Waits for the writes queued to be committed and the connection closed: the last
    /// connection to close copies the WAL into the database file (the readers, which cannot,
    /// are closed first: see `SqliteStore`), and keeps the WAL's files for the next start (see
    /// `persist_wal`).
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn not_made() -> StoreError {
    StoreError::Stopped("the write was not made: the database failed (see the log)")
}

/// The writer thread: takes what is queued (up to a batch) and commits it, until every sender
/// is gone; the connection closes with it.
fn run(connection: Connection, mut queue: mpsc::Receiver<Job>) {
    let mut session = Session { connection: PreparedConnection::new(connection), search_waiting: None, alone: false };
    let mut batch = Vec::with_capacity(BATCH);
    while let Some(job) = queue.blocking_recv() {
        batch.push(job);
        while batch.len() < BATCH {
            let Ok(job) = queue.try_recv() else { break };
            batch.push(job);
        }
        commit(&mut session, std::mem::take(&mut batch));
    }
}

fn execute(connection: &PreparedConnection, sql: &'static str) -> Result<()> {
    statements::execute(connection, Query::new(sql))?;
    Ok(())
}

/// Runs `batch` in one transaction and commits it.
fn commit(session: &mut Session, batch: Vec<Job>) {
    if let Err(error) = execute(&session.connection, "BEGIN IMMEDIATE") {
        log_failure(&error, batch.len(), "cannot begin a write transaction");
        for job in batch {
            let (_, reply) = job(Err(&error));
            reply(Err(error.clone()));
        }
        return;
    }
    session.alone = batch.len() == 1;
    let mut replies = Vec::with_capacity(batch.len());
    let mut failure: Option<StoreError> = None;
    for job in batch {
        // Once the transaction broke, the rest are answered with why, unrun.
        if let Some(error) = &failure {
            replies.push(job(Err(error)).1);
            continue;
        }
        let (broke, reply) = match std::panic::catch_unwind(AssertUnwindSafe(|| job(Ok(session)))) {
            Ok(outcome) => outcome,
            Err(_) => {
                tracing::error!("a write panicked; its transaction is rolled back");
                (Some(StoreError::Stopped("a write panicked")), Box::new(|_| {}) as Reply)
            }
        };
        replies.push(reply);
        failure = broke;
    }
    let connection = &session.connection;
    let committed = match failure {
        Some(error) => Err(error),
        None => {
            search_batches::settle(connection, &mut session.search_waiting).and_then(|()| execute(connection, "COMMIT"))
        }
    };
    if let Err(error) = &committed {
        session.search_waiting = None;
        log_failure(error, replies.len(), "a write transaction failed; its writes were rolled back");
        // SQLite rolls back by itself after some errors (I/O, full disk); make sure it has.
        if !connection.is_autocommit() {
            let _ = connection.execute_batch("ROLLBACK");
        }
    }
    for reply in replies {
        reply(committed.clone());
    }
}

/// Logs a failed batch, unless it failed for an outage: every caller is answered with that,
/// and the sandbox reports outages (a line per cause now and then, not one per batch).
fn log_failure(error: &StoreError, writes: usize, what: &str) {
    if error.outage().is_none() {
        tracing::error!(%error, writes, "{what}");
    }
}
