//! What every stage answers when it cannot go on: [`Error`], with the JSON pointer of what in
//! the document stopped it, and the sources (the library's or the system's error) it came from.

/// Why the generator cannot write a document's code. Printed with its sources (the library's
/// or the system's error) as `anyhow`'s alternate form does.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// What the document has at `at` (a JSON pointer, or the document's name and one) that the
    /// generator cannot read or write, and why.
    #[error("{at}: {why}")]
    At { at: String, why: String },
    /// The document as a whole (not YAML, not an object, not an OpenAPI version the generator
    /// reads, or nothing to take a sample of).
    #[error("{0}")]
    Document(String),
    /// A library the generator builds on refused the document (progenitor, typify, utoipa).
    #[error("{what}")]
    Library {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Code the generator made, or was given to build on, that does not parse: the generator's
    /// fault, not the document's.
    #[error("{what} does not parse")]
    Unparsable {
        what: String,
        #[source]
        source: syn::Error,
    },
    /// A file that cannot be read or written, or a program (rustfmt) that cannot be run.
    #[error("{}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// What the document in the file `path` has wrong.
    #[error("{}", path.display())]
    InFile {
        path: std::path::PathBuf,
        #[source]
        source: Box<Error>,
    },
    /// rustfmt refused generated code: what it said.
    #[error("rustfmt refused generated code:\n{0}")]
    Rustfmt(String),
    /// Operations that cannot be generated, each with its own error (the rest can): what the
    /// tool leaves out of a workspace, all in one pass.
    #[error("{} operation(s) cannot be generated: {}", .0.len(), .0.iter().map(|f| f.error.to_string()).collect::<Vec<_>>().join("; "))]
    Operations(Vec<Failing>),
}

/// An operation that cannot be generated: where the document has it, and why.
#[derive(Debug)]
pub struct Failing {
    pub path: String,
    pub method: String,
    pub error: Box<Error>,
}

impl Error {
    /// The error and each source under it, `: `-separated: what a person reads of it.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }

    pub(crate) fn at(at: impl std::fmt::Display, why: impl Into<String>) -> Self {
        Self::At { at: at.to_string(), why: why.into() }
    }

    pub(crate) fn library(
        what: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::Library { what: what.into(), source: source.into() }
    }

    pub(crate) fn unparsable(what: impl Into<String>, source: syn::Error) -> Self {
        Self::Unparsable { what: what.into(), source }
    }

    pub(crate) fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> Self {
        Self::Io { path: path.into(), source }
    }

    /// The error with `rewrite` applied to the pointers it names (where they are in the document
    /// as written, not in the generator's view of it).
    pub(crate) fn relocated(self, rewrite: impl Fn(String) -> String) -> Self {
        self.relocated_by(&rewrite)
    }

    fn relocated_by(self, rewrite: &dyn Fn(String) -> String) -> Self {
        match self {
            Self::At { at, why } => Self::At { at: rewrite(at), why: rewrite(why) },
            Self::Document(why) => Self::Document(rewrite(why)),
            Self::Operations(failing) => Self::Operations(
                failing.into_iter().map(|f| Failing { error: Box::new(f.error.relocated_by(rewrite)), ..f }).collect(),
            ),
            other => other,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Returns an [`Error`]: `bail!("…", args)` one of the whole document, `bail!(at, "…", args)`
/// one at the pointer `at`.
macro_rules! bail {
    ($why:literal $(, $arg:expr)* $(,)?) => { return Err($crate::Error::Document(format!($why $(, $arg)*))) };
    ($at:expr, $why:literal $(, $arg:expr)* $(,)?) => { return Err($crate::Error::at($at, format!($why $(, $arg)*))) };
}
pub(crate) use bail;
