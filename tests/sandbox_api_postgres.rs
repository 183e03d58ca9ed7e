//! `sandbox_api.rs`, run against PostgreSQL: a test binary whose name ends in `_postgres` gets its
//! databases from a throwaway PostgreSQL server (see `support/database.rs`).

#[path = "sandbox_api.rs"]
mod suite;
