//! Why the domain refuses or fails a request. The HTTP side turns each kind into its status
//! (`400`, `404`, `409`, `500`; an outage `503`, `507` or `504`); the message is the caller's to
//! read.

pub use payments_store::Outage;
use payments_store::StoreError;

#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// The request breaks a rule (`400`); the message says which.
    #[error("invalid: {0}")]
    Invalid(String),
    /// No such resource for this caller (`404`): another tenant's answers exactly like none.
    #[error("not found: {0}")]
    NotFound(String),
    /// The resource's state forbids it, or an idempotency key was used by another request
    /// (`409`).
    #[error("conflict: {0}")]
    Conflict(String),
    /// Something failed that the caller can do nothing about (`500`); the detail is for the log.
    #[error("internal: {0}")]
    Internal(String),
    /// The store failed in a way the operation did not expect (`500`); kept whole for the log.
    #[error("the store failed")]
    Store(#[source] StoreError),
    /// The database cannot serve now (`503`, a full disk `507`): nothing was changed, and the
    /// same request may succeed later.
    /// (Its text leaves the outage to its source, which names it.)
    #[error("the database cannot serve now")]
    Unavailable {
        outage: Outage,
        #[source]
        source: StoreError,
    },
    /// A change's commit was sent and its answer lost with the database connection (`504`): it
    /// may or may not have been made.
    #[error("the outcome of a commit is unknown")]
    OutcomeUnknown(#[source] StoreError),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn invalid(message: impl std::fmt::Display) -> Self {
        Self::Invalid(message.to_string())
    }

    pub fn not_found(message: impl std::fmt::Display) -> Self {
        Self::NotFound(message.to_string())
    }

    pub fn conflict(message: impl std::fmt::Display) -> Self {
        Self::Conflict(message.to_string())
    }

    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::Internal(message.to_string())
    }

    /// The whole chain of causes, for a log line (`payments_store::chain`).
    pub fn chain(&self) -> String {
        payments_store::chain(self)
    }
}

/// Two errors are equal when they are of one kind and say the same, causes included (the
/// store's driver errors cannot be compared otherwise).
impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other) && self.chain() == other.chain()
    }
}

/// An outage is an outage whatever the operation; any other store answer the operation did not
/// expect is a failure. The ones it expects (a cursor not in the list, a debit not covered, a
/// key taken, a state that moved) are handled where they can happen.
impl From<StoreError> for Error {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable { outage, .. } => Self::Unavailable { outage, source: error },
            StoreError::OutcomeUnknown { .. } => Self::OutcomeUnknown(error),
            other => Self::Store(other),
        }
    }
}

impl Error {
    /// The outage this is, if it is one.
    pub fn outage(&self) -> Option<Outage> {
        match self {
            Self::Unavailable { outage, .. } => Some(*outage),
            Self::OutcomeUnknown(_) => Some(Outage::Unreachable),
            _ => None,
        }
    }
}

/// For list operations: a `starting_after` that is not in the list is the caller's mistake.
pub fn listing(noun: &'static str) -> impl Fn(StoreError) -> Error {
    move |error| match error {
        StoreError::UnknownCursor(id) => Error::invalid(format!("starting_after: {id} is not a {noun} in this list")),
        other => other.into(),
    }
}
