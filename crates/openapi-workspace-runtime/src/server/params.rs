//! Parameters: headers, path segments and the query read into their types, checked against
//! the document, and refused in words that say what to send instead.

use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::json_tape::Instance;
use super::{ApiError, Validator};

/// A header parameter (`name` in lower case), parsed as its schema's type; `None` when absent.
pub fn header_param<T: DeserializeOwned>(headers: &HeaderMap, name: &str) -> Result<Option<T>, ApiError> {
    let Some(value) = headers.get(name) else { return Ok(None) };
    let raw = value.to_str().map_err(|_| ApiError::bad_request(format!("header `{name}`: not visible ASCII text")))?;
    parse_text(raw).map(Some).map_err(|e| ApiError::bad_request(format!("header `{name}`: {raw:?} is not valid ({e})")))
}

/// Checks the path, header and cookie parameters a handler has read (name, value; `null` when
/// absent) against what their schemas say beyond their types: `400` naming each problem's
/// parameter, as the query's are named.
pub fn check_params(
    validator: &Validator,
    params: impl IntoIterator<Item = (&'static str, Value)>,
) -> Result<(), ApiError> {
    let present: serde_json::Map<String, Value> = params
        .into_iter()
        .filter(|(_, value)| !value.is_null())
        .map(|(name, value)| (name.to_owned(), value))
        .collect();
    validator.check(&Value::Object(present), "parameter ")
}

/// `400` for a required header parameter the request lacks; `401` when it is `Authorization`:
/// a document that takes its credential as a parameter (not a security scheme) still says the
/// caller is not authenticated.
pub fn missing_header(name: &str) -> ApiError {
    if name.eq_ignore_ascii_case("authorization") {
        return ApiError::new(
            StatusCode::UNAUTHORIZED,
            format!("header `{name}` is required: it carries the credential"),
        );
    }
    ApiError::bad_request(format!("header `{name}` is required"))
}

/// `400` for a required cookie parameter the request lacks.
pub fn missing_cookie(name: &str) -> ApiError {
    ApiError::bad_request(format!("cookie `{name}` is required"))
}

/// Text from a path or a header as the model `T`: as a string (ids, names, enums), or else as the
/// JSON literal it spells (numbers, booleans).
pub(crate) fn parse_text<T: DeserializeOwned>(raw: &str) -> Result<T, serde_json::Error> {
    serde_json::from_value(Value::String(raw.to_owned())).or_else(|e| serde_json::from_str(raw).map_err(|_| e))
}

/// `text` as a UUID when it is one in canonical form (`xxxxxxxx-xxxx-…`, lower-case).
pub fn canonical_uuid(text: &str) -> Option<uuid::Uuid> {
    // 36 characters parse only as the hyphenated form.
    if text.len() != 36 {
        return None;
    }
    let id = uuid::Uuid::try_parse(text).ok()?;
    // What parsed is hex digits and hyphens, all of them with bit 0x20 set but `A` to `F`: lower
    // case is that bit in every byte, checked eight bytes at a time (not by spelling the UUID
    // again and comparing).
    let bytes = text.as_bytes();
    let word = |at: usize| u64::from_ne_bytes(bytes[at..at + 8].try_into().expect("eight bytes"));
    const CASE: u64 = u64::from_ne_bytes([0x20; 8]);
    (word(0) & word(8) & word(16) & word(24) & word(28) & CASE == CASE).then_some(id)
}

/// `405` for a method `path` does not have, naming those it has in the message and in `Allow`.
pub fn method_not_allowed(allowed: &'static str) -> Response {
    let message = format!("Method not allowed; this path allows {allowed}");
    let mut response = ApiError::new(StatusCode::METHOD_NOT_ALLOWED, message).into_response();
    response.headers_mut().insert(header::ALLOW, HeaderValue::from_static(allowed));
    response
}

/// `404` for a path the document does not have.
pub fn unknown_path(uri: &Uri) -> ApiError {
    ApiError::not_found(format!("no such path {}", uri.path()))
}

/// The query string, parsed into the operation's query type and validated against the
/// parameters' schemas.
pub fn query<T: DeserializeOwned + Serialize>(uri: &Uri, validator: &Validator) -> Result<T, ApiError> {
    urlencoded(uri.query().unwrap_or_default().as_bytes(), validator, "query", "query parameter ")
}

/// [`query`] for an operation that takes an api key in the query too (`credentials`, its
/// parameters' names): those are the router's, read before, and not the operation's.
pub fn query_except<T: DeserializeOwned + Serialize>(
    uri: &Uri,
    validator: &Validator,
    credentials: &[&str],
) -> Result<T, ApiError> {
    urlencoded(query_without(uri, credentials).as_bytes(), validator, "query", "query parameter ")
}

/// The query string without the pairs named in `credentials`.
fn query_without(uri: &Uri, credentials: &[&str]) -> String {
    let mut kept = form_urlencoded::Serializer::new(String::new());
    let pairs = form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes());
    kept.extend_pairs(pairs.filter(|(key, _)| !credentials.contains(&key.as_ref())));
    kept.finish()
}

