//! Three sandbox processes on one PostgreSQL database, as behind a load balancer: started at
//! the same moment on an empty database (migrations and tenants made once), 1,000 concurrent
//! payments spread over them against a balance that covers 300, one instance killed with
//! SIGKILL in the middle, then the invariants: no balance overdrawn, the ledger sums to each
//! balance, every acknowledged payment stored, an `order_id` made once whichever instance is
//! asked, every notification delivered (what the dead instance had claimed, by the others once
//! its lease ran out), and the rails moving each payment through each state once. And one
//! instance whose connections the server ends under load, which connects again and loses
//! nothing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use payments_client::types;
use payments_tests::database::{assert_ledger_reconciles, postgres};
use payments_tests::process::{Process, spawn_with};
use payments_tests::receiver::start_receiver;
use payments_tests::sandbox::*;
use uuid::Uuid;

const TOKENS: &str = "tok_shop,tok_other";
/// The funded balance covers this many payments of 1,000 plus the 20 fee.
const COVERED: u64 = 300;
const PAYMENTS: usize = 1_000;

/// Every notification to `endpoint`, read through the client's stream in pages of 100.
async fn all_notifications(client: &payments_client::Client, endpoint: Uuid) -> Vec<types::Webhook> {
    let notifications = client.list_webhooks_stream(move |list| list.endpoint_id(endpoint).limit(limit(100)));
    futures::TryStreamExt::try_collect(notifications).await.expect("every page of notifications")
}

