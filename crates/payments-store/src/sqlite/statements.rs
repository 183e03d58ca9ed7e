//! Running a [`Query`] on a rusqlite connection, on the calling thread: the reads' rows, and the
//! writer's statements.

use rusqlite::ToSql;
use rusqlite::types::{ToSqlOutput, ValueRef};

use super::prepared::PreparedConnection;

use crate::Result;
use crate::reads::{Query, Sqlite, Value, cells};

/// A row a query found, whose columns are read by name through the names its statement was
/// prepared with: rusqlite's `Row::get(name)` asks SQLite for every column's name on each read
/// (BENCHMARKS.md, "SQLite columns read by name").
pub struct Row<'r> {
    row: &'r rusqlite::Row<'r>,
    names: &'r [String],
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
    connection: &PreparedConnection,
    query: Query<Sqlite>,
    mut decode: impl FnMut(&Row<'_>) -> Result<T>,
    limit: Option<usize>,
) -> Result<Vec<T>> {
    connection.with(
        |text| query.write_positional(text),
        |prepared| {
            bind(&mut prepared.statement, &query)?;
            let mut rows = prepared.statement.raw_query();
            let mut found = Vec::new();
            while let Some(row) = rows.next()? {
                found.push(decode(&Row { row, names: &prepared.names })?);
                if limit.is_some_and(|limit| found.len() >= limit) {
                    break;
                }
            }
            Ok(found)
        },
    )
}

/// Runs `query`, which returns no rows, and answers how many rows it changed. The error is
/// SQLite's own, for the writer to read (a constraint's name, a unique key).
pub(super) fn execute(connection: &PreparedConnection, query: Query<Sqlite>) -> rusqlite::Result<usize> {
    connection.with(
        |text| query.write_positional(text),
        |prepared| {
            bind(&mut prepared.statement, &query)?;
            prepared.statement.raw_execute()
        },
    )
}

/// Binds `query`'s values into its statement, every parameter (a kept statement still holds
/// the last run's).
fn bind(statement: &mut rusqlite::Statement<'_>, query: &Query<Sqlite>) -> rusqlite::Result<()> {
    let mut bound = 0;
    for value in query.values() {
        bound += 1;
        statement.raw_bind_parameter(bound, value)?;
    }
    match statement.parameter_count() {
        expected if expected == bound => Ok(()),
        expected => Err(rusqlite::Error::InvalidParameterCount(bound, expected)),
    }
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