/// [`query`] (or [`query_except`], `credentials` left out) for an operation with array
/// parameters (`arrays`: their names), in the form style the document's default writes them:
/// each value its own pair, `ids=1&ids=2` (a single `ids=1` is an array of one). Any other
/// parameter given twice is refused, as [`query`] refuses it.
pub fn query_arrays<T: DeserializeOwned + Serialize>(
    uri: &Uri,
    validator: &Validator,
    arrays: &[&str],
    credentials: &[&str],
) -> Result<T, ApiError> {
    let field = "query parameter ";
    let kept = query_without(uri, credentials);
    let mut seen = std::collections::HashSet::new();
    for (key, _) in form_urlencoded::parse(kept.as_bytes()) {
        if !arrays.contains(&key.as_ref()) && !seen.insert(key.clone()) {
            return Err(ApiError::bad_request(format!("{field}`{key}` is given more than once: give it once")));
        }
    }
    // serde_html_form reads repeated pairs into a sequence (serde_urlencoded reads none).
    let raw = kept.as_bytes();
    checked(|| serde_html_form::Deserializer::new(form_urlencoded::parse(raw)), raw, validator, "query", field)
}

/// A form (`application/x-www-form-urlencoded`) body, parsed into its model and validated. It is
/// read as one tree of texts (`address[city]=Paris` nested: `forms`), typed by the schema, which
/// knows what a text is where the model's parser would have to guess (an untagged union of a
/// range and a number).
pub fn form<T: DeserializeOwned + Serialize>(bytes: &[u8], validator: &Validator) -> Result<T, ApiError> {
    let (whole, field) = ("form", "form field ");
    let tree = crate::forms::body_tree(form_urlencoded::parse(bytes))
        .map_err(|why| ApiError::bad_request(format!("{whole}: {why}")))?;
    let value = crate::forms::typed(tree, &validator.schema, &validator.components);
    checked(|| &value, bytes, validator, whole, field)
}

/// `name=value&…` parsed into `T` (fields named in messages as `{field} …`), then checked against
/// the schema in its JSON form, where numbers are numbers.
fn urlencoded<T: DeserializeOwned + Serialize>(
    raw: &[u8],
    validator: &Validator,
    whole: &str,
    field: &str,
) -> Result<T, ApiError> {
    checked(|| serde_urlencoded::Deserializer::new(form_urlencoded::parse(raw)), raw, validator, whole, field)
}

/// `raw` read into `T` by a `deserializer`, its refusals said as a person should read them,
/// then checked against the schema in its JSON form, where numbers are numbers. The paths that
/// name a refused value are tracked only once one is refused: tracking them costs an
/// allocation per field of every request.
fn checked<'de, T, D>(
    deserializer: impl Fn() -> D,
    raw: &[u8],
    validator: &Validator,
    whole: &str,
    field: &str,
) -> Result<T, ApiError>
where
    T: DeserializeOwned + Serialize,
    D: serde::Deserializer<'de>,
{
    let parsed = T::deserialize(deserializer()).or_else(|_| serde_path_to_error::deserialize(deserializer()));
    let parsed: T = parsed.map_err(|e| {
        let path = e.path().to_string();
        let said = e.inner().to_string();
        if path == "." {
            ApiError::bad_request(teach_whole(&said, field).unwrap_or_else(|| format!("{whole}: {said}")))
        } else {
            // An array's item is `name[index]`: the index-th pair of that name.
            let (name, index) = path
                .strip_suffix(']')
                .and_then(|p| p.rsplit_once('['))
                .and_then(|(name, index)| Some((name, index.parse::<usize>().ok()?)))
                .unwrap_or((&path, 0));
            let given = form_urlencoded::parse(raw)
                .filter(|(key, _)| *key == name)
                .nth(index)
                .map(|(_, value)| value.into_owned());
            ApiError::bad_request(format!("{field}`{path}`: {}", teach(&said, given.as_deref())))
        }
    })?;
    let value = match serde_json::to_value(&parsed)
        .or_else(|_| serde_path_to_error::serialize(&parsed, serde_json::value::Serializer))
    {
        Ok(value) => value,
        // Only a value the document does not list (an enum's `Unknown`, which the models take
        // so that clients read what newer servers answer) cannot be written back: name it.
        Err(error) => return Err(unlisted(raw, validator, field, &error.path().to_string())),
    };
    validator.check(&value, field)?;
    Ok(parsed)
}