async fn all_payments(client: &payments_client::Client, balance: Uuid) -> Vec<types::Transaction> {
    every_page(client, 100, move |list| list.balance_id(balance).transaction_type(types::TransactionType::Payment))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_instances_share_one_database_and_lose_nothing_when_one_is_killed() {
    let database = postgres().fresh_database();
    let receiver = start_receiver().await;
    let ca = receiver.ca_file.display().to_string();
    let args = [
        "--webhook-allow-loopback",
        "--webhook-root-ca",
        &ca,
        "--webhook-retry-interval",
        "1",
        "--webhook-lease",
        "11",
        "--rail-interval",
        "1",
    ];

    // Started at the same moment on an empty database: each migrates, makes the tenants, and
    // checks the ledger, racing the others.
    let mut instances: Vec<Process> = std::thread::scope(|scope| {
        let started: Vec<_> = (0..3).map(|_| scope.spawn(|| spawn_with(&database, Some(TOKENS), &args))).collect();
        started.into_iter().map(|s| s.join().expect("an instance starts")).collect()
    });
    let clients: Vec<_> = instances.iter().map(|p| payments_client::with_token(&p.url, "tok_shop")).collect();
    for process in &instances {
        assert!(!process.printed().contains("stored hashed"), "the tokens given were enough: no tenant was added");
    }
    // One tenant per token, whichever instance made it: what one instance creates, the others see.
    let balance = open_balance(&clients[0], "GBP").await;
    for client in &clients {
        assert_eq!(client.get_balance().id(balance.id).send().await.unwrap().into_inner().id, balance.id);
    }
    let recipient = gb_recipient(&clients[1]).await;
    fund(&clients[2], &balance, COVERED * 1_020).await;
    let endpoint = clients[0]
        .create_webhook_endpoint()
        .body(types::WebhookEndpointCreate::builder().url(receiver.url("ok")))
        .send()
        .await
        .expect("an endpoint")
        .into_inner();

    // Deliveries hang until the gate opens, so every instance holds claims when one is killed.
    receiver.close_gate();

    // 1,000 payments at once, round robin over the instances; the third dies after 100 answers.
    let acknowledged = Arc::new(Mutex::new(Vec::<types::Transaction>::new()));
    let refused = Arc::new(Mutex::new(0_usize));
    let tasks: Vec<_> = (0..PAYMENTS)
        .map(|i| {
            let client = clients[i % 3].clone();
            let (acknowledged, refused) = (acknowledged.clone(), refused.clone());
            let body = payment(balance.id, recipient.id, 1_000).order_id(Some(code(&format!("load-{i}"))));
            tokio::spawn(async move {
                match client.create_transaction().body(body).send().await {
                    Ok(created) => acknowledged.lock().unwrap().push(created.into_inner()),
                    Err(payments_client::Error::ErrorResponse(response)) => {
                        assert_eq!(response.status().as_u16(), 400, "refused as uncovered: {response:?}");
                        assert!(response.into_inner().message.contains("insufficient funds"));
                        *refused.lock().unwrap() += 1;
                    }
                    // The killed instance's requests: in doubt.
                    Err(_) => {}
                }
            })
        })
        .collect();
    assert!(
        eventually(Duration::from_secs(60), || {
            let answered = acknowledged.lock().unwrap().len() + *refused.lock().unwrap();
            async move { answered >= 100 }
        })
        .await,
        "payments are answered"
    );
    let mut victim = instances.pop().expect("three instances");
    victim.signal("-KILL");
    victim.wait(Duration::from_secs(10));
    for task in tasks {
        task.await.expect("a payment task ends");
    }
    let clients = &clients[..2];
    let acknowledged = acknowledged.lock().unwrap().clone();
    let refused = *refused.lock().unwrap();
    eprintln!(
        "{} acknowledged, {refused} refused, {} in doubt",
        acknowledged.len(),
        PAYMENTS - acknowledged.len() - refused
    );

    // Never overdrawn, and with two thirds of the load on the survivors, spent to the last payment.
    let stored = all_payments(&clients[0], balance.id).await;
    assert_eq!(stored.len() as u64, COVERED, "exactly the payments the balance covers were made");
    let ids: HashSet<Uuid> = stored.iter().map(|t| t.id).collect();
    assert!(acknowledged.iter().all(|t| ids.contains(&t.id)), "every acknowledged payment is stored");
    assert_eq!(balance_of(&clients[1], balance.id).await, 0);
    assert_ledger_reconciles(&database).await;

    // An order_id is made once, whichever instances are asked at once.
    let other = payments_client::with_token(&instances[0].url, "tok_other");
    let spare = open_balance(&other, "GBP").await;
    let other_recipient = gb_recipient(&other).await;
    fund(&other, &spare, 10_000).await;
    let repeats: Vec<_> = (0..10)
        .map(|i| {
            let client = payments_client::with_token(&instances[i % 2].url, "tok_other");
            let body = payment(spare.id, other_recipient.id, 500).order_id(Some(code("once")));
            tokio::spawn(async move { client.create_transaction().body(body).send().await.unwrap().into_inner().id })
        })
        .collect();
    let mut made = HashSet::new();
    for repeat in repeats {
        made.insert(repeat.await.unwrap());
    }
    assert_eq!(made.len(), 1, "one payment for one order_id");
    assert_eq!(balance_of(&other, spare.id).await, 10_000 - 520);

    // Every notification delivered: the gate opens, the survivors finish what they hold and,
    // once its lease runs out, what the dead instance held.
    receiver.open_gate();
    let delivered = eventually(Duration::from_secs(90), || {
        let client = clients[0].clone();
        async move {
            all_notifications(&client, endpoint.id).await.iter().all(|n| n.status == types::DeliveryStatus::Delivered)
        }
    })
    .await;
    let notifications = all_notifications(&clients[0], endpoint.id).await;
    let arrived: HashMap<String, usize> = receiver.received().into_iter().fold(HashMap::new(), |mut seen, r| {
        *seen.entry(r.notification_id).or_default() += 1;
        seen
    });
    let pending: Vec<_> = notifications.iter().filter(|n| n.status != types::DeliveryStatus::Delivered).collect();
    assert!(
        delivered,
        "{} of {} notifications undelivered, the first: {:?}",
        pending.len(),
        notifications.len(),
        pending.first()
    );
    for notification in &notifications {
        assert!(arrived.contains_key(&notification.id.to_string()), "{} arrived", notification.id);
    }
    let payment_events = notifications.iter().filter(|n| n.event == types::WebhookEvent::TransactionInitiated).count();
    assert_eq!(payment_events as u64, COVERED, "one transaction.initiated per payment made");

    // The rails (every instance runs them each second) move each payment once per state.
    let settled = eventually(Duration::from_secs(60), || {
        let client = clients[1].clone();
        async move {
            all_payments(&client, balance.id).await.iter().all(|t| {
                !matches!(t.status, types::TransactionStatus::Initiated | types::TransactionStatus::Processing)
            })
        }
    })
    .await;
    assert!(settled, "the rails settle every payment");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let mut per_payment: BTreeMap<(String, types::WebhookEvent), usize> = BTreeMap::new();
    for notification in all_notifications(&clients[0], endpoint.id).await {
        let id = notification.data.get("id").and_then(|v| v.as_str()).unwrap_or_default().to_owned();
        *per_payment.entry((id, notification.event)).or_default() += 1;
    }
    let twice: Vec<_> = per_payment.iter().filter(|(_, count)| **count > 1).collect();
    assert!(twice.is_empty(), "an event emitted more than once: {twice:?}");
    let duplicates = arrived.values().filter(|count| **count > 1).count();
    eprintln!(
        "{} notifications, {duplicates} posted more than once (at least once is the promise)",
        notifications.len()
    );
}

/// Ends every connection the sandbox holds to `database` from the server's side, as a restart
/// of the server or a failover does.
async fn end_connections(database: &str) -> u64 {
    let admin = payments_tests::database::connect_postgres(database).await;
    let ended: Vec<bool> = admin
        .query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .await
        .expect("connections ended")
        .iter()
        .map(|row| row.get(0))
        .collect();
    ended.into_iter().filter(|ended| *ended).count() as u64
}

/// The server ends the connections of an instance twice over, under writes: the instance
/// connects again for the writes asked after; a write caught with its connection gone answers
/// `500`, and its retry with the same `order_id` makes it, or finds it made if its commit got
/// through; every payment is kept once and the money adds up.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_instance_connects_again_when_the_server_ends_its_connections() {
    let database = postgres().fresh_database();
    let sandbox = start_sandbox_on(&database, test_options()).await;
    let client = sandbox.client(ALICE);
    let (balance, recipient) = funded_with_recipient(&client, "GBP", 1_000_000).await;
    let pay = |order: String| {
        let client = client.clone();
        let body = payment(balance.id, recipient.id, 100).order_id(Some(order.parse().unwrap()));
        async move { client.create_transaction().body(body).send().await.map(|made| made.into_inner().id) }
    };
    // Every statement a payment needs is prepared on the write connections by now.
    let mut orders = HashMap::new();
    for i in 0..5 {
        let order = format!("before-{i}");
        orders.insert(order.clone(), pay(order).await.expect("a payment"));
    }
    let mut statuses = BTreeMap::new();
    // Many rounds: a connection ended in the middle of a batch is a matter of timing (a lane that
    // reconnected mid-batch once let a balance move land outside its transaction, caught in about
    // half of the runs of 12 rounds).
    for round in 0..24 {
        let in_flight: Vec<_> = (0..20)
            .map(|i| {
                let order = format!("during-{round}-{i}");
                (order.clone(), tokio::spawn(pay(order)))
            })
            .collect();
        assert!(end_connections(&database).await > 0, "the sandbox's connections were found");
        let mut refused = vec![];
        for (order, payment) in in_flight {
            match payment.await.expect("the request task") {
                Ok(id) => drop(orders.insert(order, id)),
                Err(error) => {
                    // Not made (503), or its commit's outcome unknown (504): never a bare 500.
                    let status = error.status().map_or(0, |s| s.as_u16());
                    assert!([503, 504].contains(&status), "{order} refused as {status}: {error}");
                    *statuses.entry(status).or_insert(0) += 1;
                    refused.push(order)
                }
            }
        }
        // Once the loss is noticed, writes and reads go on.
        let mut made = 0;
        for i in 0..40 {
            let order = format!("after-{round}-{i}");
            if let Ok(id) = pay(order.clone()).await {
                orders.insert(order, id);
                made += 1;
            }
        }
        assert!(made >= 35, "round {round}: {made} of 40 payments made after the connections were ended");
        assert!(client.get_balance().id(balance.id).send().await.is_ok());
        for order in refused {
            let id = pay(order.clone()).await.unwrap_or_else(|e| panic!("{order} retried: {e}"));
            orders.insert(order, id);
        }
    }
    eprintln!("payments refused when their connection was ended, by status: {statuses:?}");
    // Each payment acknowledged is kept once, under its order id, and nothing else was kept.
    assert_ledger_reconciles(&database).await;
    let payments = all_payments(&client, balance.id).await;
    let kept: HashMap<String, Uuid> =
        payments.iter().map(|p| (p.order_id.as_ref().expect("an order id").to_string(), p.id)).collect();
    assert_eq!(kept.len(), payments.len(), "each order id once");
    assert_eq!(kept.len(), orders.len(), "no payment but those asked for");
    for (order, id) in &orders {
        assert_eq!(kept.get(order), Some(id), "{order}");
    }
    let spent: i64 = payments.iter().map(|p| i64::try_from(p.amount.get()).unwrap() + p.fees).sum();
    assert_eq!(balance_of(&client, balance.id).await, 1_000_000 - spent);
}
