//! The read connections: reads run on the calling thread (see `statements` for how a query
//! runs).
//!
//! sqlx's SQLite driver steps every statement on a thread of its own and sends each row back
//! over a channel: two thread hand-offs per query, which cost more than the query
//! (BENCHMARKS.md, *Why, measured: SQLite through rusqlite, not sqlx*). A read here
//! takes an idle read-only connection, runs on the task's own thread, and puts it back. A
//! request's reads are index range reads of at most a page (100 rows), so the thread is held
//! for microseconds to a few milliseconds, like any other work a request does. WAL lets any
//! number of them run beside the writer without waiting for it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::prepared::PreparedConnection;

use crate::Result;

/// Idle connections kept: one per thread that reads at once (the runtime's workers, and a few
/// more); a read that finds none opens one, and one put back beyond this is closed.
const KEPT: usize = 8;
/// Statements rusqlite's own cache keeps on each connection: those of the few reads written
/// straight in rusqlite (`tenants.rs`); a [`Query`](crate::reads::Query)'s are kept by
/// `prepared.rs`.
const PREPARED: usize = 16;

pub(super) struct Readers {
    path: PathBuf,
    busy_timeout: Duration,
    pragmas: &'static [(&'static str, &'static str)],
    idle: Mutex<Vec<PreparedConnection>>,
}

impl Readers {
    /// Read connections to the database at `path`, with `pragmas` set on each; one is opened
    /// now, so a file that cannot be read is found at start.
    pub(super) fn open(
        path: &Path,
        busy_timeout: Duration,
        pragmas: &'static [(&'static str, &'static str)],
    ) -> Result<Self, crate::OpenError> {
        let readers = Self { path: path.to_owned(), busy_timeout, pragmas, idle: Mutex::new(Vec::new()) };
        let first = readers.connect().map_err(|e| crate::OpenError::failed("cannot open a read connection", e))?;
        readers.idle.lock().unwrap_or_else(|e| e.into_inner()).push(first);
        Ok(readers)
    }

    fn connect(&self) -> Result<PreparedConnection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = Connection::open_with_flags(&self.path, flags)?;
        connection.busy_timeout(self.busy_timeout)?;
        for (name, value) in self.pragmas {
            connection.pragma_update(None, name, value)?;
        }
        connection.set_prepared_statement_cache_capacity(PREPARED);
        Ok(PreparedConnection::new(connection))
    }

    /// Runs `read` on an idle connection (or a new one), on this thread.
    pub(super) fn with<T>(&self, read: impl FnOnce(&PreparedConnection) -> Result<T>) -> Result<T> {
        let idle = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let connection = match idle {
            Some(connection) => connection,
            None => self.connect()?,
        };
        let result = read(&connection);
        let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
        if idle.len() < KEPT {
            idle.push(connection);
        }
        result
    }
}
