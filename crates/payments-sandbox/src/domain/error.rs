//! Why the domain refuses or fails a request. The HTTP side turns each kind into its status
//! (`400`, `404`, `409`, `500`; an outage `503`, `507` or `504`); the message is the caller's to
//! read.

pub use payments_store::Outage;
use payments_store::StoreError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The request breaks a rule (`400`); the message says which.
    Invalid(String),
    /// No such resource for this caller (`404`): another tenant's answers exactly like none.
    NotFound(String),
    /// The resource's state forbids it, or an idempotency key was used by another request
    /// (`409`).
    Conflict(String),
    /// Something failed that the caller can do nothing about (`500`); the detail is for the log.
    Internal(String),
    /// The database cannot serve now (`503`, a full disk `507`): nothing was changed, and the
    /// same request may succeed later. The detail is for the log.
    Unavailable { outage: Outage, detail: String },
    /// A change's commit was sent and its answer lost with the database connection (`504`): it
    /// may or may not have been made. The detail is for the log.
    OutcomeUnknown(String),
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
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Invalid(m) => write!(f, "invalid: {m}"),
            Self::NotFound(m) => write!(f, "not found: {m}"),
            Self::Conflict(m) => write!(f, "conflict: {m}"),
            Self::Internal(m) => write!(f, "internal: {m}"),
            Self::Unavailable { outage, detail } => write!(f, "unavailable: {outage}: {detail}"),
            Self::OutcomeUnknown(detail) => write!(f, "outcome unknown: {detail}"),
        }
    }
}

impl std::error::Error for Error {}

/// An outage is an outage whatever the operation; any other store answer the operation did not
/// expect is a failure. The ones it expects (a cursor not in the list, a debit not covered, a
/// key taken, a state that moved) are handled where they can happen.
impl From<StoreError> for Error {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::Unavailable { outage, detail } => Self::Unavailable { outage, detail },
            StoreError::OutcomeUnknown { detail } => Self::OutcomeUnknown(detail),
            other => Self::Internal(other.to_string()),
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
