//! The reads every backend shares: the query text of each get and list, and how a row becomes a
//! record. SQLite and PostgreSQL differ here only where a [`Dialect`] says (how a search is
//! found, how an endpoint's events come back as a JSON array); which connection runs a query is
//! the backend's business.
//!
//! Conventions both schemas keep: times are integer microseconds since 1970-01-01 UTC; each
//! listed row's `seq` is its creation order (the millisecond of `created` times 2^20, plus its
//! place in that millisecond), so every list is one index range read newest first, pages are cut
//! on `seq`, and a `created` bound is a `seq` bound.

pub mod balances;
pub mod payment_requests;
pub mod recipients;
pub mod transactions;
pub mod virtual_accounts;
pub mod webhooks;

use std::str::FromStr;

use chrono::{DateTime, Utc};
use payments_types as types;
use std::marker::PhantomData;

use sqlx::{Database, Encode, QueryBuilder, Type};
use uuid::Uuid;

use crate::{Keyed, Result, StoreError};

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

/// The tables `search` looks in.
#[derive(Debug, Clone, Copy)]
pub enum Searched {
    Transactions,
    VirtualAccounts,
}

impl Searched {
    pub fn table(self) -> &'static str {
        match self {
            Self::Transactions => "transactions",
            Self::VirtualAccounts => "virtual_accounts",
        }
    }

    /// The alias the table's rows go by in a searched list.
    pub fn alias(self) -> &'static str {
        match self {
            Self::Transactions => "t",
            Self::VirtualAccounts => "v",
        }
    }

    /// The fields a search finds its needle in (any case, anywhere in the field).
    pub fn fields(self) -> &'static [&'static str] {
        match self {
            Self::Transactions => {
                &["reference", "payment_reference", "order_id", "payer_name", "account_name", "alias"]
            }
            Self::VirtualAccounts => &["account_name", "account_number", "bank_name"],
        }
    }
}

/// The rows a list selects, in the terms of its indexes: the tenant's, those whose columns
/// equal the filters' values, keyed (created) within `[from, before)`, read newest first. Every
/// list index is `(tenant_id, column, seq)` or `(tenant_id, seq)`, so a page is one range of
/// one of them; each backend's [`Dialect::select`] writes the selection so that its planner
/// reads such a range.
pub struct Selection {
    tenant: i64,
    /// `(column, value)` for each filter given, the one to read the page by first.
    equal: Vec<(&'static str, Value)>,
    /// The first of `equal` is a unique key of the tenant's (at most one row).
    unique: bool,
    /// The first key selected, and the key every selected row is below.
    from: Option<i64>,
    before: Option<i64>,
    /// Exact `created` bounds in microseconds, beside the key bounds (whole milliseconds).
    created_from: Option<i64>,
    created_before: Option<i64>,
}

impl Selection {
    /// The tenant's rows, below `start` (a page's cursor key) when given.
    pub fn new(tenant: crate::TenantId, start: Option<i64>) -> Self {
        Self {
            tenant: tenant.0,
            equal: Vec::new(),
            unique: false,
            from: None,
            before: start,
            created_from: None,
            created_before: None,
        }
    }

    /// Those whose `column` equals `value`, when one is given. Filters are added in the order
    /// their indexes are preferred: a page is read by the first one's.
    pub fn equal(&mut self, column: &'static str, value: Option<impl Into<Value>>) -> &mut Self {
        if let Some(value) = value {
            self.equal.push((column, value.into()));
        }
        self
    }

    /// Those whose `column`, a unique key of the tenant's, equals `value`: one row at most,
    /// which its unique index finds first.
    pub fn unique(&mut self, column: &'static str, value: Option<impl Into<Value>>) -> &mut Self {
        if let Some(value) = value {
            self.equal.insert(0, (column, value.into()));
            self.unique = true;
        }
        self
    }

