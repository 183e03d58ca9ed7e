//! Webhook delivery end to end: the sandbox posts to a real HTTPS receiver (certificate from a
//! test CA), every event kind arrives signed as the document says and verifies with the
//! receiver kit, failures are retried at the configured interval, a hanging receiver counts as a
//! failure, a tampered body does not verify, and notifications that are over are pruned after
//! the retention while those still being retried are kept.

use std::collections::BTreeSet;
use std::time::Duration;

use payments_client::types;
use payments_client::webhooks::{self, Event, Inbox, Verdict};
use payments_sandbox::{DeliveryOptions, TargetPolicy};
use payments_tests::receiver::{Receiver, start_receiver};
use payments_tests::sandbox::*;

payments_tests::on_both_backends! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)] every_event_arrives_signed_and_verifies_with_the_receiver_kit,
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)] a_receiver_that_fails_twice_sees_retry_counts_0_1_2_at_the_interval,
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)] a_ping_with_wait_answers_its_outcome_and_one_without_answers_at_once,
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)] a_receiver_that_hangs_past_ten_seconds_has_failed,
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)] a_dead_receiver_is_retried_24_times_then_discarded_and_slows_no_one,
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)] notifications_that_are_over_are_pruned_after_the_retention_and_retries_are_kept,
}

async fn sandbox_delivering_to(receiver: &Receiver) -> TestSandbox {
    sandbox_retrying_every(receiver, Duration::from_secs(1)).await
}

async fn sandbox_retrying_every(receiver: &Receiver, retry_interval: Duration) -> TestSandbox {
    let mut options = test_options();
    options.webhooks = DeliveryOptions {
        retry_interval,
        root_ca: Some(receiver.ca_file.clone()),
        policy: TargetPolicy { allow_loopback: true },
        ..DeliveryOptions::default()
    };
    start_sandbox_with(options).await
}

