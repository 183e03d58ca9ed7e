//! Request bodies: JSON read in place and validated, the media type chosen from
//! `Content-Type`, text, and the refusals of a body too large.

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::json_tape::Instance;
use super::{ApiError, BODY_LIMIT, Validator, json_tape};

/// A required JSON body: checked for content type, parsed, validated against its schema, and
/// converted into the model.
pub fn json_body<T: DeserializeOwned>(headers: &HeaderMap, bytes: Bytes, validator: &Validator) -> Result<T, ApiError> {
    if bytes.is_empty() && headers.get(header::CONTENT_TYPE).is_none() {
        return Err(ApiError::bad_request("a JSON request body is required"));
    }
    parse_json(headers, &bytes, validator)
}

/// Which of `candidates` (a webhook's name and its body's validator) a JSON body is: among those
/// whose schema it meets, the one whose name a top-level field of the body states (`"event":
/// "transaction.processed"`, `"type": …`), else the first. Several webhooks often share one
/// payload schema and say which they are in the payload; this is how a receiver tells apart the
/// notifications posted to its one URL. Answers the index and the body, to be read by that one;
/// a body none of them takes is `400`, saying so.
pub fn which_body(bytes: &[u8], candidates: &[(&str, &Validator)]) -> Result<usize, ApiError> {
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| ApiError::bad_request(format!("the request body is not valid JSON: {e}")))?;
    let states = |name: &str| value.as_object().is_some_and(|fields| fields.values().any(|v| v.as_str() == Some(name)));
    let met: Vec<usize> =
        (0..candidates.len()).filter(|&i| candidates[i].1.inner.is_valid(Instance::Value(&value))).collect();
    match met.iter().find(|&&i| states(candidates[i].0)).or(met.first()) {
        Some(&which) => Ok(which),
        None => Err(ApiError::bad_request(format!(
            "the body is none of the {} notifications this receiver takes (each is checked against its webhook's schema)",
            candidates.len()
        ))),
    }
}

/// An optional JSON body: an empty body is `None`, whatever the content type says.
pub fn optional_json_body<T: DeserializeOwned>(
    headers: &HeaderMap,
    bytes: Bytes,
    validator: &Validator,
) -> Result<Option<T>, ApiError> {
    if bytes.is_empty() {
        return Ok(None);
    }
    parse_json(headers, &bytes, validator).map(Some)
}

fn parse_json<T: DeserializeOwned>(headers: &HeaderMap, bytes: &[u8], validator: &Validator) -> Result<T, ApiError> {
    if !is_json(headers) {
        return Err(ApiError::new(StatusCode::UNSUPPORTED_MEDIA_TYPE, "Content-Type must be application/json"));
    }
    json_value(bytes, validator)
}

/// A JSON body (its content type already checked): parsed, validated, converted into the model.
pub fn json_value<T: DeserializeOwned>(bytes: &[u8], validator: &Validator) -> Result<T, ApiError> {
    let body = json_tape::Tape::parse(bytes).map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))?;
    validator.check_body(&body)?;
    // Read from the bytes, as a hand-written handler reads them. What the model refuses is read
    // again through a `Value`, as it always was, for the same message (serde_json words an error
    // from text with its line and column); the path to the refused value is tracked only then
    // (as `checked` does).
    serde_json::from_slice(bytes).or_else(|_| {
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| ApiError::bad_request(format!("malformed JSON: {e}")))?;
        serde_path_to_error::deserialize(value)
            .map_err(|e| ApiError::bad_request(format!("{}: {}", e.path(), e.inner())))
    })
}

pub(crate) fn is_json(headers: &HeaderMap) -> bool {
    // Without lowering it into a new string: asked of every body and every error answered.
    let media_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
    media_type.is_some_and(|media_type| is_json_essence(bare(media_type)))
}

/// The essence of the request's `Content-Type` (`application/json; charset=utf-8` →
/// `application/json`), lower case.
fn content_type(headers: &HeaderMap) -> Option<String> {
    Some(essence(headers.get(header::CONTENT_TYPE)?.to_str().ok()?))
}

/// A media type without its parameters, lower case.
fn essence(media_type: &str) -> String {
    bare(media_type).to_ascii_lowercase()
}

/// A media type without its parameters, as written.
fn bare(media_type: &str) -> &str {
    media_type.split(';').next().unwrap_or_default().trim()
}

/// Whether a media type's essence, in any case, is JSON: `application/json` or
/// `application/…+json`.
fn is_json_essence(essence: &str) -> bool {
    let (kind, subtype) = essence.split_once('/').unwrap_or_default();
    let suffix = subtype.len().checked_sub(5).map(|at| &subtype.as_bytes()[at..]);
    kind.eq_ignore_ascii_case("application")
        && (subtype.eq_ignore_ascii_case("json") || suffix.is_some_and(|s| s.eq_ignore_ascii_case(b"+json")))
}

/// `400` for a required body that is not there: no bytes and no `Content-Type` (an empty body
/// that names its type, a file of no bytes, is one).
pub fn required_body(headers: &HeaderMap, bytes: &[u8]) -> Result<(), ApiError> {
    match bytes.is_empty() && !headers.contains_key(header::CONTENT_TYPE) {
        true => Err(ApiError::bad_request("a request body is required")),
        false => Ok(()),
    }
}

/// Which of the media types an operation accepts (as the document writes them) the request's
/// `Content-Type` names: its index, or `415` listing them. A JSON type accepts `+json` types,
/// `type/*` or `*/*` what they cover, and `application/octet-stream` a body without a type.
pub fn media_type(headers: &HeaderMap, accepted: &[&str]) -> Result<usize, ApiError> {
    let found = content_type(headers);
    let matches = |declared: &str| {
        let declared = essence(declared);
        // A body without a type is bytes (RFC 9110, 8.3: a recipient may take it as
        // `application/octet-stream`).
        let Some(found) = found.as_deref() else { return declared == "*/*" || declared == "application/octet-stream" };
        declared == found
            || declared == "*/*"
            || (is_json_essence(&declared) && is_json_essence(found))
            || declared.strip_suffix("/*").is_some_and(|kind| found.split('/').next() == Some(kind))
    };
    // The media type the request names, when declared, before one that merely takes it (JSON's
    // other forms, a wildcard): a merge patch is read as one beside a JSON patch.
    let exact = found.as_deref().and_then(|found| accepted.iter().position(|declared| essence(declared) == found));
    exact.or_else(|| accepted.iter().position(|declared| matches(declared))).ok_or_else(|| {
        ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("Content-Type must be one of: {}", accepted.join(", ")),
        )
    })
}

/// The whole body, or the error object for one that could not be read: `413` past
/// [`BODY_LIMIT`] (a body declaring more is refused before it is read: `finish_router`), `400`
/// for one cut short.
pub async fn read_body(body: axum::body::Body) -> Result<Bytes, ApiError> {
    use http_body_util::BodyExt;
    match http_body_util::Limited::new(body, BODY_LIMIT).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(error) if error.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(error) => Err(ApiError::bad_request(format!("the request body could not be read: {error}"))),
    }
}

/// A text body: UTF-8.
pub fn text(bytes: &[u8]) -> Result<String, ApiError> {
    String::from_utf8(bytes.to_vec()).map_err(|_| ApiError::bad_request("the body is not UTF-8 text"))
}

/// `413`: the body is over [`BODY_LIMIT`].
pub fn too_large() -> ApiError {
    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, format!("Request body larger than {BODY_LIMIT} bytes"))
}

/// `413` saying which limit the request went over.
pub fn too_large_because(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, message)
}
