//! Streamed items (OpenAPI 3.2's `itemSchema` on JSON Lines and JSON text sequences), read:
//! progenitor answers such an operation with the response's bytes; [`stream`] reads them as
//! values of the document's item type.

use futures::StreamExt;

struct State<Fut> {
    send: Option<std::pin::Pin<Box<Fut>>>,
    body: Option<progenitor_client::ByteStream>,
    /// Bytes of lines not yet whole: a chunk may end anywhere, inside a character too.
    buffer: Vec<u8>,
    done: bool,
}

/// The items of the response `send` answers: each line's JSON (a record separator, `0x1E`,
/// before it, as JSON text sequences write them, and a CR after it are skipped; blank lines
/// too), read as a `T` when its line ends. Ends with the response, with an error if it broke
/// off or a line is not a `T`; a last line without its line end is read at the end.
pub fn stream<'a, T, E, Fut>(send: Fut) -> impl futures::Stream<Item = Result<T, progenitor_client::Error<E>>> + 'a
where
    T: serde::de::DeserializeOwned + 'a,
    E: 'a,
    Fut: Future<
            Output = Result<
                progenitor_client::ResponseValue<progenitor_client::ByteStream>,
                progenitor_client::Error<E>,
            >,
        > + 'a,
{
    let state = State { send: Some(Box::pin(send)), body: None, buffer: Vec::new(), done: false };
    futures::stream::unfold(state, |mut state| async move {
        loop {
            let end = state.buffer.iter().position(|b| *b == b'\n');
            if end.is_some() || (state.done && !state.buffer.is_empty()) {
                let end = end.map_or(state.buffer.len(), |end| end + 1);
                let line: Vec<u8> = state.buffer.drain(..end).collect();
                let text = line.strip_prefix(b"\x1e").unwrap_or(&line).trim_ascii();
                if text.is_empty() {
                    continue;
                }
                let item = serde_json::from_slice(text)
                    .map_err(|error| progenitor_client::Error::InvalidResponsePayload(text.to_vec().into(), error));
                state.done |= item.is_err();
                if item.is_err() {
                    state.buffer.clear();
                }
                return Some((item, state));
            }
            if state.done {
                return None;
            }
            if let Some(send) = state.send.take() {
                match send.await {
                    Ok(response) => state.body = Some(response.into_inner()),
                    Err(error) => {
                        state.done = true;
                        return Some((Err(error), state));
                    }
                }
            }
            let body = state.body.as_mut()?;
            match body.next().await {
                Some(Ok(bytes)) => state.buffer.extend_from_slice(&bytes),
                Some(Err(error)) => {
                    state.done = true;
                    state.buffer.clear();
                    return Some((Err(progenitor_client::Error::CommunicationError(error)), state));
                }
                None => state.done = true,
            }
        }
    })
}
