//! The real `payments-sandbox` binary in a child process: first start, tokens from the
//! environment, the `create-tenant` subcommand, a graceful stop that finishes the request in
//! flight, a `kill -9` in the middle of writes that loses nothing acknowledged, and clients that
//! hang up mid-request leaving nothing half-done.

use std::io::{Read, Write};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use payments_client::types;
use payments_tests::process::{binary, spawn, spawn_with};
use payments_tests::receiver::{Receiver, start_receiver};
use payments_tests::sandbox::*;

payments_tests::on_both_backends! {
    #[tokio::test] first_start_prints_a_token_and_create_tenant_adds_another,
    #[tokio::test] every_request_is_logged_once_with_its_id_status_and_latency,
    #[tokio::test] sigterm_finishes_the_request_in_flight,
    #[tokio::test] sigterm_gives_up_on_clients_that_never_finish_after_the_grace_period,
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] acknowledged_writes_survive_kill_9_and_restart,
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] a_restart_in_the_middle_of_a_webhook_backlog_loses_nothing,
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] delivery_throughput_to_a_local_receiver,
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] clients_that_hang_up_mid_request_leave_nothing_half_done,
}

async fn first_start_prints_a_token_and_create_tenant_adds_another() {
    let database = TestDatabase::fresh();
    let mut process = spawn(&database.location, None);
    let printed = process.printed();
    let token = printed
        .lines()
        .find_map(|line| line.split("stored hashed): ").nth(1))
        .unwrap_or_else(|| panic!("a token is printed on first start:\n{printed}"))
        .to_owned();
    assert!(printed.contains(&format!("curl -H 'Authorization: Bearer {token}' {}/currencies", process.url)));
    let first = payments_client::with_token(&process.url, &token);
    let balance = open_balance(&first, "GBP").await;
    // The token is stored only as its hash.
    assert!(!database.holds(token.as_bytes()), "the raw token is not in the database");

    // A second tenant, made by the subcommand while the server runs.
    let output =
        Command::new(binary()).arg("--database").arg(&database.location).arg("create-tenant").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let second_token = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    assert!(second_token.starts_with("sk_sandbox_") && second_token != token);
    let second = payments_client::with_token(&process.url, &second_token);
    assert_refused(second.get_balance().id(balance.id).send().await, 404, "balance");
    assert!(second.list_balances().send().await.unwrap().into_inner().is_empty());

    // SIGTERM stops it cleanly.
    process.signal("-TERM");
    assert!(process.wait(Duration::from_secs(10)).success());

    // A restart creates no new tenant: the old token still works and none is printed.
    let again = spawn(&database.location, None);
    assert!(!again.printed().contains("stored hashed"));
    let first = payments_client::with_token(&again.url, &token);
    assert_eq!(first.get_balance().id(balance.id).send().await.unwrap().into_inner().id, balance.id);
}

