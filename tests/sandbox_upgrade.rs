//! A database written by release 0.1 (JSON documents, `PRAGMA user_version`) opens after the
//! upgrade with all its data: every list answers exactly what release 0.1 answered, idempotency
//! keys, search, pages and money keep working on it. A database this release cannot read is
//! refused at start with a message that says what to do, and left untouched.
//!
//! `fixtures/release-0.1/database.sql` is that release's database, dumped, and `api.json` what
//! its API answered just before (both made by `make_legacy.py` against the 0.1 binary).

use payments_client::types;
use payments_tests::sandbox::*;

const DUMP: &str = include_str!("fixtures/release-0.1/database.sql");
const ANSWERS: &str = include_str!("fixtures/release-0.1/api.json");

/// A database file holding release 0.1's data, in `dir`.
async fn release_0_1_database(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("release-0.1.db");
    // As the sqlite3 shell loads a dump: tables come in alphabetical order, so references are
    // checked only once all are there.
    let connection = rusqlite::Connection::open(&path).expect("a new database file");
    // rusqlite's SQLite checks foreign keys unless told not to.
    connection.execute_batch("PRAGMA foreign_keys = OFF").expect("foreign keys off");
    connection.execute_batch(DUMP).expect("the dump loads");
    drop(connection);
    path
}

/// Release 0.1's answer in this release's words: an exchange rate also carries its decimals
/// (2.0.0). Release 0.1 converted at the six-decimal integer, so the decimal is that integer
/// over a million, exactly.
fn with_rate_decimals(value: &serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut map: serde_json::Map<String, serde_json::Value> =
                map.iter().map(|(key, value)| (key.clone(), with_rate_decimals(value))).collect();
            if let (Some(rate), Some(single)) = (map.get("rate"), map.get("single_rate"))
                && map.len() == 2
            {
                let decimal = |micros: &serde_json::Value| {
                    let micros = micros.as_u64().expect("a six-decimal rate");
                    let fraction = format!("{:06}", micros % 1_000_000);
                    let fraction = fraction.trim_end_matches('0');
                    format!("{}.{}", micros / 1_000_000, if fraction.is_empty() { "0" } else { fraction })
                };
                let (rate, single) = (decimal(rate), decimal(single));
                map.insert("rate_decimal".into(), rate.into());
                map.insert("single_rate_decimal".into(), single.into());
            }
            serde_json::Value::Object(map)
        }
        serde_json::Value::Array(items) => items.iter().map(with_rate_decimals).collect(),
        other => other.clone(),
    }
}

/// `got` is what release 0.1 answered, but for a notification that had failed: its retry came
/// due since (the fixture was recorded earlier), so the upgraded sandbox tried it again.
fn assert_same(got: &serde_json::Value, expected: &serde_json::Value, what: &str) {
    if expected["status"] == "failed" && expected.get("retry_count").is_some() {
        let delivery = ["status", "retry_count", "response_code", "next_attempt"];
        let masked = |value: &serde_json::Value| {
            let mut value = value.clone();
            delivery.iter().for_each(|key| drop(value.as_object_mut().unwrap().remove(*key)));
            value
        };
        assert_eq!(masked(got), masked(expected), "{what}: a notification as release 0.1 stored it");
        assert!(got["retry_count"].as_i64() >= expected["retry_count"].as_i64(), "{what}: retried, not reset");
        assert!(["failed", "discarded"].contains(&got["status"].as_str().unwrap()), "{what}: {got}");
    } else {
        assert_eq!(got, expected, "{what}, as release 0.1 answered");
    }
}

async fn get(sandbox: &TestSandbox, token: &str, path: &str) -> serde_json::Value {
    let response = reqwest::Client::new()
        .get(format!("{}{path}", sandbox.url))
        .bearer_auth(token)
        .send()
        .await
        .expect("the sandbox answers");
    assert_eq!(response.status(), 200, "GET {path}");
    response.json().await.expect("JSON")
}

