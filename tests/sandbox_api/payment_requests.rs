//! Payment requests: open amounts, and payment on the hosted page settling into the balance.

use payments_client::types;
use payments_tests::raw;
use payments_tests::sandbox::*;
use uuid::Uuid;

use super::fixtures::*;

payments_tests::on_both_backends! {
    #[tokio::test] an_open_payment_request_is_paid_the_amount_the_payer_chooses,
    #[tokio::test] payment_requests_are_paid_on_the_hosted_page_and_settle_into_the_balance,
}

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