async fn every_event_arrives_signed_and_verifies_with_the_receiver_kit() {
    let receiver = start_receiver().await;
    let sandbox = sandbox_delivering_to(&receiver).await;
    let client = sandbox.client(ALICE);
    let endpoint = webhook_endpoint(&client, &receiver.url("ok")).await;
    make_every_event(&client).await;
    client.send_test_webhook().body(types::WebhookPing::builder().endpoint_id(endpoint.id)).send().await.unwrap();

    // make_every_event records 24 events of 18 kinds (some kinds more than once); with the ping, 25.
    assert!(
        eventually(Duration::from_secs(20), || async { receiver.received().len() >= 25 }).await,
        "25 notifications arrive"
    );
    let received = receiver.received();
    let mut inbox = Inbox::new(1_000);
    let mut kinds = BTreeSet::new();
    for delivery in &received {
        assert_eq!(delivery.retry_count, 0);
        let notification = webhooks::verify_and_parse(&[&endpoint.secret], &delivery.body, &delivery.signature)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&delivery.body)));
        // Deliveries run in parallel, so an older one may arrive after a newer one (Stale);
        // none arrives twice.
        assert_ne!(inbox.accept(&notification), Verdict::Duplicate);
        // The body is exactly {id, event, created, data}.
        let raw: serde_json::Value = serde_json::from_slice(&delivery.body).unwrap();
        assert_eq!(raw.as_object().unwrap().keys().collect::<Vec<_>>(), ["created", "data", "event", "id"]);
        match &notification.event {
            Event::Transaction(transaction) => {
                assert_eq!(format!("transaction.{}", transaction.status), notification.event_name);
            }
            Event::Ping(ping) => assert_eq!(ping.endpoint_id, endpoint.id),
            Event::Recipient(_) | Event::VirtualAccount(_) | Event::PaymentRequest(_) => {}
            Event::Unknown(data) => panic!("every event is known: {data}"),
        }
        kinds.insert(notification.event_name.clone());
        // A body changed by one byte does not verify.
        let mut tampered = delivery.body.clone();
        let last = tampered.len() - 2;
        tampered[last] ^= 1;
        assert!(webhooks::verify(&[&endpoint.secret], &tampered, &delivery.signature).is_err());
        // Nor does the right body under another secret.
        assert!(webhooks::verify(&["whsec_other"], &delivery.body, &delivery.signature).is_err());
    }
    assert_eq!(kinds.len(), 19, "every event kind: {kinds:?}");

    // Someone else's receiver, in another language, from the document's words alone: "the
    // lowercase hex HMAC-SHA512 of the raw body keyed with the endpoint's signing secret".
    let delivery = &received[0];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("body"), &delivery.body).unwrap();
    let python = std::process::Command::new("python3")
        .arg("-c")
        .arg("import hmac, hashlib, sys; body = open(sys.argv[2], 'rb').read(); print(hmac.new(sys.argv[1].encode(), body, hashlib.sha512).hexdigest())")
        .arg(&endpoint.secret)
        .arg(dir.path().join("body"))
        .output()
        .expect("python3 runs");
    assert_eq!(String::from_utf8(python.stdout).unwrap().trim(), delivery.signature);

    // The generated receiver (`payments_server::receiver`) takes every one of them at its own
    // URL, as the sandbox posted it: each reaches the method of its event, typed.
    let generated = received_by_the_generated_receiver(&received).await;
    let mut expected: Vec<(String, String)> = received
        .iter()
        .map(|d| serde_json::from_slice::<serde_json::Value>(&d.body).unwrap()["event"].as_str().unwrap().to_owned())
        .map(|event| (event.clone(), event))
        .collect();
    expected.sort();
    assert_eq!(generated, expected);

    // The stored notifications record the outcome.
    let stored = client.list_webhooks().endpoint_id(endpoint.id).limit(limit(100)).send().await.unwrap().into_inner();
    assert_eq!(stored.len(), 25);
    for webhook in stored {
        assert_eq!(
            (webhook.status, webhook.response_code, webhook.retry_count, webhook.next_attempt),
            (types::DeliveryStatus::Delivered, Some(200), 0, None)
        );
    }

    // A rotated secret signs from then on.
    let rotated = client.rotate_webhook_endpoint_secret().id(endpoint.id).send().await.unwrap().into_inner();
    client.send_test_webhook().body(types::WebhookPing::builder().endpoint_id(endpoint.id)).send().await.unwrap();
    assert!(eventually(Duration::from_secs(10), || async { receiver.received().len() >= 26 }).await);
    let last = receiver.received().pop().unwrap();
    assert!(webhooks::verify(&[&rotated.secret], &last.body, &last.signature).is_ok());
    assert!(webhooks::verify(&[&endpoint.secret], &last.body, &last.signature).is_err());
}

async fn a_receiver_that_fails_twice_sees_retry_counts_0_1_2_at_the_interval() {
    let receiver = start_receiver().await;
    let sandbox = sandbox_delivering_to(&receiver).await;
    let client = sandbox.client(ALICE);
    let endpoint = webhook_endpoint(&client, &receiver.url("flaky")).await;
    let ping = client
        .send_test_webhook()
        .body(types::WebhookPing::builder().endpoint_id(endpoint.id))
        .send()
        .await
        .unwrap()
        .into_inner();

    // After the first failure: failed, its code kept, a retry due.
    let get = || client.get_webhook().id(ping.id).send();
    assert!(
        eventually(Duration::from_secs(5), || async {
            get().await.unwrap().into_inner().status == types::DeliveryStatus::Failed
        })
        .await
    );
    let failed = get().await.unwrap().into_inner();
    assert_eq!((failed.response_code, failed.retry_count), (Some(500), 0));
    assert!(failed.next_attempt.is_some());

    assert!(
        eventually(Duration::from_secs(10), || async {
            get().await.unwrap().into_inner().status == types::DeliveryStatus::Delivered
        })
        .await
    );
    let delivered = get().await.unwrap().into_inner();
    assert_eq!((delivered.response_code, delivered.retry_count, delivered.next_attempt), (Some(200), 2, None));
    let attempts = receiver.received();
    assert_eq!(attempts.iter().map(|a| a.retry_count).collect::<Vec<_>>(), [0, 1, 2]);
    assert!(attempts.iter().all(|a| a.body == attempts[0].body), "a redelivery is the same notification");
    for pair in attempts.windows(2) {
        let gap = pair[1].at - pair[0].at;
        // Retries are aligned to whole multiples of the 1 s interval.
        assert!(gap > Duration::from_millis(50) && gap < Duration::from_millis(3_000), "gap {gap:?}");
    }
}

