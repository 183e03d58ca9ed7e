//! Money adds up under concurrency: payments racing for one balance never overdraw it, lose an
//! update or create money, and concurrent retries with one order_id make one payment.

use payments_client::types;
use payments_tests::sandbox::*;

payments_tests::on_both_backends! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] a_hundred_simultaneous_payments_against_a_balance_that_covers_thirty,
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] concurrent_retries_with_one_order_id_make_one_payment,
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)] money_in_equals_money_out_plus_what_is_held,
}

async fn a_hundred_simultaneous_payments_against_a_balance_that_covers_thirty() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let balance = open_balance(&client, "GBP").await;
    let recipient = gb_recipient(&client).await;
    // Each payment takes 1,000 plus the 20 GBP fee; the balance covers exactly thirty.
    fund(&client, &balance, 30 * 1_020).await;

    let attempts = (0..100).map(|i| {
        let client = client.clone();
        let body = payment(balance.id, recipient.id, 1_000).order_id(Some(code(&format!("race-{i}"))));
        tokio::spawn(async move { client.create_transaction().body(body).send().await })
    });
    let results = futures::future::join_all(attempts).await;
    let mut succeeded = 0;
    let mut refused = 0;
    for result in results {
        match result.expect("the task ran") {
            Ok(created) => {
                assert_eq!(created.status().as_u16(), 201);
                succeeded += 1;
            }
            Err(error) => {
                let (status, message) = client_error::<()>(Err(error));
                assert_eq!(status, 400, "{message}");
                assert!(message.contains("insufficient funds"), "{message}");
                refused += 1;
            }
        }
    }
    assert_eq!((succeeded, refused), (30, 70));
    assert_eq!(balance_of(&client, balance.id).await, 0);

    // The API's own record agrees: thirty payments listed, the collection that funded them.
    let payments = client
        .list_transactions()
        .balance_id(balance.id)
        .transaction_type(types::TransactionType::Payment)
        .limit(limit(100))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(payments.len(), 30);
    assert!(payments.iter().all(|p| p.amount.get() == 1_000 && p.fees == 20));
    assert_ledger_reconciles(&sandbox.database).await;
}

async fn concurrent_retries_with_one_order_id_make_one_payment() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let balance = open_balance(&client, "GBP").await;
    let recipient = gb_recipient(&client).await;
    fund(&client, &balance, 10_000).await;

    let body = payment(balance.id, recipient.id, 2_500).order_id(Some(code("order-once")));
    let retries = (0..20).map(|_| {
        let client = client.clone();
        let body = body.clone();
        tokio::spawn(async move { client.create_transaction().body(body).send().await.expect("created or replayed") })
    });
    let responses = futures::future::join_all(retries).await;
    let ids: std::collections::BTreeSet<_> = responses
        .into_iter()
        .map(|r| {
            let response = r.expect("the task ran");
            assert_eq!(response.status().as_u16(), 201);
            response.into_inner().id
        })
        .collect();
    assert_eq!(ids.len(), 1, "every retry returns the one payment");
    assert_eq!(balance_of(&client, balance.id).await, 10_000 - 2_520);
    assert_ledger_reconciles(&sandbox.database).await;
}

async fn money_in_equals_money_out_plus_what_is_held() {
    // Mixed traffic on one balance: payments, failures that refund, deposits that credit.
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let gbp = open_balance(&client, "GBP").await;
    let recipient = gb_recipient(&client).await;
    fund(&client, &gbp, 50_000).await;
    let tasks = (0..40).map(|i| {
        let client = client.clone();
        tokio::spawn(async move {
            let created = client.create_transaction().body(payment(gbp.id, recipient.id, 700 + i)).send().await;
            let Ok(created) = created else { return };
            let created = created.into_inner();
            if i % 3 == 0 {
                let moved = client
                    .simulate_transaction_status()
                    .id(created.id)
                    .body(
                        types::SimulateTransactionStatus::builder()
                            .status(types::SimulateTransactionStatusStatus::Processing),
                    )
                    .send()
                    .await;
                assert!(moved.is_ok());
                client
                    .simulate_transaction_status()
                    .id(created.id)
                    .body(
                        types::SimulateTransactionStatus::builder()
                            .status(types::SimulateTransactionStatusStatus::Failed)
                            .failure_reason(Some(code("Account closed"))),
                    )
                    .send()
                    .await
                    .expect("failed");
            }
        })
    });
    futures::future::join_all(tasks).await;
    let all = client.list_transactions().balance_id(gbp.id).limit(limit(100)).send().await.unwrap().into_inner();
    let credited: i64 = all
        .iter()
        .filter(|t| t.transaction_type == types::TransactionType::Collection)
        .map(|t| t.amount.get() as i64)
        .sum();
    let spent: i64 = all
        .iter()
        .filter(|t| {
            t.transaction_type == types::TransactionType::Payment && t.status != types::TransactionStatus::Failed
        })
        .map(|t| t.amount.get() as i64 + t.fees)
        .sum();
    assert_eq!(credited, 50_000);
    assert_eq!(balance_of(&client, gbp.id).await, credited - spent);
    assert_ledger_reconciles(&sandbox.database).await;
}
