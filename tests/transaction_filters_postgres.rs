//! `transaction_filters.rs`, run against PostgreSQL.

#[path = "transaction_filters.rs"]
mod suite;
