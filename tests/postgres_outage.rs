//! A PostgreSQL server stopped and started again under payments: while it is down, payments are
//! answered `503` (nothing made) or, when the server went away in the middle of a commit, `504`
//! (outcome unknown), with `Retry-After`; reads are `503`; `/readyz` says not ready; the log says
//! so once rather than per refusal; and once the server is back the same sandbox makes payments
//! again by itself. Then the money: nothing acknowledged lost, nothing refused made, every
//! payment not acknowledged made exactly once when retried with its `order_id`, the ledger
//! equal to the balance. On a server of the test's own, since it is stopped.

use std::time::{Duration, Instant};

use payments_tests::database::{OwnPostgres, assert_ledger_reconciles};
use payments_tests::payers::{AMOUNT, Payers, check_outcomes, tally};
use payments_tests::process::spawn_with;
use payments_tests::sandbox::*;

const TOKEN: &str = "tok_outage";

/// Waits until a payer has been answered one of `statuses` since `since`.
async fn answered(payers: &Payers, statuses: &[u16], since: Instant, within: Duration) -> Instant {
    let deadline = Instant::now() + within;
    loop {
        if let Some(outcome) = payers.outcomes().iter().find(|o| statuses.contains(&o.status) && o.at >= since) {
            return outcome.at;
        }
        assert!(
            Instant::now() < deadline,
            "no payment answered {statuses:?} within {within:?}: {:?}",
            tally(&payers.outcomes())
        );
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
async fn a_stopped_server_is_answered_as_an_outage_and_payments_resume_when_it_is_back() {
    let server = OwnPostgres::start();
    let database = server.server.fresh_database();
    let process = spawn_with(&database, Some(TOKEN), &[]);
    let url = process.url.clone();
    let client = payments_client::with_token(&url, TOKEN);
    let gbp = open_balance(&client, "GBP").await;
    fund(&client, &gbp, 100_000_000).await;
    let recipient = gb_recipient(&client).await;

    let payers = Payers::start(&url, TOKEN, gbp.id, recipient.id, 4, "outage");
    answered(&payers, &[201], Instant::now(), Duration::from_secs(10)).await;
    server.stop();
    let down_at = Instant::now();
    answered(&payers, &[503], down_at, Duration::from_secs(10)).await;
    tokio::time::sleep(Duration::from_secs(2)).await;

    let raw = payments_tests::raw("GET", &format!("{url}/balances/{}", gbp.id), Some(TOKEN), None, "").await;
    payments_tests::assert_error(&raw, 503, "the database server cannot be reached, so nothing was changed");
    assert_eq!(raw.headers["retry-after"], "5");
    assert_eq!(status_of(format!("{url}/readyz"), None).await, 503);
    assert_eq!(status_of(format!("{url}/healthz"), None).await, 200);

    server.start_again();
    let up_at = Instant::now();
    let recovered_at = answered(&payers, &[201], up_at, Duration::from_secs(30)).await;
    eprintln!(
        "PostgreSQL down {:?}; payments made again {:?} after it was back",
        up_at - down_at,
        recovered_at - up_at
    );
    let outcomes = payers.stop().await;
    let ready = eventually(Duration::from_secs(10), || async { status_of(format!("{url}/readyz"), None).await == 200 });
    let ready = ready.await;
    assert!(ready, "ready again");

    let logged = process.logged();
    let outage_lines = logged.iter().filter(|line| line.contains("database outage")).count();
    let refusals = outcomes.iter().filter(|o| o.status != 201).count();
    eprintln!("{refusals} refusals, {outage_lines} outage lines in the log: {:?}", tally(&outcomes));
    assert!(outage_lines <= 6, "the log says it a few times, not per refusal: {outage_lines} lines for {refusals}");

    let made = check_outcomes(&client, gbp.id, recipient.id, &outcomes, &[201, 503, 504], &[503]).await;
    let any = client.list_transactions().balance_id(gbp.id).limit(limit(1)).send().await.unwrap().into_inner();
    let fee = any[0].fees;
    assert_eq!(balance_of(&client, gbp.id).await, 100_000_000 - made as i64 * (AMOUNT as i64 + fee));
    drop(process);
    assert_ledger_reconciles(&database).await;
}
