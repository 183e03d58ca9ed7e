//! Filters of `GET /transactions` that the contract takes and what it says of values it cannot
//! take: `scheduled_payment_id` (the interface's filter; nothing makes scheduled payments, so it
//! matches nothing, through its index), refusals that say what is wrong and what is expected,
//! and `search` over more transactions than the store indexes at once.

use payments_client::types;
use payments_tests::sandbox::*;
use payments_tests::{assert_error, raw};
use uuid::Uuid;

/// Our own list read whole through the generated client's item stream: 10,000 payments, made 32
/// at a time, in pages of 100 — every one once, newest first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_transactions_are_read_whole_through_the_stream_newest_first() {
    use futures::StreamExt;
    const PAYMENTS: usize = 10_000;
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let (gbp, recipient) = funded_with_recipient(&client, "GBP", 2_000_000).await;
    let pay = |_| {
        let client = &client;
        async move { client.create_transaction().body(payment(gbp.id, recipient.id, 100)).send().await.unwrap().id }
    };
    let mut made: Vec<Uuid> = futures::stream::iter(0..PAYMENTS).map(pay).buffer_unordered(32).collect().await;
    let read =
        every_page(&client, 100, |list| list.balance_id(gbp.id).transaction_type(types::TransactionType::Payment))
            .await;
    assert!(read.windows(2).all(|w| w[0].created >= w[1].created), "newest first");
    let mut read: Vec<Uuid> = read.iter().map(|t| t.id).collect();
    assert_eq!(read.len(), PAYMENTS);
    read.sort_unstable();
    made.sort_unstable();
    assert_eq!(read, made, "every payment once");
}

payments_tests::on_both_backends! {
    #[tokio::test] scheduled_payment_id_is_taken_matches_nothing_and_a_malformed_one_is_refused,
    #[tokio::test] a_refused_parameter_says_what_is_missing_and_shows_the_form_expected,
    #[tokio::test] search_finds_every_transaction_indexed_or_not_newest_first_page_by_page,
}

/// More payments than SQLite's store indexes at once (`search_batches.rs`, 128): the newest wait
/// to be indexed while the older are in the index. Every search finds exactly the payments whose
/// reference or recipient holds the needle in any case (short needles too), newest first, and
/// the pages follow one another across the two.
async fn search_finds_every_transaction_indexed_or_not_newest_first_page_by_page() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let (gbp, recipient) = funded_with_recipient(&client, "GBP", 10_000_000).await;
    let mut paid = Vec::new();
    for i in 0..150 {
        let reference = match i {
            5 | 100 | 140 => format!("Überweisung {i}"),
            _ => format!("batch-{i:03}"),
        };
        let body = payment(gbp.id, recipient.id, 100).reference(Some(code(&reference)));
        let made = client.create_transaction().body(body).send().await.unwrap().into_inner();
        paid.push((made.id, reference));
    }
    // The recipient's account name is searched too: "Isla Wilson" (`gb_recipient`).
    let account_name = recipient.bank_account.account_name.as_deref().map(String::as_str).unwrap_or_default();
    for needle in ["ÜBERWEISUNG", "überweisung 14", "batch-1", "BATCH-14", "13", "ng", "WILSON", "wI"] {
        // What it must find: the payments whose reference or recipient holds it, newest first.
        let holds = |field: &str| field.to_lowercase().contains(&needle.to_lowercase());
        let expected: Vec<Uuid> = paid
            .iter()
            .rev()
            .filter(|(_, reference)| holds(reference) || holds(account_name))
            .map(|(id, _)| *id)
            .collect();
        let found: Vec<Uuid> =
            every_page(&client, 7, |list| list.search(needle).transaction_type(types::TransactionType::Payment))
                .await
                .iter()
                .map(|t| t.id)
                .collect();
        assert_eq!(found, expected, "search {needle:?}");
    }
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
        // Found by schemathesis: its 19th byte inside a character (the message once sliced the
        // text there, and the request's task panicked).
        ("to_datetime=0000%C2%80%C2%80%C2%80%C2%80%C2%80%C2%80%F0%90%80%80", "is not an RFC 3339 date-time"),
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
