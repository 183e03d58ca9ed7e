//! `sandbox_backup.rs`, run against PostgreSQL (`pg_dump` and `pg_restore`, as the README says).

#[path = "sandbox_backup.rs"]
mod suite;
