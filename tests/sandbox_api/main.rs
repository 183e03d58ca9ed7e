//! The sandbox through the generated client, resource by resource: every rule of the document,
//! with its success and its refusal, against a real server and database — each test once on a
//! SQLite file and once on a throwaway PostgreSQL server (`on_both_backends!`).

mod balances;
mod events;
mod fixtures;
mod payment_requests;
mod recipients;
mod reference_data;
mod requests;
mod tenants;
mod transactions;
mod virtual_accounts;
mod webhooks;

/// The `postgres` variants are PostgreSQL's: a database made within them is on the throwaway
/// server, one made outside them a SQLite file.
#[tokio::test]
async fn the_postgres_variants_run_on_postgresql() {
    use payments_tests::database::{Backend, TestDatabase, on};
    let location = on(Backend::Postgres, async { TestDatabase::fresh().location.clone() }).await;
    assert!(location.starts_with("postgres://"), "{location}");
    assert!(!TestDatabase::fresh().location.starts_with("postgres://"));
}
