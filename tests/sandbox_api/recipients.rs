//! Recipients: a name checked against the name the bank holds for the account.

use payments_client::types;
use payments_tests::sandbox::*;

use super::fixtures::*;

payments_tests::on_both_backends! {
    #[tokio::test] a_recipient_name_is_checked_against_the_name_the_bank_holds,
}

async fn a_recipient_name_is_checked_against_the_name_the_bank_holds() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let check = |country: &str, account: types::builder::BankAccount| {
        let request = client.validate_recipient().body(
            types::RecipientValidate::builder().country(code::<types::CountryCode>(country)).bank_account(account),
        );
        async move { request.send().await.unwrap().into_inner() }
    };
    let gb = |name: Option<&str>| {
        let account = bank("GBP").sort_code(Some(code("040004"))).account_number(Some(code("12345678")));
        match name {
            Some(name) => account.account_name(Some(code(name))),
            None => account,
        }
    };
    // The bank holds "Isla Wilson" for 04-00-04 12345678.
    let held = check("GB", gb(None)).await;
    assert_eq!((held.account_name.as_deref(), held.name_check), (Some("Isla Wilson"), types::NameCheck::NotChecked));
    for (given, outcome) in [
        ("isla  WILSON", types::NameCheck::Match),
        ("Wilson Isla", types::NameCheck::CloseMatch),
        ("I. Wilson", types::NameCheck::CloseMatch),
        ("Isla Wilsen", types::NameCheck::CloseMatch),
        ("Ada Lovelace", types::NameCheck::NoMatch),
    ] {
        let answer = check("GB", gb(Some(given))).await;
        assert_eq!(answer.name_check, outcome, "{given}");
        assert_eq!(answer.account_name.as_deref(), Some("Isla Wilson"), "the bank's name, whatever was given");
    }
    // Where banks resolve no names, nothing is checked.
    let us = bank("USD")
        .account_name(Some(code("Grace Hopper")))
        .routing_number(Some(code("021000021")))
        .account_number(Some(code("123456789")));
    assert_eq!(check("US", us.clone()).await.name_check, types::NameCheck::NotChecked);

    // Creating: a match is saved as given, a close match in the bank's name, no match refused.
    let matched = create_recipient(&client, "GB", gb(Some("isla wilson"))).await.unwrap();
    assert_eq!(matched.bank_account.account_name.as_deref().map(|n| n.as_str()), Some("isla wilson"));
    let close = create_recipient(&client, "GB", gb(Some("Wilson, Isla"))).await.unwrap();
    assert_eq!(close.bank_account.account_name.as_deref().map(|n| n.as_str()), Some("Isla Wilson"));
    let (status, message) = create_recipient(&client, "GB", gb(Some("Ada Lovelace"))).await.unwrap_err();
    assert_eq!(status, 400);
    assert!(message.contains("does not match the name the bank holds"), "{message}");
    assert_eq!(client.list_recipients().send().await.unwrap().into_inner().len(), 2, "the refused one was not saved");
    assert!(create_recipient(&client, "US", us).await.is_ok());
}
