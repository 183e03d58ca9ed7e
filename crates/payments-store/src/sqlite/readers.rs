//! The read connections, and reads run on the calling thread.
//!
//! sqlx's SQLite driver steps every statement on a thread of its own and sends each row back
//! over a channel: two thread hand-offs per query, which cost more than the query (measured: a
//! `GET /balances/{id}` took 177 µs of CPU, a fifth of it in the driver's thread and most of the
//! rest in the kernel switching between threads; SQLite's own work was under 1 %). A read here
//! takes an idle read-only connection, runs on the task's own thread, and puts it back. A
//! request's reads are index range reads of at most a page (100 rows), so the thread is held
//! for microseconds to a few milliseconds, like any other work a request does. WAL lets any number of them run
//! beside the writer without waiting for it.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, OpenFlags, ToSql};

use crate::reads::{Cells, Query, Value};
use crate::{Result, StoreError};

/// Idle connections kept: one per thread that reads at once (the runtime's workers, and a few
/// more); a read that finds none opens one, and one put back beyond this is closed.
const KEPT: usize = 8;
/// Statements each connection keeps prepared: every read's text, and the lists' filter
/// combinations.
const PREPARED: usize = 256;

pub struct Readers {
    path: PathBuf,
    busy_timeout: Duration,
    pragmas: &'static [(&'static str, &'static str)],
    idle: Mutex<Vec<Connection>>,
}

impl Readers {
    /// Read connections to the database at `path`, with `pragmas` set on each; one is opened
    /// now, so a file that cannot be read is found at start.
    pub fn open(
        path: &Path,
        busy_timeout: Duration,
        pragmas: &'static [(&'static str, &'static str)],
    ) -> Result<Self, String> {
        let readers = Self { path: path.to_owned(), busy_timeout, pragmas, idle: Mutex::new(Vec::new()) };
        let first = readers.connect().map_err(|e| e.to_string())?;
        readers.idle.lock().unwrap_or_else(|e| e.into_inner()).push(first);
        Ok(readers)
    }

    fn connect(&self) -> Result<Connection> {
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let connection = Connection::open_with_flags(&self.path, flags)?;
        connection.busy_timeout(self.busy_timeout)?;
        for (name, value) in self.pragmas {
            connection.pragma_update(None, name, value)?;
        }
        connection.set_prepared_statement_cache_capacity(PREPARED);
        Ok(connection)
    }

    /// Runs `read` on an idle connection (or a new one), on this thread.
    pub fn with<T>(&self, read: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
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

/// The rows `query` finds on `connection` (the first `limit` of them, when given), each as
/// `decode` reads it.
pub fn rows<T>(
    connection: &Connection,
    query: Query<sqlx::Sqlite>,
    mut decode: impl FnMut(&rusqlite::Row<'_>) -> Result<T>,
    limit: Option<usize>,
) -> Result<Vec<T>> {
    let (sql, values) = query.positional();
    let mut statement = connection.prepare_cached(&sql)?;
    let mut rows = statement.query(rusqlite::params_from_iter(values.iter()))?;
    let mut found = Vec::new();
    while let Some(row) = rows.next()? {
        found.push(decode(row)?);
        if limit.is_some_and(|limit| found.len() >= limit) {
            break;
        }
    }
    Ok(found)
}

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Self::Int(value) => ToSqlOutput::Borrowed(ValueRef::Integer(*value)),
            Self::Text(value) => ToSqlOutput::Borrowed(ValueRef::Text(value.as_bytes())),
            Self::Uuid(value) => ToSqlOutput::Borrowed(ValueRef::Blob(value.as_bytes())),
        })
    }
}

impl Cells for rusqlite::Row<'_> {
    fn int(&self, column: &str) -> Result<i64> {
        Ok(self.get(column)?)
    }
    fn opt_int(&self, column: &str) -> Result<Option<i64>> {
        Ok(self.get(column)?)
    }
    fn text(&self, column: &str) -> Result<String> {
        Ok(self.get(column)?)
    }
    fn opt_text(&self, column: &str) -> Result<Option<String>> {
        Ok(self.get(column)?)
    }
    fn uuid(&self, column: &str) -> Result<uuid::Uuid> {
        Ok(self.get(column)?)
    }
    fn opt_uuid(&self, column: &str) -> Result<Option<uuid::Uuid>> {
        Ok(self.get(column)?)
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        Self::Database(error.to_string())
    }
}
