//! The hosted payment page under hostile payers: what it takes is bounded exactly as the API's
//! `SimulatePayment` is (the same validator), and a refusal changes nothing.

use payments_client::types;
use payments_tests::sandbox::*;

/// Posts `body` as the page's form to `url`, following no redirect.
async fn post_form(url: &str, body: String) -> reqwest::Response {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .post(url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .unwrap()
}

fn form(amount: &str, payer_name: &str) -> String {
    let mut form = reqwest::Url::parse("http://x/").unwrap();
    form.query_pairs_mut().append_pair("amount", amount).append_pair("payer_name", payer_name);
    form.query().unwrap().to_owned()
}

#[tokio::test]
async fn the_pay_page_takes_only_what_the_api_would() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let gbp = open_balance(&client, "GBP").await;
    let open = || async {
        client
            .create_payment_request()
            .body(types::PaymentRequestCreate::builder().currency(Some(code("GBP"))))
            .send()
            .await
            .unwrap()
            .into_inner()
    };
    let request = open().await;

    // Past the document's maximum (100,000,000,000 minor units, £1,000,000,000.00), zero,
    // negative, exponents, other digits, more decimals than pounds have, other signs.
    let refused = [
        ("999999999999", "greater than the maximum"),
        ("1000000000.01", "greater than the maximum"),
        ("100000000000000", "greater than the maximum"),
        ("0", "less than the minimum"),
        ("0.00", "less than the minimum"),
        ("-5", "is not an amount of GBP"),
        ("+5", "is not an amount of GBP"),
        ("1e3", "is not an amount of GBP"),
        ("1E3", "is not an amount of GBP"),
        ("١٢٣", "is not an amount of GBP"),
        ("１２３", "is not an amount of GBP"),
        ("12.345", "is not an amount of GBP"),
        ("NaN", "is not an amount of GBP"),
        ("Infinity", "is not an amount of GBP"),
        ("0x10", "is not an amount of GBP"),
        ("9999999999999999999999", "is not an amount of GBP"),
    ];
    for (amount, why) in refused {
        let answer = post_form(&request.payment_url, form(amount, "Mallory")).await;
        assert_eq!(answer.status().as_u16(), 400, "{amount:?}");
        let page = answer.text().await.unwrap();
        assert!(page.contains(why), "{amount:?} should be refused as {why:?}: {page}");
    }
    // A name longer than the API's 140 characters is refused too, not cut or dropped.
    let answer = post_form(&request.payment_url, form("10", &"n".repeat(141))).await;
    assert_eq!(answer.status().as_u16(), 400);
    assert!(answer.text().await.unwrap().contains("payer_name"));

    // Nothing changed.
    let still = client.get_payment_request().id(request.id).send().await.unwrap().into_inner();
    assert_eq!((still.amount, still.status), (None, types::PaymentRequestStatus::Initiated));
    assert_eq!(balance_of(&client, gbp.id).await, 0);

    // The maximum itself is taken, and the API shows it inside its own schema.
    let answer = post_form(&request.payment_url, form("£1,000,000,000.00", "Grace Hopper")).await;
    assert_eq!(answer.status().as_u16(), 303);
    let paid = client.get_payment_request().id(request.id).send().await.unwrap().into_inner();
    assert_eq!(paid.amount.map(|a| a.get()), Some(100_000_000_000));
    assert_eq!(paid.status, types::PaymentRequestStatus::Processed);
    assert_eq!(balance_of(&client, gbp.id).await, 100_000_000_000);

    // The API refuses what the page refuses, with the same words.
    let second = open().await;
    let over = serde_json::json!({"amount": 99_999_999_999_900u64});
    let answer = payments_tests::raw(
        "POST",
        &format!("{}/sandbox/paymentrequests/{}/pay", sandbox.url, second.id),
        Some(ALICE),
        Some("application/json"),
        over.to_string(),
    )
    .await;
    payments_tests::assert_error(&answer, 400, "greater than the maximum");
}
