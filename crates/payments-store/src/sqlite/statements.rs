//! Running a [`Query`] on a rusqlite connection, on the calling thread: the reads' rows, and the
//! writer's statements.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ToSql};

use crate::Result;
use crate::reads::{Query, Sqlite, Value, cells};

/// A row a query found, whose columns are read by name through the statement's names, read
/// once: rusqlite's `Row::get(name)` asks SQLite for every column's name on each read
/// (BENCHMARKS.md, "SQLite columns read by name").
pub struct Row<'r> {
    row: &'r rusqlite::Row<'r>,
    names: &'r [String],
}

/// Names past this many statements' are dropped together: a list's SQL varies with its filters.
const NAMED_STATEMENTS: usize = 512;

thread_local! {
    /// Each statement's column names, by its SQL: `Statement::column_names` copies every name
    /// out of SQLite on each query (BENCHMARKS.md, "Instructions per request"). The schema is
    /// whole before the first read, so a text's names do not change; a count that differs
    /// (a schema read before its migration) reads them again.
    static NAMES: RefCell<HashMap<String, Rc<[String]>>> = RefCell::new(HashMap::new());
}

fn names(sql: &str, statement: &rusqlite::Statement<'_>) -> Rc<[String]> {
    NAMES.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(names) = cache.get(sql).filter(|names| names.len() == statement.column_count()) {
            return Rc::clone(names);
        }
        let names: Rc<[String]> = statement.column_names().into_iter().map(str::to_owned).collect();
        if cache.len() >= NAMED_STATEMENTS {
            cache.clear();
        }
        cache.insert(sql.to_owned(), Rc::clone(&names));
        names
    })
}

impl Row<'_> {
    /// The column at `index`.
    pub(super) fn get<T: rusqlite::types::FromSql>(&self, index: usize) -> rusqlite::Result<T> {
        self.row.get(index)
    }

    /// The column named `column` (as rusqlite matches names: ASCII case aside).
    fn named<T: rusqlite::types::FromSql>(&self, column: &str) -> rusqlite::Result<T> {
        let index = self
            .names
            .iter()
            .position(|name| name.eq_ignore_ascii_case(column))
            .ok_or_else(|| rusqlite::Error::InvalidColumnName(column.to_owned()))?;
        self.row.get(index)
    }
}

/// The rows `query` finds on `connection` (the first `limit` of them, when given), each as
/// `decode` reads it.
pub(super) fn rows<T>(
    connection: &Connection,
    query: Query<Sqlite>,
    mut decode: impl FnMut(&Row<'_>) -> Result<T>,
    limit: Option<usize>,
) -> Result<Vec<T>> {
    let (sql, values) = query.positional();
    let mut statement = connection.prepare_cached(&sql)?;
    let names = names(&sql, &statement);
    let mut rows = statement.query(rusqlite::params_from_iter(values.iter()))?;
    let mut found = Vec::new();
    while let Some(row) = rows.next()? {
        found.push(decode(&Row { row, names: &names })?);
        if limit.is_some_and(|limit| found.len() >= limit) {
            break;
        }
    }
    Ok(found)
}

/// Runs `query`, which returns no rows, and answers how many rows it changed. The error is
/// SQLite's own, for the writer to read (a constraint's name, a unique key).
pub(super) fn execute(connection: &Connection, query: Query<Sqlite>) -> rusqlite::Result<usize> {
    let (sql, values) = query.positional();
    connection.prepare_cached(&sql)?.execute(rusqlite::params_from_iter(values.iter()))
}

impl ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Self::Int(value) => ToSqlOutput::Borrowed(ValueRef::Integer(*value)),
            Self::Text(value) => ToSqlOutput::Borrowed(ValueRef::Text(value.as_bytes())),
            Self::Uuid(value) => ToSqlOutput::Borrowed(ValueRef::Blob(value.as_bytes())),
            Self::Bool(value) => ToSqlOutput::Borrowed(ValueRef::Integer(i64::from(*value))),
            Self::Null => ToSqlOutput::Borrowed(ValueRef::Null),
        })
    }
}

cells!(Row<'_>, Row::named);
