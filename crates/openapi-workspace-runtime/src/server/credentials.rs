//! Credentials and single values read from a request: bearer and basic authorisation, a
//! header's, a query parameter's and a cookie's text.

use axum::http::{HeaderMap, Uri, header};

use super::ApiError;

/// The token of an `Authorization: Bearer <token>` header.
pub fn bearer_token(headers: &HeaderMap) -> Result<&str, ApiError> {
    let value = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).ok_or_else(ApiError::unauthorized)?;
    let (scheme, token) = value.split_once(' ').ok_or_else(ApiError::unauthorized)?;
    let token = token.trim();
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return Err(ApiError::unauthorized());
    }
    Ok(token)
}

/// The token of an `Authorization: Bearer <token>` header, if there is one (http `bearer`,
/// `oauth2` and `openIdConnect` schemes).
pub fn bearer(headers: &HeaderMap) -> Option<&str> {
    bearer_token(headers).ok()
}

/// The user name and password of an `Authorization: Basic <base64>` header (http `basic`), if
/// there is one: base64 of `user:password`, the password being everything after the first colon.
pub fn basic(headers: &HeaderMap) -> Option<(String, String)> {
    use base64::Engine;
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let decoded = String::from_utf8(decoded).ok()?;
    let (user, password) = decoded.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

/// A header's value as text, if it is there and text (an `apiKey` in a header).
pub fn header_text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name)?.to_str().ok().filter(|value| !value.is_empty())
}

/// A query parameter's first value, decoded, if it is there (an `apiKey` in the query).
pub fn query_text<'a>(uri: &'a Uri, name: &str) -> Option<std::borrow::Cow<'a, str>> {
    form_urlencoded::parse(uri.query()?.as_bytes()).find(|(key, _)| key == name).map(|(_, value)| value)
}

/// A cookie's value, if the request's `Cookie` headers carry it (an `apiKey` in a cookie).
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|line| line.to_str().ok())
        .flat_map(|line| line.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value.trim_matches('"'))
}
