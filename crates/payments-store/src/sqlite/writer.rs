//! The one connection that writes. SQLite admits one writer at a time anyway; owning it in one
//! task makes every check-and-write (funds, unique keys, expected statuses) race-free, and lets
//! many writes share one commit (group commit): the writes queued while the previous commit was
//! on its way to disk are applied one after another, each in a savepoint of one transaction,
//! and committed with one fsync. A write that fails rolls back its savepoint only. No write is
//! answered before the commit that holds it is on disk (`synchronous = FULL`).

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use futures::future::BoxFuture;
use sqlx::{Connection, SqliteConnection};
use tokio::sync::{mpsc, oneshot};

use crate::{Result, StoreError};

/// Writes taken into one commit at most.
const BATCH: usize = 256;
/// Writes waiting for the writer at most; more wait for room (backpressure, not memory).
const QUEUE: usize = 4096;

/// Answers the caller once the commit is known. A write that failed is answered with its own
/// error; one that succeeded, with the commit's outcome.
type Reply = Box<dyn FnOnce(Result<()>) + Send>;
/// A write: runs on the connection inside the open transaction and says whether it succeeded.
/// Dropped without running (the transaction could not start), it answers its caller with an
/// error through its closed channel.
type Job = Box<dyn for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, (bool, Reply)> + Send>;

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
        F: for<'c> FnOnce(&'c mut SqliteConnection) -> BoxFuture<'c, Result<T>> + Send + 'static,
    {
        let (answer, answered) = oneshot::channel();
        let job: Job = Box::new(move |connection| {
            Box::pin(async move {
                let result = work(connection).await;
                let ok = result.is_ok();
                let reply: Reply = Box::new(move |committed| {
                    let _ = answer.send(result.and_then(|value| committed.map(|()| value)));
                });
                (ok, reply)
            })
        });
        self.jobs.send(job).await.map_err(|_| not_made())?;
        answered.await.map_err(|_| not_made())?
    }
}

fn not_made() -> StoreError {
    StoreError::Database("the write was not made: the database failed (see the log)".into())
}

async fn run(mut connection: SqliteConnection, mut queue: mpsc::Receiver<Job>) {
    let mut batch = Vec::with_capacity(BATCH);
    while queue.recv_many(&mut batch, BATCH).await > 0 {
        commit(&mut connection, std::mem::take(&mut batch)).await;
    }
    let _ = connection.close().await;
}

async fn execute(connection: &mut SqliteConnection, sql: &'static str) -> Result<()> {
    sqlx::raw_sql(sql).execute(connection).await.map(|_| ()).map_err(StoreError::from)
}

/// Runs `batch` in one transaction and commits it.
async fn commit(connection: &mut SqliteConnection, batch: Vec<Job>) {
    if let Err(error) = execute(connection, "BEGIN IMMEDIATE").await {
        tracing::error!(%error, writes = batch.len(), "cannot begin a write transaction");
        return;
    }
    // One write alone needs no savepoint: if it fails, the transaction is rolled back.
    let savepoints = batch.len() > 1;
    let mut replies = Vec::with_capacity(batch.len());
    let mut kept = 0;
    let mut failure = None;
    for job in batch {
        if failure.is_some() {
            break; // the rest are dropped unrun: their callers get an error
        }
        if savepoints && let Err(error) = execute(connection, "SAVEPOINT write").await {
            failure = Some(error);
            break;
        }
        let (ok, reply) = match AssertUnwindSafe(job(connection)).catch_unwind().await {
            Ok(outcome) => outcome,
            Err(_) => {
                tracing::error!("a write panicked; it was rolled back");
                (false, Box::new(|_| {}) as Reply)
            }
        };
        replies.push(reply);
        kept += usize::from(ok);
        if savepoints {
            let end = if ok { "RELEASE write" } else { "ROLLBACK TO write; RELEASE write" };
            if let Err(error) = execute(connection, end).await {
                failure = Some(error);
            }
        }
    }
    let committed = match failure {
        Some(error) => Err(error),
        None if kept > 0 => execute(connection, "COMMIT").await,
        // Every write failed on its own: there is nothing to keep, and each is answered with
        // its own error.
        None => {
            if let Err(error) = execute(connection, "ROLLBACK").await {
                tracing::error!(%error, "cannot roll back a write transaction");
            }
            Ok(())
        }
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
