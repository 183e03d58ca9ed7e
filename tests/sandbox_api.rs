//! The sandbox through the generated client, operation by operation: every rule of the
//! document, with its success and its refusal, against a real server and database (a SQLite
//! file; a PostgreSQL database when run as `sandbox_api_postgres`).

use std::collections::BTreeSet;
use std::time::Duration;

use payments_client::{Client, types};
use payments_tests::sandbox::*;
use payments_tests::{assert_error, raw};
use uuid::Uuid;

fn bank(currency: &str) -> types::builder::BankAccount {
    types::BankAccount::builder().currency(code::<types::CurrencyCode>(currency))
}

async fn create_recipient(
    client: &Client,
    country: &str,
    account: types::builder::BankAccount,
) -> Result<types::Recipient, (u16, String)> {
    client
        .create_recipient()
        .body(
            types::RecipientCreate::builder()
                .type_(types::RecipientType::Business)
                .country(code::<types::CountryCode>(country))
                .bank_account(account),
        )
        .send()
        .await
        .map(|r| r.into_inner())
        .map_err(|e| client_error::<()>(Err(e)))
}

/// A Nigerian account at bank 058 in the name the bank holds for it (the sandbox derives it
/// from the account number: `POST /recipients/validate` tells).
fn ng_account(account_number: &str, holder: &str) -> types::builder::BankAccount {
    bank("NGN").account_name(Some(code(holder))).bank_code(Some(code("058"))).account_number(Some(code(account_number)))
}

#[tokio::test]
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

#[tokio::test]
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

#[tokio::test]
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

#[tokio::test]
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

#[tokio::test]
async fn an_open_payment_request_is_paid_the_amount_the_payer_chooses() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let gbp = open_balance(&client, "GBP").await;
    let open =
        || client.create_payment_request().body(types::PaymentRequestCreate::builder().currency(Some(code("GBP"))));

    // Every field is optional: without an amount the request is open and its amount null.
    let created = open().send().await.unwrap();
    assert_eq!(created.status().as_u16(), 201);
    let request = created.into_inner();
    assert_eq!((request.amount.clone(), request.status), (None, types::PaymentRequestStatus::Initiated));
    let url = format!("{}/paymentrequests/{}", sandbox.url, request.id);
    let on_the_wire = raw("GET", &url, Some(ALICE), None, "").await.body;
    assert_eq!(on_the_wire.get("amount"), Some(&serde_json::Value::Null), "null on the wire, not left out");

    // The page asks for the amount; paying needs one, and an unparseable one changes nothing.
    let html = reqwest::get(&request.payment_url).await.unwrap().text().await.unwrap();
    assert!(html.contains("Any amount (GBP)") && html.contains("name=\"amount\""), "{html}");
    assert_refused(client.simulate_payment().id(request.id).send().await, 400, "has no amount");
    let form = |body: &'static str| {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap()
            .post(&request.payment_url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
    };
    let refused = form("amount=12.345&payer_name=Ada").send().await.unwrap();
    assert_eq!(refused.status().as_u16(), 400);
    assert!(refused.text().await.unwrap().contains("is not an amount of GBP"));
    let still = client.get_payment_request().id(request.id).send().await.unwrap().into_inner();
    assert_eq!((still.amount, still.status), (None, types::PaymentRequestStatus::Initiated));
    assert_eq!(balance_of(&client, gbp.id).await, 0);

    // The payer types £12.34: the request records it and the balance is credited it.
    let paid = form("amount=12.34&payer_name=Ada+Lovelace").send().await.unwrap();
    assert_eq!(paid.status().as_u16(), 303);
    let after = client.get_payment_request().id(request.id).send().await.unwrap().into_inner();
    assert_eq!((after.amount.map(|a| a.get()), after.status), (Some(1_234), types::PaymentRequestStatus::Processed));
    assert_eq!(balance_of(&client, gbp.id).await, 1_234);

    // Through the API: the amount given is paid; a request with an amount refuses another one.
    let second = open().send().await.unwrap().into_inner();
    let body = types::SimulatePayment::builder().amount(Some(amount(500)));
    let paid = client.simulate_payment().id(second.id).body(body).send().await.unwrap().into_inner();
    assert_eq!(paid.amount.map(|a| a.get()), Some(500));
    assert_eq!(balance_of(&client, gbp.id).await, 1_734);
    let fixed = client
        .create_payment_request()
        .body(types::PaymentRequestCreate::builder().currency(Some(code("GBP"))).amount(amount(2_500)))
        .send()
        .await
        .unwrap()
        .into_inner();
    let other = types::SimulatePayment::builder().amount(Some(amount(2_499)));
    assert_refused(client.simulate_payment().id(fixed.id).body(other).send().await, 400, "exactly 2500");
    let same = types::SimulatePayment::builder().amount(Some(amount(2_500)));
    let paid = client.simulate_payment().id(fixed.id).body(same).send().await.unwrap().into_inner();
    assert_eq!(paid.status, types::PaymentRequestStatus::Processed);
    assert_eq!(balance_of(&client, gbp.id).await, 4_234);
}

