//! Server-sent events (`samples/events.yaml`) over real HTTP: the generated server streams the
//! document's event type; the generated client reads it back typed and, for an operation that
//! takes `Last-Event-ID`, reconnects where it broke off — 10,000 events with the connection
//! dropped midway arrive once each, in order — after the server's `retry:` time.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt;
use openapi_workspace_output::events::{client, server, types};
use openapi_workspace_runtime::events::{Event, EventStream, Negotiated};
use openapi_workspace_runtime::{ApiError, RequestContext};

#[derive(Default)]
struct Ticker {
    connections: AtomicUsize,
}

/// The reconnection time `ticks` asks for (`retry:`) on its first connection.
const RETRY: Duration = Duration::from_millis(400);

impl server::Api for Ticker {
    async fn ticks(
        &self,
        _: RequestContext<()>,
        last_event_id: Option<String>,
        query: server::TicksQuery,
    ) -> Result<server::TicksResponse, ApiError> {
        self.connections.fetch_add(1, Ordering::SeqCst);
        let start = match &last_event_id {
            Some(id) => id.parse::<i64>().map_err(|_| ApiError::bad_request("Last-Event-ID: not a tick"))? + 1,
            None => 0,
        };
        if start >= query.count {
            return Ok(server::TicksResponse::NoContent);
        }
        // Only the first connection breaks off.
        let break_at = query.break_after.filter(|_| last_event_id.is_none());
        let at = chrono::Utc::now();
        let ticks = futures::stream::iter(start..query.count).map(move |n| {
            if Some(n) == break_at {
                return Err(ApiError::internal());
            }
            let event = Event::new(types::Tick { n, at }).id(n.to_string());
            Ok(if n == 0 { event.retry(RETRY) } else { event })
        });
        Ok(server::TicksResponse::Ok(EventStream::try_new(ticks)))
    }

    async fn feed(
        &self,
        context: RequestContext<()>,
        query: server::FeedQuery,
    ) -> Result<server::FeedResponse, ApiError> {
        // The kinds, sent `a,b` by the client's styles, become the ticks' numbers' count.
        let extra = query.kinds.map_or(0, |kinds| kinds.len() as i64);
        let at = chrono::Utc::now();
        let ticks: Vec<types::Tick> = (0..query.count + extra).map(|n| types::Tick { n, at }).collect();
        Ok(server::FeedResponse::Ok(if context.wants_events() {
            Negotiated::Events(EventStream::new(futures::stream::iter(ticks.into_iter().map(Event::new))))
        } else {
            Negotiated::Json(ticks)
        }))
    }

    async fn news(&self, _: RequestContext<()>) -> Result<server::NewsResponse, ApiError> {
        let headlines = ["Rates held", "Markets up"].map(|h| Event::new(h.to_owned()).event("headline"));
        Ok(server::NewsResponse::Ok(EventStream::new(futures::stream::iter(headlines))))
    }
}

#[tokio::test]
async fn ten_thousand_events_with_a_dropped_connection_arrive_once_each_in_order() {
    let ticker = Arc::new(Ticker::default());
    let url = support::serve(server::router(ticker.clone())).await;
    let client = client::Client::new(&url, client::Config::new());

    let started = Instant::now();
    let read: Vec<_> =
        client.ticks_events(|b| b.count(10_000).break_after(5_000)).map(|tick| (tick, Instant::now())).collect().await;
    let elapsed = started.elapsed();
    // The reconnection (wherever the drop cut the stream: what the server had not flushed is
    // lost with the connection) came after the `retry:` time the first connection asked for.
    let longest = read.windows(2).map(|pair| pair[1].1 - pair[0].1).max().unwrap();
    assert!(longest >= RETRY, "{longest:?}");
    let ticks: Vec<client::events::Event<types::Tick>> = read.into_iter().map(|(tick, _)| tick.unwrap()).collect();
    let numbers: Vec<i64> = ticks.iter().map(|t| t.data.n).collect();
    assert_eq!(numbers, (0..10_000).collect::<Vec<_>>());
    assert!(ticks.iter().all(|t| t.id.as_deref() == Some(t.data.n.to_string().as_str())));
    // The first connection, the one resumed after the drop, and the `204` that ends the stream.
    assert_eq!(ticker.connections.load(Ordering::SeqCst), 3);
    println!("10,000 events, one reconnection: {elapsed:?}");
}

#[tokio::test]
async fn events_are_written_as_the_format_says_and_unresumable_streams_end_with_the_response() {
    let url = support::serve(server::router(Arc::new(Ticker::default()))).await;
    let response = reqwest::get(format!("{url}/ticks?count=2")).await.unwrap();
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let body = response.text().await.unwrap();
    assert!(body.starts_with("data: {\"at\":\""), "{body}");
    assert!(body.contains("\nid: 0\nretry: 400\n\n") && body.contains("\nid: 1\n\n"), "{body}");

    // A string type's events are the text itself, not its JSON.
    let news = reqwest::get(format!("{url}/news")).await.unwrap().text().await.unwrap();
    assert!(news.contains("data: Rates held\nevent: headline\n"), "{news}");

    let client = client::Client::new(&url, client::Config::new());
    let news: Vec<_> = client.news_events(|b| b).map(Result::unwrap).collect().await;
    let read: Vec<(String, Option<String>)> = news.into_iter().map(|e| (e.data, e.event)).collect();
    assert_eq!(
        read,
        [
            ("Rates held".to_owned(), Some("headline".to_owned())),
            ("Markets up".to_owned(), Some("headline".to_owned()))
        ]
    );

    // Bad parameters are refused before any stream starts.
    let refused = reqwest::get(format!("{url}/ticks?count=-1")).await.unwrap();
    assert_eq!(refused.status().as_u16(), 400);
}

