//! A form body (`application/x-www-form-urlencoded`) as [`crate::forms`] writes one, nested
//! values in brackets: what the generated client sends where progenitor would call
//! serde_urlencoded, which refuses any nested value ("failed to serialize body").

/// `builder` with `body` as its form body. Its error is text: the generated client hands it to
/// progenitor's `Error::InvalidRequest(String)`.
pub fn body<T: serde::Serialize + ?Sized>(
    builder: reqwest::RequestBuilder,
    body: &T,
) -> Result<reqwest::RequestBuilder, String> {
    let value = serde_json::to_value(body).map_err(|error| format!("the form body: {error}"))?;
    let text = form_urlencoded::Serializer::new(String::new()).extend_pairs(crate::forms::pairs(&value)).finish();
    let form = reqwest::header::HeaderValue::from_static("application/x-www-form-urlencoded");
    Ok(builder.header(reqwest::header::CONTENT_TYPE, form).body(text))
}
