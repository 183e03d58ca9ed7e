//! What a list selects (its tenant, filters and key bounds) and what differs between the
//! backends' SQL for it ([`Dialect`]): how a selection becomes conditions, how a search is found.

use chrono::{DateTime, Utc};

use super::{Query, Value, micros, seq_bound};

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