#[tokio::test]
async fn an_operation_offering_json_and_events_answers_what_accept_asks_for() {
    let url = support::serve(server::router(Arc::new(Ticker::default()))).await;
    let client = client::Client::new(&url, client::Config::new());

    // The client: typed JSON from the operation, typed events from its stream.
    let json = client.feed().count(2).kinds(vec!["a".to_owned(), "b".to_owned()]).send().await.unwrap();
    assert_eq!(json.into_inner().iter().map(|t| t.n).collect::<Vec<_>>(), [0, 1, 2, 3]);
    let events: Vec<_> =
        client.feed_events(|b| b.count(2).kinds(vec!["a".to_owned()])).map(|e| e.unwrap().data.n).collect().await;
    assert_eq!(events, [0, 1, 2]);

    // By hand: as `Accept` asks, JSON when it names nothing or prefers JSON.
    let http = reqwest::Client::new();
    for (accept, media) in [
        (None, "application/json"),
        (Some("application/json"), "application/json"),
        (Some("text/event-stream"), "text/event-stream"),
        (Some("application/json;q=0.5, text/event-stream"), "text/event-stream"),
        (Some("text/event-stream;q=0.1, application/json"), "application/json"),
    ] {
        let mut request = http.get(format!("{url}/feed?count=1"));
        if let Some(accept) = accept {
            request = request.header("accept", accept);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.headers()["content-type"], media, "{accept:?}");
    }
}

#[tokio::test]
async fn the_mock_answers_one_event_of_the_documented_type() {
    let url = support::serve(server::mock_router(Arc::new(server::MockApi))).await;
    let client = client::Client::new(&url, client::Config::new());
    let ticks: Vec<_> = client.ticks_events(|b| b.count(1)).take(1).collect().await;
    assert!(ticks[0].is_ok(), "{:?}", ticks[0]);
}

/// An operation offering JSON and events: the mock answers what `Accept` asks for — events to
/// the client's event stream (which asks for them), JSON to its plain call, and the document's
/// first (JSON) to a request that names neither.
#[tokio::test]
async fn the_mock_answers_the_media_type_accept_asks_for() {
    let url = support::serve(server::mock_router(Arc::new(server::MockApi))).await;
    let client = client::Client::new(&url, client::Config::new());
    let events: Vec<_> = client.feed_events(|b| b.count(1)).take(1).collect().await;
    assert!(events[0].is_ok(), "{:?}", events[0]);
    let ticks = client.feed().count(1).send().await.unwrap().into_inner();
    assert!(!ticks.is_empty());
    let get = |accept: &'static str| {
        let url = format!("{url}/feed?count=1");
        async move {
            let response = reqwest::Client::new().get(url).header("accept", accept).send().await.unwrap();
            let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
            (response.status().as_u16(), content_type)
        }
    };
    assert_eq!(get("text/event-stream").await, (200, "text/event-stream".to_owned()));
    assert_eq!(get("text/*;q=0.9, application/json;q=0.1").await, (200, "text/event-stream".to_owned()));
    assert_eq!(get("*/*").await, (200, "application/json".to_owned()));
    assert_eq!(get("application/json, text/event-stream;q=0.5").await, (200, "application/json".to_owned()));
}

/// A response's chunks may end anywhere: inside a character, between a CR and its LF. The
/// client reads the events as if the body had come in one piece.
#[tokio::test]
async fn events_split_anywhere_across_chunks_read_whole() {
    let router = axum::Router::new().route(
        "/news",
        axum::routing::get(|| async {
            let chunks: [&[u8]; 5] = [b"data: caf\xC3", b"\xA9\r", b"\nevent: x\r\n\r", b"\ndata: two\r\n", b"\r\n"];
            let body = futures::stream::iter(chunks).then(|chunk| async move {
                // Each its own write, as a slow network delivers them.
                tokio::time::sleep(Duration::from_millis(5)).await;
                Ok::<_, std::convert::Infallible>(axum::body::Bytes::from_static(chunk))
            });
            ([("content-type", "text/event-stream")], axum::body::Body::from_stream(body))
        }),
    );
    let url = support::serve(router).await;
    let client = client::Client::new(&url, client::Config::new());
    let news: Vec<_> = client.news_events(|b| b).map(Result::unwrap).collect().await;
    let read: Vec<(String, Option<String>)> = news.into_iter().map(|e| (e.data, e.event)).collect();
    assert_eq!(read, [("café".to_owned(), Some("x".to_owned())), ("two".to_owned(), None)]);
}