async fn a_ping_with_wait_answers_its_outcome_and_one_without_answers_at_once() {
    let receiver = start_receiver().await;
    let sandbox = sandbox_delivering_to(&receiver).await;
    let client = sandbox.client(ALICE);
    let ping = |endpoint: uuid::Uuid, wait: bool| {
        client.send_test_webhook().body(types::WebhookPing::builder().endpoint_id(endpoint).wait(wait)).send()
    };

    // A healthy endpoint: delivered, with the code it answered.
    let healthy = webhook_endpoint(&client, &receiver.url("ok")).await;
    let answer = ping(healthy.id, true).await.unwrap();
    assert_eq!(answer.status().as_u16(), 201);
    let delivered = answer.into_inner();
    assert_eq!(
        (delivered.status, delivered.response_code, delivered.next_attempt),
        (types::DeliveryStatus::Delivered, Some(200), None)
    );
    assert_eq!((delivered.event, delivered.endpoint_id), (types::WebhookEvent::Ping, healthy.id));
    assert_eq!(receiver.received().len(), 1, "posted once, before the answer");

    // A failing endpoint: failed, its code, and when the redelivery is due.
    let flaky = webhook_endpoint(&client, &receiver.url("flaky")).await;
    let failed = ping(flaky.id, true).await.unwrap().into_inner();
    assert_eq!(
        (failed.status, failed.response_code, failed.retry_count),
        (types::DeliveryStatus::Failed, Some(500), 0)
    );
    assert!(failed.next_attempt.is_some());

    // Without wait: at once, pending while the receiver holds the attempt; the outcome follows
    // on GET /webhooks/{id}.
    receiver.close_gate();
    let started = std::time::Instant::now();
    let pending = ping(healthy.id, false).await.unwrap().into_inner();
    assert_eq!(pending.status, types::DeliveryStatus::Pending);
    assert!(started.elapsed() < Duration::from_secs(2), "answered at once: {:?}", started.elapsed());
    receiver.open_gate();
    let get = || client.get_webhook().id(pending.id).send();
    assert!(
        eventually(Duration::from_secs(10), || async {
            get().await.unwrap().into_inner().status == types::DeliveryStatus::Delivered
        })
        .await
    );
}

async fn a_receiver_that_hangs_past_ten_seconds_has_failed() {
    let receiver = start_receiver().await;
    let sandbox = sandbox_delivering_to(&receiver).await;
    let client = sandbox.client(ALICE);
    let endpoint = webhook_endpoint(&client, &receiver.url("hang")).await;
    // Waited for, the ping answers before a 10-second client timeout would fire: still pending.
    let started = std::time::Instant::now();
    let ping = client
        .send_test_webhook()
        .body(types::WebhookPing::builder().endpoint_id(endpoint.id).wait(true))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(ping.status, types::DeliveryStatus::Pending);
    assert!(started.elapsed() < Duration::from_secs(10), "answered within 9 s: {:?}", started.elapsed());
    let get = || client.get_webhook().id(ping.id).send();
    assert!(
        eventually(Duration::from_secs(20), || async { get().await.unwrap().into_inner().retry_count == 1 }).await,
        "redelivered after the hanging attempt"
    );
    let after = get().await.unwrap().into_inner();
    assert_eq!(after.status, types::DeliveryStatus::Delivered);
    let attempts = receiver.received();
    assert_eq!(attempts.len(), 2);
    let gap = attempts[1].at - attempts[0].at;
    // Given up after 10 s, redelivered at the next whole second (the interval), give or take a
    // busy machine.
    assert!(gap >= Duration::from_secs(10) && gap < Duration::from_secs(14), "gave up after 10 s: {gap:?}");
}

