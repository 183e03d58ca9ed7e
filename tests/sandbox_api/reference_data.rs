//! Reference data, and bank details validated as each country's banks validate them.

use std::collections::BTreeSet;

use payments_client::types;
use payments_tests::sandbox::*;

use super::fixtures::*;

payments_tests::on_both_backends! {
    #[tokio::test] reference_data_and_bank_details_are_validated_for_real,
}

async fn reference_data_and_bank_details_are_validated_for_real() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);

    let currencies = client.list_currencies().send().await.unwrap().into_inner();
    let ngn = currencies.iter().find(|c| c.currency_code.as_str() == "NGN").expect("NGN");
    assert!(ngn.supports_virtual_account && ngn.supports_payment_requests && ngn.exchange_from);
    assert_eq!(ngn.minor_units, 2);
    let countries = client.list_countries().send().await.unwrap().into_inner();
    let alpha2: BTreeSet<_> = countries.iter().map(|c| c.alpha2.as_str().to_owned()).collect();
    for country in ["GB", "NG", "IN", "US", "DE", "FR", "IE"] {
        assert!(alpha2.contains(country), "{country} is listed");
    }

    let fields = |country: &str, currency: &str| {
        let request = client.list_bank_fields().country(code::<types::CountryCode>(country)).currency(code::<
            types::CurrencyCode,
        >(
            currency
        ));
        async move { request.send().await.map(|r| r.into_inner().into_iter().map(|f| f.name).collect::<Vec<_>>()) }
    };
    assert_eq!(fields("GB", "GBP").await.unwrap(), ["account_name", "sort_code", "account_number"]);
    assert_eq!(fields("NG", "NGN").await.unwrap(), ["account_name", "bank_code", "account_number"]);
    assert_eq!(fields("IN", "INR").await.unwrap(), ["account_name", "ifsc", "account_number"]);
    assert_eq!(fields("US", "USD").await.unwrap(), ["account_name", "routing_number", "account_number"]);
    assert_eq!(fields("DE", "EUR").await.unwrap(), ["account_name", "iban", "bic"]);
    assert_refused(fields("GB", "NGN").await, 400, "not supported");

    // Valid details in every supported country, normalised and with the bank's name filled in.
    let gb = gb_recipient(&client).await;
    assert_eq!(gb.bank_account.sort_code.as_deref().map(|s| s.as_str()), Some("040004"));
    assert_eq!(gb.bank_account.bank_name.as_deref().map(|s| s.as_str()), Some("Sandbox Bank UK"));
    let ng = create_recipient(&client, "NG", ng_account("0123456789", "Adaeze Nwosu")).await.unwrap();
    assert_eq!(ng.bank_account.bank_name.as_deref().map(|s| s.as_str()), Some("Guaranty Trust Bank"));
    let india = bank("INR")
        .account_name(Some(code("Ravi Kumar")))
        .ifsc(Some(code("HDFC0001234")))
        .account_number(Some(code("123456789012")));
    assert!(create_recipient(&client, "IN", india).await.is_ok());
    let us = bank("USD")
        .account_name(Some(code("Grace Hopper")))
        .routing_number(Some(code("021000021")))
        .account_number(Some(code("123456789")));
    assert!(create_recipient(&client, "US", us).await.is_ok());
    let de = bank("EUR")
        .account_name(Some(code("Emmy Noether")))
        .iban(Some(code("DE89 3704 0044 0532 0130 00")))
        .bic(Some(code("COBADEFFXXX")));
    let de = create_recipient(&client, "DE", de).await.unwrap();
    assert_eq!(de.bank_account.iban.as_deref().map(|s| s.as_str()), Some("DE89370400440532013000"));

    // Each rule refuses, names the field, and saves nothing.
    let refusals: Vec<(&str, types::builder::BankAccount, &str)> = vec![
        (
            "GB",
            bank("GBP")
                .account_name(Some(code("A")))
                .sort_code(Some(code("04-00-0X")))
                .account_number(Some(code("12345678"))),
            "bank_account.sort_code",
        ),
        (
            "GB",
            bank("GBP")
                .account_name(Some(code("A")))
                .sort_code(Some(code("040004")))
                .account_number(Some(code("1234567"))),
            "exactly 8",
        ),
        ("GB", bank("GBP").account_name(Some(code("A"))).sort_code(Some(code("040004"))), "account_number is required"),
        (
            "GB",
            bank("GBP")
                .account_name(Some(code("A")))
                .sort_code(Some(code("040004")))
                .account_number(Some(code("12345678")))
                .iban(Some(code("GB00"))),
            "bank_account.iban is not a field",
        ),
        ("NG", ng_account("012345678", "Adaeze Nwosu"), "exactly 10"),
        (
            "NG",
            bank("NGN")
                .account_name(Some(code("A")))
                .bank_code(Some(code("999")))
                .account_number(Some(code("0123456789"))),
            "not a Nigerian bank",
        ),
        (
            "IN",
            bank("INR")
                .account_name(Some(code("A")))
                .ifsc(Some(code("HDFC1001234")))
                .account_number(Some(code("123456789"))),
            "bank_account.ifsc",
        ),
        (
            "IN",
            bank("INR")
                .account_name(Some(code("A")))
                .ifsc(Some(code("HDFC0001234")))
                .account_number(Some(code("12345678"))),
            "9 to 18",
        ),
        (
            "US",
            bank("USD")
                .account_name(Some(code("A")))
                .routing_number(Some(code("021000022")))
                .account_number(Some(code("1234"))),
            "checksum",
        ),
        (
            "DE",
            bank("EUR")
                .account_name(Some(code("A")))
                .iban(Some(code("DE89370400440532013001")))
                .bic(Some(code("COBADEFF"))),
            "check digits",
        ),
        (
            "FR",
            bank("EUR")
                .account_name(Some(code("A")))
                .iban(Some(code("DE89370400440532013000")))
                .bic(Some(code("BNPAFRPP"))),
            "IBAN of FR",
        ),
        (
            "DE",
            bank("EUR")
                .account_name(Some(code("A")))
                .iban(Some(code("DE89370400440532013000")))
                .bic(Some(code("BNPAFRPP"))),
            "bank_account.bic",
        ),
        (
            "NG",
            bank("NGN").bank_code(Some(code("058"))).account_number(Some(code("0123456789"))),
            "account_name is required",
        ),
        ("JP", bank("JPY"), "not supported"),
    ];
    for (country, account, needle) in refusals {
        let (status, message) = create_recipient(&client, country, account).await.expect_err(needle);
        assert_eq!(status, 400, "{message}");
        assert!(message.contains(needle), "{message:?} should mention {needle:?}");
    }
    let saved = client.list_recipients().send().await.unwrap().into_inner();
    assert_eq!(saved.len(), 5, "refused recipients are not saved");

    // Validation resolves a name where banks do (NG, GB), the same every time; saves nothing.
    let validate = |country: &str, account: types::builder::BankAccount| {
        let request = client.validate_recipient().body(
            types::RecipientValidate::builder().country(code::<types::CountryCode>(country)).bank_account(account),
        );
        async move { request.send().await.map(|r| r.into_inner()) }
    };
    let resolved = validate("NG", bank("NGN").bank_code(Some(code("058"))).account_number(Some(code("0123456789"))))
        .await
        .unwrap();
    assert_eq!((resolved.bank_id.as_str(), resolved.bank_name.as_str()), ("058", "Guaranty Trust Bank"));
    let name = resolved.account_name.clone().expect("a resolved name");
    assert_eq!(name, name.to_uppercase(), "Nigerian banks answer in capitals");
    let again = validate("NG", bank("NGN").bank_code(Some(code("058"))).account_number(Some(code("0123456789"))))
        .await
        .unwrap();
    assert_eq!(again, resolved);
    let other = validate("NG", bank("NGN").bank_code(Some(code("058"))).account_number(Some(code("0123456780"))))
        .await
        .unwrap();
    assert_eq!(other.account_number, "0123456780");
    let echoed = validate(
        "US",
        bank("USD")
            .account_name(Some(code("Grace Hopper")))
            .routing_number(Some(code("021000021")))
            .account_number(Some(code("123456789"))),
    )
    .await
    .unwrap();
    assert_eq!(echoed.account_name.as_deref(), Some("Grace Hopper"));
    let unnamed = validate("DE", bank("EUR").iban(Some(code("DE89370400440532013000"))).bic(Some(code("COBADEFFXXX"))))
        .await
        .unwrap();
    assert_eq!((unnamed.account_name, unnamed.account_number.as_str()), (None, "DE89370400440532013000"));
    assert_refused(
        validate("GB", bank("GBP").sort_code(Some(code("1"))).account_number(Some(code("12345678")))).await,
        400,
        "sort_code",
    );
    assert_eq!(client.list_recipients().send().await.unwrap().into_inner().len(), 5);

    // Alias rename and removal, delete, and what a deleted recipient answers.
    let renamed = client
        .update_recipient()
        .id(ng.id)
        .body(types::RecipientUpdate::builder().alias(Some(code("Supplier"))))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(renamed.alias.as_deref().map(|a| a.as_str()), Some("Supplier"));
    let cleared = client
        .update_recipient()
        .id(ng.id)
        .body(types::RecipientUpdate::builder().alias(None))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(cleared.alias, None);
    assert_eq!(
        client.delete_recipient().id(de.id).send().await.unwrap().into_inner().result,
        types::ResultOkResult::Ok
    );
    assert_refused(client.get_recipient().id(de.id).send().await, 404, &de.id.to_string());
    assert_refused(client.delete_recipient().id(de.id).send().await, 404, "recipient");
    let listed = client.list_recipients().limit(limit(2)).send().await.unwrap().into_inner();
    assert_eq!(listed.len(), 2);
    let rest = client.list_recipients().starting_after(listed[1].id).send().await.unwrap().into_inner();
    assert_eq!(rest.len(), 2, "five saved, one deleted: two more after the first page");
    assert_refused(client.list_recipients().starting_after(de.id).send().await, 400, "starting_after");
}
