//! Virtual accounts: issued, activated, credited and closed.

use payments_client::types;
use payments_tests::sandbox::*;
use uuid::Uuid;

use super::fixtures::*;

payments_tests::on_both_backends! {
    #[tokio::test] virtual_accounts_are_issued_activated_credited_and_closed,
}

async fn virtual_accounts_are_issued_activated_credited_and_closed() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let ngn = open_balance(&client, "NGN").await;
    let create = |body: types::builder::VirtualAccountCreate| {
        let request = client.create_virtual_account().body(body);
        async move { request.send().await.map(|r| r.into_inner()) }
    };
    let account = create(
        types::VirtualAccountCreate::builder().currency(Some(code("NGN"))).reference_id(Some(code("customer-77"))),
    )
    .await
    .unwrap();
    assert_eq!((account.status, account.settlement_balance_id), (types::VirtualAccountStatus::Initiated, ngn.id));
    assert_eq!(account.account_name.as_str(), "NGN balance", "named after its balance by default");
    assert_eq!(account.supported_channels, ["NIP"]);
    assert_eq!(account.details.bank_name, "Sandbox Bank Nigeria");
    assert!(
        account.details.account_number.len() == 10
            && account.details.account_number.bytes().all(|b| b.is_ascii_digit())
    );
    let inr = open_balance(&client, "INR").await;
    let indian = create(
        types::VirtualAccountCreate::builder()
            .settlement_balance_id(Some(inr.id))
            .account_name(Some(code("Acme India"))),
    )
    .await
    .unwrap();
    assert_eq!(indian.supported_channels, ["NEFT", "RTGS", "IMPS"]);
    assert_eq!(indian.details.account_name, "Acme India");

    let replay = create(
        types::VirtualAccountCreate::builder().currency(Some(code("NGN"))).reference_id(Some(code("customer-77"))),
    )
    .await
    .unwrap();
    assert_eq!(replay.id, account.id);
    assert_refused(
        create(
            types::VirtualAccountCreate::builder().currency(Some(code("INR"))).reference_id(Some(code("customer-77"))),
        )
        .await,
        409,
        "customer-77",
    );
    open_balance(&client, "GBP").await;
    assert_refused(
        create(types::VirtualAccountCreate::builder().currency(Some(code("GBP")))).await,
        400,
        "does not support virtual accounts",
    );
    assert_refused(create(types::VirtualAccountCreate::builder()).await, 400, "give currency");

    // A transfer to an account that is not active is returned; once active it credits.
    let transfer = |id: Uuid, value: u64| {
        let request = client.simulate_inbound_transfer().id(id).body(
            types::SimulateInboundTransfer::builder()
                .amount(amount(value))
                .payer_name(Some(code("Wole Soyinka")))
                .reference(Some(code("Invoice 7"))),
        );
        async move { request.send().await.map(|r| r.into_inner()) }
    };
    assert_refused(transfer(account.id, 500).await, 409, "initiated");
    let advanced = client.advance_sandbox().send().await.unwrap().into_inner();
    assert_eq!(advanced.virtual_accounts_activated, 2);
    let deposit = transfer(account.id, 500_000).await.unwrap();
    assert_eq!(
        (deposit.transaction_type, deposit.status),
        (types::TransactionType::Deposit, types::TransactionStatus::Processed)
    );
    assert_eq!((deposit.virtual_account_id, deposit.balance_id), (Some(account.id), ngn.id));
    assert_eq!(deposit.payer_name.as_deref(), Some("Wole Soyinka"));
    assert_eq!(deposit.payment_method, types::PaymentMethod::BankTransfer);
    assert_eq!(balance_of(&client, ngn.id).await, 500_000);

    // The bank's statuses, their table, and what each means for transfers.
    let set_status = |id: Uuid, to: types::SimulateVirtualAccountStatusStatus| {
        let request = client
            .simulate_virtual_account_status()
            .id(id)
            .body(types::SimulateVirtualAccountStatus::builder().status(to));
        async move { request.send().await.map(|r| r.into_inner()) }
    };
    use types::SimulateVirtualAccountStatusStatus as To;
    assert_eq!(set_status(account.id, To::Blocked).await.unwrap().status, types::VirtualAccountStatus::Blocked);
    assert_refused(transfer(account.id, 500).await, 409, "blocked");
    assert_refused(set_status(account.id, To::Blocked).await, 409, "blocked and cannot become blocked");
    assert_eq!(set_status(account.id, To::Active).await.unwrap().status, types::VirtualAccountStatus::Active);
    let renamed = client
        .update_virtual_account()
        .id(account.id)
        .body(types::VirtualAccountUpdate::builder().account_name("Acme Trading".to_string()))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (renamed.account_name.as_str(), renamed.details.account_name.as_str()),
        ("Acme Trading", "Acme Trading")
    );

    // Filters and search.
    assert_eq!(va_ids(client.list_virtual_accounts()).await, [indian.id, account.id]);
    assert_eq!(va_ids(client.list_virtual_accounts().reference_id("customer-77")).await, [account.id]);
    assert_eq!(va_ids(client.list_virtual_accounts().currency(code::<types::CurrencyCode>("INR"))).await, [indian.id]);
    assert_eq!(va_ids(client.list_virtual_accounts().settlement_balance_id(ngn.id)).await, [account.id]);
    assert_eq!(va_ids(client.list_virtual_accounts().search("trading")).await, [account.id]);
    assert_eq!(va_ids(client.list_virtual_accounts().search(&account.details.account_number[2..])).await, [account.id]);
    assert_eq!(va_ids(client.list_virtual_accounts().search("india")).await, [indian.id]);

    // Closing is final.
    assert_eq!(
        client.close_virtual_account().id(account.id).send().await.unwrap().into_inner().result,
        types::ResultOkResult::Ok
    );
    assert_refused(client.close_virtual_account().id(account.id).send().await, 409, "closed");
    assert_refused(transfer(account.id, 500).await, 409, "closed");
    assert_refused(set_status(account.id, To::Active).await, 409, "closed");
    let rename_closed = client
        .update_virtual_account()
        .id(account.id)
        .body(types::VirtualAccountUpdate::builder().account_name("X".to_string()))
        .send()
        .await;
    assert_refused(rename_closed, 409, "closed");
    assert_eq!(va_ids(client.list_virtual_accounts().status(types::VirtualAccountStatus::Closed)).await, [account.id]);
    assert_eq!(
        client.get_virtual_account().id(account.id).send().await.unwrap().into_inner().status,
        types::VirtualAccountStatus::Closed
    );
    assert_eq!(balance_of(&client, ngn.id).await, 500_000);
}