    /// Those created at or after `from` and before `before`.
    pub fn created(&mut self, from: Option<DateTime<Utc>>, before: Option<DateTime<Utc>>) -> &mut Self {
        if let Some(from) = from {
            self.from = Some(seq_bound(from));
            self.created_from = Some(micros(from));
        }
        if let Some(before) = before {
            let bound = seq_bound(before);
            self.before = Some(self.before.map_or(bound, |start| start.min(bound)));
            self.created_before = Some(micros(before));
        }
        self
    }

    /// The first key selected, if bounded.
    pub fn from(&self) -> Option<i64> {
        self.from
    }

    /// The key every selected row is below, if bounded.
    pub fn before(&self) -> Option<i64> {
        self.before
    }

    /// The column whose index a page is to be read by, and the value it has there: the first
    /// filter's, or the tenant's own when there is none. `None` for a unique key, whose index
    /// finds its row whatever else the plan does.
    pub fn driver(&self) -> Option<(&'static str, Value)> {
        match self.equal.first() {
            _ if self.unique => None,
            Some((column, value)) => Some((column, value.clone())),
            None => Some(("tenant_id", Value::Int(self.tenant))),
        }
    }

    /// The selection as plain conditions on the table aliased `alias` (`tenant_id = … AND …`,
    /// without a leading `AND`), its key bounds on `key`.
    pub fn push_conditions<D>(&self, query: &mut Query<D>, alias: &str, key: &str) {
        self.push_equalities(query, alias, None);
        if let Some(from) = self.from {
            query.push(format!(" AND {key} >= ")).bind(from);
        }
        if let Some(before) = self.before {
            query.push(format!(" AND {key} < ")).bind(before);
        }
        self.push_created(query, alias);
    }

    /// The equalities but `except`'s (the tenant's first; without a leading `AND`; `TRUE` when
    /// none is left): what a backend adds to the driver's range, which holds the key bounds.
    /// The exact `created` bounds are left out: they differ from the key bounds only for rows
    /// created at a fraction of a millisecond, which release 0.1 made on SQLite and nothing
    /// makes now.
    pub fn push_rest<D>(&self, query: &mut Query<D>, alias: &str, except: &str) {
        self.push_equalities(query, alias, Some(except));
    }

    fn push_equalities<D>(&self, query: &mut Query<D>, alias: &str, except: Option<&str>) {
        let mut any = false;
        let tenant = ("tenant_id", Value::Int(self.tenant));
        for (column, value) in std::iter::once(&tenant).chain(&self.equal) {
            if Some(*column) == except {
                continue;
            }
            query.push(format!("{}{alias}.{column} = ", if any { " AND " } else { "" })).bind(value.clone());
            any = true;
        }
        if !any {
            query.push("TRUE");
        }
    }

    fn push_created<D>(&self, query: &mut Query<D>, alias: &str) {
        if let Some(from) = self.created_from {
            query.push(format!(" AND {alias}.created >= ")).bind(from);
        }
        if let Some(before) = self.created_before {
            query.push(format!(" AND {alias}.created < ")).bind(before);
        }
    }
}

/// What differs between the backends' SQL for reads.
pub trait Dialect: Sized {
    /// Appends the rows `selection` selects from the table aliased `alias` (keyed by `key`)
    /// and the order they are read in, newest first, `limit` of them: conditions (without the
    /// `WHERE`) then ` ORDER BY … LIMIT n`.
    fn select(query: &mut Query<Self>, selection: &Selection, alias: &str, key: &str, limit: u32);
    /// The page of `searched`'s rows containing `needle` (any case, anywhere in a searched
    /// field) that `selection` selects, newest first, as `columns` (unqualified, comma-separated).
    fn search_page(searched: Searched, columns: &str, needle: &str, selection: &Selection, limit: u32) -> Query<Self>;
    /// An expression of the webhook endpoint aliased `w`: its `events` as a JSON array of text
    /// in the order given (NULL when it has none).
    const ENDPOINT_EVENTS: &'static str;
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

/// A row, as the records are read from it: the backends' rows answer alike.
pub trait Cells {
    fn int(&self, column: &str) -> Result<i64>;
    fn opt_int(&self, column: &str) -> Result<Option<i64>>;
    fn text(&self, column: &str) -> Result<String>;
    fn opt_text(&self, column: &str) -> Result<Option<String>>;
    fn uuid(&self, column: &str) -> Result<Uuid>;
    fn opt_uuid(&self, column: &str) -> Result<Option<Uuid>>;

