//! Events: every state change records its event.

use std::collections::BTreeSet;

use payments_client::types;
use payments_tests::sandbox::*;
use uuid::Uuid;

payments_tests::on_both_backends! {
    #[tokio::test] every_state_change_records_its_event,
}

async fn every_state_change_records_its_event() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    // A catch-all endpoint makes recorded events visible as stored notifications.
    let endpoint = client
        .create_webhook_endpoint()
        .body(
            types::WebhookEndpointCreate::builder()
                .url(code::<types::WebhookEndpointCreateUrl>("https://hooks.example/all")),
        )
        .send()
        .await
        .unwrap()
        .into_inner();
    assert!(endpoint.secret.starts_with("whsec_") && endpoint.secret.len() == 70);
    let subscribed = client
        .create_webhook_endpoint()
        .body(
            types::WebhookEndpointCreate::builder()
                .url(code::<types::WebhookEndpointCreateUrl>("https://hooks.example/failures"))
                .events(Some(vec![types::WebhookEvent::TransactionFailed])),
        )
        .send()
        .await
        .unwrap()
        .into_inner();

    make_every_event(&client).await;
    let ping =
        client.send_test_webhook().body(types::WebhookPing::builder().endpoint_id(endpoint.id)).send().await.unwrap();
    assert_eq!(ping.status().as_u16(), 201);
    let ping = ping.into_inner();
    assert_eq!(ping.data["endpoint_id"], endpoint.id.to_string());

    // Page through the stored notifications of the catch-all endpoint.
    let mut stored = vec![];
    let mut after = None;
    loop {
        let mut request = client.list_webhooks().endpoint_id(endpoint.id).limit(limit(7));
        if let Some(id) = after {
            request = request.starting_after(id);
        }
        let page = request.send().await.unwrap().into_inner();
        after = page.last().map(|w| w.id);
        let done = page.len() < 7;
        stored.extend(page);
        if done {
            break;
        }
    }
    let events: BTreeSet<String> = stored.iter().map(|w| w.event.to_string()).collect();
    let every: BTreeSet<String> = [
        "ping",
        "recipient.created",
        "recipient.deleted",
        "transaction.initiated",
        "transaction.processing",
        "transaction.processed",
        "transaction.cancelled",
        "transaction.failed",
        "transaction.refunded",
        "transaction.pending",
        "virtualaccount.initiated",
        "virtualaccount.active",
        "virtualaccount.blocked",
        "virtualaccount.closed",
        "paymentrequest.initiated",
        "paymentrequest.processed",
        "paymentrequest.failed",
        "paymentrequest.cancelled",
        "paymentrequest.settled",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(events, every, "all 19 events recorded");
    for webhook in &stored {
        let event = webhook.event.to_string();
        if let Some(status) = event.strip_prefix("transaction.") {
            assert_eq!(webhook.data["status"], status, "a transaction event carries the transaction in that status");
        }
        if event.starts_with("virtualaccount.") && event != "virtualaccount.initiated" {
            assert_eq!(webhook.data["status"], event.trim_start_matches("virtualaccount."));
        }
        assert_eq!(webhook.endpoint_id, endpoint.id);
        assert_eq!(client.get_webhook().id(webhook.id).send().await.unwrap().into_inner().id, webhook.id);
    }
    // The subscribed endpoint got only its event; filters by time work.
    let failures = client.list_webhooks().endpoint_id(subscribed.id).send().await.unwrap().into_inner();
    assert_eq!(failures.iter().map(|w| w.event.to_string()).collect::<Vec<_>>(), ["transaction.failed"]);
    let newest = stored[0].created;
    let since = client.list_webhooks().from_datetime(newest).limit(limit(100)).send().await.unwrap().into_inner();
    assert!(since.iter().all(|w| w.created >= newest) && !since.is_empty());
    let before = client.list_webhooks().to_datetime(newest).limit(limit(100)).send().await.unwrap().into_inner();
    assert!(before.iter().all(|w| w.created < newest));
    assert_refused(client.get_webhook().id(Uuid::new_v4()).send().await, 404, "webhook");
}
