//! A connection with the statements run on it kept prepared, by their text, each with its
//! columns' names. rusqlite's own cache (`prepare_cached`) hashes a statement's text twice with
//! SipHash, copies it into a new `Arc<str>` and moves the statement out of and back into its LRU
//! list on every run; the reads' column names were a second map beside it (BENCHMARKS.md,
//! "Statements kept prepared by the store"). Here a run is one lookup with a fast hash, the
//! text is written into a buffer the connection keeps, and the values are bound from the query.
//!
//! A statement borrows its connection, so the two live in one `self_cell`; the statements make
//! it `!Send`, though it moves between threads whole, which is why this module allows `unsafe`
//! code (one `impl Send`, its reason beside it).
#![allow(unsafe_code)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::Deref;

use rusqlite::{Connection, Statement};

/// Statements past this many are dropped together: a list's text varies with its filters.
const KEPT: usize = 256;

/// A prepared statement and its columns' names.
pub(super) struct Prepared<'c> {
    pub statement: Statement<'c>,
    pub names: Box<[String]>,
}

/// The statements, by text; and the text being looked up, in a buffer kept for the next.
pub(super) struct Kept<'c> {
    by_text: HashMap<Box<str>, Prepared<'c>, foldhash::fast::FixedState>,
    text: String,
}

type KeptCell<'c> = RefCell<Kept<'c>>;

self_cell::self_cell!(
    struct Cell {
        owner: Connection,
        #[not_covariant]
        dependent: KeptCell,
    }
);

/// A connection and its kept statements, which borrow it (hence one cell holding both).
pub(crate) struct PreparedConnection(Cell);

// SAFETY: the statements are `!Send` only because each holds a reference to its `Connection`,
// which is `Send` but not `Sync`. Here the connection and every statement that refers to it move
// together, as one value with one owner, so no two threads ever reach the connection at once
// (rusqlite's own reason for `Connection: Send`).
unsafe impl Send for PreparedConnection {}

impl PreparedConnection {
    pub(crate) fn new(connection: Connection) -> Self {
        Self(Cell::new(connection, |_| {
            RefCell::new(Kept { by_text: HashMap::default(), text: String::with_capacity(256) })
        }))
    }

    /// Runs `run` with the statement whose text `write` writes (prepared now if it was not
    /// kept). A run inside another on the same connection (none does) gets a statement of its
    /// own, not kept.
    pub(super) fn with<T, E: From<rusqlite::Error>>(
        &self,
        write: impl FnOnce(&mut String),
        run: impl FnOnce(&mut Prepared<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        self.0.with_dependent(|connection, kept| {
            let Ok(mut kept) = kept.try_borrow_mut() else {
                let mut text = String::new();
                write(&mut text);
                return run(&mut prepare(connection, &text)?);
            };
            let kept = &mut *kept;
            kept.text.clear();
            write(&mut kept.text);
            // One lookup when the statement is kept, as it nearly always is.
            if let Some(prepared) = kept.by_text.get_mut(kept.text.as_str()) {
                return run(prepared);
            }
            let mut prepared = prepare(connection, &kept.text)?;
            let result = run(&mut prepared);
            if kept.by_text.len() >= KEPT {
                kept.by_text.clear();
            }
            kept.by_text.insert(kept.text.as_str().into(), prepared);
            result
        })
    }
}

/// Prepared as kept for many runs (as rusqlite's cache prepares): out of SQLite's lookaside
/// memory, which its statements would otherwise hold and leave each run's work to `malloc`.
fn prepare<'c>(connection: &'c Connection, text: &str) -> rusqlite::Result<Prepared<'c>> {
    let statement = connection.prepare_with_flags(text, rusqlite::PrepFlags::SQLITE_PREPARE_PERSISTENT)?;
    let names = statement.column_names().into_iter().map(str::to_owned).collect();
    Ok(Prepared { statement, names })
}

impl Deref for PreparedConnection {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.0.borrow_owner()
    }
}
