//! Backups taken while the sandbox serves payments: `payments-sandbox backup --to FILE` on
//! SQLite, and the README's `pg_dump`/`pg_restore` on PostgreSQL. A restored copy starts and
//! holds every payment acknowledged before the backup began, and its ledger equals its
//! balances. Killed (`kill -9`) at any moment, a backup leaves no file at the name asked for (or
//! the previous backup, whole), and the sandbox goes on; a sandbox killed during a backup loses
//! nothing it acknowledged.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use payments_tests::database::{Backend, TestDatabase, assert_ledger_reconciles, backend, postgres};
use payments_tests::payers::{Outcome, Payers, stored};
use payments_tests::process::{binary, spawn_with};
use payments_tests::sandbox::*;

payments_tests::on_both_backends! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)] a_backup_taken_under_payments_restores_every_payment_acknowledged_before_it,
    #[tokio::test] a_backup_killed_at_any_moment_leaves_no_half_copy_and_the_sandbox_serving,
}

const TOKEN: &str = "tok_backup";

/// Copies the database at `location` into a new database, as the README says (SQLite:
/// `payments-sandbox backup`; PostgreSQL: `pg_dump -Fc`, then `pg_restore` into an empty
/// database); returns the copy's location. `backend`: the test's, taken before it moves to a
/// blocking thread (the backend chosen is the test task's).
fn back_up(backend: Backend, location: &str, work: &Path) -> String {
    match backend {
        Backend::Sqlite => {
            let copy = work.join("copy.db");
            let made = Command::new(binary())
                .args(["backup", "--database", location, "--to"])
                .arg(&copy)
                .output()
                .expect("the backup runs");
            assert!(made.status.success(), "backup: {}", String::from_utf8_lossy(&made.stderr));
            let said = String::from_utf8_lossy(&made.stdout);
            assert!(said.starts_with(&format!("Backed up {location} to {}", copy.display())), "{said}");
            copy.display().to_string()
        }
        Backend::Postgres => {
            let bin = postgres().bin();
            // As the README: dumped under a temporary name, moved to its own once whole.
            let (partial, dump) = (work.join("payments.dump.partial"), work.join("payments.dump"));
            let dumped = Command::new(bin.join("pg_dump"))
                .args(["--format=custom", "--file"])
                .arg(&partial)
                .arg(location)
                .output()
                .expect("pg_dump runs");
            assert!(dumped.status.success(), "pg_dump: {}", String::from_utf8_lossy(&dumped.stderr));
            std::fs::rename(&partial, &dump).unwrap();
            let copy = postgres().fresh_database();
            let restored = Command::new(bin.join("pg_restore"))
                .args(["--no-owner", "--exit-on-error", "--dbname", &copy])
                .arg(&dump)
                .output()
                .expect("pg_restore runs");
            assert!(restored.status.success(), "pg_restore: {}", String::from_utf8_lossy(&restored.stderr));
            copy
        }
    }
}

async fn a_backup_taken_under_payments_restores_every_payment_acknowledged_before_it() {
    let work = tempfile::tempdir().unwrap();
    let database = TestDatabase::fresh();
    let process = spawn_with(&database.location, Some(TOKEN), &[]);
    let client = payments_client::with_token(&process.url, TOKEN);
    let (gbp, recipient) = funded_with_recipient(&client, "GBP", 100_000_000).await;
    let payers = Payers::start(&process.url, TOKEN, gbp.id, recipient.id, 4, "backup");
    tokio::time::sleep(Duration::from_secs(1)).await;

    let began = Instant::now();
    let location = database.location.clone();
    let work_path = work.path().to_owned();
    let copy = tokio::task::spawn_blocking({
        let backend = backend();
        move || back_up(backend, &location, &work_path)
    })
    .await
    .unwrap();
    let took = began.elapsed();
    let outcomes = payers.stop().await;
    let before: Vec<&Outcome> = outcomes.iter().filter(|o| o.status == 201 && o.at < began).collect();
    assert!(!before.is_empty(), "payments were acknowledged before the backup began");
    eprintln!("backed up in {took:?} beside 4 paying clients; {} payments acknowledged before it", before.len());

    // The copy starts as a database of its own and holds each of them, once.
    let restored = spawn_with(&copy, Some(TOKEN), &[]);
    let copy_client = payments_client::with_token(&restored.url, TOKEN);
    for outcome in &before {
        assert_eq!(stored(&copy_client, &outcome.order_id).await, 1, "{} is in the copy", outcome.order_id);
    }
    assert!(copy_client.get_balance().id(gbp.id).send().await.is_ok());
    drop(restored);
    assert_ledger_reconciles(&copy).await;
}

