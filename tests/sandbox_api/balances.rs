//! Balances: conversion into the default currency, and a GBP balance's own account.

use std::collections::BTreeSet;

use payments_client::types;
use payments_tests::sandbox::*;
use payments_tests::{assert_error, raw};
use uuid::Uuid;

use super::fixtures::*;

payments_tests::on_both_backends! {
    #[tokio::test] balances_convert_into_the_default_currency_and_gbp_ones_have_an_address,
    #[tokio::test] a_bank_transfer_to_a_gbp_balances_address_credits_it_as_a_collection,
}

async fn balances_convert_into_the_default_currency_and_gbp_ones_have_an_address() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let gbp = open_balance(&client, "GBP").await;
    assert_eq!(gbp.name.as_str(), "GBP balance");
    let address = &gbp.addresses[0];
    assert_eq!(address.supported_channels, ["FP", "BACS", "CHAPS"]);
    assert_eq!(address.details.sort_code.len(), 6);
    assert_eq!(address.details.account_number.len(), 8);
    let named = client
        .create_balance()
        .body(types::BalanceCreate::builder().currency(code::<types::CurrencyCode>("NGN")).name(Some(code("Lagos"))))
        .send()
        .await
        .unwrap();
    assert_eq!(named.status().as_u16(), 201);
    let ngn = named.into_inner();
    assert!(ngn.addresses.is_empty());
    fund(&client, &ngn, 1_000_000).await; // ₦10,000.00
    let ngn = client.get_balance().id(ngn.id).send().await.unwrap().into_inner();
    assert_eq!((ngn.balance, ngn.default_currency.as_str()), (1_000_000, "GBP"));
    // 10,000 NGN at the mid-market 0.790/1550 GBP per NGN is £5.09 (rounded down).
    assert_eq!(ngn.default_currency_balance, 509);

    let renamed = client
        .update_balance()
        .id(gbp.id)
        .body(types::BalanceUpdate::builder().name("Payroll".to_string()))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!((renamed.name.as_str(), renamed.addresses[0].details.account_name.as_str()), ("Payroll", "Payroll"));
    assert_eq!(renamed.addresses[0].details.account_number, gbp.addresses[0].details.account_number);
    let only_ngn =
        client.list_balances().currency(code::<types::CurrencyCode>("NGN")).send().await.unwrap().into_inner();
    assert_eq!(only_ngn.iter().map(|b| b.id).collect::<Vec<_>>(), [ngn.id]);
    let all = client.list_balances().send().await.unwrap().into_inner();
    assert_eq!(all.iter().map(|b| b.id).collect::<Vec<_>>(), [ngn.id, gbp.id], "newest first");

    let unsupported = client
        .create_balance()
        .body(types::BalanceCreate::builder().currency(code::<types::CurrencyCode>("XYZ")))
        .send()
        .await;
    assert_refused(unsupported, 400, "not supported");
    assert_refused(client.get_balance().id(Uuid::new_v4()).send().await, 404, "balance");
    assert_eq!(client.list_balances().send().await.unwrap().into_inner().len(), 2);
}

async fn a_bank_transfer_to_a_gbp_balances_address_credits_it_as_a_collection() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let gbp = open_balance(&client, "GBP").await;
    webhook_endpoint(&client, "https://hooks.example/x").await;
    let transfer = |client: &payments_client::Client, id: Uuid, value: u64| {
        let client = client.clone();
        async move {
            let body = types::SimulateBalanceTransfer::builder()
                .amount(amount(value))
                .sender_name(code::<types::SimulateBalanceTransferSenderName>("Ada Lovelace"))
                .reference(Some(code("Invoice 12")));
            client.simulate_balance_transfer().id(id).body(body).send().await
        }
    };
    let sent = transfer(&client, gbp.id, 250_000).await.unwrap();
    assert_eq!(sent.status().as_u16(), 201);
    let collection = sent.into_inner();
    assert_eq!(
        (
            collection.transaction_type,
            collection.payment_method,
            collection.status,
            collection.amount.get(),
            collection.fees,
            collection.currency.as_str(),
            collection.balance_id,
            collection.payer_name.as_deref(),
            collection.reference.as_ref().map(|r| r.as_str()),
        ),
        (
            types::TransactionType::Collection,
            types::PaymentMethod::BankTransfer,
            types::TransactionStatus::Processed,
            250_000,
            0,
            "GBP",
            gbp.id,
            Some("Ada Lovelace"),
            Some("Invoice 12"),
        )
    );
    assert_eq!(balance_of(&client, gbp.id).await, 250_000);
    assert_eq!(client.get_transaction().id(collection.id).send().await.unwrap().into_inner(), collection);
    // Its event, as the endpoint is notified of it.
    let notified = client.list_webhooks().send().await.unwrap().into_inner();
    assert_eq!(notified.len(), 1);
    assert_eq!(notified[0].event.to_string(), "transaction.processed");
    assert_eq!(notified[0].data["id"], collection.id.to_string());

    // A balance without a bank address (not GBP) cannot be sent to; another tenant's balance and
    // an unknown one are not found; bad amounts and a missing sender are refused. None moves money.
    let ngn = open_balance(&client, "NGN").await;
    assert_refused(transfer(&client, ngn.id, 1_000).await, 409, "has no bank address");
    assert_refused(transfer(&sandbox.client(BOB), gbp.id, 1_000).await, 404, "balance");
    assert_refused(transfer(&client, Uuid::new_v4(), 1_000).await, 404, "balance");
    let url = format!("{}/sandbox/balances/{}/transfers", sandbox.url, gbp.id);
    let json = Some("application/json");
    for (body, needle) in [
        (serde_json::json!({"amount": 0, "sender_name": "Ada"}), "amount"),
        (serde_json::json!({"amount": -5, "sender_name": "Ada"}), "amount"),
        (serde_json::json!({"amount": "100", "sender_name": "Ada"}), "amount"),
        (serde_json::json!({"amount": 100}), "sender_name"),
        (serde_json::json!({"amount": 100, "sender_name": ""}), "sender_name"),
    ] {
        assert_error(&raw("POST", &url, Some(ALICE), json, body.to_string()).await, 400, needle);
    }
    assert_eq!(balance_of(&client, gbp.id).await, 250_000);
    assert_eq!(balance_of(&client, ngn.id).await, 0);
    let collections = tx_ids(client.list_transactions().transaction_type(types::TransactionType::Collection)).await;
    assert_eq!(collections, BTreeSet::from([collection.id]));
    assert_eq!(client.list_webhooks().send().await.unwrap().into_inner().len(), 1, "no other event");
}
