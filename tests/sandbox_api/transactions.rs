//! Transactions: conversion, fees, the rail's table of moves, and the rails moving on by themselves.

use std::collections::BTreeSet;
use std::time::Duration;

use payments_client::types;
use payments_tests::sandbox::*;
use payments_tests::{assert_error, raw};
use uuid::Uuid;

use super::fixtures::*;

payments_tests::on_both_backends! {
    #[tokio::test] payments_convert_charge_fees_and_follow_the_rail,
    #[tokio::test] the_rails_move_on_by_themselves,
}

async fn payments_convert_charge_fees_and_follow_the_rail() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let gbp = open_balance(&client, "GBP").await;
    fund(&client, &gbp, 100_000).await;
    let nigerian = create_recipient(&client, "NG", ng_account("0123456789", "Adaeze Nwosu")).await.unwrap();
    let british = gb_recipient(&client).await;

    // GBP → NGN: the rate is the mid-market rate less 0.5%, and to_amount is rounded down.
    let converted = client
        .create_transaction()
        .body(
            payment(gbp.id, nigerian.id, 10_000).order_id(Some(code("order-1"))).reference(Some(code("Rent November"))),
        )
        .send()
        .await
        .unwrap()
        .into_inner();
    let rate = converted.exchange_rate.clone().expect("a conversion has a rate");
    assert_eq!(rate.single_rate_decimal.as_str(), "1962.02531646"); // 1550 / 0.79, 12 digits
    assert_eq!(rate.rate_decimal.as_str(), "1952.21518987"); // less 0.5%
    assert_eq!((rate.single_rate.get(), rate.rate.get()), (1_962_025_316, 1_952_215_190)); // six decimals
    assert_eq!(converted.to_amount.get(), 19_522_151); // £100.00 × 1952.21518987 → ₦195,221.51
    assert_eq!((converted.fees, converted.currency.as_str(), converted.to_currency.as_str()), (20, "GBP", "NGN"));
    assert_eq!(converted.status, types::TransactionStatus::Initiated);
    assert_eq!(converted.payment_reference.as_deref().map(|r| r.as_str()), Some("Rent November"));
    assert_eq!(converted.recipient.as_ref().map(|r| r.id), Some(nigerian.id));
    assert_eq!(balance_of(&client, gbp.id).await, 100_000 - 10_020);

    // to_amount instead: the smallest amount that delivers it.
    let exact = client
        .create_transaction()
        .body(
            types::TransactionCreate::builder()
                .transaction_type(types::TransactionCreateTransactionType::Payment)
                .to_amount(Some(amount(1_000_000)))
                .balance_id(gbp.id)
                .recipient_id(nigerian.id),
        )
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(exact.to_amount.get(), 1_000_000);
    assert_eq!(exact.amount.get(), 513); // ₦10,000 costs £5.13 at this rate
    assert_eq!(balance_of(&client, gbp.id).await, 100_000 - 10_020 - 533);

    // Same currency: no rate, the recipient's default reference used when none is given.
    let domestic =
        client.create_transaction().body(payment(gbp.id, british.id, 5_000)).send().await.unwrap().into_inner();
    assert_eq!((domestic.exchange_rate, domestic.to_amount.get()), (None, 5_000));
    let held = 100_000 - 10_020 - 533 - 5_020;
    assert_eq!(balance_of(&client, gbp.id).await, held);

    // The rail: initiated → processing → processed, one step per advance.
    let advanced = client.advance_sandbox().send().await.unwrap().into_inner();
    assert_eq!(advanced.transactions_advanced, 3);
    assert_eq!(
        client.get_transaction().id(converted.id).send().await.unwrap().into_inner().status,
        types::TransactionStatus::Processing
    );
    client.advance_sandbox().send().await.unwrap();
    assert_eq!(
        client.get_transaction().id(converted.id).send().await.unwrap().into_inner().status,
        types::TransactionStatus::Processed
    );
    assert_eq!(balance_of(&client, gbp.id).await, held, "settling moves no more money");

    // A refund returns amount and fees; the rail's table is enforced.
    let status = |id: Uuid, to: types::SimulateTransactionStatusStatus, reason: Option<&str>| {
        let request = client
            .simulate_transaction_status()
            .id(id)
            .body(types::SimulateTransactionStatus::builder().status(to).failure_reason(reason.map(code)));
        async move { request.send().await.map(|r| r.into_inner()) }
    };
    use types::SimulateTransactionStatusStatus as To;
    let refunded = status(domestic.id, To::Refunded, None).await.unwrap();
    assert_eq!(refunded.status, types::TransactionStatus::Refunded);
    assert_eq!(balance_of(&client, gbp.id).await, held + 5_020);
    assert_refused(status(domestic.id, To::Processing, None).await, 409, "refunded and cannot become processing");

    let failing =
        client.create_transaction().body(payment(gbp.id, british.id, 1_000)).send().await.unwrap().into_inner();
    assert_refused(status(failing.id, To::Processed, None).await, 409, "initiated and cannot become processed");
    assert_eq!(status(failing.id, To::Pending, None).await.unwrap().status, types::TransactionStatus::Pending);
    assert_eq!(status(failing.id, To::Processing, None).await.unwrap().status, types::TransactionStatus::Processing);
    assert_refused(status(failing.id, To::Failed, None).await, 400, "failure_reason is required");
    assert_refused(status(failing.id, To::Processed, Some("no")).await, 400, "only allowed with status failed");
    let before = balance_of(&client, gbp.id).await;
    let failed = status(failing.id, To::Failed, Some("Account closed")).await.unwrap();
    assert_eq!(
        (failed.status, failed.failure_reason.as_deref()),
        (types::TransactionStatus::Failed, Some("Account closed"))
    );
    assert_eq!(balance_of(&client, gbp.id).await, before + 1_020);
    let cancelled =
        client.create_transaction().body(payment(gbp.id, british.id, 1_000)).send().await.unwrap().into_inner();
    assert_eq!(status(cancelled.id, To::Cancelled, None).await.unwrap().status, types::TransactionStatus::Cancelled);
    assert_eq!(balance_of(&client, gbp.id).await, before + 1_020);
    let collection = client
        .list_transactions()
        .transaction_type(types::TransactionType::Collection)
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_refused(status(collection[0].id, To::Refunded, None).await, 409, "only payments");

    // Refusals change nothing.
    let held = balance_of(&client, gbp.id).await;
    assert_refused(
        client.create_transaction().body(payment(gbp.id, british.id, 10_000_000)).send().await,
        400,
        "insufficient funds",
    );
    let both = payment(gbp.id, british.id, 100).to_amount(Some(amount(100)));
    assert_refused(client.create_transaction().body(both).send().await, 400, "exactly one of amount and to_amount");
    let neither = payment(gbp.id, british.id, 100).amount(None);
    assert_refused(client.create_transaction().body(neither).send().await, 400, "exactly one of amount and to_amount");
    assert_refused(
        client.create_transaction().body(payment(Uuid::new_v4(), british.id, 100)).send().await,
        404,
        "balance_id",
    );
    assert_refused(
        client.create_transaction().body(payment(gbp.id, Uuid::new_v4(), 100)).send().await,
        404,
        "recipient_id",
    );
    let gone = create_recipient(&client, "NG", ng_account("0000000001", "NGOZI SMITH")).await.unwrap();
    client.delete_recipient().id(gone.id).send().await.unwrap();
    assert_refused(client.create_transaction().body(payment(gbp.id, gone.id, 100)).send().await, 404, "recipient_id");
    let reused = payment(gbp.id, british.id, 1).order_id(Some(code("order-1")));
    assert_refused(client.create_transaction().body(reused).send().await, 409, "order-1");
    let replayed =
        payment(gbp.id, nigerian.id, 10_000).order_id(Some(code("order-1"))).reference(Some(code("Rent November")));
    assert_eq!(client.create_transaction().body(replayed).send().await.unwrap().into_inner().id, converted.id);
    assert_eq!(balance_of(&client, gbp.id).await, held);

    // INR balances cannot convert (exchange_from is false).
    let inr = open_balance(&client, "INR").await;
    let account = client
        .create_virtual_account()
        .body(types::VirtualAccountCreate::builder().settlement_balance_id(Some(inr.id)))
        .send()
        .await
        .unwrap()
        .into_inner();
    client.advance_sandbox().send().await.unwrap();
    client
        .simulate_inbound_transfer()
        .id(account.id)
        .body(types::SimulateInboundTransfer::builder().amount(amount(500_000)))
        .send()
        .await
        .unwrap();
    assert_refused(
        client.create_transaction().body(payment(inr.id, british.id, 100)).send().await,
        400,
        "exchange_from",
    );

    // Every filter of GET /transactions.
    let set = |ids: &[Uuid]| ids.iter().copied().collect::<BTreeSet<_>>();
    assert_eq!(tx_ids(client.list_transactions().order_id("order-1")).await, set(&[converted.id]));
    assert_eq!(tx_ids(client.list_transactions().recipient_id(nigerian.id)).await, set(&[converted.id, exact.id]));
    assert_eq!(
        tx_ids(client.list_transactions().recipient_country(code::<types::CountryCode>("NG"))).await,
        set(&[converted.id, exact.id])
    );
    assert_eq!(
        tx_ids(client.list_transactions().to_currency(code::<types::CurrencyCode>("NGN"))).await,
        set(&[converted.id, exact.id])
    );
    assert_eq!(tx_ids(client.list_transactions().currency(code::<types::CurrencyCode>("INR"))).await.len(), 1);
    assert_eq!(tx_ids(client.list_transactions().virtual_account_id(account.id)).await.len(), 1);
    assert_eq!(
        tx_ids(client.list_transactions().balance_id(inr.id).transaction_type(types::TransactionType::Deposit))
            .await
            .len(),
        1
    );
    assert_eq!(tx_ids(client.list_transactions().status(types::TransactionStatus::Failed)).await, set(&[failing.id]));
    assert_eq!(
        tx_ids(client.list_transactions().status(types::TransactionStatus::Refunded)).await,
        set(&[domestic.id])
    );
    assert_eq!(tx_ids(client.list_transactions().search("rent NOVEMBER")).await, set(&[converted.id]));
    assert_eq!(tx_ids(client.list_transactions().search("nwosu")).await, set(&[converted.id, exact.id]));
    // A parameter the document does not list is refused, naming it.
    let url = format!("{}/transactions?scheduled_payment={}", sandbox.url, Uuid::new_v4());
    assert_error(&raw("GET", &url, Some(ALICE), None, "").await, 400, "scheduled_payment");
    let all = client.list_transactions().limit(limit(100)).send().await.unwrap().into_inner();
    assert_eq!(all.len(), 7);
    let created = all.iter().find(|t| t.id == exact.id).unwrap().created;
    let since = tx_ids(client.list_transactions().from_datetime(created)).await;
    assert!(since.contains(&exact.id) && !since.contains(&converted.id));
    let until = tx_ids(client.list_transactions().to_datetime(created)).await;
    assert!(!until.contains(&exact.id) && until.contains(&converted.id));
    let first = client.list_transactions().limit(limit(3)).send().await.unwrap().into_inner();
    let next =
        client.list_transactions().limit(limit(100)).starting_after(first[2].id).send().await.unwrap().into_inner();
    assert_eq!(first.len() + next.len(), all.len());
    assert_eq!(
        first.iter().chain(&next).map(|t| t.id).collect::<Vec<_>>(),
        all.iter().map(|t| t.id).collect::<Vec<_>>()
    );
    assert_refused(client.get_transaction().id(Uuid::new_v4()).send().await, 404, "transaction");
    assert_ledger_reconciles(&sandbox.database).await;
}

async fn the_rails_move_on_by_themselves() {
    let mut options = test_options();
    options.rail_interval = Some(Duration::from_millis(200));
    let sandbox = start_sandbox_with(options).await;
    let client = sandbox.client(ALICE);
    let (gbp, recipient) = funded_with_recipient(&client, "GBP", 10_000).await;
    let payment =
        client.create_transaction().body(payment(gbp.id, recipient.id, 1_000)).send().await.unwrap().into_inner();
    let settled = eventually(Duration::from_secs(5), || {
        let request = client.get_transaction().id(payment.id);
        async move { request.send().await.unwrap().into_inner().status == types::TransactionStatus::Processed }
    })
    .await;
    assert!(settled, "the payment reached processed without POST /sandbox/advance");
}