async fn a_backup_killed_at_any_moment_leaves_no_half_copy_and_the_sandbox_serving() {
    let work = tempfile::tempdir().unwrap();
    let database = TestDatabase::fresh();
    let process = spawn_with(&database.location, Some(TOKEN), &[]);
    let client = payments_client::with_token(&process.url, TOKEN);
    let (gbp, recipient) = funded_with_recipient(&client, "GBP", 100_000_000).await;
    let payers = Payers::start(&process.url, TOKEN, gbp.id, recipient.id, 2, "killed");
    tokio::time::sleep(Duration::from_millis(500)).await;

    let copy = work.path().join("copy.db");
    for delay in [0, 1, 2, 5, 10, 20, 50] {
        let mut running = match backend() {
            Backend::Sqlite => Command::new(binary())
                .args(["backup", "--database", &database.location, "--to"])
                .arg(&copy)
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("the backup starts"),
            Backend::Postgres => Command::new(postgres().bin().join("pg_dump"))
                .args(["--format=custom", "--file"])
                .arg(work.path().join("copy.dump.partial"))
                .arg(&database.location)
                .spawn()
                .expect("pg_dump starts"),
        };
        std::thread::sleep(Duration::from_millis(delay));
        let _ = running.kill();
        let _ = running.wait();
        if copy.exists() {
            // It finished before the kill: whole, and a database of ours.
            let check = Command::new(binary())
                .args(["backup", "--database"])
                .arg(&copy)
                .arg("--to")
                .arg(work.path().join("again.db"))
                .output()
                .unwrap();
            assert!(
                check.status.success(),
                "a copy at the name asked for is whole: {}",
                String::from_utf8_lossy(&check.stderr)
            );
            std::fs::remove_file(&copy).unwrap();
        }
        // The sandbox goes on.
        assert_eq!(client.get_balance().id(gbp.id).send().await.unwrap().status().as_u16(), 200);
    }
    // A backup after the killed ones is made whole, whatever they left.
    let location = database.location.clone();
    let work_path = work.path().to_owned();
    let copy = tokio::task::spawn_blocking({
        let backend = backend();
        move || back_up(backend, &location, &work_path)
    })
    .await
    .unwrap();

    // A sandbox killed during a backup loses nothing it acknowledged.
    let outcomes_so_far = payers.outcomes();
    let location = database.location.clone();
    let work_path = work.path().join("during");
    std::fs::create_dir_all(&work_path).unwrap();
    let backing_up = tokio::task::spawn_blocking({
        let backend = backend();
        move || back_up(backend, &location, &work_path)
    });
    tokio::time::sleep(Duration::from_millis(5)).await;
    let mut process = process;
    process.signal("-KILL");
    let _ = process.wait(Duration::from_secs(10));
    let during = backing_up.await.unwrap();
    let outcomes = payers.stop().await;
    assert!(outcomes.len() >= outcomes_so_far.len());
    let again = spawn_with(&database.location, Some(TOKEN), &[]);
    let client = payments_client::with_token(&again.url, TOKEN);
    for outcome in outcomes.iter().filter(|o| o.status == 201) {
        assert_eq!(stored(&client, &outcome.order_id).await, 1, "acknowledged {} survives the kill", outcome.order_id);
    }
    drop(again);
    assert_ledger_reconciles(&database.location).await;
    assert_ledger_reconciles(&copy).await;
    assert_ledger_reconciles(&during).await;
}
