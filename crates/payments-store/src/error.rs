//! What can go wrong in the store, and which of the drivers' errors are outages: conditions of
//! the machine or the database server (a full disk, a server that is down), not of the request,
//! after which the same request may succeed and nothing of it was written.

use std::sync::Arc;

use uuid::Uuid;

/// What can go wrong in the store. The first four are answers the domain expects and turns into
/// its own refusals; [`StoreError::Unavailable`] and [`StoreError::OutcomeUnknown`] are outages
/// (answered `503`/`507` and `504`, safe to retry); the rest are failures (logged, answered
/// `500`). A driver's error is kept whole as the source ([`DriverError`]), shared: a failed
/// batch answers each of its writes with the same error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// `starting_after` names no item of this list (unknown, another tenant's, deleted).
    #[error("{0} is not an item of this list")]
    UnknownCursor(Uuid),
    /// A unique key is taken.
    #[error("{0:?} already taken")]
    Duplicate(UniqueKey),
    /// A guarded change found its row in another state than the one it was decided on (someone
    /// changed it first), or not at all.
    #[error("{resource} {id} changed meanwhile")]
    Stale { resource: &'static str, id: Uuid },
    /// A debit the balance does not cover; nothing was changed.
    #[error("balance {balance} holds {available}, not enough")]
    InsufficientFunds { balance: Uuid, available: i64 },
    /// The database cannot serve now; nothing of the request was written. `detail` says what
    /// was under way when it could not.
    #[error("{outage}: {detail}")]
    Unavailable {
        outage: Outage,
        detail: String,
        #[source]
        source: Option<Arc<DriverError>>,
    },
    /// A commit was sent and its answer lost with the connection: the write may or may not have
    /// been made.
    #[error("the outcome of a commit is unknown: the connection was lost")]
    OutcomeUnknown {
        #[source]
        source: Arc<DriverError>,
    },
    /// The database failed.
    #[error("the database failed")]
    Driver(#[source] Arc<DriverError>),
    /// A stored value the store cannot read back: the database holds what no release wrote.
    #[error("stored {what} {value} is not valid")]
    Corrupt { what: String, value: String },
    /// A value too large for its column.
    #[error("{what} {value} is too large to store")]
    TooLarge { what: &'static str, value: String },
    /// A changeset that breaks a money invariant (a credit that takes, a zero entry): the
    /// domain's mistake, refused before anything is written.
    #[error("a change breaks an invariant: {0}")]
    Invariant(String),
    /// A value the store could not encode for its column.
    #[error("{what} cannot be encoded")]
    Encode {
        what: &'static str,
        #[source]
        source: Arc<serde_json::Error>,
    },
    /// The database disagrees with itself (a check failed that the store's own checks make
    /// impossible): nothing of the write was kept.
    #[error("the database disagrees with the store's checks: {0}")]
    Inconsistent(String),
    /// A thread or task of the store's own is gone (stopped, or it panicked).
    #[error("{0}")]
    Stopped(&'static str),
}

/// A driver's own error.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    #[error("SQLite")]
    Sqlite(#[source] rusqlite::Error),
    #[error("PostgreSQL")]
    Postgres(#[source] tokio_postgres::Error),
    #[error("PostgreSQL's connection pool")]
    Pool(#[source] deadpool_postgres::PoolError),
}

/// `error` and each source under it, `: `-separated, on one line: what a log line or a person
/// reads of an error.
pub fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Why a database could not be opened, migrated or backed up, said to the person who asked: one
/// line that names the database (never its password) and says what to do. Printed with its
/// sources (the driver's or the system's error), as `anyhow`'s alternate form does.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// What was asked cannot be done with this database (not a sandbox database, a newer
    /// release's, an in-memory one to back up); nothing in it was changed.
    #[error("{0}")]
    Refused(String),
    /// Doing `what` failed.
    #[error("{what}")]
    Failed {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl OpenError {
    pub fn refused(message: impl Into<String>) -> Self {
        Self::Refused(message.into())
    }

    pub fn failed(what: impl Into<String>, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Failed { what: what.into(), source: source.into() }
    }
}

/// The unique keys a write can collide with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UniqueKey {
    /// `order_id` of a transaction, per tenant.
    OrderId,
    /// `reference_id` of a payment request, per tenant.
    PaymentRequestReferenceId,
    /// `reference_id` of a virtual account, per tenant.
    VirtualAccountReferenceId,
    /// A virtual account's number, across tenants.
    AccountNumber,
    /// A token's hash.
    Token,
}

/// Why the database cannot serve now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum Outage {
    /// The disk (or the database's quota) is full.
    #[error("the database's disk is full")]
    DiskFull,
    /// The database's files cannot be written: a read-only file system, permissions, a server in
    /// recovery or a standby.
    #[error("the database cannot be written")]
    ReadOnly,
    /// The database server cannot be reached, or is shutting down or starting.
    #[error("the database server cannot be reached")]
    Unreachable,
    /// Every connection is busy, or the server has none to give.
    #[error("the database is busy")]
    Busy,
    /// The disk failed a read or a write.
    #[error("the database's disk failed an I/O")]
    Io,
}

impl StoreError {
    /// An outage no driver reported (a connection found gone before anything was sent).
    pub fn unavailable(outage: Outage, detail: impl std::fmt::Display) -> Self {
        Self::Unavailable { outage, detail: detail.to_string(), source: None }
    }

    /// An outage a driver reported.
    fn outage_of(outage: Outage, source: DriverError) -> Self {
        Self::Unavailable { outage, detail: "a statement failed".into(), source: Some(Arc::new(source)) }
    }

    /// A driver's error that is not an outage.
    fn driver(source: DriverError) -> Self {
        Self::Driver(Arc::new(source))
    }

    /// A commit whose answer was lost with the connection.
    pub(crate) fn outcome_unknown(source: tokio_postgres::Error) -> Self {
        Self::OutcomeUnknown { source: Arc::new(DriverError::Postgres(source)) }
    }

    /// Whether a statement that failed with this may have left its transaction in doubt: the
    /// writer then rolls the whole transaction back.
    pub fn breaks_transaction(&self) -> bool {
        matches!(
            self,
            Self::Driver(_)
                | Self::Unavailable { .. }
                | Self::OutcomeUnknown { .. }
                | Self::Inconsistent(_)
                | Self::Stopped(_)
        )
    }

    /// The outage this is, if it is one (an unknown outcome is one of the server being
    /// unreachable).
    pub fn outage(&self) -> Option<Outage> {
        match self {
            Self::Unavailable { outage, .. } => Some(*outage),
            Self::OutcomeUnknown { .. } => Some(Outage::Unreachable),
            _ => None,
        }
    }
}

/// SQLite's result codes that are outages.
pub(crate) fn sqlite_outage(error: &rusqlite::Error) -> Option<Outage> {
    use rusqlite::ErrorCode;
    let rusqlite::Error::SqliteFailure(failure, _) = error else { return None };
    match failure.code {
        ErrorCode::DiskFull => Some(Outage::DiskFull),
        ErrorCode::ReadOnly => Some(Outage::ReadOnly),
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => Some(Outage::Busy),
        ErrorCode::SystemIoFailure | ErrorCode::CannotOpen => Some(Outage::Io),
        _ => None,
    }
}

/// PostgreSQL's error codes (SQLSTATE) that are outages.
pub(crate) fn postgres_outage(code: &str) -> Option<Outage> {
    match code {
        // disk_full
        "53100" => Some(Outage::DiskFull),
        // insufficient_resources, out_of_memory, too_many_connections, configuration_limit_exceeded
        "53000" | "53200" | "53300" | "53400" => Some(Outage::Busy),
        // admin_shutdown, crash_shutdown, cannot_connect_now (starting or in recovery)
        "57P01" | "57P02" | "57P03" => Some(Outage::Unreachable),
        // read_only_sql_transaction (a standby, or a server made read-only)
        "25006" => Some(Outage::ReadOnly),
        // io_error
        "58030" => Some(Outage::Io),
        // connection_exception and its kinds
        code if code.starts_with("08") => Some(Outage::Unreachable),
        _ => None,
    }
}

/// A tokio-postgres error as the store's: the server's outage codes, and a connection that is
/// gone or could not be made, are outages.
impl From<tokio_postgres::Error> for StoreError {
    fn from(error: tokio_postgres::Error) -> Self {
        let outage = match error.as_db_error() {
            Some(database) => postgres_outage(database.code().code()),
            // No answer from the server: the connection is closed, or could not be made (the
            // reason is in the source: "Connection refused").
            None if error.is_closed()
                || std::error::Error::source(&error).is_some_and(|s| s.is::<std::io::Error>()) =>
            {
                Some(Outage::Unreachable)
            }
            None => None,
        };
        match outage {
            Some(outage) => Self::outage_of(outage, DriverError::Postgres(error)),
            None => Self::driver(DriverError::Postgres(error)),
        }
    }
}

/// A pooled connection that could not be had: a server that refuses it as the server's error
/// says; one that cannot be reached or made in time is unreachable, a pool all in use busy.
impl From<deadpool_postgres::PoolError> for StoreError {
    fn from(error: deadpool_postgres::PoolError) -> Self {
        use deadpool_postgres::{PoolError, TimeoutType};
        let outage = match error {
            PoolError::Backend(error) => return error.into(),
            PoolError::Timeout(TimeoutType::Wait) => Outage::Busy,
            PoolError::Timeout(_) | PoolError::Closed => Outage::Unreachable,
            _ => return Self::driver(DriverError::Pool(error)),
        };
        Self::outage_of(outage, DriverError::Pool(error))
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        match sqlite_outage(&error) {
            Some(outage) => Self::outage_of(outage, DriverError::Sqlite(error)),
            None => Self::driver(DriverError::Sqlite(error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlite_disk_full_and_read_only_are_outages() {
        let failure = |code| {
            rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), Some("database or disk is full".into()))
        };
        assert_eq!(sqlite_outage(&failure(rusqlite::ffi::SQLITE_FULL)), Some(Outage::DiskFull));
        assert_eq!(sqlite_outage(&failure(rusqlite::ffi::SQLITE_READONLY)), Some(Outage::ReadOnly));
        assert_eq!(sqlite_outage(&failure(rusqlite::ffi::SQLITE_IOERR_WRITE)), Some(Outage::Io));
        assert_eq!(sqlite_outage(&failure(rusqlite::ffi::SQLITE_CONSTRAINT)), None);
    }

    #[test]
    fn postgres_codes_that_are_outages() {
        assert_eq!(postgres_outage("53100"), Some(Outage::DiskFull));
        assert_eq!(postgres_outage("57P01"), Some(Outage::Unreachable));
        assert_eq!(postgres_outage("08006"), Some(Outage::Unreachable));
        assert_eq!(postgres_outage("25006"), Some(Outage::ReadOnly));
        assert_eq!(postgres_outage("23505"), None);
    }
}