async fn a_dead_receiver_is_retried_24_times_then_discarded_and_slows_no_one() {
    let receiver = start_receiver().await;
    // Retries every 300 ms: all 24 of them within seconds (the interval itself is another test's).
    let sandbox = sandbox_retrying_every(&receiver, Duration::from_millis(300)).await;
    let client = sandbox.client(ALICE);
    // Nothing listens on this port: every attempt is refused.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("https://localhost:{}/dead", closed.local_addr().unwrap().port());
    drop(closed);
    let dead = webhook_endpoint(&client, &dead_url).await;
    let healthy = webhook_endpoint(&client, &receiver.url("ok")).await;
    let ping = client
        .send_test_webhook()
        .body(types::WebhookPing::builder().endpoint_id(dead.id))
        .send()
        .await
        .unwrap()
        .into_inner();
    // Meanwhile the healthy endpoint gets its notifications at once.
    for _ in 0..20 {
        client.send_test_webhook().body(types::WebhookPing::builder().endpoint_id(healthy.id)).send().await.unwrap();
    }
    assert!(eventually(Duration::from_secs(5), || async { receiver.received().len() == 20 }).await);

    let get = || client.get_webhook().id(ping.id).send();
    assert!(
        eventually(Duration::from_secs(60), || async {
            get().await.unwrap().into_inner().status == types::DeliveryStatus::Discarded
        })
        .await,
        "discarded after the retries"
    );
    let discarded = get().await.unwrap().into_inner();
    assert_eq!((discarded.retry_count, discarded.response_code, discarded.next_attempt), (24, None, None));

    // Deleting an endpoint discards what was still due for it.
    let gone = webhook_endpoint(&client, &dead_url).await;
    let pending = client
        .send_test_webhook()
        .body(types::WebhookPing::builder().endpoint_id(gone.id))
        .send()
        .await
        .unwrap()
        .into_inner();
    client.delete_webhook_endpoint().id(gone.id).send().await.unwrap();
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let stopped = client.get_webhook().id(pending.id).send().await.unwrap().into_inner();
    assert_eq!(stopped.status, types::DeliveryStatus::Discarded);
    // Five intervals have passed: retries going on would have counted five; one may have raced
    // the deletion on a slow machine.
    assert!(stopped.retry_count <= 2, "retried after its endpoint was deleted: {}", stopped.retry_count);
}

