//! The reads every backend shares: the query text of each get and list, and how a row becomes a
//! record. SQLite and PostgreSQL differ here only where a [`Dialect`] says (how a search is
//! found, how an endpoint's events come back as a JSON array); which connection runs a query is
//! the backend's business.
//!
//! Conventions both schemas keep: times are integer microseconds since 1970-01-01 UTC; each
//! listed row's `seq` is its creation order (the millisecond of `created` times 2^20, plus its
//! place in that millisecond), so every list is one index range read newest first, pages are cut
//! on `seq`, and a `created` bound is a `seq` bound.

pub(crate) mod balances;
mod cells;
mod keys;
pub(crate) mod payment_requests;
mod query;
mod read_rows;
pub(crate) mod recipients;
mod selection;
pub(crate) mod transactions;
pub(crate) mod virtual_accounts;
pub(crate) mod webhooks;

pub(crate) use cells::cells;
pub(crate) use cells::*;
pub(crate) use keys::*;
pub(crate) use query::*;
pub(crate) use read_rows::ReadRows;
pub(crate) use selection::*;
