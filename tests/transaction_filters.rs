//! Filters of `GET /transactions` that the contract takes and what it says of values it cannot
//! take: `scheduled_payment_id` (the interface's filter; nothing makes scheduled payments, so it
//! matches nothing, through its index), and refusals that say what is wrong and what is expected.

use payments_client::types;
use payments_tests::sandbox::*;
use payments_tests::{assert_error, raw};
use uuid::Uuid;

payments_tests::on_both_backends! {
    #[tokio::test] scheduled_payment_id_is_taken_matches_nothing_and_a_malformed_one_is_refused,
    #[tokio::test] a_refused_parameter_says_what_is_missing_and_shows_the_form_expected,
}

async fn scheduled_payment_id_is_taken_matches_nothing_and_a_malformed_one_is_refused() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let (gbp, recipient) = funded_with_recipient(&client, "GBP", 100_000).await;
    client.create_transaction().body(payment(gbp.id, recipient.id, 1_000)).send().await.unwrap();
    assert!(!client.list_transactions().send().await.unwrap().into_inner().is_empty());

    // Through the generated client, alone and with another filter: 200 and an empty page.
    let any = Uuid::new_v4();
    let page = client.list_transactions().scheduled_payment_id(any).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.into_inner().is_empty(), "no scheduled payment exists");
    let page = client
        .list_transactions()
        .scheduled_payment_id(any)
        .status(types::TransactionStatus::Initiated)
        .send()
        .await
        .unwrap()
        .into_inner();
    assert!(page.is_empty());

    // A value that is not a UUID: 400 with the error object, naming it and the form expected.
    let url = format!("{}/transactions?scheduled_payment_id=not-a-uuid", sandbox.url);
    assert_error(
        &raw("GET", &url, Some(ALICE), None, "").await,
        400,
        "`scheduled_payment_id`: \"not-a-uuid\" is not a UUID",
    );
}

async fn a_refused_parameter_says_what_is_missing_and_shows_the_form_expected() {
    let sandbox = start_sandbox().await;
    let url = |query: &str| format!("{}/transactions?{query}", sandbox.url);
    let refused = [
        (
            "from_datetime=2026-11-25T10:00:00",
            "\"2026-11-25T10:00:00\" is not an RFC 3339 date-time (it has no UTC offset): write it like 2026-11-25T10:15:30Z",
        ),
        ("to_datetime=2026-11-25", "(a date without a time and UTC offset)"),
        ("from_datetime=2026-11-25T10:00:00+01:00", "send the offset's `+` as `%2B`"),
        ("limit=ten", "`limit`: \"ten\" is not a whole number"),
        ("limit=1&limit=2", "`limit` is given more than once"),
        ("status=on_hold", "`status`: \"on_hold\" is not one of"),
        ("balance_id=42", "\"42\" is not a UUID"),
    ];
    for (query, needle) in refused {
        assert_error(&raw("GET", &url(query), Some(ALICE), None, "").await, 400, needle);
    }
    let bankfields = format!("{}/bankfields?country=GB", sandbox.url);
    assert_error(&raw("GET", &bankfields, Some(ALICE), None, "").await, 400, "query parameter `currency` is required");
    // A well-formed one with its offset sent as %2B is taken.
    let taken = raw("GET", &url("from_datetime=2026-11-25T10:00:00%2B01:00"), Some(ALICE), None, "").await;
    assert_eq!(taken.status, 200);
}