async fn notifications_that_are_over_are_pruned_after_the_retention_and_retries_are_kept() {
    let receiver = start_receiver().await;
    let mut options = test_options();
    options.webhooks = DeliveryOptions {
        // The failed one's next attempt is an hour away: it is still being retried throughout.
        retry_interval: Duration::from_secs(3600),
        root_ca: Some(receiver.ca_file.clone()),
        policy: TargetPolicy { allow_loopback: true },
        retention: Duration::from_secs(1),
        ..DeliveryOptions::default()
    };
    let sandbox = start_sandbox_with(options).await;
    let client = sandbox.client(ALICE);
    let up = webhook_endpoint(&client, &receiver.url("ok")).await;
    let down = webhook_endpoint(&client, &receiver.url("down")).await;
    let ping = |endpoint: uuid::Uuid| {
        let client = client.clone();
        async move {
            let body = types::WebhookPing::builder().endpoint_id(endpoint);
            client.send_test_webhook().body(body).send().await.unwrap().into_inner().id
        }
    };
    let delivered = [ping(up.id).await, ping(up.id).await];
    let retried = ping(down.id).await;
    let status = |id: uuid::Uuid| {
        let client = client.clone();
        async move { client.get_webhook().id(id).send().await.map(|w| w.into_inner().status) }
    };
    // Delivered ones are pruned once a second old; the failed one stays, whatever its age.
    let pruned = eventually(Duration::from_secs(15), || async {
        let mut gone = true;
        for id in delivered {
            gone &= status(id).await.is_err();
        }
        gone
    })
    .await;
    assert!(pruned, "delivered notifications are pruned after the retention");
    assert_eq!(receiver.received().iter().filter(|r| r.path == "ok").count(), 2, "both were delivered first");
    for id in delivered {
        assert_refused(client.get_webhook().id(id).send().await, 404, "");
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(status(retried).await.unwrap(), types::DeliveryStatus::Failed, "still being retried: kept");
    let listed: Vec<uuid::Uuid> =
        client.list_webhooks().send().await.unwrap().into_inner().iter().map(|w| w.id).collect();
    assert_eq!(listed, [retried]);
}

/// Records which method each notification reached (the webhook's name) and the event its body
/// states.
#[derive(Default)]
struct Recorder(std::sync::Mutex<Vec<(String, String)>>);

macro_rules! record {
    ($($method:ident($body:ty) => $name:literal, $response:ident;)*) => {
        impl payments_server::receiver::Api for Recorder {
            $(
                async fn $method(
                    &self,
                    _: payments_server::runtime::RequestContext<()>,
                    signature: String,
                    retry_count: i64,
                    body: $body,
                ) -> Result<payments_server::receiver::$response, payments_server::runtime::ApiError> {
                    assert_eq!((signature.len(), retry_count), (128, 0));
                    self.0.lock().unwrap().push(($name.to_owned(), body.event.to_string()));
                    Ok(payments_server::receiver::$response::Ok)
                }
            )*
        }
    };
}

record! {
    webhook_ping(types::PingNotification) => "ping", WebhookPingResponse;
    webhook_recipient_created(types::RecipientNotification) => "recipient.created", WebhookRecipientCreatedResponse;
    webhook_recipient_deleted(types::RecipientNotification) => "recipient.deleted", WebhookRecipientDeletedResponse;
    webhook_transaction_initiated(types::TransactionNotification) => "transaction.initiated", WebhookTransactionInitiatedResponse;
    webhook_transaction_processing(types::TransactionNotification) => "transaction.processing", WebhookTransactionProcessingResponse;
    webhook_transaction_processed(types::TransactionNotification) => "transaction.processed", WebhookTransactionProcessedResponse;
    webhook_transaction_cancelled(types::TransactionNotification) => "transaction.cancelled", WebhookTransactionCancelledResponse;
    webhook_transaction_failed(types::TransactionNotification) => "transaction.failed", WebhookTransactionFailedResponse;
    webhook_transaction_refunded(types::TransactionNotification) => "transaction.refunded", WebhookTransactionRefundedResponse;
    webhook_transaction_pending(types::TransactionNotification) => "transaction.pending", WebhookTransactionPendingResponse;
    webhook_virtualaccount_initiated(types::VirtualAccountNotification) => "virtualaccount.initiated", WebhookVirtualaccountInitiatedResponse;
    webhook_virtualaccount_active(types::VirtualAccountNotification) => "virtualaccount.active", WebhookVirtualaccountActiveResponse;
    webhook_virtualaccount_blocked(types::VirtualAccountNotification) => "virtualaccount.blocked", WebhookVirtualaccountBlockedResponse;
    webhook_virtualaccount_closed(types::VirtualAccountNotification) => "virtualaccount.closed", WebhookVirtualaccountClosedResponse;
    webhook_paymentrequest_initiated(types::PaymentRequestNotification) => "paymentrequest.initiated", WebhookPaymentrequestInitiatedResponse;
    webhook_paymentrequest_processed(types::PaymentRequestNotification) => "paymentrequest.processed", WebhookPaymentrequestProcessedResponse;
    webhook_paymentrequest_failed(types::PaymentRequestNotification) => "paymentrequest.failed", WebhookPaymentrequestFailedResponse;
    webhook_paymentrequest_cancelled(types::PaymentRequestNotification) => "paymentrequest.cancelled", WebhookPaymentrequestCancelledResponse;
    webhook_paymentrequest_settled(types::PaymentRequestNotification) => "paymentrequest.settled", WebhookPaymentrequestSettledResponse;
}

/// Posts each delivery, body and headers as the sandbox sent them, to the generated receiver
/// served at its own URL on an ephemeral port; answers (webhook reached, event stated), sorted.
async fn received_by_the_generated_receiver(
    deliveries: &[payments_tests::receiver::Received],
) -> Vec<(String, String)> {
    let recorder = std::sync::Arc::new(Recorder::default());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    let router = payments_server::receiver::router(recorder.clone());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let http = reqwest::Client::new();
    for delivery in deliveries {
        let response = http
            .post(&url)
            .header("content-type", "application/json")
            .header("x-service-signature", &delivery.signature)
            .header("x-service-retry-count", delivery.retry_count.to_string())
            .body(delivery.body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200, "{}", response.text().await.unwrap());
    }
    let mut reached = recorder.0.lock().unwrap().clone();
    reached.sort();
    reached
}
