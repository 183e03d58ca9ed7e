//! A query for either backend: its text and the values bound into it, built once by the reads
//! and run by each backend its own way.

use std::borrow::Cow;
use std::marker::PhantomData;

use uuid::Uuid;

/// A value bound into a query.
#[derive(Clone, Debug)]
pub enum Value {
    Int(i64),
    Text(String),
    Uuid(Uuid),
    Bool(bool),
    /// Bound on SQLite (one statement text whatever is missing); written into the text as
    /// `NULL` on PostgreSQL, whose statements are prepared with each parameter's type.
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

/// The backend a [`Query`] is written for: SQLite.
pub struct Sqlite;

/// The backend a [`Query`] is written for: PostgreSQL.
pub struct Postgres;

/// A query for backend `D` ([`Sqlite`] or [`Postgres`]): its text and the values bound into it,
/// in order. The reads build it once for either backend; each runs it its own way (rusqlite with
/// `?` placeholders, [`Query::positional`]; tokio-postgres with `$n`, [`Query::prepared`]).
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

/// The parts a query starts with room for.
const PARTS: usize = 8;

/// Text as written: most of it is `&'static str`, copied only into the statement's text
/// (BENCHMARKS.md, *Why, measured: Statements' text without a `String` per fragment*).
enum Part {
    Text(Cow<'static, str>),
    Bind(Value),
}

impl<D> Query<D> {
    pub fn new(text: impl Into<Cow<'static, str>>) -> Self {
        // Room for a lookup's parts (text, value, text, value) without growing.
        let mut parts = Vec::with_capacity(PARTS);
        parts.push(Part::Text(text.into()));
        Self { parts, dialect: PhantomData }
    }

    pub fn push(&mut self, text: impl Into<Cow<'static, str>>) -> &mut Self {
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

    /// About the length of the text once written (each parameter as a few characters).
    fn text_len(&self) -> usize {
        self.parts.iter().map(|part| if let Part::Text(text) = part { text.len() } else { 4 }).sum()
    }

    /// Writes the text with a `?` for each parameter into `sql`.
    pub fn write_positional(&self, sql: &mut String) {
        sql.reserve(self.text_len());
        for part in &self.parts {
            match part {
                Part::Text(text) => sql.push_str(text),
                Part::Bind(_) => sql.push('?'),
            }
        }
    }

    /// The parameters, in order.
    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.parts.iter().filter_map(|part| match part {
            Part::Bind(value) => Some(value),
            Part::Text(_) => None,
        })
    }

    /// The text with `$1`, `$2`… for the parameters that have a value and `NULL` written in for
    /// the others: every parameter then has its value's type, as its statement is prepared with.
    pub fn prepared(self) -> (String, Vec<Value>) {
        let mut sql = String::with_capacity(self.text_len());
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
}
