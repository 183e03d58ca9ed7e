//! Requests themselves: text with control characters refused, lists going on after clients hang up.

use std::time::Duration;

use payments_client::types;
use payments_tests::sandbox::*;
use payments_tests::{assert_error, raw};

use super::fixtures::*;

payments_tests::on_both_backends! {
    #[tokio::test] text_holding_control_characters_is_refused_and_changes_nothing,
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)] lists_go_on_after_clients_hang_up_mid_page,
}

async fn text_holding_control_characters_is_refused_and_changes_nothing() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let (balance, recipient) = funded_with_recipient(&client, "GBP", 10_000).await;
    let json = Some("application/json");
    // In a body: JSON may carry U+0000 and friends, no name, reference or id may.
    for (control, code) in
        [('\u{0}', "U+0000"), ('\n', "U+000A"), ('\u{1b}', "U+001B"), ('\u{7f}', "U+007F"), ('\u{85}', "U+0085")]
    {
        let body = serde_json::json!({
            "transaction_type": "payment", "amount": 100, "balance_id": balance.id, "recipient_id": recipient.id,
            "order_id": format!("ctl-{control}-1"), "reference": "Invoice 42"
        });
        let refused = raw("POST", &format!("{}/transactions", sandbox.url), Some(ALICE), json, body.to_string()).await;
        assert_error(&refused, 400, &format!("order_id: text may not contain control characters (found {code})"));
    }
    let nested = serde_json::json!({
        "type": "personal", "country": "GB",
        "bank_account": {"currency": "GBP", "account_name": "Ada\u{0}", "sort_code": "040004", "account_number": "12345678"}
    });
    let refused = raw("POST", &format!("{}/recipients", sandbox.url), Some(ALICE), json, nested.to_string()).await;
    assert_error(&refused, 400, "bank_account.account_name: text may not contain control characters");
    let renamed = serde_json::json!({"name": "Main\tbalance"});
    let url = format!("{}/balances/{}", sandbox.url, balance.id);
    let refused = raw("PATCH", &url, Some(ALICE), json, renamed.to_string()).await;
    assert_error(&refused, 400, "name: text may not contain control characters (found U+0009)");
    // In a query: a search or a filter.
    for query in ["search=%C2%BE%00", "order_id=a%00b", "search=a%0Ab"] {
        let refused = raw("GET", &format!("{}/transactions?{query}", sandbox.url), Some(ALICE), None, "").await;
        assert_error(&refused, 400, "text may not contain control characters");
    }
    // Nothing was made or moved.
    assert_eq!(balance_of(&client, balance.id).await, 10_000);
    assert!(tx_ids(client.list_transactions().transaction_type(types::TransactionType::Payment)).await.is_empty());
    assert_eq!(client.list_recipients().send().await.unwrap().into_inner().len(), 1);
    assert_eq!(client.get_balance().id(balance.id).send().await.unwrap().into_inner().name, balance.name);
}

/// Clients that hang up while their list page is being read (a timeout, a closed tab, a load
/// generator stopping) leave nothing held: the pages asked for afterwards are all answered.
async fn lists_go_on_after_clients_hang_up_mid_page() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let (balance, recipient) = funded_with_recipient(&client, "GBP", 1_000_000).await;
    for i in 0..100 {
        let body = payment(balance.id, recipient.id, 100).reference(Some(code(&format!("Invoice {i}"))));
        client.create_transaction().body(body).send().await.expect("a payment");
    }
    let url = format!("{}/transactions?limit=100&search=nvoice", sandbox.url);
    // Each gives up after a different while, most of them while their page is being read.
    let hanging_up: Vec<_> = (0..300u64)
        .map(|i| {
            let url = url.clone();
            tokio::spawn(async move {
                let impatient =
                    reqwest::Client::builder().timeout(Duration::from_micros(50 + (i % 30) * 60)).build().unwrap();
                let _ = impatient.get(&url).bearer_auth(ALICE).send().await;
            })
        })
        .collect();
    for task in hanging_up {
        task.await.expect("the task");
    }
    for _ in 0..20 {
        let page = tokio::time::timeout(
            Duration::from_secs(10),
            client.list_transactions().search("nvoice").limit(limit(100)).send(),
        )
        .await
        .expect("a page within 10 s")
        .expect("a page");
        assert_eq!(page.into_inner().len(), 100);
    }
}