async fn every_request_is_logged_once_with_its_id_status_and_latency() {
    let database = TestDatabase::fresh();
    let process = spawn_with(&database.location, Some("tok_logged"), &["--log-format", "json"]);
    let client = reqwest::Client::new();
    let currencies = format!("{}/currencies", process.url);
    let ok = client.get(&currencies).bearer_auth("tok_logged").header("x-request-id", "logged-1").send().await;
    assert_eq!(ok.unwrap().status(), 200);
    let refused = client.get(&currencies).bearer_auth("tok_wrong").header("x-request-id", "logged-2").send().await;
    assert_eq!(refused.unwrap().status(), 401);
    // Lines are written every few milliseconds.
    let lines = {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let lines = process.logged();
            if lines.iter().filter(|line| line.contains("logged-")).count() >= 2 {
                break lines;
            }
            assert!(std::time::Instant::now() < deadline, "no access log lines: {lines:#?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    // Every line is one JSON object.
    let lines: Vec<serde_json::Value> = lines
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
        .collect();
    for (id, status) in [("logged-1", 200), ("logged-2", 401)] {
        let mine: Vec<_> = lines.iter().filter(|line| line["id"] == id).collect();
        assert_eq!(mine.len(), 1, "one line for {id}: {lines:#?}");
        let line = mine[0];
        assert_eq!(line["message"], "request", "{line}");
        assert_eq!(line["level"], "INFO", "{line}");
        assert_eq!(
            (&line["method"], &line["path"], &line["status"]),
            (&"GET".into(), &"/currencies".into(), &status.into())
        );
        assert!(line["latency_us"].is_u64(), "{line}");
        assert_eq!(line["client"], "127.0.0.1", "the client's address: {line}");
        let timestamp = line["timestamp"].as_str().unwrap();
        assert!(chrono::DateTime::parse_from_rfc3339(timestamp).is_ok(), "{timestamp}");
    }
}

async fn sigterm_finishes_the_request_in_flight() {
    let database = TestDatabase::fresh();
    let mut process = spawn(&database.location, Some("tok_graceful"));
    let address = process.url.trim_start_matches("http://").to_owned();
    // Half a request: headers and part of the body.
    let body = br#"{"currency":"GBP","name":"In flight"}"#;
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    write!(
        stream,
        "POST /balances HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer tok_graceful\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(&body[..10]).unwrap();
    stream.flush().unwrap();
    std::thread::sleep(Duration::from_millis(200));
    process.signal("-TERM");
    std::thread::sleep(Duration::from_millis(300));
    assert!(process.child.try_wait().unwrap().is_none(), "still running while a request is in flight");
    stream.write_all(&body[10..]).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 201"), "{response}");
    assert!(response.contains("In flight"));
    assert!(process.wait(Duration::from_secs(10)).success());
    // New connections are refused once it has stopped.
    assert!(std::net::TcpStream::connect(&address).is_err());
}

async fn sigterm_gives_up_on_clients_that_never_finish_after_the_grace_period() {
    let database = TestDatabase::fresh();
    // Timeouts far beyond the grace, so only the grace can end these connections.
    let limits = ["--shutdown-grace", "2", "--header-timeout", "120", "--body-timeout", "120"];
    let mut process = spawn_with(&database.location, Some("tok_slow"), &limits);
    let address = process.url.trim_start_matches("http://").to_owned();
    let half_head = "POST /balances HTTP/1.1\r\nHost: x\r\nAuthorization: Bea";
    let half_body = "POST /balances HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok_slow\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"currency\":";
    let mut held = Vec::new();
    for sent in ["", half_head, half_body] {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        stream.write_all(sent.as_bytes()).unwrap();
        held.push(stream);
    }
    std::thread::sleep(Duration::from_millis(300));
    let signalled = std::time::Instant::now();
    process.signal("-TERM");
    let status = process.wait(Duration::from_secs(8));
    let took = signalled.elapsed();
    assert!(status.success(), "exits 0 after giving up: {status:?}");
    assert!(took >= Duration::from_millis(1_500), "the half-sent body had its grace: {took:?}");
    // Every held connection was closed by the sandbox.
    for mut stream in held {
        stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut rest = Vec::new();
        let read = stream.read_to_end(&mut rest);
        assert!(read.is_ok() || read.is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset));
    }
    // Nothing half-sent was stored.
    let again = spawn(&database.location, Some("tok_slow"));
    let client = payments_client::with_token(&again.url, "tok_slow");
    assert!(client.list_balances().send().await.unwrap().into_inner().is_empty());
}

async fn acknowledged_writes_survive_kill_9_and_restart() {
    let database = TestDatabase::fresh();
    let process = spawn(&database.location, Some("tok_durable"));
    let client = payments_client::with_token(&process.url, "tok_durable");
    let balance = open_balance(&client, "GBP").await;
    let recipient = gb_recipient(&client).await;
    fund(&client, &balance, 1_000_000).await;

    // Four writers pay as fast as they can; each acknowledged payment is remembered.
    let acknowledged = Arc::new(Mutex::new(Vec::<types::Transaction>::new()));
    let writers: Vec<_> = (0..4)
        .map(|writer| {
            let client = client.clone();
            let acknowledged = acknowledged.clone();
            tokio::spawn(async move {
                for i in 0.. {
                    let body =
                        payment(balance.id, recipient.id, 100 + i % 7).order_id(Some(code(&format!("w{writer}-{i}"))));
                    match client.create_transaction().body(body).send().await {
                        Ok(created) => acknowledged.lock().unwrap().push(created.into_inner()),
                        Err(_) => return, // the server is gone
                    }
                }
            })
        })
        .collect();
    // Let them run, then kill -9 with writes in flight.
    assert!(
        eventually(Duration::from_secs(60), || {
            let count = acknowledged.lock().unwrap().len();
            async move { count >= 200 }
        })
        .await
    );
    let mut process = process;
    process.signal("-KILL");
    process.wait(Duration::from_secs(10));
    for writer in writers {
        writer.await.unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    eprintln!("acknowledged before the kill: {}", acknowledged.len());

    // Restarted on the same file: the startup reconciliation passes, and every acknowledged
    // payment is there, with the balance reflecting exactly what was stored.
    let restarted = spawn(&database.location, Some("tok_durable"));
    let client = payments_client::with_token(&restarted.url, "tok_durable");
    for payment in &acknowledged {
        let stored = client
            .get_transaction()
            .id(payment.id)
            .send()
            .await
            .expect("an acknowledged payment survives")
            .into_inner();
        assert_eq!(&stored, payment);
    }
    let mut stored = vec![];
    let mut after = None;
    loop {
        let mut request = client
            .list_transactions()
            .balance_id(balance.id)
            .transaction_type(types::TransactionType::Payment)
            .limit(limit(100));
        if let Some(id) = after {
            request = request.starting_after(id);
        }
        let page = request.send().await.unwrap().into_inner();
        after = page.last().map(|t: &types::Transaction| t.id);
        let done = page.len() < 100;
        stored.extend(page);
        if done {
            break;
        }
    }
    assert!(stored.len() >= acknowledged.len(), "at most the unacknowledged in-flight ones are extra");
    assert!(stored.len() <= acknowledged.len() + 4, "no more than one in flight per writer");
    let spent: i64 = stored.iter().map(|t| t.amount.get() as i64 + t.fees).sum();
    assert_eq!(balance_of(&client, balance.id).await, 1_000_000 - spent);
    drop(restarted);
    assert_ledger_reconciles(&database.location).await;
}

fn delivering(receiver: &Receiver) -> Vec<String> {
    vec![
        "--webhook-allow-loopback".into(),
        "--webhook-root-ca".into(),
        receiver.ca_file.display().to_string(),
        "--webhook-retry-interval".into(),
        "1".into(),
        // What a killed process held is delivered by the next one on PostgreSQL once this runs
        // out (on SQLite at its start).
        "--webhook-lease".into(),
        "11".into(),
    ]
}

async fn pings(client: &payments_client::Client, endpoint: uuid::Uuid, count: usize) -> Vec<String> {
    let mut ids = vec![];
    for _ in 0..count {
        let ping =
            client.send_test_webhook().body(types::WebhookPing::builder().endpoint_id(endpoint)).send().await.unwrap();
        ids.push(ping.into_inner().id.to_string());
    }
    ids
}

/// How many times each notification id reached the receiver.
fn arrivals(receiver: &Receiver) -> std::collections::HashMap<String, usize> {
    let mut counts = std::collections::HashMap::new();
    for delivery in receiver.received() {
        *counts.entry(delivery.notification_id).or_default() += 1;
    }
    counts
}

async fn a_restart_in_the_middle_of_a_webhook_backlog_loses_nothing() {
    let receiver = start_receiver().await;
    let database = TestDatabase::fresh();
    let args = delivering(&receiver);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut process = spawn_with(&database.location, Some("tok_hooks"), &args);
    let client = payments_client::with_token(&process.url, "tok_hooks");
    let endpoint = webhook_endpoint(&client, &receiver.url("slow")).await;

    // SIGTERM in the middle of a backlog: deliveries under way finish, the rest wait in the
    // database, and after the restart each notification arrives exactly once. The gate holds
    // the receiver while the backlog is made.
    receiver.close_gate();
    let first = pings(&client, endpoint.id, 300).await;
    receiver.open_gate();
    assert!(eventually(Duration::from_secs(30), || async { receiver.received().len() >= 60 }).await);
    process.signal("-TERM");
    assert!(process.wait(Duration::from_secs(15)).success());
    let before_restart = receiver.received().len();
    assert!(before_restart < 300, "the stop came mid-backlog ({before_restart} delivered)");
    let restarted = spawn_with(&database.location, Some("tok_hooks"), &args);
    assert!(eventually(Duration::from_secs(30), || async { arrivals(&receiver).len() >= 300 }).await);
    let counts = arrivals(&receiver);
    assert!(
        first.iter().all(|id| counts.get(id) == Some(&1)),
        "each notification exactly once across a graceful restart"
    );
    eprintln!("graceful restart: {before_restart} delivered before the stop, {} after", 300 - before_restart);

    // kill -9 in the middle of a backlog: nothing is lost (what the dead process had claimed is
    // due again at the next start on SQLite, when its lease runs out on PostgreSQL); only what
    // was under way at the kill (at most 8 per endpoint) can arrive twice.
    let client = payments_client::with_token(&restarted.url, "tok_hooks");
    receiver.close_gate();
    let second = pings(&client, endpoint.id, 300).await;
    receiver.open_gate();
    assert!(eventually(Duration::from_secs(30), || async { receiver.received().len() >= 300 + 60 }).await);
    let mut restarted = restarted;
    restarted.signal("-KILL");
    restarted.wait(Duration::from_secs(10));
    let at_kill = receiver.received().len() - 300;
    let _again = spawn_with(&database.location, Some("tok_hooks"), &args);
    assert!(eventually(Duration::from_secs(45), || async { arrivals(&receiver).len() >= 600 }).await);
    let counts = arrivals(&receiver);
    assert!(second.iter().all(|id| counts.contains_key(id)), "every notification arrives after kill -9");
    let duplicates: usize = second.iter().map(|id| counts[id] - 1).sum();
    assert!(duplicates <= 8, "{duplicates} duplicates: at most the deliveries under way at the kill");
    eprintln!("kill -9: {at_kill} delivered before the kill, 300 in all after the restart, {duplicates} duplicates");
    drop(restarted);
}

async fn delivery_throughput_to_a_local_receiver() {
    let receiver = start_receiver().await;
    let database = TestDatabase::fresh();
    let args = delivering(&receiver);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let process = spawn_with(&database.location, Some("tok_rate"), &args);
    let client = payments_client::with_token(&process.url, "tok_rate");
    let endpoint = webhook_endpoint(&client, &receiver.url("ok")).await;
    // Hold the receiver so a backlog of 1,000 builds, then release it and time the drain.
    receiver.close_gate();
    pings(&client, endpoint.id, 1_000).await;
    let started = std::time::Instant::now();
    receiver.open_gate();
    assert!(eventually(Duration::from_secs(120), || async { arrivals(&receiver).len() >= 1_000 }).await);
    let elapsed = started.elapsed();
    // A measurement for the record, not a target: speed belongs in benchmarks.
    eprintln!(
        "delivered 1000 notifications in {:.2} s: {:.0} per second (debug build, one endpoint, 8 in flight)",
        elapsed.as_secs_f64(),
        1_000.0 / elapsed.as_secs_f64()
    );
}

/// Clients that hang up in the middle of their requests leave nothing half-done: no session
/// inside a transaction (on PostgreSQL, a write abandoned with its request once left one, whose
/// row locks then held webhook deliveries and a graceful stop for good: see the store's
/// `to_the_end`), every notification delivered, a clean stop, a ledger that adds up.
async fn clients_that_hang_up_mid_request_leave_nothing_half_done() {
    let receiver = start_receiver().await;
    let database = TestDatabase::fresh();
    let args = delivering(&receiver);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut process = spawn_with(&database.location, Some("tok_hangup"), &args);
    let client = payments_client::with_token(&process.url, "tok_hangup");
    let balance = open_balance(&client, "GBP").await;
    let recipient = gb_recipient(&client).await;
    fund(&client, &balance, 10_000_000).await;
    let endpoint = webhook_endpoint(&client, &receiver.url("ok")).await;

    // 16 clients, each sending payments and pings and hanging up on each after 0.2 to 3 ms:
    // before, during or after its transaction.
    let raw = reqwest::Client::new();
    let hangers: Vec<_> = (0..16u64)
        .map(|client_number| {
            let (raw, url) = (raw.clone(), process.url.clone());
            tokio::spawn(async move {
                for i in 0..40u64 {
                    let wait = Duration::from_micros(200 + (client_number * 7919 + i * 104_729) % 2_800);
                    let (path, body) = if i % 2 == 0 {
                        let order = format!("hangup-{client_number}-{i}");
                        (
                            "/transactions",
                            serde_json::json!({"transaction_type": "payment", "amount": 100,
                            "balance_id": balance.id, "recipient_id": recipient.id, "order_id": order}),
                        )
                    } else {
                        ("/webhooks", serde_json::json!({"endpoint_id": endpoint.id}))
                    };
                    let _ = raw
                        .post(format!("{url}{path}"))
                        .bearer_auth("tok_hangup")
                        .json(&body)
                        .timeout(wait)
                        .send()
                        .await;
                }
            })
        })
        .collect();
    for hanger in hangers {
        hanger.await.unwrap();
    }

    // The sandbox goes on: pings made now are all delivered, with whatever the abandoned
    // requests left due before them.
    let ids = pings(&client, endpoint.id, 20).await;
    assert!(
        eventually(Duration::from_secs(30), || {
            let counts = arrivals(&receiver);
            let all = ids.iter().all(|id| counts.contains_key(id));
            async move { all }
        })
        .await,
        "every ping after the hang-ups is delivered"
    );
    let notifications = client.list_webhooks().limit(limit(100)).send().await.unwrap().into_inner();
    assert!(
        eventually(Duration::from_secs(30), || {
            let counts = arrivals(&receiver);
            let all = notifications.iter().all(|n| counts.contains_key(&n.id.to_string()));
            async move { all }
        })
        .await,
        "what the abandoned pings made is delivered too"
    );
    if database.location.starts_with("postgres://") {
        let connection = payments_tests::database::connect_postgres(&database.location).await;
        let open: i64 = connection
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        assert_eq!(open, 0, "no session is left inside a transaction");
    }
    process.signal("-TERM");
    assert!(process.wait(Duration::from_secs(15)).success(), "a graceful stop finishes");
    assert_ledger_reconciles(&database.location).await;
}
