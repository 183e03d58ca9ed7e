//! Reads on PostgreSQL, through tokio-postgres: point reads pipelined over a few connections of
//! their own, and list pages on connections of theirs.
//!
//! Why not sqlx's pool, as before: for each read it took a connection from the pool, asked it
//! whether it was still there (a round trip of its own), sent the statement, waited, and gave
//! the connection back from a task spawned for that; one query at a time per connection
//! (BENCHMARKS.md, *Why, measured: PostgreSQL reads pipelined*). A tokio-postgres client sends
//! what every task asks at once on its connection, and PostgreSQL answers them back to back:
//! many requests' reads share each system call on both sides.
//!
//! A point read (a row by its key, a cursor, an index lookup) goes to the next connection in
//! turn. A list page can take PostgreSQL milliseconds; pages go to connections of their own,
//! one per page read at once ([`crate::list_pages_at_once`]), so no point read ever queues
//! behind one. Reads are idempotent: one whose connection the server ended (a restart, a
//! failover, `pg_terminate_backend`) is made once more on a new connection.

use std::collections::HashMap;
use std::str::FromStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use tokio_postgres::error::SqlState;
use tokio_postgres::types::{FromSql, ToSql, Type};
use tokio_postgres::{Client, Config, Row, Statement};

use super::params::{params, type_of};
use crate::reads::{Postgres, Query, cells};
use crate::{Result, StoreError};

/// Statements kept prepared per connection: every point read's text, and the lists' filter
/// combinations; past this many the connection forgets them all (and the server with it) and
/// prepares again what it is asked.
const PREPARED: usize = 512;

pub(super) struct Reader {
    config: Config,
    points: Vec<Slot>,
    next: AtomicUsize,
    pages: Vec<Slot>,
    /// The page connections not in use: one is taken with each permit of `pages_at_once`.
    idle_pages: Mutex<Vec<usize>>,
    pages_at_once: tokio::sync::Semaphore,
}

/// A page connection in use, back among the idle ones when dropped (before its permit).
struct Taken<'a> {
    idle: &'a Mutex<Vec<usize>>,
    index: usize,
    _permit: tokio::sync::SemaphorePermit<'a>,
}

impl Drop for Taken<'_> {
    fn drop(&mut self) {
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).push(self.index);
    }
}

/// One connection of the reader, made again when it is found lost.
struct Slot {
    connection: RwLock<Arc<Connection>>,
    /// Held while a lost connection is made again, so it is made once.
    reconnecting: tokio::sync::Mutex<()>,
}

struct Connection {
    client: Client,
    prepared: Mutex<HashMap<String, Statement>>,
}

impl Reader {
    /// Connects `points` connections for point reads and `pages` for list pages.
    pub(super) async fn start(
        url: &str,
        shown: &str,
        points: usize,
        pages: usize,
        timeout: Duration,
    ) -> Result<Self, crate::OpenError> {
        let mut config = Config::from_str(url)
            .map_err(|e| crate::OpenError::failed(format!("{shown} is not a PostgreSQL URL"), e))?;
        config.connect_timeout(timeout);
        let mut slots = Vec::with_capacity(points + pages);
        for _ in 0..points + pages {
            let connection = connect(&config).await.map_err(|e| super::cannot_connect(shown, e))?;
            slots.push(Slot { connection: RwLock::new(connection), reconnecting: tokio::sync::Mutex::new(()) });
        }
        let pages = slots.split_off(points);
        Ok(Self {
            config,
            points: slots,
            next: AtomicUsize::new(0),
            idle_pages: Mutex::new((0..pages.len()).collect()),
            pages_at_once: tokio::sync::Semaphore::new(pages.len()),
            pages,
        })
    }

    /// The rows of a point read.
    pub(super) async fn rows(&self, query: Query<Postgres>) -> Result<Vec<Row>> {
        let slot = &self.points[self.next.fetch_add(1, Ordering::Relaxed) % self.points.len()];
        self.read(slot, query).await
    }

    /// The rows of a list page, read on a page connection (waiting for one to be free).
    pub(super) async fn page(&self, query: Query<Postgres>) -> Result<Vec<Row>> {
        let permit = self
            .pages_at_once
            .acquire()
            .await
            .map_err(|_| StoreError::Stopped("the list page readers have stopped"))?;
        let taken = self.idle_pages.lock().unwrap_or_else(|p| p.into_inner()).pop().expect("one per permit");
        // Given back however the read ends: a client that hangs up drops it halfway.
        let taken = Taken { idle: &self.idle_pages, index: taken, _permit: permit };
        self.read(&self.pages[taken.index], query).await
    }

    /// The first column of each row.
    pub(super) async fn scalars<T: for<'a> FromSql<'a>>(&self, query: Query<Postgres>) -> Result<Vec<T>> {
        self.rows(query).await?.iter().map(|row| Ok(row.try_get(0)?)).collect()
    }

    async fn read(&self, slot: &Slot, query: Query<Postgres>) -> Result<Vec<Row>> {
        let (sql, values) = query.prepared();
        let params = params(&values);
        let types: Vec<Type> = values.iter().map(type_of).collect();
        let mut tried = false;
        loop {
            let connection = slot.connection(&self.config).await?;
            match connection.query(&sql, &types, &params).await {
                Err(error) if !tried && lost(&error) => tried = true,
                result => return Ok(result?),
            }
        }
    }
}

impl Slot {
    /// The slot's connection, made again first if it was lost.
    async fn connection(&self, config: &Config) -> Result<Arc<Connection>> {
        let current = self.connection.read().unwrap_or_else(|p| p.into_inner()).clone();
        if !current.client.is_closed() {
            return Ok(current);
        }
        let _alone = self.reconnecting.lock().await;
        let current = self.connection.read().unwrap_or_else(|p| p.into_inner()).clone();
        if !current.client.is_closed() {
            return Ok(current);
        }
        let made = connect(config).await?;
        *self.connection.write().unwrap_or_else(|p| p.into_inner()) = made.clone();
        Ok(made)
    }
}

impl Connection {
    async fn query(
        &self,
        sql: &str,
        types: &[Type],
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Vec<Row>, tokio_postgres::Error> {
        let known = self.prepared.lock().unwrap_or_else(|p| p.into_inner()).get(sql).cloned();
        let statement = match known {
            Some(statement) => statement,
            None => {
                let statement = self.client.prepare_typed(sql, types).await?;
                let mut prepared = self.prepared.lock().unwrap_or_else(|p| p.into_inner());
                if prepared.len() >= PREPARED {
                    prepared.clear();
                }
                prepared.insert(sql.to_owned(), statement.clone());
                statement
            }
        };
        self.client.query(&statement, params).await
    }
}

async fn connect(config: &Config) -> Result<Arc<Connection>, tokio_postgres::Error> {
    let client = super::connect(config, "read").await?;
    Ok(Arc::new(Connection { client, prepared: Mutex::default() }))
}

/// Whether `error` says the connection is gone (ended by the server, or broken), not that the
/// read failed: then it is worth making again elsewhere.
fn lost(error: &tokio_postgres::Error) -> bool {
    error.is_closed()
        || error.code().is_some_and(|code| {
            [SqlState::ADMIN_SHUTDOWN, SqlState::CRASH_SHUTDOWN, SqlState::CANNOT_CONNECT_NOW].contains(code)
        })
}

cells!(Row, Row::try_get);