/// The fixture's notifications were made on 2026-11-23: under the default retention (7 days)
/// they are pruned at start from 2026-11-30 on, and the database would no longer hold what
/// release 0.1 answered. The upgrade is what is compared here, not the retention.
fn keeping_the_fixture() -> payments_sandbox::Options {
    let mut options = test_options();
    options.webhooks.retention = std::time::Duration::from_secs(100 * 365 * 24 * 3600);
    options
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_release_0_1_database_opens_with_all_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let database = release_0_1_database(dir.path()).await;
    let sandbox = start_sandbox_on(database.to_str().unwrap(), keeping_the_fixture()).await;

    let recorded: serde_json::Value = serde_json::from_str(ANSWERS).unwrap();
    let mut compared = 0;
    for (token, answers) in recorded["answers"].as_object().unwrap() {
        for (path, expected) in answers.as_object().unwrap() {
            let got = get(&sandbox, token, path).await;
            let (got, expected) = (got.as_array().unwrap(), expected.as_array().unwrap());
            assert_eq!(got.len(), expected.len(), "{token} GET {path}: as many items as release 0.1 answered");
            for (got, expected) in got.iter().zip(expected) {
                // A notification is what was sent, as it was sent; resources read today carry
                // today's fields.
                let expected =
                    if path.starts_with("/webhooks") { expected.clone() } else { with_rate_decimals(expected) };
                assert_same(got, &expected, &format!("{token} GET {path}"));
            }
            compared += expected.len();
        }
    }
    assert!(compared >= 70, "the fixture covers every kind of resource ({compared} items compared)");

    // It keeps working: idempotency keys, search, pages and money, on the migrated rows.
    let alice = sandbox.client(ALICE);
    let payments = alice.list_transactions().order_id("order-1").send().await.unwrap().into_inner();
    let [order_1] = payments.as_slice() else { panic!("order-1 is one payment: {payments:?}") };
    let recipient = order_1.recipient.clone().expect("a payment has its recipient");
    let retry = payment(order_1.balance_id, recipient.id, order_1.amount.get())
        .order_id(Some(code("order-1")))
        .reference(Some(code("March rent")));
    let replayed = alice.create_transaction().body(retry).send().await.expect("a retry").into_inner();
    assert_eq!(&replayed, order_1, "a retry of a 0.1 request answers with its payment");
    let reused = payment(order_1.balance_id, recipient.id, 1).order_id(Some(code("order-1")));
    assert_refused(alice.create_transaction().body(reused).send().await, 409, "order-1");
    let found = alice.list_transactions().search("MARCH R").send().await.unwrap().into_inner();
    assert_eq!(found.iter().map(|t| t.id).collect::<Vec<_>>(), [order_1.id], "search reaches migrated rows");
    let found = alice.list_virtual_accounts().search("COLLECTIONS NIG").send().await.unwrap().into_inner();
    assert_eq!(found.len(), 1, "the renamed account is found by its new name");
    let found = alice.list_virtual_accounts().search("collections ng").send().await.unwrap().into_inner();
    assert!(found.is_empty(), "and no longer by its old one");

    let all = alice.list_transactions().limit(limit(100)).send().await.unwrap().into_inner();
    let second_page = alice.list_transactions().limit(limit(3)).starting_after(all[2].id).send().await.unwrap();
    assert_eq!(second_page.into_inner(), all[3..6].to_vec());

    let before = balance_of(&alice, order_1.balance_id).await;
    let fresh = payment(order_1.balance_id, recipient.id, 1_000).order_id(Some(code("after-upgrade")));
    let made = alice.create_transaction().body(fresh).send().await.expect("a new payment").into_inner();
    assert_eq!(balance_of(&alice, order_1.balance_id).await, before - 1_000 - made.fees);
    drop(sandbox);
    assert_ledger_reconciles(database.to_str().unwrap()).await;

    // And it opens again as it is (nothing left to migrate).
    let again = start_sandbox_on(database.to_str().unwrap(), keeping_the_fixture()).await;
    let client = again.client(ALICE);
    assert_eq!(client.get_transaction().id(made.id).send().await.unwrap().into_inner(), made);
    let bob = again.client(BOB);
    let requests = bob.list_payment_requests().send().await.unwrap().into_inner();
    assert_eq!(requests[0].status, types::PaymentRequestStatus::Processed);
}

/// The file's contents, hashed (compared, not printed).
fn digest(path: &std::path::Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::fs::read(path).expect("the file").hash(&mut hasher);
    hasher.finish()
}

#[tokio::test]
async fn a_database_from_a_newer_release_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let database = release_0_1_database(dir.path()).await;
    let store = payments_sandbox::open_store(database.to_str().unwrap()).await.expect("0.1 upgrades");
    drop(store);
    // A release after this one added a migration.
    rusqlite::Connection::open(&database)
        .unwrap()
        .execute(
            "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time)
             VALUES (99, 'from the future', TRUE, x'00', 1)",
            [],
        )
        .unwrap();
    let before = digest(&database);
    let refused = said(payments_sandbox::open_store(database.to_str().unwrap()).await.err().expect("refused"));
    assert!(refused.contains("written by a newer payments-sandbox"), "{refused}");
    assert!(refused.contains("migration 99"), "{refused}");
    assert!(refused.contains("give --database a new file"), "says what to do: {refused}");
    assert_eq!(digest(&database), before, "nothing in it was changed");
}

#[tokio::test]
async fn a_database_of_something_else_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("other.db");
    rusqlite::Connection::open(&database)
        .unwrap()
        .execute_batch(
            "CREATE TABLE invoices (id INTEGER PRIMARY KEY, total INTEGER); INSERT INTO invoices VALUES (1, 5)",
        )
        .unwrap();
    let before = digest(&database);
    let refused = said(payments_sandbox::open_store(database.to_str().unwrap()).await.err().expect("refused"));
    assert!(refused.contains("is not a payments-sandbox database (it has tables invoices)"), "{refused}");
    assert_eq!(digest(&database), before, "nothing in it was changed");

    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a database at all, just some text that is long enough to be a header").unwrap();
    let refused = said(payments_sandbox::open_store(text.to_str().unwrap()).await.err().expect("refused"));
    assert!(refused.contains("notes.txt") && refused.contains("not a database"), "{refused}");
}

/// What the person starting the sandbox reads of `error`: it and its causes, on one line.
fn said(error: payments_sandbox::OpenError) -> String {
    payments_sandbox::chain(&error)
}