    /// A text column as its enum or constrained string type.
    fn parsed<T: FromStr>(&self, column: &str) -> Result<T> {
        let text = self.text(column)?;
        text.parse().map_err(|_| corrupt(column, &text))
    }

    fn parsed_opt<T: FromStr>(&self, column: &str) -> Result<Option<T>> {
        self.opt_text(column)?.map(|t| t.parse().map_err(|_| corrupt(column, &t))).transpose()
    }

    fn amount(&self, column: &str) -> Result<types::Amount> {
        amount_in(column, self.int(column)?)
    }

    fn opt_amount(&self, column: &str) -> Result<Option<types::Amount>> {
        self.opt_int(column)?.map(|value| amount_in(column, value)).transpose()
    }

    fn json<T: serde::de::DeserializeOwned>(&self, column: &str) -> Result<T> {
        let text = self.text(column)?;
        serde_json::from_str(&text).map_err(|_| corrupt(column, &text))
    }

    fn instant(&self, column: &str) -> Result<DateTime<Utc>> {
        instant(self.int(column)?)
    }
}

/// [`Cells`] for a backend's row type, whose `get` reads a column by name as any type the
/// driver decodes (`sqlx::Row::try_get`, `tokio_postgres::Row::try_get`, `rusqlite::Row::get`).
macro_rules! cells {
    ($row:ty, $get:path) => {
        impl $crate::reads::Cells for $row {
            fn int(&self, column: &str) -> $crate::Result<i64> {
                Ok($get(self, column)?)
            }
            fn opt_int(&self, column: &str) -> $crate::Result<Option<i64>> {
                Ok($get(self, column)?)
            }
            fn text(&self, column: &str) -> $crate::Result<String> {
                Ok($get(self, column)?)
            }
            fn opt_text(&self, column: &str) -> $crate::Result<Option<String>> {
                Ok($get(self, column)?)
            }
            fn uuid(&self, column: &str) -> $crate::Result<uuid::Uuid> {
                Ok($get(self, column)?)
            }
            fn opt_uuid(&self, column: &str) -> $crate::Result<Option<uuid::Uuid>> {
                Ok($get(self, column)?)
            }
        }
    };
}
pub(crate) use cells;

/// [`crate::Reads`] for a backend's store, which provides `one`, `all`, `scalars` and `page`
/// (running a query on its read connections and decoding the rows).
macro_rules! impl_reads {
    ($store:ty) => {
        #[async_trait::async_trait]
        impl $crate::Reads for $store {
            async fn balance(
                &self,
                tenant: $crate::TenantId,
                id: uuid::Uuid,
            ) -> $crate::Result<Option<$crate::BalanceRecord>> {
                self.one($crate::reads::balances::get(tenant, id), |row| $crate::reads::balances::record(row)).await
            }

            async fn balances(
                &self,
                tenant: $crate::TenantId,
                filter: &$crate::BalanceFilter,
                page: $crate::Page,
            ) -> $crate::Result<Vec<$crate::BalanceRecord>> {
                let list = |start| $crate::reads::balances::list(tenant, filter, start, page);
                self.page($crate::reads::balances::TABLE, tenant, page, list, |row| {
                    $crate::reads::balances::record(row)
                })
                .await
            }

            async fn oldest_balance(
                &self,
                tenant: $crate::TenantId,
                currency: &str,
            ) -> $crate::Result<Option<$crate::BalanceRecord>> {
                self.one($crate::reads::balances::oldest(tenant, currency), |row| $crate::reads::balances::record(row))
                    .await
            }

            async fn recipient(
                &self,
                tenant: $crate::TenantId,
                id: uuid::Uuid,
            ) -> $crate::Result<Option<payments_types::Recipient>> {
                self.one($crate::reads::recipients::get(tenant, id), |row| $crate::reads::recipients::record(row)).await
            }

            async fn recipients(
                &self,
                tenant: $crate::TenantId,
                page: $crate::Page,
            ) -> $crate::Result<Vec<payments_types::Recipient>> {
                let list = |start| $crate::reads::recipients::list(tenant, start, page);
                self.page($crate::reads::recipients::TABLE, tenant, page, list, |row| {
                    $crate::reads::recipients::record(row)
                })
                .await
            }

            async fn payment_request(
                &self,
                tenant: $crate::TenantId,
                id: uuid::Uuid,
            ) -> $crate::Result<Option<payments_types::PaymentRequest>> {
                self.one($crate::reads::payment_requests::get(tenant, id), |row| {
                    $crate::reads::payment_requests::record(row)
                })
                .await
            }

            async fn payment_request_for_payer(
                &self,
                id: uuid::Uuid,
            ) -> $crate::Result<Option<($crate::TenantId, payments_types::PaymentRequest)>> {
                self.one($crate::reads::payment_requests::for_payer(id), |row| {
                    $crate::reads::owned(row, $crate::reads::payment_requests::record)
                })
                .await
            }

            async fn payment_request_by_reference_id(
                &self,
                tenant: $crate::TenantId,
                reference_id: &str,
            ) -> $crate::Result<Option<$crate::Keyed<payments_types::PaymentRequest>>> {
                self.one($crate::reads::payment_requests::by_reference_id(tenant, reference_id), |row| {
                    $crate::reads::keyed(row, $crate::reads::payment_requests::record)
                })
                .await
            }

            async fn payment_requests(
                &self,
                tenant: $crate::TenantId,
                filter: &$crate::PaymentRequestFilter,
                page: $crate::Page,
            ) -> $crate::Result<Vec<payments_types::PaymentRequest>> {
                let list = |start| $crate::reads::payment_requests::list(tenant, filter, start, page);
                self.page($crate::reads::payment_requests::TABLE, tenant, page, list, |row| {
                    $crate::reads::payment_requests::record(row)
                })
                .await
            }

            async fn transaction(
                &self,
                tenant: $crate::TenantId,
                id: uuid::Uuid,
            ) -> $crate::Result<Option<payments_types::Transaction>> {
                self.one($crate::reads::transactions::get(tenant, id), |row| $crate::reads::transactions::record(row))
                    .await
            }

            async fn transaction_by_order_id(
                &self,
                tenant: $crate::TenantId,
                order_id: &str,
            ) -> $crate::Result<Option<$crate::Keyed<payments_types::Transaction>>> {
                self.one($crate::reads::transactions::by_order_id(tenant, order_id), |row| {
                    $crate::reads::keyed(row, $crate::reads::transactions::record)
                })
                .await
            }

            async fn transactions(
                &self,
                tenant: $crate::TenantId,
                filter: &$crate::TransactionFilter,
                page: $crate::Page,
            ) -> $crate::Result<Vec<payments_types::Transaction>> {
                let list = |start| $crate::reads::transactions::list(tenant, filter, start, page);
                self.page($crate::reads::transactions::TABLE, tenant, page, list, |row| {
                    $crate::reads::transactions::record(row)
                })
                .await
            }

            async fn virtual_account(
                &self,
                tenant: $crate::TenantId,
                id: uuid::Uuid,
            ) -> $crate::Result<Option<payments_types::VirtualAccount>> {
                self.one($crate::reads::virtual_accounts::get(tenant, id), |row| {
                    $crate::reads::virtual_accounts::record(row)
                })
                .await
            }

            async fn virtual_account_by_reference_id(
                &self,
                tenant: $crate::TenantId,
                reference_id: &str,
            ) -> $crate::Result<Option<$crate::Keyed<payments_types::VirtualAccount>>> {
                self.one($crate::reads::virtual_accounts::by_reference_id(tenant, reference_id), |row| {
                    $crate::reads::keyed(row, $crate::reads::virtual_accounts::record)
                })
                .await
            }

            async fn virtual_accounts(
                &self,
                tenant: $crate::TenantId,
                filter: &$crate::VirtualAccountFilter,
                page: $crate::Page,
            ) -> $crate::Result<Vec<payments_types::VirtualAccount>> {
                let list = |start| $crate::reads::virtual_accounts::list(tenant, filter, start, page);
                self.page($crate::reads::virtual_accounts::TABLE, tenant, page, list, |row| {
                    $crate::reads::virtual_accounts::record(row)
                })
                .await
            }

            async fn on_rails(&self, tenant: Option<$crate::TenantId>) -> $crate::Result<$crate::OnRails> {
                use payments_types::TransactionStatus::{Initiated, Processing};
                Ok($crate::OnRails {
                    initiated_accounts: self
                        .all($crate::reads::virtual_accounts::initiated(tenant), |row| {
                            $crate::reads::owned(row, $crate::reads::virtual_accounts::record)
                        })
                        .await?,
                    initiated_payments: self
                        .all($crate::reads::transactions::on_rails(tenant, Initiated), |row| {
                            $crate::reads::owned(row, $crate::reads::transactions::record)
                        })
                        .await?,
                    processing_payments: self
                        .all($crate::reads::transactions::on_rails(tenant, Processing), |row| {
                            $crate::reads::owned(row, $crate::reads::transactions::record)
                        })
                        .await?,
                })
            }

            async fn webhook_endpoint(
                &self,
                tenant: $crate::TenantId,
                id: uuid::Uuid,
            ) -> $crate::Result<Option<$crate::EndpointRecord>> {
                self.one($crate::reads::webhooks::endpoint_get(tenant, id), |row| {
                    $crate::reads::webhooks::endpoint(row)
                })
                .await
            }

            async fn webhook_endpoints(
                &self,
                tenant: $crate::TenantId,
                page: $crate::Page,
            ) -> $crate::Result<Vec<payments_types::WebhookEndpoint>> {
                let list = |start| $crate::reads::webhooks::endpoint_list(tenant, start, page);
                self.page($crate::reads::webhooks::ENDPOINTS, tenant, page, list, |row| {
                    Ok($crate::reads::webhooks::endpoint(row)?.endpoint)
                })
                .await
            }

            async fn notification(
                &self,
                tenant: $crate::TenantId,
                id: uuid::Uuid,
            ) -> $crate::Result<Option<payments_types::Webhook>> {
                self.one($crate::reads::webhooks::notification_get(tenant, id), |row| {
                    $crate::reads::webhooks::notification(row)
                })
                .await
            }

            async fn notifications(
                &self,
                tenant: $crate::TenantId,
                filter: &$crate::NotificationFilter,
                page: $crate::Page,
            ) -> $crate::Result<Vec<payments_types::Webhook>> {
                let list = |start| $crate::reads::webhooks::notification_list(tenant, filter, start, page);
                self.page($crate::reads::webhooks::NOTIFICATIONS, tenant, page, list, |row| {
                    $crate::reads::webhooks::notification(row)
                })
                .await
            }

            async fn due_endpoints(&self, now: chrono::DateTime<chrono::Utc>) -> $crate::Result<Vec<uuid::Uuid>> {
                Ok(self.scalars($crate::reads::webhooks::due_endpoints(now)).await?)
            }
        }
    };
}
pub(crate) use impl_reads;

/// A row's record, with its `tenant_id`.
pub fn owned<R: Cells, T>(row: &R, decode: fn(&R) -> Result<T>) -> Result<(crate::TenantId, T)> {
    Ok((crate::TenantId(row.int("tenant_id")?), decode(row)?))
}

pub fn micros(instant: DateTime<Utc>) -> i64 {
    instant.timestamp_micros()
}

pub fn instant(micros: i64) -> Result<DateTime<Utc>> {
    DateTime::from_timestamp_micros(micros).ok_or_else(|| corrupt("time", micros))
}

/// A stored amount as the API's: `1..`, else the column is corrupt.
fn amount_in(column: &str, value: i64) -> Result<types::Amount> {
    u64::try_from(value).ok().and_then(types::Amount::new).ok_or_else(|| corrupt(column, value))
}

/// A stored value that does not parse: the database holds something this code never wrote.
pub fn corrupt(what: &str, value: impl std::fmt::Debug) -> StoreError {
    StoreError::Corrupt { what: what.to_owned(), value: format!("{value:?}") }
}

pub fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value)
        .map_err(|source| StoreError::Encode { what: std::any::type_name::<T>(), source: std::sync::Arc::new(source) })
}

