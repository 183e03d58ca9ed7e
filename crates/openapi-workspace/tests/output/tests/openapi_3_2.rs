//! What OpenAPI 3.2 adds, served (`samples/openapi_3_2.yaml`): an event stream its `itemSchema`
//! describes reaches the client as typed events, cookies in 3.2's `cookie` style go as they are,
//! not percent-encoded, a `querystring` parameter is the whole query string as one object, and
//! operations of the QUERY method and of other methods (`additionalOperations`) are routed and
//! sent with their methods, and streams of items (`itemSchema` on JSON Lines and JSON text
//! sequences) reach the client item by item.

mod support;

use std::sync::Arc;

use futures::StreamExt;
use openapi_workspace_output::openapi_3_2::{client, server, types};
use openapi_workspace_runtime::events::{Event, EventStream};
use openapi_workspace_runtime::items::ItemStream;
use openapi_workspace_runtime::{ApiError, RequestContext};

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

    async fn book_feed(
        &self,
        _: RequestContext<()>,
        query: server::BookFeedQuery,
    ) -> Result<server::BookFeedResponse, ApiError> {
        let count = query.limit.unwrap_or(3);
        // The 14th fails, once the 13 before it have gone: the response breaks off there, as a
        // lost connection does.
        let books = futures::stream::iter(0..count).then(|i| async move {
            match i {
                13 => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    Err(ApiError::internal())
                }
                i => Ok(types::Book {
                    title: format!("Book {i} — «{}»", "é".repeat(i as usize % 5)),
                    year: Some(1900 + i),
                }),
            }
        });
        Ok(server::BookFeedResponse::Ok(ItemStream::try_new(books)))
    }

    async fn book_log(&self, _: RequestContext<()>) -> Result<server::BookLogResponse, ApiError> {
        let log =
            ["Dune", "Emma"].map(|title| types::BookLogResponse { title: title.into(), shelved: title == "Dune" });
        Ok(server::BookLogResponse::Ok(ItemStream::new(futures::stream::iter(log))))
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
    let client = client::Client::new(&url, client::Config::new());
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
    let client = client::Client::new(&url, client::Config::new());
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
        assert!(error["detail"].as_str().is_some_and(|m| !m.is_empty()), "{refused}: {error}");
    }
}

#[tokio::test]
async fn the_query_method_and_other_methods_are_routed_and_sent_with_their_methods() {
    let url = support::serve(server::router(Arc::new(Prices))).await;
    let client = client::Client::new(&url, client::Config::new());
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
        assert!(error["detail"].as_str().is_some_and(|m| !m.is_empty()), "{name} {path}: {error}");
    }
    // A LINK without its required header never reaches the operation.
    let bare = http.request(method("LINK"), format!("{url}/books/7")).send().await.unwrap();
    assert_eq!(bare.status(), 400);
}

#[tokio::test]
async fn streamed_items_arrive_one_by_one() {
    let url = support::serve(server::router(Arc::new(Prices))).await;
    let client = client::Client::new(&url, client::Config::new());
    let books: Vec<types::Book> = client.book_feed_items(|b| b.limit(5)).map(Result::unwrap).collect().await;
    assert_eq!(books.len(), 5);
    assert_eq!(books[4], types::Book { title: "Book 4 — «éééé»".into(), year: Some(1904) });
    let log: Vec<_> = client.book_log_items(|b| b).map(Result::unwrap).collect().await;
    assert_eq!(
        log.iter().map(|l| (l.title.as_str(), l.shelved)).collect::<Vec<_>>(),
        [("Dune", true), ("Emma", false)]
    );

    // On the wire: a line of JSON each, and a record separator before each of a sequence.
    let http = reqwest::Client::new();
    let lines = http.get(format!("{url}/books/feed?limit=2")).send().await.unwrap();
    assert_eq!(lines.headers()["content-type"], "application/jsonl");
    assert_eq!(
        lines.text().await.unwrap(),
        "{\"title\":\"Book 0 — «»\",\"year\":1900}\n{\"title\":\"Book 1 — «é»\",\"year\":1901}\n"
    );
    let sequence = http.get(format!("{url}/books/log")).send().await.unwrap();
    assert_eq!(sequence.headers()["content-type"], "application/json-seq");
    assert_eq!(
        sequence.text().await.unwrap(),
        "\u{1e}{\"shelved\":true,\"title\":\"Dune\"}\n\u{1e}{\"shelved\":false,\"title\":\"Emma\"}\n"
    );

    // A stream that fails on the server breaks off: the client reads what came, then an error.
    let read: Vec<_> = client.book_feed_items(|b| b.limit(20)).collect().await;
    assert_eq!(read.len(), 14, "13 items, then the error: {:?}", read.last());
    assert!(read[..13].iter().all(Result::is_ok));
    assert!(read[13].is_err());
    // A request the document refuses is refused before any item.
    let refused: Vec<_> = client.book_feed_items(|b| b.limit(-1)).collect().await;
    assert!(
        matches!(
            refused[..],
            [Err(client::Error::InvalidRequest(_)
                | client::Error::ErrorResponse(_)
                | client::Error::UnexpectedResponse(_))]
        ),
        "{refused:?}"
    );
}

/// Items split anywhere across a response's chunks (inside a character, between a CR and its
/// LF) are read as if the body had come in one piece; a last line without its end is read too.
#[tokio::test]
async fn items_split_anywhere_across_chunks_read_whole() {
    let router = axum::Router::new().route(
        "/books/feed",
        axum::routing::get(|| async {
            let chunks: [&[u8]; 4] =
                [b"{\"title\":\"Caf\xC3", b"\xA9\"}\r", b"\n\n{\"title\":", b"\"Kim\",\"year\":1901}"];
            let body = futures::stream::iter(chunks).then(|chunk| async move {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                Ok::<_, std::convert::Infallible>(axum::body::Bytes::from_static(chunk))
            });
            ([("content-type", "application/jsonl")], axum::body::Body::from_stream(body))
        }),
    );
    let url = support::serve(router).await;
    let client = client::Client::new(&url, client::Config::new());
    let books: Vec<_> = client.book_feed_items(|b| b).map(Result::unwrap).collect().await;
    assert_eq!(
        books,
        [types::Book { title: "Café".into(), year: None }, types::Book { title: "Kim".into(), year: Some(1901) }]
    );
}
