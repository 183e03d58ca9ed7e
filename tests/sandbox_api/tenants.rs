//! Tenants: none sees or touches another's resources, and each is rate limited.

use std::time::Duration;

use payments_client::types;
use payments_tests::sandbox::*;
use payments_tests::{assert_error, raw};
use uuid::Uuid;

use super::fixtures::*;

payments_tests::on_both_backends! {
    #[tokio::test] a_tenant_never_sees_or_touches_another_tenants_resources,
    #[tokio::test] each_tenant_is_rate_limited_with_retry_after,
}

async fn a_tenant_never_sees_or_touches_another_tenants_resources() {
    let sandbox = start_sandbox().await;
    let alice = sandbox.client(ALICE);
    let bob = sandbox.client(BOB);
    let balance = open_balance(&alice, "NGN").await;
    fund(&alice, &balance, 10_000).await;
    let recipient = create_recipient(&alice, "NG", ng_account("0123456789", "Adaeze Nwosu")).await.unwrap();
    let payment =
        alice.create_transaction().body(payment(balance.id, recipient.id, 100)).send().await.unwrap().into_inner();
    let request = alice
        .create_payment_request()
        .body(
            types::PaymentRequestCreate::builder()
                .amount(amount(100))
                .currency(Some(code("NGN")))
                .reference_id(Some(code("shared-ref"))),
        )
        .send()
        .await
        .unwrap()
        .into_inner();
    let account = alice
        .create_virtual_account()
        .body(types::VirtualAccountCreate::builder().currency(Some(code("NGN"))))
        .send()
        .await
        .unwrap()
        .into_inner();
    let endpoint = alice
        .create_webhook_endpoint()
        .body(
            types::WebhookEndpointCreate::builder()
                .url(code::<types::WebhookEndpointCreateUrl>("https://hooks.example/alice")),
        )
        .send()
        .await
        .unwrap()
        .into_inner();

    // Every way in answers exactly as an unknown id does.
    let unknown = Uuid::new_v4();
    for id in [balance.id, unknown] {
        assert_refused(bob.get_balance().id(id).send().await, 404, &id.to_string());
        assert_refused(
            bob.update_balance().id(id).body(types::BalanceUpdate::builder().name("Mine".to_string())).send().await,
            404,
            "balance",
        );
        assert_refused(bob.create_transaction().body(payment_to(id, recipient.id)).send().await, 404, "balance_id");
        assert_refused(
            bob.create_payment_request()
                .body(types::PaymentRequestCreate::builder().amount(amount(1)).settlement_balance_id(Some(id)))
                .send()
                .await,
            404,
            "settlement_balance_id",
        );
    }
    assert_refused(bob.get_recipient().id(recipient.id).send().await, 404, "recipient");
    assert_refused(bob.delete_recipient().id(recipient.id).send().await, 404, "recipient");
    assert_refused(
        bob.update_recipient().id(recipient.id).body(types::RecipientUpdate::builder().alias(None)).send().await,
        404,
        "recipient",
    );
    assert_refused(bob.get_transaction().id(payment.id).send().await, 404, "transaction");
    assert_refused(
        bob.simulate_transaction_status()
            .id(payment.id)
            .body(types::SimulateTransactionStatus::builder().status(types::SimulateTransactionStatusStatus::Cancelled))
            .send()
            .await,
        404,
        "transaction",
    );
    assert_refused(bob.get_payment_request().id(request.id).send().await, 404, "payment request");
    assert_refused(bob.cancel_payment_request().id(request.id).send().await, 404, "payment request");
    assert_refused(bob.simulate_payment().id(request.id).send().await, 404, "payment request");
    assert_refused(bob.get_virtual_account().id(account.id).send().await, 404, "virtual account");
    assert_refused(bob.close_virtual_account().id(account.id).send().await, 404, "virtual account");
    assert_refused(
        bob.simulate_inbound_transfer()
            .id(account.id)
            .body(types::SimulateInboundTransfer::builder().amount(amount(1)))
            .send()
            .await,
        404,
        "virtual account",
    );
    assert_refused(bob.get_webhook_endpoint().id(endpoint.id).send().await, 404, "webhook endpoint");
    assert_refused(bob.rotate_webhook_endpoint_secret().id(endpoint.id).send().await, 404, "webhook endpoint");
    assert_refused(
        bob.send_test_webhook().body(types::WebhookPing::builder().endpoint_id(endpoint.id)).send().await,
        404,
        "webhook endpoint",
    );
    // Lists are empty, a page cursor from another tenant is as unknown as any, and Bob's own
    // reference_id space is his: the same id makes a new request for him.
    assert!(bob.list_balances().send().await.unwrap().into_inner().is_empty());
    assert!(bob.list_transactions().send().await.unwrap().into_inner().is_empty());
    assert!(bob.list_recipients().send().await.unwrap().into_inner().is_empty());
    assert!(bob.list_payment_requests().send().await.unwrap().into_inner().is_empty());
    assert!(bob.list_virtual_accounts().send().await.unwrap().into_inner().is_empty());
    assert!(bob.list_webhook_endpoints().send().await.unwrap().into_inner().is_empty());
    assert!(bob.list_webhooks().send().await.unwrap().into_inner().is_empty());
    assert_refused(bob.list_balances().starting_after(balance.id).send().await, 400, "starting_after");
    let bobs_balance = open_balance(&bob, "NGN").await;
    let bobs = bob
        .create_payment_request()
        .body(
            types::PaymentRequestCreate::builder()
                .amount(amount(100))
                .settlement_balance_id(Some(bobs_balance.id))
                .reference_id(Some(code("shared-ref"))),
        )
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_ne!(bobs.id, request.id);
    // Advancing Bob's rails leaves Alice's untouched.
    assert_eq!(bob.advance_sandbox().send().await.unwrap().into_inner().transactions_advanced, 0);
    assert_eq!(
        alice.get_virtual_account().id(account.id).send().await.unwrap().into_inner().status,
        types::VirtualAccountStatus::Initiated
    );
    assert_eq!(balance_of(&alice, balance.id).await, 10_000 - 100 - 5_000);
}

async fn each_tenant_is_rate_limited_with_retry_after() {
    let mut options = test_options();
    options.rate_limit = std::num::NonZeroU32::new(5);
    let sandbox = start_sandbox_with(options).await;
    let url = format!("{}/currencies", sandbox.url);
    // Forty at once: a burst of ten (twice the rate) passes, then five a second.
    let started = std::time::Instant::now();
    let responses = futures::future::join_all((0..40).map(|_| raw("GET", &url, Some(ALICE), None, ""))).await;
    let elapsed = started.elapsed().as_secs_f64();
    let passed = responses.iter().filter(|r| r.status == 200).count();
    let refused: Vec<_> = responses.iter().filter(|r| r.status == 429).collect();
    assert_eq!(passed + refused.len(), 40);
    assert!(passed >= 10, "the burst passes ({passed})");
    assert!((passed as f64) <= 10.0 + 5.0 * elapsed + 1.0, "{passed} passed in {elapsed:.2} s");
    let refused = refused.first().expect("requests beyond the allowance are refused");
    assert_error(refused, 429, "too many requests");
    let retry_after: u64 = refused.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(retry_after >= 1);
    // Another tenant has its own allowance.
    assert_eq!(raw("GET", &url, Some(BOB), None, "").await.status, 200);
    // And the allowance comes back.
    assert!(
        eventually(Duration::from_secs(3), || async { raw("GET", &url, Some(ALICE), None, "").await.status == 200 })
            .await
    );
}
