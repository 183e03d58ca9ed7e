//! `webhook_delivery.rs`, run against PostgreSQL: a test binary whose name ends in `_postgres` gets its
//! databases from a throwaway PostgreSQL server (see `support/database.rs`).

#[path = "webhook_delivery.rs"]
mod suite;
