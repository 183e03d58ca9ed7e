//! An operation's error answers decoded by their status. progenitor decodes one error type per
//! operation; where a document gives different statuses different bodies, the generated client
//! gives the operation an enum with a variant per documented status, and each arm of its `send`
//! decodes the body its status documents through one of these into that variant.

use progenitor_client::{Error, ResponseValue};

/// A JSON body, read as `T` and made the error `E` by `variant`.
pub async fn json<T: serde::de::DeserializeOwned, E>(
    response: reqwest::Response,
    variant: impl FnOnce(T) -> E,
) -> Result<ResponseValue<E>, Error<E>> {
    let (status, headers) = (response.status(), response.headers().clone());
    let body = response.bytes().await.map_err(Error::ResponseBodyError)?;
    let value = serde_json::from_slice(&body).map_err(|error| Error::InvalidResponsePayload(body, error))?;
    Ok(ResponseValue::new(variant(value), status, headers))
}

/// A body in a media type other than JSON, as text: an error body is text in practice (HTML, plain
/// text, XML), and bytes that are not UTF-8 are kept as replacement characters rather than
/// refused.
pub async fn text<E>(
    response: reqwest::Response,
    variant: impl FnOnce(String) -> E,
) -> Result<ResponseValue<E>, Error<E>> {
    let (status, headers) = (response.status(), response.headers().clone());
    let body = response.bytes().await.map_err(Error::ResponseBodyError)?;
    Ok(ResponseValue::new(variant(String::from_utf8_lossy(&body).into_owned()), status, headers))
}

/// A status documented without a body: the error is `variant` (its headers stay on the value).
pub fn empty<E>(response: reqwest::Response, variant: E) -> ResponseValue<E> {
    ResponseValue::new(variant, response.status(), response.headers().clone())
}

/// A status the document does not list for the operation: its code and its body as text.
pub async fn unexpected<E>(
    response: reqwest::Response,
    variant: impl FnOnce(u16, String) -> E,
) -> Result<ResponseValue<E>, Error<E>> {
    let code = response.status().as_u16();
    text(response, |body| variant(code, body)).await
}
