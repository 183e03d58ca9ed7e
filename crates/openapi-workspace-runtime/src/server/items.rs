//! Streamed items: what an operation whose response is a stream of JSON values answers —
//! OpenAPI 3.2's `itemSchema` on JSON Lines (`application/jsonl`, `application/x-ndjson`,
//! `application/x-jsonlines`: each item's JSON on a line of its own) or a JSON text sequence
//! (`application/json-seq`, RFC 7464: each item after a record separator, `0x1E`). Each item
//! is written as it comes, so a client reads the first before the last is made. A stream item
//! that is an error ends the response abruptly: the client sees the stream broken off, not
//! a well-formed end.

use std::pin::Pin;

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};
use serde::Serialize;

use super::ApiError;
use super::events::Aborted;

type Items<T> = Pin<Box<dyn Stream<Item = Result<T, ApiError>> + Send>>;

/// The items an operation answers, each of the document's item type.
pub struct ItemStream<T> {
    items: Items<T>,
}

impl<T> std::fmt::Debug for ItemStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ItemStream")
    }
}

impl<T: Send + 'static> ItemStream<T> {
    /// The items of `stream`, in order; the response ends when it does.
    pub fn new(stream: impl Stream<Item = T> + Send + 'static) -> Self {
        Self { items: Box::pin(stream.map(Ok)) }
    }

    /// [`ItemStream::new`] for a stream that can fail: an error ends the response abruptly.
    pub fn try_new(stream: impl Stream<Item = Result<T, ApiError>> + Send + 'static) -> Self {
        Self { items: Box::pin(stream) }
    }
}

/// The response: `status`, the document's `media_type`, each item framed as it says.
pub fn response<T: Serialize + Send + 'static>(
    status: StatusCode,
    media_type: &'static str,
    stream: ItemStream<T>,
) -> Response {
    let sequence = media_type.split(';').next().is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json-seq"));
    let body = stream.items.map(move |item| -> Result<Bytes, Aborted> {
        let item = item.map_err(Aborted)?;
        let mut written = Vec::with_capacity(128);
        if sequence {
            written.push(0x1E);
        }
        serde_json::to_writer(&mut written, &item).map_err(|_| Aborted(ApiError::internal()))?;
        written.push(b'\n');
        Ok(Bytes::from(written))
    });
    let mut response = (status, Body::from_stream(body)).into_response();
    // The generator names a media type of the streamed ones, whose essence is a valid value.
    let content_type = HeaderValue::from_str(media_type).unwrap_or(HeaderValue::from_static("application/jsonl"));
    response.headers_mut().insert(header::CONTENT_TYPE, content_type);
    response
}
