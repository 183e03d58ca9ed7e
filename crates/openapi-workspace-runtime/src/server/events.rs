//! Server-sent events: what an operation whose response is `text/event-stream` answers — a
//! stream of the document's event type, each event's `data` its JSON (a string type's: the text
//! itself, as documents that describe events as `type: string` mean), written by axum's SSE
//! support with a keep-alive comment every 15 seconds of silence.
//!
//! An event with an `id` lets a client that loses the connection come back with
//! `Last-Event-ID` (the generated client does, when the operation takes that header) and go on
//! from the event after it; the operation reads the header and resumes there. A stream item
//! that is an error ends the response abruptly, as a lost connection does: clients reconnect.

use std::pin::Pin;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::sse::{self, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};
use serde::Serialize;

use super::ApiError;

/// One event: its data (the document's event type) and the optional fields of the format.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<T> {
    pub data: T,
    /// The event's id: what a client reconnecting sends as `Last-Event-ID`.
    pub id: Option<String>,
    /// The event's type (`event:`); none is a `message`.
    pub event: Option<String>,
    /// How long a client should wait before reconnecting (`retry:`).
    pub retry: Option<Duration>,
}

impl<T> Event<T> {
    pub fn new(data: T) -> Self {
        Self { data, id: None, event: None, retry: None }
    }

    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    pub fn event(mut self, event: impl Into<String>) -> Self {
        self.event = Some(event.into());
        self
    }

    pub fn retry(mut self, retry: Duration) -> Self {
        self.retry = Some(retry);
        self
    }
}

type Items<T> = Pin<Box<dyn Stream<Item = Result<Event<T>, ApiError>> + Send>>;

/// The events an operation answers.
pub struct EventStream<T> {
    items: Items<T>,
}

impl<T> std::fmt::Debug for EventStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("EventStream")
    }
}

impl<T: Send + 'static> EventStream<T> {
    /// The events of `stream`, in order; the response ends when it does.
    pub fn new(stream: impl Stream<Item = Event<T>> + Send + 'static) -> Self {
        Self { items: Box::pin(stream.map(Ok)) }
    }

    /// [`EventStream::new`] for a stream that can fail: an error ends the response abruptly (it is
    /// logged by no one here, and the client sees a lost connection).
    pub fn try_new(stream: impl Stream<Item = Result<Event<T>, ApiError>> + Send + 'static) -> Self {
        Self { items: Box::pin(stream) }
    }
}

/// The response: `status`, `text/event-stream`, each event as the format writes it.
pub fn response<T: Serialize + Send + 'static>(status: StatusCode, stream: EventStream<T>) -> Response {
    let events = stream.items.map(|item| -> Result<sse::Event, ApiError> {
        let event = item?;
        // Text is written as it is; anything else as its JSON.
        let mut written = match serde_json::to_value(&event.data).map_err(|_| ApiError::internal())? {
            serde_json::Value::String(text) => sse::Event::default().data(text),
            value => sse::Event::default().data(value.to_string()),
        };
        if let Some(id) = event.id {
            written = written.id(id);
        }
        if let Some(name) = event.event {
            written = written.event(name);
        }
        if let Some(retry) = event.retry {
            written = written.retry(retry);
        }
        Ok(written)
    });
    let mut response = Sse::new(events.map(|item| item.map_err(Aborted)))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response();
    *response.status_mut() = status;
    response
}

/// What an operation offering JSON and events for the same status answers: the request's
/// `Accept` says which it wants ([`wants_events`]).
#[derive(Debug)]
pub enum Negotiated<T, E> {
    Json(T),
    Events(EventStream<E>),
}

/// Whether a request's `Accept` prefers `text/event-stream` to JSON: it names the former, with
/// a quality no lower than any JSON type it names.
pub fn wants_events(headers: &HeaderMap) -> bool {
    let mut best = (None::<f32>, None::<f32>);
    for item in headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')) {
        let mut parts = item.split(';');
        let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let quality =
            parts.filter_map(|p| p.trim().strip_prefix("q=")).find_map(|q| q.parse::<f32>().ok()).unwrap_or(1.0);
        let slot = match media.as_str() {
            "text/event-stream" => &mut best.0,
            "application/json" => &mut best.1,
            _ => continue,
        };
        *slot = Some(slot.map_or(quality, |q: f32| q.max(quality)));
    }
    match best {
        (Some(events), json) => events > 0.0 && events >= json.unwrap_or(0.0),
        (None, _) => false,
    }
}

/// The response of a [`Negotiated`] answer.
pub fn negotiated_response<T: Serialize, E: Serialize + Send + 'static>(
    status: StatusCode,
    answer: Negotiated<T, E>,
) -> Response {
    match answer {
        Negotiated::Json(body) => super::json_response(status, &body),
        Negotiated::Events(stream) => response(status, stream),
    }
}

/// A stream's error, which ends the body (and with it the connection) without a last event (or
/// item: `items` ends its bodies so too).
#[derive(Debug)]
pub(super) struct Aborted(#[allow(dead_code)] pub(super) ApiError);

impl std::fmt::Display for Aborted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the event stream ended with an error")
    }
}

impl std::error::Error for Aborted {}