/// What the parser said of the whole query or form (`said`), as a person should read it, when
/// it concerns one field.
fn teach_whole(said: &str, field: &str) -> Option<String> {
    if let Some(name) = said.strip_prefix("missing field `").and_then(|rest| rest.strip_suffix('`')) {
        return Some(format!("{field}`{name}` is required"));
    }
    let name = said.strip_prefix("duplicate field `").and_then(|rest| rest.strip_suffix('`'))?;
    Some(format!("{field}`{name}` is given more than once: give it once"))
}

/// What the parser said of one value (`said`, of `given`), as a person should read it: what is
/// wrong with it and what is expected. The parsers' own words come last, in brackets.
fn teach(said: &str, given: Option<&str>) -> String {
    let Some(given) = given else { return said.to_owned() };
    // chrono's words, for a date-time.
    const DATE_TIME: [&str; 6] = [
        "premature end of input",
        "input contains invalid characters",
        "input is out of range",
        "trailing input",
        "input is not enough for unique date and time",
        "no possible date and time matching input",
    ];
    if DATE_TIME.contains(&said) {
        let date_only = given.len() == 10 && given.as_bytes().get(4) == Some(&b'-');
        // Read as bytes, not by slicing the text: its 19th byte may fall inside a character.
        let no_offset = given.len() >= 19
            && !given.ends_with(['Z', 'z'])
            && !given.as_bytes()[19..].iter().any(|b| matches!(b, b'+' | b'-'));
        let what = if date_only {
            "a date without a time and UTC offset".to_owned()
        } else if given.contains(' ') && given.len() >= 19 {
            "a `+` in a query string reads as a space: send the offset's `+` as `%2B`".to_owned()
        } else if no_offset {
            "it has no UTC offset".to_owned()
        } else if said == "input is out of range" {
            "a part of it is out of range".to_owned()
        } else {
            "it is not written as one".to_owned()
        };
        return format!(
            "{given:?} is not an RFC 3339 date-time ({what}): write it like 2026-11-25T10:15:30Z, or with \
             its offset, 2026-11-25T11:15:30+01:00 ({said})"
        );
    }
    if said.starts_with("UUID parsing failed") {
        return format!(
            "{given:?} is not a UUID: write it as the API does, e.g. 0b8c9a4e-1f4e-4c3a-9a55-6f0e0e7d2b11 ({said})"
        );
    }
    if said == "invalid digit found in string" || said == "cannot parse integer from empty string" {
        return format!("{given:?} is not a whole number ({said})");
    }
    if said.starts_with("number too large") || said.starts_with("number too small") {
        return format!("{given:?} is out of range ({said})");
    }
    said.to_owned()
}

/// The refusal of a parameter (`name`) whose value the document does not list, with the values
/// it does, as the validator says them.
fn unlisted(raw: &[u8], validator: &Validator, field: &str, name: &str) -> ApiError {
    let given = form_urlencoded::parse(raw).find(|(key, _)| key == name).map(|(_, value)| value.into_owned());
    let Some(given) = given else { return ApiError::bad_request(format!("{field}`{name}`: a value not listed")) };
    let alone = serde_json::json!({ name: given });
    let said =
        validator.inner.iter_errors(Instance::Value(&alone)).find(|e| e.instance_path().as_str() == format!("/{name}"));
    match said {
        Some(problem) => ApiError::bad_request(format!("{field}`{name}`: {problem}")),
        None => ApiError::bad_request(format!("{field}`{name}`: {given:?} is not a value the document lists")),
    }
}
