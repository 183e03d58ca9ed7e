//! What can go wrong in the store, and which of the drivers' errors are outages: conditions of
//! the machine or the database server (a full disk, a server that is down), not of the request,
//! after which the same request may succeed and nothing of it was written.

use uuid::Uuid;

/// What can go wrong in the store. The first four are answers the domain expects and turns into
/// its own refusals; [`StoreError::Unavailable`] and [`StoreError::OutcomeUnknown`] are outages
/// (answered `503`/`507` and `504`, safe to retry); [`StoreError::Database`] is a failure
/// (logged, answered `500`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
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
    /// The database cannot serve now; nothing of the request was written.
    #[error("{outage}: {detail}")]
    Unavailable { outage: Outage, detail: String },
    /// A commit was sent and its answer lost with the connection: the write may or may not have
    /// been made.
    #[error("the outcome of a commit is unknown: {detail}")]
    OutcomeUnknown { detail: String },
    /// The database failed.
    #[error("database: {0}")]
    Database(String),
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
    pub fn unavailable(outage: Outage, detail: impl std::fmt::Display) -> Self {
        Self::Unavailable { outage, detail: detail.to_string() }
    }

    /// Whether a statement that failed with this may have left its transaction in doubt: the
    /// writer then rolls the whole transaction back.
    pub fn breaks_transaction(&self) -> bool {
        matches!(self, Self::Database(_) | Self::Unavailable { .. } | Self::OutcomeUnknown { .. })
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
pub(crate) fn from_postgres(error: &tokio_postgres::Error) -> StoreError {
    if let Some(database) = error.as_db_error() {
        return match postgres_outage(database.code().code()) {
            Some(outage) => StoreError::unavailable(outage, database),
            None => StoreError::Database(database.to_string()),
        };
    }
    // No answer from the server: the connection is closed, or could not be made (the reason
    // is in the source: "Connection refused").
    let detail = match std::error::Error::source(error) {
        Some(source) => format!("{error}: {source}"),
        None => error.to_string(),
    };
    if error.is_closed() || std::error::Error::source(error).is_some_and(|s| s.is::<std::io::Error>()) {
        return StoreError::unavailable(Outage::Unreachable, detail);
    }
    StoreError::Database(detail)
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        match &error {
            sqlx::Error::PoolTimedOut => Self::unavailable(Outage::Busy, error),
            sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_) => {
                Self::unavailable(Outage::Unreachable, error)
            }
            sqlx::Error::Database(database) => match database.code().as_deref().and_then(postgres_outage) {
                Some(outage) => Self::unavailable(outage, error),
                None => Self::Database(error.to_string()),
            },
            _ => Self::Database(error.to_string()),
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
