//! The SQLite sandbox when its disk fills up under payments: writes are answered `507` with
//! `Retry-After` and change nothing, reads go
//! on, `/readyz` says not ready, the log says so once rather than per request, a restart on the
//! full disk starts and serves reads, and once there is room again payments are made again
//! without a restart. Then the money: nothing acknowledged lost, nothing refused made, every
//! refused payment made exactly once when retried with its `order_id`, and the ledger equal to
//! the balance. And the same through the generated client's retries: 1,000 payments while the
//! disk is full for three seconds, with its default retries and without.

use std::time::{Duration, Instant};

use payments_tests::database::assert_ledger_reconciles;
use payments_tests::payers::{AMOUNT, Outage, Payers, check_outcomes, tally, with_retries_and_without};
use payments_tests::process::{Process, spawn_at};
use payments_tests::sandbox::*;
use payments_tests::tmpfs::Tmpfs;

const TOKEN: &str = "tok_disk";

fn start(address: &str, database: &str) -> Process {
    spawn_at(address, database, Some(TOKEN), &[])
}

/// Waits until a payer has been answered `status` since `since`, for at most `within`.
async fn answered(payers: &Payers, status: u16, since: Instant, within: Duration) -> Instant {
    let deadline = Instant::now() + within;
    loop {
        if let Some(outcome) = payers.outcomes().iter().find(|o| o.status == status && o.at >= since) {
            return outcome.at;
        }
        assert!(
            Instant::now() < deadline,
            "no payment answered {status} within {within:?}: {:?}",
            tally(&payers.outcomes())
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Creates balances in `currency` until one is refused: a write is made while it fits in WAL
/// pages already on disk (those a refused batch claimed before the disk refused it, or a WAL
/// the last run kept), so a full disk refuses the first write that needs a page more, not
/// necessarily the next one. Answers the refusal and how many fitted.
async fn until_refused(url: &str, currency: &str) -> (payments_tests::Raw, u32) {
    let mut fitted = 0;
    loop {
        let raw = payments_tests::raw(
            "POST",
            &format!("{url}/balances"),
            Some(TOKEN),
            Some("application/json"),
            format!("{{\"currency\":\"{currency}\"}}"),
        )
        .await;
        if raw.status != 201 {
            return (raw, fitted);
        }
        fitted += 1;
        assert!(fitted < 10_000, "the disk is full, yet writes go on");
    }
}

/// Waits until `GET /readyz` answers `status`, for at most five seconds: a write that fits
/// ends an outage (the database commits again) until the next one is refused.
async fn readiness(url: &str, status: u16) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let answered = status_of(format!("{url}/readyz"), None).await;
        if answered == status {
            return;
        }
        assert!(Instant::now() < deadline, "/readyz answers {answered}, not {status}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn status_of(url: String, token: Option<&str>) -> u16 {
    let mut request = reqwest::Client::new().get(url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.expect("an answer").status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_refuses_writes_as_such_serves_reads_and_recovers_by_itself() {
    let disk = Tmpfs::mount(24);
    let database = disk.path().join("sandbox.db").display().to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).unwrap().port();
    let address = format!("127.0.0.1:{port}");
    let mut process = start(&address, &database);
    let url = process.url.clone();
    let client = payments_client::with_token(&url, TOKEN);
    let (gbp, recipient) = funded_with_recipient(&client, "GBP", 100_000_000).await;

    // Payments flow; then the disk fills up.
    let payers = Payers::start(&url, TOKEN, gbp.id, recipient.id, 4, "disk");
    answered(&payers, 201, Instant::now(), Duration::from_secs(10)).await;
    let filler = disk.fill();
    let full_at = Instant::now();
    answered(&payers, 507, full_at, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    // Refusals say what happened and when to come back; reads are served; not ready.
    let refused = payers.outcomes().into_iter().rfind(|o| o.status == 507).unwrap();
    assert!(refused.message.contains("the database's disk is full, so nothing was changed"), "{}", refused.message);
    let (raw, fitted) = until_refused(&url, "GBP").await;
    payments_tests::assert_error(&raw, 507, "Retry after 30 seconds");
    assert_eq!(raw.headers["retry-after"], "30");
    eprintln!("full disk: {fitted} balances fitted in pages a refused batch had claimed, then 507");
    assert_eq!(status_of(format!("{url}/balances/{}", gbp.id), Some(TOKEN)).await, 200);
    assert_eq!(status_of(format!("{url}/transactions?limit=5"), Some(TOKEN)).await, 200);
    readiness(&url, 507).await;
    assert_eq!(status_of(format!("{url}/healthz"), None).await, 200);

    // Room again: payments are made again by themselves.
    std::fs::remove_file(&filler).unwrap();
    let room_at = Instant::now();
    let recovered_at = answered(&payers, 201, room_at, Duration::from_secs(10)).await;
    eprintln!("full disk: payments made again {:?} after room came back", recovered_at - room_at);

    let outcomes = payers.stop().await;

    // One line when the outage began and one when it ended, not one per refusal.
    let logged = process.logged();
    let outage_lines = logged.iter().filter(|line| line.contains("database outage")).count();
    for line in logged.iter().filter(|line| line.contains("database outage")) {
        eprintln!("{line}");
    }
    let refusals = outcomes.iter().filter(|o| o.status != 201).count();
    eprintln!("{refusals} refusals, {outage_lines} outage lines in the log: {:?}", tally(&outcomes));
    // Each write that fitted in claimed pages ended the outage for real, and the next refusal
    // began another: two lines each, beyond the few of the outage itself.
    let allowed = 8 + 2 * fitted as usize;
    assert!(
        outage_lines <= allowed,
        "the log says it a few times, not per refusal: {outage_lines} lines for {refusals} refusals and {fitted} writes that fitted"
    );

    // A stop and a start while the disk is full: it starts, serves reads, refuses writes.
    process.signal("-TERM");
    assert!(process.wait(Duration::from_secs(20)).success());
    let filler = disk.fill();
    let process = start(&address, &database);
    assert_eq!(status_of(format!("{url}/balances/{}", gbp.id), Some(TOKEN)).await, 200);
    // Writes fit while the WAL the last run kept has room for them (it is reused, not grown);
    // then they are refused.
    let (refused, fitted) = until_refused(&url, "EUR").await;
    payments_tests::assert_error(&refused, 507, "disk is full");
    eprintln!("started on a full disk: {fitted} writes fitted in the kept WAL, then 507");
    std::fs::remove_file(&filler).unwrap();

    // The money: what the payers were told holds.
    let client = payments_client::with_token(&process.url, TOKEN);
    let made = check_outcomes(&client, gbp.id, recipient.id, &outcomes, &[201, 507], &[507]).await;
    let any = client.list_transactions().balance_id(gbp.id).limit(limit(1)).send().await.unwrap().into_inner();
    let fee = any[0].fees;
    assert_eq!(balance_of(&client, gbp.id).await, 100_000_000 - made as i64 * (AMOUNT as i64 + fee));
    drop(process);
    assert_ledger_reconciles(&database).await;
}

/// Checkpoints the database from a connection of the test's own and truncates its WAL file, so
/// that the sandbox's next commits need room the full disk no longer has. Otherwise they can go
/// into the WAL's pages already on disk (the WAL is written again from its start after each
/// checkpoint) for as long as the outage lasts, and no payment is refused: with 2 KiB pages
/// that happened in one full run of the tests.
fn empty_the_wal(database: &str) {
    let connection = rusqlite::Connection::open(database).unwrap();
    connection.busy_timeout(Duration::from_secs(10)).unwrap();
    let busy: i64 = connection.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0)).unwrap();
    assert_eq!(busy, 0, "the checkpoint was kept from finishing");
}

/// 1,000 payments through the generated client while the disk is full for three seconds. With its
/// default retries each payment refused `507` waits out the `Retry-After` and is made: no caller
/// sees the outage. With retries off the refusals reach the callers. Either way, once the failed
/// ones are sent again with their `order_id`, each payment is made exactly once and the balance
/// is exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payments_through_a_full_disk_with_the_clients_retries_and_without() {
    // Room for both runs' 2,000 payments once the filler is gone.
    let disk = Tmpfs::mount(256);
    let database = disk.path().join("sandbox.db").display().to_string();
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).unwrap().port();
    let process = start(&format!("127.0.0.1:{port}"), &database);
    let outage = Outage {
        what: "a full disk for 3 s",
        begin: || {
            empty_the_wal(&database);
            disk.fill()
        },
        end: |filler: std::path::PathBuf| std::fs::remove_file(filler).unwrap(),
        lasting: Duration::from_secs(3),
        allowed: &[201, 507],
        not_made: &[507],
    };
    let failed = with_retries_and_without(&process.url, TOKEN, outage).await;
    assert_eq!(failed[0], 0, "with retries, the outage never reaches a caller: {failed:?}");
    assert!(failed[1] > 0, "without, it does");
    drop(process);
    assert_ledger_reconciles(&database).await;
}
