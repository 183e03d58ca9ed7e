//! The one connection that writes. SQLite admits one writer at a time anyway; owning it in one
//! task makes every check-and-write (funds, unique keys, expected statuses) race-free, and lets
//! many writes share one commit (group commit): the writes queued while the previous commit was
//! on its way to disk are applied one after another in one transaction and committed with one
//! fsync. No write is answered before the commit that holds it is on disk (`synchronous = FULL`).
//!
//! Each write is atomic by itself (one statement, or a script in its own savepoint that it rolls
//! back when it fails), so a write refused for a reason the caller can act on (a taken key, a
//! stale status, a debit not covered) leaves the others untouched. A write that fails with
//! [`StoreError::Database`] may have left the transaction in doubt: the whole batch is then
//! rolled back and every write in it answered with the failure.
//!
//! What a write leaves for the end of its batch (the search rows of the transactions it
//! inserted: see [`Session::searchable`]) is written after the last write, in the same
//! transaction, before the commit.

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use futures::future::BoxFuture;
use sqlx::{Connection, SqliteConnection};
use tokio::sync::{mpsc, oneshot};

use super::changes::{Searchable, index};
use crate::{Result, StoreError};

/// Writes taken into one commit at most.
const BATCH: usize = 256;
/// Writes waiting for the writer at most; more wait for room (backpressure, not memory).
const QUEUE: usize = 4096;

/// Answers the caller once the commit is known. A write that failed is answered with its own
/// error; one that succeeded, with the commit's outcome.
type Reply = Box<dyn FnOnce(Result<()>) + Send>;
/// A write: runs in the session's open transaction and says whether the transaction is still
/// intact. Dropped without running (the transaction could not start or broke), it answers its
/// caller with an error through its closed channel.
type Job = Box<dyn for<'c> FnOnce(&'c mut Session) -> BoxFuture<'c, (bool, Reply)> + Send>;

/// The writer's connection, and what the writes of the open transaction leave for its end.
pub struct Session {
    pub connection: SqliteConnection,
    /// The search rows of the transactions inserted in this batch. FTS5 writes its pending
    /// terms to disk as a new segment at every savepoint, so a row inserted inside each write's
    /// savepoint cost a segment (and the merging of segments) per payment; inserted together
    /// after the last savepoint, a batch makes one segment, at the commit.
    pub searchable: Vec<Searchable>,
}

#[derive(Clone)]
pub struct Writer {
    jobs: mpsc::Sender<Job>,
}

impl Writer {
    /// Starts the writer task on `connection`; it stops when every `Writer` is dropped.
    pub fn start(connection: SqliteConnection) -> Self {
        let (jobs, queue) = mpsc::channel(QUEUE);
        tokio::spawn(run(connection, queue));
        Self { jobs }
    }

    /// Runs `work` in the write transaction and answers once it is committed (or failed).
    pub async fn write<T, F>(&self, work: F) -> Result<T>
    where
        T: Send + 'static,
        F: for<'c> FnOnce(&'c mut Session) -> BoxFuture<'c, Result<T>> + Send + 'static,
    {
        let (answer, answered) = oneshot::channel();
        let job: Job = Box::new(move |session| {
            Box::pin(async move {
                let result = work(session).await;
                let intact = !matches!(result, Err(StoreError::Database(_)));
                let reply: Reply = Box::new(move |committed| {
                    let _ = answer.send(result.and_then(|value| committed.map(|()| value)));
                });
                (intact, reply)
            })
        });
        self.jobs.send(job).await.map_err(|_| not_made())?;
        answered.await.map_err(|_| not_made())?
    }
}

fn not_made() -> StoreError {
    StoreError::Database("the write was not made: the database failed (see the log)".into())
}

async fn run(connection: SqliteConnection, mut queue: mpsc::Receiver<Job>) {
    let mut session = Session { connection, searchable: Vec::new() };
    let mut batch = Vec::with_capacity(BATCH);
    while queue.recv_many(&mut batch, BATCH).await > 0 {
        commit(&mut session, std::mem::take(&mut batch)).await;
    }
    let _ = session.connection.close().await;
}

async fn execute(connection: &mut SqliteConnection, sql: &'static str) -> Result<()> {
    sqlx::raw_sql(sql).execute(connection).await.map(|_| ()).map_err(StoreError::from)
}

/// Runs `batch` in one transaction and commits it.
async fn commit(session: &mut Session, batch: Vec<Job>) {
    session.searchable.clear();
    if let Err(error) = execute(&mut session.connection, "BEGIN IMMEDIATE").await {
        tracing::error!(%error, writes = batch.len(), "cannot begin a write transaction");
        return;
    }
    let mut replies = Vec::with_capacity(batch.len());
    let mut failure = None;
    for job in batch {
        let (intact, reply) = match AssertUnwindSafe(job(session)).catch_unwind().await {
            Ok(outcome) => outcome,
            Err(_) => {
                tracing::error!("a write panicked; its transaction is rolled back");
                (false, Box::new(|_| {}) as Reply)
            }
        };
        replies.push(reply);
        if !intact {
            // The rest are dropped unrun: their callers get an error.
            failure = Some(StoreError::Database("a write failed and took its transaction with it".into()));
            break;
        }
    }
    let searchable = std::mem::take(&mut session.searchable);
    let connection = &mut session.connection;
    let committed = match failure {
        Some(error) => Err(error),
        None => match index(connection, &searchable).await {
            Ok(()) => execute(connection, "COMMIT").await,
            Err(error) => Err(error),
        },
    };
    if let Err(error) = &committed {
        tracing::error!(%error, writes = replies.len(), "a write transaction failed; its writes were rolled back");
        // SQLite rolls back by itself after some errors (I/O, full disk); make sure it has.
        let _ = execute(connection, "ROLLBACK").await;
    }
    for reply in replies {
        reply(committed.clone());
    }
}