#[tokio::test]
async fn payment_requests_are_paid_on_the_hosted_page_and_settle_into_the_balance() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let older = open_balance(&client, "GBP").await;
    let newer = open_balance(&client, "GBP").await;

    // Currency alone settles into the oldest balance in it.
    let invoice = types::PaymentRequestCreate::builder()
        .amount(amount(2_500))
        .currency(Some(code("GBP")))
        .reference(Some(code("Invoice <42> & co")))
        .reference_id(Some(code("inv-42")))
        .return_url(Some(code("https://shop.example/thanks")));
    let created = client.create_payment_request().body(invoice.clone()).send().await.unwrap();
    assert_eq!(created.status().as_u16(), 201);
    let request = created.into_inner();
    assert_eq!((request.settlement_balance_id, request.market.as_str()), (older.id, "GB"));
    assert_eq!(request.payment_url, format!("{}/pay/{}", sandbox.url, request.id));
    assert_eq!(request.qr_code_url, format!("{}/qr.svg", request.payment_url));

    // The page shows the amount in the currency's minor unit and the escaped reference.
    let page = reqwest::get(&request.payment_url).await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let headers = page.headers().clone();
    let html = page.text().await.unwrap();
    // No other site may frame the page; it runs no script, and its one style sheet is allowed
    // by its hash; its form may reach only the sandbox and the origin of return_url.
    let policy = headers["content-security-policy"].to_str().unwrap();
    let style = html.split("<style>").nth(1).and_then(|rest| rest.split("</style>").next()).unwrap();
    let style_hash = {
        use base64::Engine;
        use sha2::Digest;
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(style))
    };
    assert_eq!(
        policy,
        format!(
            "default-src 'none'; style-src 'sha256-{style_hash}'; img-src 'self'; \
             form-action 'self' https://shop.example; frame-ancestors 'none'; base-uri 'none'"
        )
    );
    assert!(!html.contains("<script"), "no script on the page");
    assert_eq!(headers["x-frame-options"], "DENY");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert!(html.contains("£25.00"), "amount shown in pounds");
    assert!(html.contains("Invoice &lt;42&gt; &amp; co"), "reference escaped");
    assert!(html.contains("name=\"viewport\""), "made for phones too");
    let qr = reqwest::get(&request.qr_code_url).await.unwrap();
    assert_eq!(qr.headers()["content-type"], "image/svg+xml");
    let svg = qr.text().await.unwrap();
    assert!(svg.starts_with("<?xml") && svg.contains("<svg") && svg.contains("<path"), "an SVG QR code");

    // The payer pays on the page: redirected to return_url; the request is processed and the
    // amount is credited as a collection.
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let paid = no_redirects
        .post(&request.payment_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("payer_name=Grace+Hopper")
        .send()
        .await
        .unwrap();
    assert_eq!(paid.status().as_u16(), 303);
    assert_eq!(paid.headers()["location"], "https://shop.example/thanks");
    let after = client.get_payment_request().id(request.id).send().await.unwrap().into_inner();
    assert_eq!(after.status, types::PaymentRequestStatus::Processed);
    assert_eq!(balance_of(&client, older.id).await, 2_500);
    assert_eq!(balance_of(&client, newer.id).await, 0);
    let collections = client
        .list_transactions()
        .transaction_type(types::TransactionType::Collection)
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(collections.len(), 1);
    let collection = &collections[0];
    assert_eq!((collection.amount.get(), collection.fees, collection.balance_id), (2_500, 0, older.id));
    assert_eq!(collection.payer_name.as_deref(), Some("Grace Hopper"));
    assert_eq!(collection.payment_method, types::PaymentMethod::PaymentLink);
    assert_eq!(collection.status, types::TransactionStatus::Processed);
    // Paying twice is refused, on the page and through the API, and credits nothing.
    let twice = no_redirects
        .post(&request.payment_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("payer_name=Again")
        .send()
        .await
        .unwrap();
    assert_eq!(twice.status().as_u16(), 409);
    assert!(twice.text().await.unwrap().contains("Paid"));
    assert_refused(client.simulate_payment().id(request.id).send().await, 409, "only an initiated request");
    assert_refused(client.cancel_payment_request().id(request.id).send().await, 409, "processed");
    assert_eq!(balance_of(&client, older.id).await, 2_500);

    // Same request, same reference_id: the original. Different request: 409.
    let replay = client.create_payment_request().body(invoice).send().await.unwrap();
    assert_eq!((replay.status().as_u16(), replay.into_inner().id), (201, request.id));
    let reused = client
        .create_payment_request()
        .body(
            types::PaymentRequestCreate::builder()
                .amount(amount(9_999))
                .currency(Some(code("GBP")))
                .reference_id(Some(code("inv-42"))),
        )
        .send()
        .await;
    assert_refused(reused, 409, "inv-42");

    // Cancel an initiated request; a failed payment; the explicit balance; the refusals.
    let explicit = client
        .create_payment_request()
        .body(types::PaymentRequestCreate::builder().amount(amount(100)).settlement_balance_id(Some(newer.id)))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!((explicit.settlement_balance_id, explicit.currency.as_str()), (newer.id, "GBP"));
    assert_eq!(
        client.cancel_payment_request().id(explicit.id).send().await.unwrap().into_inner().result,
        types::ResultOkResult::Ok
    );
    assert_refused(client.simulate_payment().id(explicit.id).send().await, 409, "cancelled");
    let cancelled_page = reqwest::get(&explicit.payment_url).await.unwrap().text().await.unwrap();
    assert!(!cancelled_page.contains("<form"), "a cancelled request offers no pay button");
    let failing = client
        .create_payment_request()
        .body(types::PaymentRequestCreate::builder().amount(amount(100)).currency(Some(code("GBP"))))
        .send()
        .await
        .unwrap()
        .into_inner();
    let failed = client
        .simulate_payment()
        .id(failing.id)
        .body(types::SimulatePayment::builder().outcome(types::SimulatePaymentOutcome::Failed))
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(failed.status, types::PaymentRequestStatus::Failed);
    assert_eq!(balance_of(&client, older.id).await, 2_500);

    let create = |body: types::builder::PaymentRequestCreate| {
        let request = client.create_payment_request().body(body);
        async move { request.send().await }
    };
    assert_refused(create(types::PaymentRequestCreate::builder().amount(amount(1))).await, 400, "give currency");
    assert_refused(
        create(types::PaymentRequestCreate::builder().amount(amount(1)).currency(Some(code("USD")))).await,
        400,
        "no USD balance",
    );
    assert_refused(
        create(
            types::PaymentRequestCreate::builder()
                .amount(amount(1))
                .currency(Some(code("NGN")))
                .settlement_balance_id(Some(older.id)),
        )
        .await,
        400,
        "does not match",
    );
    assert_refused(
        create(types::PaymentRequestCreate::builder().amount(amount(1)).settlement_balance_id(Some(Uuid::new_v4())))
            .await,
        404,
        "settlement_balance_id",
    );
    let eur = open_balance(&client, "EUR").await;
    assert_refused(
        create(types::PaymentRequestCreate::builder().amount(amount(1)).settlement_balance_id(Some(eur.id))).await,
        400,
        "does not support payment requests",
    );
    assert_refused(
        create(
            types::PaymentRequestCreate::builder()
                .amount(amount(1))
                .currency(Some(code("GBP")))
                .return_url(Some(code("ftp://x.example/"))),
        )
        .await,
        400,
        "return_url",
    );
    let unknown_page = reqwest::get(format!("{}/pay/{}", sandbox.url, Uuid::new_v4())).await.unwrap();
    assert!(unknown_page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    assert_eq!(unknown_page.status().as_u16(), 404);

    // Every filter of the list.
    assert_eq!(pr_ids(client.list_payment_requests()).await, [failing.id, explicit.id, request.id]);
    assert_eq!(
        pr_ids(client.list_payment_requests().status(types::PaymentRequestStatus::Cancelled)).await,
        [explicit.id]
    );
    assert_eq!(pr_ids(client.list_payment_requests().reference_id("inv-42")).await, [request.id]);
    assert_eq!(pr_ids(client.list_payment_requests().settlement_balance_id(newer.id)).await, [explicit.id]);
    assert_eq!(
        pr_ids(client.list_payment_requests().currency(code::<types::CurrencyCode>("GBP")).limit(limit(1))).await,
        [failing.id]
    );
    assert_eq!(pr_ids(client.list_payment_requests().starting_after(explicit.id)).await, [request.id]);
}

#[tokio::test]
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

#[tokio::test]
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

#[tokio::test]
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

async fn pr_ids(builder: payments_client::builder::ListPaymentRequests<'_>) -> Vec<Uuid> {
    builder.send().await.unwrap().into_inner().into_iter().map(|r| r.id).collect()
}

async fn tx_ids(builder: payments_client::builder::ListTransactions<'_>) -> BTreeSet<Uuid> {
    builder.limit(limit(100)).send().await.unwrap().into_inner().into_iter().map(|t| t.id).collect()
}

async fn va_ids(builder: payments_client::builder::ListVirtualAccounts<'_>) -> Vec<Uuid> {
    builder.send().await.unwrap().into_inner().into_iter().map(|a| a.id).collect()
}

fn payment_to(balance: Uuid, recipient: Uuid) -> types::builder::TransactionCreate {
    payment(balance, recipient, 1)
}

#[tokio::test]
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

#[tokio::test]
async fn webhook_endpoints_keep_their_secret_and_refuse_unsafe_targets() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let create = |url: &str| {
        let request = client
            .create_webhook_endpoint()
            .body(types::WebhookEndpointCreate::builder().url(code::<types::WebhookEndpointCreateUrl>(url)));
        async move { request.send().await.map(|r| r.into_inner()) }
    };
    let endpoint = create("https://hooks.example/payments").await.unwrap();
    let listed = client.list_webhook_endpoints().send().await.unwrap().into_inner();
    assert_eq!(listed.len(), 1);
    let read = client.get_webhook_endpoint().id(endpoint.id).send().await.unwrap().into_inner();
    assert_eq!(
        (read.id, read.url.as_str(), read.events.clone()),
        (endpoint.id, "https://hooks.example/payments", None)
    );
    let raw_read =
        raw("GET", &format!("{}/webhook-endpoints/{}", sandbox.url, endpoint.id), Some(ALICE), None, "").await;
    assert!(raw_read.body.get("secret").is_none(), "the secret is never listed again");
    let rotated = client.rotate_webhook_endpoint_secret().id(endpoint.id).send().await.unwrap().into_inner();
    assert_ne!(rotated.secret, endpoint.secret);
    assert!(rotated.secret.starts_with("whsec_"));

    for (url, needle) in [
        ("http://hooks.example/x", "https://"),
        ("https://127.0.0.1/x", "loopback"),
        ("https://localhost/x", "loopback"),
        ("https://10.1.2.3/x", "private"),
        ("https://192.168.0.1/x", "private"),
        ("https://169.254.169.254/latest/meta-data", "link-local or metadata"),
        ("https://[::1]/x", "loopback"),
        ("https://[fd00::1]/x", "private"),
        ("https://[64:ff9b::7f00:1]/", "loopback"),
        ("https://[::127.0.0.1]/", "loopback"),
        ("https://[::ffff:169.254.169.254]/", "metadata"),
        ("https://[2002:a00:1::1]/", "private"),
        ("https://localhost./", "trailing dot"),
        ("https:///x", "no host"),
        ("https://user:pw@hooks.example/x", "credentials"),
    ] {
        assert_refused(create(url).await, 400, needle);
    }
    assert_eq!(client.list_webhook_endpoints().send().await.unwrap().into_inner().len(), 1);
    assert_eq!(
        client.delete_webhook_endpoint().id(endpoint.id).send().await.unwrap().into_inner().result,
        types::ResultOkResult::Ok
    );
    assert_refused(client.get_webhook_endpoint().id(endpoint.id).send().await, 404, "webhook endpoint");
    assert!(client.list_webhook_endpoints().send().await.unwrap().into_inner().is_empty());
}

#[tokio::test]
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

#[tokio::test]
async fn the_rails_move_on_by_themselves() {
    let mut options = test_options();
    options.rail_interval = Some(Duration::from_millis(200));
    let sandbox = start_sandbox_with(options).await;
    let client = sandbox.client(ALICE);
    let gbp = open_balance(&client, "GBP").await;
    fund(&client, &gbp, 10_000).await;
    let recipient = gb_recipient(&client).await;
    let payment =
        client.create_transaction().body(payment(gbp.id, recipient.id, 1_000)).send().await.unwrap().into_inner();
    let settled = eventually(Duration::from_secs(5), || {
        let request = client.get_transaction().id(payment.id);
        async move { request.send().await.unwrap().into_inner().status == types::TransactionStatus::Processed }
    })
    .await;
    assert!(settled, "the payment reached processed without POST /sandbox/advance");
}

#[tokio::test]
async fn text_holding_control_characters_is_refused_and_changes_nothing() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let balance = open_balance(&client, "GBP").await;
    fund(&client, &balance, 10_000).await;
    let recipient = gb_recipient(&client).await;
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
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_go_on_after_clients_hang_up_mid_page() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let balance = open_balance(&client, "GBP").await;
    fund(&client, &balance, 1_000_000).await;
    let recipient = gb_recipient(&client).await;
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
