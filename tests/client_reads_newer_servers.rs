//! The versioning rule ("Versions" in the document), held on the generated client: a server of a
//! later minor version may answer properties, enum values and event names this client does not
//! know, and the client reads the response all the same — an unknown property ignored, an
//! unknown value as its enum's `Unknown` — rather than fail it. `Unknown` is never sent.

use axum::Json;
use axum::routing::get;
use payments_client::types;
use serde_json::json;

/// A transaction as a server of a later minor version could answer it: a status, a payment
/// method and a property this client does not know.
fn newer_transaction(id: &str, status: &str) -> serde_json::Value {
    json!({
        "id": id, "amount": 1000, "fees": 20, "currency": "GBP", "to_currency": "GBP", "to_amount": 1000,
        "balance_id": "5d9f8a2e-58a4-4f4b-9b8e-2f0f6f1f1a01", "virtual_account_id": null, "order_id": null,
        "payment_reference": null, "status": status, "failure_reason": null, "transaction_type": "payment",
        "payment_method": "wallet", "recipient": null, "exchange_rate": null, "reference": null, "payer_name": null,
        "created": "2026-11-25T10:00:00.000Z", "settlement_date": "2026-11-26"
    })
}

#[tokio::test]
async fn a_response_with_values_this_client_does_not_know_is_read_not_refused() {
    let listed = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = listed.clone();
    let app = axum::Router::new()
        .route(
            "/transactions",
            get(move || async move {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Json(json!([
                    newer_transaction("0b8c9a4e-1f4e-4c3a-9a55-6f0e0e7d2b11", "on_hold"),
                    newer_transaction("0b8c9a4e-1f4e-4c3a-9a55-6f0e0e7d2b12", "processed"),
                ]))
            }),
        )
        .route(
            "/transactions/{id}",
            get(|| async { Json(newer_transaction("0b8c9a4e-1f4e-4c3a-9a55-6f0e0e7d2b11", "on_hold")) }),
        )
        .route(
            "/webhooks",
            get(|| async {
                Json(json!([{
                    "id": "7f3c1d2e-0a4b-4c5d-8e6f-708192a3b4c5",
                    "endpoint_id": "8a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
                    "event": "transaction.on_hold",
                    "created": "2026-11-25T10:00:00.000Z",
                    "data": {"id": "0b8c9a4e-1f4e-4c3a-9a55-6f0e0e7d2b11"},
                    "response_code": 200,
                    "retry_count": 0,
                    "status": "delivered",
                    "next_attempt": null
                }]))
            }),
        );
    let addr = payments_tests::serve(app).await;
    let client = payments_client::with_token(&format!("http://{addr}"), "tok_any");

    let page = client.list_transactions().send().await.expect("a page with an unknown status is read").into_inner();
    assert_eq!(page.len(), 2, "one unknown status does not fail the page");
    assert_eq!(page[0].status, types::TransactionStatus::Unknown);
    assert_eq!(page[0].payment_method, types::PaymentMethod::Unknown);
    assert_eq!(page[1].status, types::TransactionStatus::Processed);
    let one = client.get_transaction().id(page[0].id).send().await.expect("read").into_inner();
    assert_eq!((one.status, one.amount.get()), (types::TransactionStatus::Unknown, 1000));
    assert_eq!(one.status.to_string(), "<unknown>");
    let notifications = client.list_webhooks().send().await.expect("an unknown event name is read").into_inner();
    assert_eq!(notifications[0].event, types::WebhookEvent::Unknown);

    // Never sent: the client refuses to put it in a request, which never leaves.
    let before = listed.load(std::sync::atomic::Ordering::SeqCst);
    let sent = client.list_transactions().status(types::TransactionStatus::Unknown).send().await;
    assert!(sent.is_err(), "{sent:?}");
    assert_eq!(listed.load(std::sync::atomic::Ordering::SeqCst), before, "nothing reached the server");
    assert!(serde_json::to_value(types::TransactionStatus::Unknown).is_err());
}
