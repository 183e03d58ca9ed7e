//! The stateful mock (`openapi-workspace mock --stateful`'s engine, with the plan the generator
//! writes for `samples/shop.yaml`) driven through the shop's generated client, as a team's SDK
//! tester would: what the client creates it finds, lists and acts on; its page streams read the
//! mock's lists whole, page by page (a cursor field, numbered pages by `Link`); a retried create
//! sends its idempotency key and makes one order; an unknown order is the client's typed `404`.

mod support;

use futures::TryStreamExt;
use openapi_workspace_output::shop::{client, types};
use openapi_workspace_runtime::mock::{self, Options, Plan, Seed};

/// The shop's mock, stateful, seeded as `seed` says; and its client (any api key is let in).
async fn shop(seed: Seed) -> client::Client {
    let mut plan: Plan =
        serde_json::from_str(include_str!(concat!(env!("OUT_DIR"), "/shop/mock.json"))).expect("the build's plan");
    plan.schemas = serde_json::from_str(include_str!(concat!(env!("OUT_DIR"), "/shop/schemas.json"))).unwrap();
    let options = Options { stateful: true, seed, ..Options::default() };
    let url = support::serve(mock::router_with(plan, options).unwrap()).await;
    client::Client::new(&url, client::Config::new().credentials(client::Credentials::new().api_key("any")))
}

fn new_order(item: &str, quantity: u64) -> types::NewOrder {
    types::NewOrder { item: item.parse().unwrap(), quantity: std::num::NonZeroU64::new(quantity).unwrap() }
}

#[tokio::test]
async fn what_the_client_creates_it_finds_lists_and_acts_on() {
    let client = shop(Seed::Examples).await;
    // Seeded with the document's example.
    let seeded: Vec<types::Order> = client.list_orders_stream(|list| list).try_collect().await.unwrap();
    assert_eq!(seeded.len(), 1);
    assert_eq!(seeded[0].item, "Example teapot");

    let mut made = Vec::new();
    for n in 1..=5 {
        let order = client.create_order().body(new_order(&format!("cup {n}"), n)).send().await.unwrap().into_inner();
        assert_eq!(
            (order.item.as_str(), order.quantity, &order.status),
            (format!("cup {n}").as_str(), n as i64, &types::OrderStatus::Pending)
        );
        made.push(order);
    }
    let found = client.get_order().order_id(made[2].id).send().await.unwrap().into_inner();
    assert_eq!(found, made[2]);

    // The stream follows the mock's `next_cursor`, two a page (the limit's default), to the end:
    // every order once, newest first.
    let pages: Vec<_> = client.list_orders_pages(|list| list).try_collect().await.unwrap();
    assert_eq!(pages.len(), 3, "six orders, two a page");
    let listed: Vec<types::Order> = client.list_orders_stream(|list| list).try_collect().await.unwrap();
    let mut expected: Vec<types::Order> = made.iter().rev().cloned().collect();
    expected.push(seeded[0].clone());
    assert_eq!(listed, expected);

    // An action moves the status; the list filters by it.
    let cancelled = client.cancel_order().order_id(made[0].id).send().await.unwrap().into_inner();
    assert_eq!(cancelled.status, types::OrderStatus::Cancelled);
    let filtered: Vec<types::Order> =
        client.list_orders_stream(|list| list.status(types::OrderStatus::Cancelled)).try_collect().await.unwrap();
    assert_eq!(filtered, vec![cancelled]);
    client.fulfil_order().order_id(made[1].id).send().await.unwrap();
    let shipped = client.get_order().order_id(made[1].id).send().await.unwrap().into_inner();
    assert_eq!(shipped.status, types::OrderStatus::Shipped);

    // An order the mock does not have is the document's 404, typed.
    let unknown = uuid::Uuid::from_u128(7);
    match client.get_order().order_id(unknown).send().await {
        Err(client::Error::ErrorResponse(error)) => {
            assert_eq!(error.status().as_u16(), 404);
            assert!(error.message.contains("no orders"), "{}", error.message);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn an_idempotency_key_makes_one_order_and_numbered_pages_are_followed_by_link() {
    let client = shop(Seed::Nothing).await;
    let first = client.create_order().idempotency_key("k-1").body(new_order("kettle", 1)).send().await.unwrap();
    let again = client.create_order().idempotency_key("k-1").body(new_order("kettle", 1)).send().await.unwrap();
    assert_eq!(first.into_inner(), again.into_inner());
    let orders: Vec<types::Order> = client.list_orders_stream(|list| list).try_collect().await.unwrap();
    assert_eq!(orders.len(), 1);

    for n in 0..7 {
        let article = types::Article { slug: format!("a{n}").parse().unwrap(), title: format!("Article {n}") };
        client.create_article().body(article).send().await.unwrap();
    }
    let per_page = std::num::NonZeroU64::new(3).unwrap();
    let pages: Vec<_> = client.list_articles_pages(|list| list.per_page(per_page)).try_collect().await.unwrap();
    assert_eq!(pages.iter().map(|page| page.len()).collect::<Vec<_>>(), [3, 3, 1]);
    let slugs: Vec<String> = client
        .list_articles_stream(|list| list.per_page(per_page))
        .map_ok(|article| article.slug.to_string())
        .try_collect()
        .await
        .unwrap();
    assert_eq!(slugs, ["a6", "a5", "a4", "a3", "a2", "a1", "a0"]);
}
