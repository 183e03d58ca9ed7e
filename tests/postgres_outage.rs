//! A PostgreSQL server stopped and started again under payments: while it is down, payments are
//! answered `503` (nothing made) or, when the server went away in the middle of a commit, `504`
//! (outcome unknown), with `Retry-After`; reads are `503`; `/readyz` says not ready; the log says
//! so once rather than per refusal; and once the server is back the same sandbox makes payments
//! again by itself. Then the money: nothing acknowledged lost, nothing refused made, every
//! payment not acknowledged made exactly once when retried with its `order_id`, the ledger
//! equal to the balance. On a server of the test's own, since it is stopped. And the same
//! through the generated client's retries: 1,000 payments while the server is stopped for
//! 5 s, with its default retries and without.

use std::time::{Duration, Instant};

use payments_tests::database::{OwnPostgres, assert_ledger_reconciles};
use payments_tests::payers::{AMOUNT, Outage, Payers, check_outcomes, tally, with_retries_and_without};
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
    let (gbp, recipient) = funded_with_recipient(&client, "GBP", 100_000_000).await;

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

/// A TCP proxy in front of PostgreSQL that can lose the answer to one `COMMIT`: armed, it passes
/// the next `COMMIT` of a batch of payments on to the server, lets the server commit it, and
/// then cuts that connection before the answer comes back. It reads what clients send as
/// PostgreSQL's messages (after the untyped start-up ones, a type byte and a length each).
struct LosesACommit {
    addr: std::net::SocketAddr,
    armed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    cut: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// The whole messages at the start of `pending` (removed from it), each as its type (`0` for an
/// untyped start-up message) and its bytes. `started`: whether the start-up message went by.
fn messages(pending: &mut Vec<u8>, started: &mut bool) -> Vec<(u8, Vec<u8>)> {
    let mut found = Vec::new();
    loop {
        let (kind, header) = if *started { (pending.first().copied(), 1) } else { (Some(0), 0) };
        let Some(kind) = kind else { break };
        if pending.len() < header + 4 {
            break;
        }
        let length = u32::from_be_bytes(pending[header..header + 4].try_into().unwrap()) as usize;
        if pending.len() < header + length {
            break;
        }
        let message: Vec<u8> = pending.drain(..header + length).collect();
        // The start-up message (protocol 3.0) ends the untyped ones; an SSL or GSS request
        // (answered `N`) comes before it.
        if !*started && message.len() >= 8 && message[4..8] == [0, 3, 0, 0] {
            *started = true;
        }
        found.push((kind, message));
    }
    found
}

impl LosesACommit {
    async fn start(server: std::net::SocketAddr) -> Self {
        use std::sync::atomic::Ordering::SeqCst;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let armed = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cut = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (armed_, cut_) = (armed.clone(), cut.clone());
        tokio::spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else { return };
                let (armed, cut) = (armed_.clone(), cut_.clone());
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let Ok(upstream) = tokio::net::TcpStream::connect(server).await else { return };
                    let (mut client_read, mut client_write) = client.into_split();
                    let (mut server_read, mut server_write) = upstream.into_split();
                    let (stop, mut stopped) = tokio::sync::watch::channel(false);
                    // Relays answers until stopped, then gives the client's side back unclosed.
                    let mut answers = tokio::spawn(async move {
                        let mut buffer = vec![0u8; 64 * 1024];
                        loop {
                            tokio::select! {
                                read = server_read.read(&mut buffer) => match read {
                                    Ok(0) | Err(_) => return client_write,
                                    Ok(n) => if client_write.write_all(&buffer[..n]).await.is_err() { return client_write },
                                },
                                _ = stopped.changed() => return client_write,
                            }
                        }
                    });
                    let (mut buffer, mut pending) = (vec![0u8; 64 * 1024], Vec::new());
                    let (mut started, mut in_batch) = (false, false);
                    'connection: loop {
                        let n = match client_read.read(&mut buffer).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        pending.extend_from_slice(&buffer[..n]);
                        for (kind, message) in messages(&mut pending, &mut started) {
                            let query = (kind == b'Q').then(|| &message[5..]);
                            // A write lane's batch puts each changeset in a savepoint `c<n>`;
                            // the outbox's and the tenants' pools do not.
                            in_batch |= query.is_some_and(|q| q.starts_with(b"SAVEPOINT c"));
                            let commit = query == Some(b"COMMIT\0".as_slice());
                            let losing = commit && in_batch && armed.swap(false, SeqCst);
                            if commit {
                                in_batch = false;
                            }
                            // Held open (answering nothing) until the cut.
                            let mut silent = None;
                            if losing {
                                // Nothing more goes back to the client from here on.
                                let _ = stop.send(true);
                                silent = (&mut answers).await.ok();
                            }
                            if server_write.write_all(&message).await.is_err() {
                                break 'connection;
                            }
                            if losing {
                                // The server commits; then both sides are cut.
                                tokio::time::sleep(Duration::from_millis(300)).await;
                                cut.fetch_add(1, SeqCst);
                                drop(silent);
                                break 'connection;
                            }
                        }
                    }
                    answers.abort();
                });
            }
        });
        Self { addr, armed, cut }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_whose_commit_answer_is_lost_is_looked_up_by_its_key_or_answered_504() {
    use std::sync::atomic::Ordering::SeqCst;
    let server = OwnPostgres::start();
    let database = server.server.fresh_database();
    let url = reqwest::Url::parse(&database).unwrap();
    let upstream: std::net::SocketAddr = format!("127.0.0.1:{}", url.port().unwrap()).parse().unwrap();
    let proxy = LosesACommit::start(upstream).await;
    let mut through = url.clone();
    through.set_port(Some(proxy.addr.port())).unwrap();
    let process = spawn_with(through.as_str(), Some(TOKEN), &[]);
    let client = payments_client::with_token(&process.url, TOKEN);
    let (gbp, recipient) = funded_with_recipient(&client, "GBP", 1_000_000).await;
    assert_eq!(payments_tests::payers::pay(&client, gbp.id, recipient.id, "before").await.status, 201);

    // With an order_id: the commit landed, its answer did not; the sandbox looks the payment up
    // by its key and answers it, made once.
    proxy.armed.store(true, SeqCst);
    let looked_up = payments_tests::payers::pay(&client, gbp.id, recipient.id, "in-doubt").await;
    assert_eq!(proxy.cut.load(SeqCst), 1, "a COMMIT's answer was lost");
    assert_eq!(looked_up.status, 201, "{}", looked_up.message);
    assert_eq!(payments_tests::payers::stored(&client, "in-doubt").await, 1);

    // Without a key there is nothing to look it up by: 504, it may or may not have been made.
    proxy.armed.store(true, SeqCst);
    let unkeyed = payments_tests::raw(
        "POST",
        &format!("{}/balances", process.url),
        Some(TOKEN),
        Some("application/json"),
        r#"{"currency":"EUR","name":"In doubt"}"#,
    )
    .await;
    assert_eq!(proxy.cut.load(SeqCst), 2, "a second COMMIT's answer was lost");
    payments_tests::assert_error(&unkeyed, 504, "may or may not have been made");
    assert_eq!(unkeyed.headers["retry-after"], "5");
    // It was made (the server committed it): reading tells, as the answer says.
    let balances = client.list_balances().send().await.unwrap().into_inner();
    assert_eq!(balances.iter().filter(|b| b.name.as_str() == "In doubt").count(), 1);

    let payments = client.list_transactions().balance_id(gbp.id).send().await.unwrap().into_inner();
    let spent: i64 = payments
        .iter()
        .filter(|t| t.transaction_type == payments_client::types::TransactionType::Payment)
        .map(|t| i64::try_from(t.amount.get()).unwrap() + t.fees)
        .sum();
    assert_eq!(balance_of(&client, gbp.id).await, 1_000_000 - spent);
    drop(process);
    assert_ledger_reconciles(&database).await;
}

/// 1,000 payments through the generated client while PostgreSQL is stopped for 5 s. With its
/// default retries the payments refused `503` (or answered `504` in the middle of a commit) wait
/// out the `Retry-After` and are sent again with their `order_id`; with retries off every refusal
/// reaches its caller. Either way, once the failed ones are sent again, each payment is made
/// exactly once and the balance is exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payments_through_a_stopped_server_with_the_clients_retries_and_without() {
    let server = OwnPostgres::start();
    let database = server.server.fresh_database();
    let process = spawn_with(&database, Some(TOKEN), &[]);
    let outage = Outage {
        what: "PostgreSQL stopped for 5 s",
        begin: || server.stop(),
        end: |()| server.start_again(),
        lasting: Duration::from_secs(5),
        allowed: &[201, 503, 504],
        not_made: &[503],
    };
    let failed = with_retries_and_without(&process.url, TOKEN, outage).await;
    assert!(failed[0] < failed[1], "retries keep the outage from callers: {failed:?}");
    drop(process);
    assert_ledger_reconciles(&database).await;
}
