//! What OpenAPI 3.2 adds, served (`samples/openapi_3_2.yaml`): an event stream its `itemSchema`
//! describes reaches the client as typed events, cookies in 3.2's `cookie` style go as they are,
//! not percent-encoded, a `querystring` parameter is the whole query string as one object, and
//! operations of the QUERY method and of other methods (`additionalOperations`) are routed and
//! sent with their methods.

mod support;

use std::sync::Arc;

use futures::StreamExt;
use payments_codegen_output::openapi_3_2::{client, server, types};
use payments_server::runtime::events::{Event, EventStream};
use payments_server::runtime::{ApiError, RequestContext};

struct Prices;

impl server::Api for Prices {
    async fn find_books(
        &self,
        _: RequestContext<()>,
        query: server::FindBooksQuery,
    ) -> Result<server::FindBooksResponse, ApiError> {
        let search = query.search;
        let title = format!("{} ({})", *search.title, search.available.map_or("any", |a| if a { "in" } else { "out" }));
        Ok(vec![types::Book { title, year: search.year }].into())
    }

    async fn query_books(
        &self,
        _: RequestContext<()>,
        body: types::BookQuery,
    ) -> Result<server::QueryBooksResponse, ApiError> {
        let books = body.titles.into_iter().map(|title| types::Book { title, year: body.before });
        Ok(books.collect::<Vec<_>>().into())
    }

    async fn purge_books(&self, _: RequestContext<()>) -> Result<server::PurgeBooksResponse, ApiError> {
        Ok(server::PurgeBooksResponse::NoContent)
    }

    async fn link_book(
        &self,
        _: RequestContext<()>,
        id: i64,
        link: String,
    ) -> Result<server::LinkBookResponse, ApiError> {
        match link.starts_with("</books/") && id > 0 {
            true => Ok(server::LinkBookResponse::NoContent),
            false => Err(ApiError::new(axum::http::StatusCode::UNPROCESSABLE_ENTITY, "not a book's link")),
        }
    }

    async fn prices(
        &self,
        context: RequestContext<()>,
        last_event_id: Option<String>,
        region: String,
        pairs: Option<Vec<String>>,
    ) -> Result<server::PricesResponse, ApiError> {
        if last_event_id.is_some() {
            return Ok(server::PricesResponse::NoContent);
        }
        let cookie = context.headers.get("cookie").map(|c| c.to_str().unwrap().to_owned()).unwrap_or_default();
        let prices = pairs.unwrap_or_default().into_iter().enumerate().map(move |(i, pair)| {
            Event::new(types::Price { pair, price: 1.25, region: region.clone() })
                .id(i.to_string())
                .event(cookie.clone())
        });
        Ok(server::PricesResponse::Ok(EventStream::new(futures::stream::iter(prices.collect::<Vec<_>>()))))
    }
}

#[tokio::test]
async fn item_schema_events_and_cookie_style_cookies() {
    let url = support::serve(server::router(Arc::new(Prices))).await;
    let client = client::Client::new(&url);
    let events: Vec<_> = client
        .prices_events(|b| b.region("eu-west").pairs(vec!["GBP/EUR".to_owned(), "GBP/USD".to_owned()]))
        .map(Result::unwrap)
        .collect()
        .await;
    let read: Vec<(String, String)> = events.iter().map(|e| (e.data.pair.clone(), e.data.region.clone())).collect();
    assert_eq!(read, [("GBP/EUR".into(), "eu-west".into()), ("GBP/USD".into(), "eu-west".into())]);
    // The cookies as they went: not percent-encoded (`form` would have sent `GBP%2FEUR`).
    assert_eq!(events[0].event.as_deref(), Some("region=eu-west; pairs=GBP/EUR,GBP/USD"));
}

