//! Server-sent events, read: progenitor answers an operation answering `text/event-stream` with
//! the response's bytes; [`stream`] reads them as events of the document's type, and reconnects
//! as an EventSource does: after the server's `retry:` time, or else at once after a connection
//! that brought events and with the retry policy's jittered backoff after one that brought none.
//! (A connection the server refuses has already been retried by the client's `exec` hook.)

use std::time::Duration;

use futures::StreamExt;

use super::retry::RetryPolicy;

/// One event: its data (the document's event type), its id and its type.
#[derive(Debug, Clone, PartialEq)]
pub struct Event<T> {
    pub data: T,
    pub id: Option<String>,
    /// `event:`; none is a `message`.
    pub event: Option<String>,
}

struct State<F, T> {
    connect: F,
    resumable: bool,
    /// Whether the event type is a string: each event's data is then the text itself.
    text: bool,
    last_id: Option<String>,
    body: Option<progenitor_client::ByteStream>,
    /// Bytes not yet read as text: a chunk may end inside a character, or between a CR and
    /// the LF that makes them one line end.
    pending: Vec<u8>,
    buffer: String,
    ready: std::collections::VecDeque<Event<T>>,
    /// Connections in a row that ended before any event.
    fruitless: u32,
    /// Connections made so far.
    connections: u32,
    /// The server's reconnection time (`retry:`), once it has sent one.
    retry: Option<Duration>,
    policy: RetryPolicy,
    done: bool,
}

/// The events answered to the requests `connect` makes, each one's data the JSON of `T` (or,
/// when `text`, the text itself). When the connection ends (cleanly
/// or not) and the operation is `resumable` (it takes `Last-Event-ID`), `connect` is called
/// again with the last event id seen, until the server answers `204 No Content` (the
/// format's "no more events"), a connection fails, or three in a row end before an event; each
/// reconnection waits as the module says, `policy` giving the backoff. Otherwise the stream ends
/// with the response, with an error if it broke off.
pub fn stream<'a, T, E, F, Fut>(
    connect: F,
    resumable: bool,
    text: bool,
    policy: RetryPolicy,
) -> impl futures::Stream<Item = Result<Event<T>, progenitor_client::Error<E>>> + 'a
where
    T: serde::de::DeserializeOwned + 'a,
    E: 'a,
    F: FnMut(Option<String>) -> Fut + 'a,
    Fut: Future<
            Output = Result<
                progenitor_client::ResponseValue<progenitor_client::ByteStream>,
                progenitor_client::Error<E>,
            >,
        > + 'a,
{
    let state = State {
        connect,
        resumable,
        text,
        last_id: None,
        body: None,
        pending: Vec::new(),
        buffer: String::new(),
        ready: std::collections::VecDeque::new(),
        fruitless: 0,
        connections: 0,
        retry: None,
        policy,
        done: false,
    };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.ready.pop_front() {
                return Some((Ok(event), state));
            }
            if state.done {
                return None;
            }
            let Some(body) = state.body.as_mut() else {
                if state.fruitless >= 3 {
                    return None;
                }
                if state.connections > 0 {
                    let wait = state.retry.unwrap_or_else(|| match state.fruitless {
                        0 => Duration::ZERO,
                        fruitless => state.policy.backoff_before(fruitless + 1),
                    });
                    tokio::time::sleep(wait).await;
                }
                state.connections += 1;
                match (state.connect)(state.last_id.clone()).await {
                    Ok(response) if response.status() == reqwest::StatusCode::NO_CONTENT => state.done = true,
                    Ok(response) => {
                        state.body = Some(response.into_inner());
                        state.pending.clear();
                        state.buffer.clear();
                        state.fruitless += 1;
                    }
                    Err(error) => {
                        state.done = true;
                        return Some((Err(error), state));
                    }
                }
                continue;
            };
            match body.next().await {
                Some(Ok(bytes)) => {
                    state.pending.extend_from_slice(&bytes);
                    // Up to the last whole character; a CR at the end waits for what follows.
                    let mut whole = match std::str::from_utf8(&state.pending) {
                        Err(error) if error.error_len().is_none() => error.valid_up_to(),
                        _ => state.pending.len(),
                    };
                    if state.pending[..whole].ends_with(b"\r") {
                        whole -= 1;
                    }
                    let read: Vec<u8> = state.pending.drain(..whole).collect();
                    // The format allows CRLF, LF and CR line ends: read them all as LF.
                    let text = String::from_utf8_lossy(&read).replace("\r\n", "\n").replace('\r', "\n");
                    state.buffer.push_str(&text);
                    if let Err(error) = dispatch(&mut state) {
                        state.done = true;
                        return Some((Err(error), state));
                    }
                }
                Some(Err(error)) if !state.resumable => {
                    state.done = true;
                    return Some((Err(progenitor_client::Error::CommunicationError(error)), state));
                }
                // Broken off, or ended: what was half read is dropped, as the format says.
                Some(Err(_)) | None => {
                    state.body = None;
                    state.done = !state.resumable;
                }
            }
        }
    })
}

/// Moves every whole event (ended by a blank line) of the buffer into `ready`.
// progenitor's own error, which every call of the client returns.
#[allow(clippy::result_large_err)]
fn dispatch<F, T: serde::de::DeserializeOwned, E>(state: &mut State<F, T>) -> Result<(), progenitor_client::Error<E>> {
    while let Some(end) = state.buffer.find("\n\n") {
        let block: String = state.buffer.drain(..end + 2).collect();
        let (mut data, mut event, mut id) = (None::<String>, None, None);
        for line in block.lines() {
            if line.starts_with(':') {
                continue; // A comment: the server's keep-alive.
            }
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "data" => match &mut data {
                    Some(data) => {
                        data.push('\n');
                        data.push_str(value);
                    }
                    None => data = Some(value.to_owned()),
                },
                "event" => event = Some(value.to_owned()),
                "id" if !value.contains('\0') => id = Some(value.to_owned()),
                // Milliseconds, digits only; anything else is ignored, as the format says.
                "retry" if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) => {
                    state.retry = value.parse().ok().map(Duration::from_millis);
                }
                _ => {}
            }
        }
        if id.is_some() {
            state.last_id = id.clone();
        }
        let Some(data) = data else { continue };
        let parsed = if state.text {
            serde_json::from_value(serde_json::Value::String(data.clone()))
        } else {
            serde_json::from_str(&data)
        };
        let parsed = parsed
            .map_err(|error| progenitor_client::Error::InvalidResponsePayload(data.into_bytes().into(), error))?;
        state.fruitless = 0;
        state.ready.push_back(Event { data: parsed, id: id.or_else(|| state.last_id.clone()), event });
    }
    Ok(())
}