pub fn amount_value(amount: &types::Amount) -> Result<i64> {
    i64::try_from(amount.get()).map_err(|_| StoreError::TooLarge { what: "amount", value: amount.get().to_string() })
}

/// Rows created in one millisecond share the key range `[ms << 20, (ms + 1) << 20)`.
pub const SEQ_BITS: u32 = 20;

/// The first key of rows created at `at`'s millisecond.
pub fn seq_floor(at: DateTime<Utc>) -> i64 {
    at.timestamp_millis() << SEQ_BITS
}

/// The first key of rows created at or after `at` (a bound for `created >= at` or
/// `created < at`: `created` is whole milliseconds).
pub fn seq_bound(at: DateTime<Utc>) -> i64 {
    at.timestamp_micros().div_euclid(1000).saturating_add(i64::from(at.timestamp_micros().rem_euclid(1000) > 0))
        << SEQ_BITS
}

/// The key of the item a page starts after, among the tenant's rows of `table` that pass
/// `visible`; no row means the id is not in the list ([`StoreError::UnknownCursor`]).
pub fn cursor<D: Dialect>(table: &str, visible: &str, tenant: i64, after: Uuid) -> Query<D> {
    let mut query = Query::new(format!("SELECT seq FROM {table} WHERE {visible} AND tenant_id = "));
    query.bind(tenant).push(" AND id = ").bind(after);
    query
}

/// ` ORDER BY {order} LIMIT {limit}`. The limit is written, not bound: SQLite looks at a bound
/// LIMIT while planning, so each execution with it bound compiled the statement again
/// (BENCHMARKS.md, *Why, measured: SQLite's caches, checkpoints and bound values*). A number,
/// so nothing a caller sends reaches
/// the SQL text.
pub fn order_and_limit<D>(query: &mut Query<D>, order: &str, limit: u32) {
    query.push(format!(" ORDER BY {order} LIMIT {limit}"));
}

/// `needle` as a LIKE pattern matching it anywhere (`\` escapes).
pub fn like_pattern(needle: &str) -> String {
    let escaped = needle.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

/// `columns` (a comma-separated list) each prefixed with `alias.`.
pub fn qualified(columns: &str, alias: &str) -> String {
    columns.split(", ").map(|c| format!("{alias}.{c}")).collect::<Vec<_>>().join(", ")
}

/// A keyed resource's row (its columns and `request`, the request that used the key).
pub fn keyed<R: Cells, T>(row: &R, record: fn(&R) -> Result<T>) -> Result<Keyed<T>> {
    Ok(Keyed { request: row.text("request")?, resource: record(row)? })
}
