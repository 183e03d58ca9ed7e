//! A query for either backend: its text and the values bound into it, built once by the reads
//! and run by each backend its own way.

use std::marker::PhantomData;

use sqlx::{Database, Encode, QueryBuilder, Type};
use uuid::Uuid;

/// A value bound into a query.
#[derive(Clone, Debug)]
pub enum Value {
    Int(i64),
    Text(String),
    Uuid(Uuid),
    Bool(bool),
    /// Bound on SQLite (one statement text whatever is missing); written into the text as
    /// `NULL` for sqlx, whose PostgreSQL driver must know a bound value's type.
    Null,
}

impl From<bool> for Value {
    fn from(value: bool) -> Self {
        Self::Bool(value)
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(value: Option<T>) -> Self {
        value.map_or(Self::Null, Into::into)
    }
}

impl From<i64> for Value {
    fn from(value: i64) -> Self {
        Self::Int(value)
    }
}

impl From<String> for Value {
    fn from(value: String) -> Self {
        Self::Text(value)
    }
}

impl From<&str> for Value {
    fn from(value: &str) -> Self {
        Self::Text(value.to_owned())
    }
}

impl From<Uuid> for Value {
    fn from(value: Uuid) -> Self {
        Self::Uuid(value)
    }
}

/// A query for backend `D`: its text and the values bound into it, in order. The reads build
/// it once for either backend; each runs it its own way (SQLite's reads through rusqlite with
/// `?` placeholders, everything through sqlx's builder otherwise).
pub struct Query<D> {
    parts: Vec<Part>,
    dialect: PhantomData<D>,
}

/// See [`Query::separated`].
pub struct Separated<'q, D> {
    query: &'q mut Query<D>,
    separator: &'static str,
    first: bool,
}

impl<D> Separated<'_, D> {
    pub fn bind(&mut self, value: impl Into<Value>) -> &mut Self {
        if !std::mem::take(&mut self.first) {
            self.query.push(self.separator);
        }
        self.query.bind(value);
        self
    }
}

enum Part {
    Text(String),
    Bind(Value),
}

impl<D> Query<D> {
    pub fn new(text: impl Into<String>) -> Self {
        Self { parts: vec![Part::Text(text.into())], dialect: PhantomData }
    }

    pub fn push(&mut self, text: impl Into<String>) -> &mut Self {
        self.parts.push(Part::Text(text.into()));
        self
    }

    /// Appends `value` as a parameter.
    pub fn bind(&mut self, value: impl Into<Value>) -> &mut Self {
        self.parts.push(Part::Bind(value.into()));
        self
    }

    /// Appends `other`, its text and its parameters.
    pub fn append(&mut self, other: Query<D>) -> &mut Self {
        self.parts.extend(other.parts);
        self
    }

    /// Appends `values` as parameters separated by commas.
    pub fn binds(&mut self, values: impl IntoIterator<Item = Value>) -> &mut Self {
        let mut list = self.separated(", ");
        for value in values {
            list.bind(value);
        }
        self
    }

    /// A list of parameters, separated by `separator`: `q.separated(", ").bind(a).bind(b)`.
    pub fn separated<'q>(&'q mut self, separator: &'static str) -> Separated<'q, D> {
        Separated { query: self, separator, first: true }
    }

    /// The text with a `?` for each parameter, and the parameters in order.
    pub fn positional(self) -> (String, Vec<Value>) {
        let mut sql = String::new();
        let mut values = Vec::new();
        for part in self.parts {
            match part {
                Part::Text(text) => sql.push_str(&text),
                Part::Bind(value) => {
                    sql.push('?');
                    values.push(value);
                }
            }
        }
        (sql, values)
    }

    /// The text with `$1`, `$2`… for the parameters that have a value and `NULL` written in for
    /// the others, as sqlx's builder is given it: every parameter then has its value's type.
    pub fn prepared(self) -> (String, Vec<Value>) {
        let mut sql = String::new();
        let mut values = Vec::new();
        for part in self.parts {
            match part {
                Part::Text(text) => sql.push_str(&text),
                Part::Bind(Value::Null) => sql.push_str("NULL"),
                Part::Bind(value) => {
                    values.push(value);
                    sql.push_str(&format!("${}", values.len()));
                }
            }
        }
        (sql, values)
    }

    /// The same query as sqlx's builder for database `DB`.
    pub fn into_sqlx<DB>(self) -> QueryBuilder<DB>
    where
        DB: Database,
        for<'q> i64: Encode<'q, DB> + Type<DB>,
        for<'q> String: Encode<'q, DB> + Type<DB>,
        for<'q> Uuid: Encode<'q, DB> + Type<DB>,
        for<'q> bool: Encode<'q, DB> + Type<DB>,
    {
        let mut builder = QueryBuilder::new("");
        for part in self.parts {
            match part {
                Part::Text(text) => builder.push(text),
                Part::Bind(Value::Int(value)) => builder.push_bind(value),
                Part::Bind(Value::Text(value)) => builder.push_bind(value),
                Part::Bind(Value::Uuid(value)) => builder.push_bind(value),
                Part::Bind(Value::Bool(value)) => builder.push_bind(value),
                Part::Bind(Value::Null) => builder.push("NULL"),
            };
        }
        builder
    }
}