#[tokio::test]
async fn a_querystring_parameter_is_the_whole_query_string() {
    let url = support::serve(server::router(Arc::new(Prices))).await;
    let client = client::Client::new(&url);
    let search = types::BookSearch { title: "Dune".parse().unwrap(), year: Some(1965), available: Some(true) };
    let books = client.find_books().search(search).send().await.unwrap().into_inner();
    assert_eq!(books, [types::Book { title: "Dune (in)".into(), year: Some(1965) }]);

    // On the wire it is the object's fields, form-encoded, and nothing else.
    let http = reqwest::Client::new();
    let read = http.get(format!("{url}/books?title=Le%20Petit%20Prince&year=1943")).send().await.unwrap();
    assert_eq!(read.status(), 200);
    let books: Vec<types::Book> = read.json().await.unwrap();
    assert_eq!(books, [types::Book { title: "Le Petit Prince (any)".into(), year: Some(1943) }]);
    for refused in ["year=1943", "title=&year=1943", "title=x&year=1200", "title=x&year=soon", "title=x&colour=red"] {
        let answer = http.get(format!("{url}/books?{refused}")).send().await.unwrap();
        assert_eq!(answer.status(), 400, "{refused}");
        let error: serde_json::Value = answer.json().await.unwrap();
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{refused}: {error}");
    }
}

#[tokio::test]
async fn the_query_method_and_other_methods_are_routed_and_sent_with_their_methods() {
    let url = support::serve(server::router(Arc::new(Prices))).await;
    let client = client::Client::new(&url);
    let query = types::BookQuery { titles: vec!["Dune".into(), "Emma".into()], before: Some(1970) };
    let books = client.query_books().body(query).send().await.unwrap().into_inner();
    assert_eq!(books.iter().map(|b| b.title.as_str()).collect::<Vec<_>>(), ["Dune", "Emma"]);
    client.purge_books().send().await.unwrap();
    client.link_book().id(3).link("</books/4>; rel=next").send().await.unwrap();

    // On the wire: the methods themselves, at the document's paths.
    let http = reqwest::Client::new();
    let method = |name: &str| reqwest::Method::from_bytes(name.as_bytes()).unwrap();
    let sent = http
        .request(method("QUERY"), format!("{url}/books"))
        .json(&serde_json::json!({"titles": ["Kim"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(sent.status(), 200);
    assert_eq!(sent.json::<serde_json::Value>().await.unwrap(), serde_json::json!([{"title": "Kim"}]));
    let purged = http.request(method("PURGE"), format!("{url}/books")).send().await.unwrap();
    assert_eq!(purged.status(), 204);
    let linked =
        http.request(method("LINK"), format!("{url}/books/7")).header("link", "</books/8>").send().await.unwrap();
    assert_eq!(linked.status(), 204);

    // Refused as any operation's request is: a body or parameter the document refuses, a
    // method the path does not serve (405, naming every one it does, custom methods too).
    for (name, path, body, status, allow) in [
        ("QUERY", "/books", Some(serde_json::json!({"titles": []})), 400, None),
        ("QUERY", "/books", None, 400, None),
        ("LINK", "/books/0", None, 400, None),
        ("LINK", "/books/x", None, 400, None),
        ("DELETE", "/books", None, 405, Some("GET, HEAD, PURGE, QUERY")),
        ("LINKS", "/books/1", None, 405, Some("LINK")),
        ("GET", "/books/1", None, 405, Some("LINK")),
    ] {
        let mut request = http.request(method(name), format!("{url}{path}")).header("link", "</books/1>");
        if let Some(body) = body {
            request = request.json(&body);
        }
        let answer = request.send().await.unwrap();
        assert_eq!(answer.status(), status, "{name} {path}");
        assert_eq!(
            answer.headers().get("allow").map(|a| a.to_str().unwrap().to_owned()).as_deref(),
            allow,
            "{name} {path}"
        );
        let error: serde_json::Value = answer.json().await.unwrap();
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{name} {path}: {error}");
    }
    // A LINK without its required header never reaches the operation.
    let bare = http.request(method("LINK"), format!("{url}/books/7")).send().await.unwrap();
    assert_eq!(bare.status(), 400);
}
