//! The hand-written half of the server: the error type every operation returns, and the
//! helpers the generated handlers call to authenticate, parse and validate a request. Nothing
//! here knows the document; the generated code passes in what it needs.

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use json_tape::{Instance, RequestJson};

pub mod events;
pub mod items;
pub mod json_tape;
pub mod multipart;
pub mod path;
pub mod styles;

/// The largest request body accepted; larger ones are refused with `413`.
pub const BODY_LIMIT: usize = 64 * 1024;

/// A failed request: an HTTP status and a message, answered as the error object
/// `{"request":"error","code":<status>,"message":"..."}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    retry_after: Option<u64>,
    /// A `401`'s `WWW-Authenticate`: the challenges of the schemes the operation takes.
    challenge: Option<&'static str>,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self { status, message: message.into(), retry_after: None, challenge: None }
    }

    /// `400`: the request breaks a rule; `message` says which.
    pub fn bad_request(message: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::BAD_REQUEST, format!("Invalid request: {message}"))
    }

    /// `401`: no credential, or one that is not valid.
    pub fn unauthorized() -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "Missing or invalid credential: send Authorization: Bearer <token>")
    }

    /// `404`: no such resource for this caller.
    pub fn not_found(message: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::NOT_FOUND, format!("Not found: {message}"))
    }

    /// `409`: an id already used by a different request, or a state change the state forbids.
    pub fn conflict(message: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::CONFLICT, format!("Conflict: {message}"))
    }

    /// `429`: rate limited; the caller may retry after `seconds`.
    pub fn too_many_requests(seconds: u64) -> Self {
        let unit = if seconds == 1 { "second" } else { "seconds" };
        Self::new(StatusCode::TOO_MANY_REQUESTS, format!("Too many requests: retry after {seconds} {unit}"))
            .retry_after(seconds)
    }

    /// `401` for a request that presented none of the credentials an operation takes;
    /// `challenge` is the `WWW-Authenticate` that names them, `send` what to send.
    pub fn unauthorized_for(challenge: &'static str, send: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, format!("Missing or invalid credential: send {send}"))
            .with_challenge(challenge)
    }

    /// The same error, a `401` naming `challenge` in `WWW-Authenticate` (the router sets the
    /// operation's on an implementation's `401`s).
    pub fn with_challenge(self, challenge: &'static str) -> Self {
        Self { challenge: Some(challenge), ..self }
    }

    /// The same error, answered with `Retry-After: <seconds>`.
    pub fn retry_after(self, seconds: u64) -> Self {
        Self { retry_after: Some(seconds), ..self }
    }

    /// `500`: an unexpected failure. The detail is for the server's log, not the caller.
    pub fn internal() -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal error")
    }

    /// Whether this is the `501` an operation answers until it is implemented.
    pub fn is_not_implemented(&self) -> bool {
        self.status == StatusCode::NOT_IMPLEMENTED
    }

    pub fn status(&self) -> StatusCode {
        self.status
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    /// The error object, as JSON: for writers below axum (the connection layer).
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(&ErrorBody { request: "error", code: self.status.as_u16(), message: &self.message })
            .expect("the error object serialises")
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.status.as_u16(), self.message)
    }
}

impl std::error::Error for ApiError {}

#[derive(Serialize)]
struct ErrorBody<'a> {
    request: &'static str,
    code: u16,
    message: &'a str,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let json = [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))];
        let mut response = (self.status, json, self.to_json()).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            let challenge = self.challenge.unwrap_or("Bearer realm=\"payments\"");
            response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
        }
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// What an operation knows of its request besides its parameters: who is calling (`P`, as the
/// authentication hook found it; `()` for an operation the document leaves unsecured), the
/// request's headers, and its id.
#[derive(Debug, Clone)]
pub struct RequestContext<P> {
    /// The caller.
    pub caller: P,
    /// Every header of the request, as received.
    pub headers: HeaderMap,
    /// The request's extensions, for an operation that answers `101` (a protocol switch): hyper's
    /// `OnUpgrade` is there. Empty for every other operation.
    pub extensions: axum::http::Extensions,
    /// The id [`RequestContext::request_id`] made up, once asked.
    made_up_id: std::sync::OnceLock<String>,
}

/// The header carrying a request's id: the one a layer in front should set and propagate.
pub const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

impl<P> RequestContext<P> {
    /// Whether the request's `Accept` prefers server-sent events to JSON (an operation offering
    /// both answers [`events::Negotiated::Events`] then).
    pub fn wants_events(&self) -> bool {
        events::wants_events(&self.headers)
    }

    pub fn new(caller: P, headers: HeaderMap) -> Self {
        Self { caller, headers, extensions: axum::http::Extensions::new(), made_up_id: std::sync::OnceLock::new() }
    }

    /// The request's id: its `x-request-id` header (which a layer in front, or the client, set;
    /// the same id a layer propagating it answers with), or else a new UUID, made when first
    /// asked for (a request nobody asks the id of makes none) and the same on every call.
    pub fn request_id(&self) -> &str {
        match self.headers.get(&REQUEST_ID).and_then(|v| v.to_str().ok()) {
            Some(id) => id,
            None => self.made_up_id.get_or_init(|| uuid::Uuid::new_v4().to_string()),
        }
    }
}

/// `501`: what an operation answers until it is implemented.
pub fn not_implemented(operation_id: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_IMPLEMENTED, format!("Not implemented: {operation_id}"))
}

/// A mock answer (the generated `mock_router`'s, for an operation not implemented): `status`,
/// `body` of `content_type` when there is one, and the response's required `headers`.
pub fn mock_response(
    status: u16,
    content_type: Option<&'static str>,
    body: &'static str,
    headers: &[(&'static str, &'static str)],
) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    let mut response = match content_type {
        Some(content_type) => {
            let mut response = (status, body).into_response();
            if let Ok(value) = HeaderValue::from_str(content_type) {
                response.headers_mut().insert(header::CONTENT_TYPE, value);
            }
            response
        }
        None => status.into_response(),
    };
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value)) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

/// Sets the header `name` (lower case) of `response` to `value`'s text, if there is a value. A
/// value that cannot be a header (a line break in it) is the server's fault: the answer becomes
/// `500`.
pub fn set_header(response: &mut Response, name: &'static str, value: Option<&impl std::fmt::Display>) {
    let Some(value) = value else { return };
    match HeaderValue::try_from(value.to_string()) {
        Ok(value) => {
            response.headers_mut().insert(HeaderName::from_static(name), value);
        }
        Err(_) => *response = ApiError::internal().into_response(),
    }
}

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

/// `400` for a required header parameter the request lacks.
pub fn missing_header(name: &str) -> ApiError {
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
    let id = uuid::Uuid::try_parse(text).ok()?;
    (id.hyphenated().encode_lower(&mut uuid::Uuid::encode_buffer()) == text).then_some(id)
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

/// A form (`application/x-www-form-urlencoded`) body, parsed into its model and validated.
pub fn form<T: DeserializeOwned + Serialize>(bytes: &[u8], validator: &Validator) -> Result<T, ApiError> {
    urlencoded(bytes, validator, "form", "form field ")
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
        let what = if date_only {
            "a date without a time and UTC offset".to_owned()
        } else if given.contains(' ') && given.len() >= 19 {
            "a `+` in a query string reads as a space: send the offset's `+` as `%2B`".to_owned()
        } else if given.len() >= 19 && !given.ends_with(['Z', 'z']) && !given[19..].contains(['+', '-']) {
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

fn is_json(headers: &HeaderMap) -> bool {
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
    accepted.iter().position(|declared| matches(declared)).ok_or_else(|| {
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

/// A success response with a JSON body. Written into a plain vector, which serde_json fills
/// faster than axum's `Json` fills its growable buffer. It starts under 1 KiB: glibc's malloc
/// tidies all its small free blocks before every allocation of 1 KiB or more, which a buffer
/// of 1 KiB for every answer made a cost of every request (`router-bench`, BENCHMARKS.md).
pub fn json_response<T: Serialize>(status: StatusCode, body: &T) -> Response {
    let mut bytes = Vec::with_capacity(512);
    match serde_json::to_writer(&mut bytes, body) {
        Ok(()) => {
            (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], bytes).into_response()
        }
        // A model that cannot be written as JSON (a map with non-text keys) is the server's bug.
        Err(_) => ApiError::internal().into_response(),
    }
}

/// A success response without a body.
pub fn empty_response(status: StatusCode) -> Response {
    status.into_response()
}

/// A response body that is not JSON: bytes or a stream, and their media type.
#[derive(Debug)]
pub struct Raw {
    /// The `Content-Type` to answer with; without one, the media type the document gives (or
    /// `application/octet-stream` where it gives a wildcard).
    pub content_type: Option<HeaderValue>,
    pub body: axum::body::Body,
}

impl Raw {
    pub fn new(body: impl Into<axum::body::Body>) -> Self {
        Self { content_type: None, body: body.into() }
    }

    /// The same body, answered as `content_type`.
    pub fn with_content_type(mut self, content_type: HeaderValue) -> Self {
        self.content_type = Some(content_type);
        self
    }
}

/// A response with a [`Raw`] body; `documented` is the media type the document gives.
pub fn raw_response(status: StatusCode, raw: Raw, documented: &'static str) -> Response {
    let content_type = raw.content_type.unwrap_or_else(|| {
        let octets = HeaderValue::from_static("application/octet-stream");
        if documented.contains('*') { octets } else { HeaderValue::from_str(documented).unwrap_or(octets) }
    });
    let mut response = (status, [(header::CONTENT_TYPE, content_type)], raw.body).into_response();
    // An error the document gives in another media type is meant as it is.
    response.extensions_mut().insert(Documented);
    response
}

/// Marks a response the implementation gave as the document says, so [`finish_router`]'s last
/// layer does not turn a non-JSON error of the document's into the error object.
#[derive(Debug, Clone, Copy)]
struct Documented;

/// `status` when it is of the class (`4` for `4XX`) the document answers with; `None` when the
/// implementation answered outside its contract (the client then gets `500`).
pub fn status_in_class(status: StatusCode, class: u16) -> Option<StatusCode> {
    (status.as_u16() / 100 == class).then_some(status)
}

/// The document's schemas (JSON Schema 2020-12), from which validators are compiled.
pub struct SchemaSet {
    components: Value,
}

impl SchemaSet {
    /// Parses the generated `schemas.json`. It is generated, so failing here is a bug.
    pub fn parse(document: &str) -> Self {
        let document: Value = serde_json::from_str(document).expect("schemas.json is valid JSON");
        Self { components: document["components"].clone() }
    }

    /// Compiles a validator for `schema` (JSON text), whose `$ref`s point into the document.
    pub fn validator(&self, schema: &str) -> Validator {
        let mut root: Value = serde_json::from_str(schema).expect("a generated schema is valid JSON");
        // A body that is one named schema is validated against that schema itself, not through a
        // `$ref` to it: jsonschema keeps an evaluation path through the reference for every error,
        // much of what a refused body costs (BENCHMARKS.md, "The generated handlers").
        if let Some(target) = self.referenced(&root) {
            root = target.clone();
        }
        root["components"] = self.components.clone();
        let inner = jsonschema::options_for::<RequestJson>()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&root)
            .unwrap_or_else(|e| panic!("a generated schema compiles: {e}"));
        Validator { inner }
    }

    /// The component schema `root` is nothing but a reference to (`{"$ref":
    /// "#/components/schemas/Name"}`), when it can stand in its place: an object with no `$id`
    /// (which would move the base its own references resolve against) and no `components`.
    fn referenced(&self, root: &Value) -> Option<&Value> {
        let fields = root.as_object().filter(|fields| fields.len() == 1)?;
        let name = fields.get("$ref")?.as_str()?.strip_prefix("#/components/schemas/")?;
        // A name with `~` or `/` escaped, or percent-encoded, is left to the reference.
        if name.contains(['~', '/', '%']) {
            return None;
        }
        let target = self.components.get("schemas")?.get(name)?;
        let target_fields = target.as_object()?;
        (!target_fields.contains_key("$id") && !target_fields.contains_key("components")).then_some(target)
    }
}

/// Checks request values against one schema.
pub struct Validator {
    inner: jsonschema::Validator<RequestJson>,
}

impl Validator {
    /// `Ok` when `value` is valid; otherwise a `400` naming up to three problems, each prefixed
    /// with the field it concerns.
    pub fn check(&self, value: &Value, prefix: &str) -> Result<(), ApiError> {
        self.check_instance(Instance::Value(value), prefix)
    }

    /// [`Validator::check`] of a JSON body, read in place.
    pub fn check_body(&self, body: &json_tape::Tape<'_>) -> Result<(), ApiError> {
        self.check_instance(body.root(), "")
    }

    fn check_instance(&self, value: Instance<'_>, prefix: &str) -> Result<(), ApiError> {
        // No text may hold a control character (U+0000–U+001F, U+007F–U+009F): JSON allows
        // them, but no name, reference, URL or id needs one, a database (PostgreSQL's text)
        // cannot keep U+0000, and the others end up in logs, bank files and pay pages.
        if let Some((path, found)) = control_at(value) {
            let path = if path.is_empty() { String::new() } else { format!("{prefix}{path}: ") };
            return Err(ApiError::bad_request(format!(
                "{path}text may not contain control characters (found U+{:04X})",
                u32::from(found)
            )));
        }
        // The common case answered without collecting errors (which allocates their paths).
        if self.inner.is_valid(value) {
            return Ok(());
        }
        // Written into the message as found, not collected and joined: a refusal is answered
        // as often as a success can be, and must not cost much more.
        use std::fmt::Write;
        const HEAD: &str = "Invalid request: ";
        let mut message = String::with_capacity(128);
        message.push_str(HEAD);
        for error in self.inner.iter_errors(value).take(3) {
            if message.len() > HEAD.len() {
                message.push_str("; ");
            }
            let path = error.instance_path().as_str().trim_start_matches('/');
            if !path.is_empty() {
                message.push_str(prefix);
                for (i, segment) in path.split('/').enumerate() {
                    message.push_str(if i == 0 { "" } else { "." });
                    message.push_str(segment);
                }
                message.push_str(": ");
            }
            let _ = write!(message, "{error}");
        }
        if message.len() == HEAD.len() { Ok(()) } else { Err(ApiError::new(StatusCode::BAD_REQUEST, message)) }
    }
}

/// Where in `value` a string (or a key) holds a control character, as a dotted path (empty at
/// the root), and the character.
fn control_at(value: Instance<'_>) -> Option<(String, char)> {
    use jsonschema::json::{Array, Node, Object};
    let control = |text: &str| text.chars().find(|c| c.is_control());
    if let Some(text) = value.as_string() {
        return control(&text).map(|found| (String::new(), found));
    }
    if let Some(items) = value.as_array() {
        return items.elements().enumerate().find_map(|(i, item)| {
            let (path, found) = control_at(item)?;
            Some((join(&i.to_string(), path), found))
        });
    }
    value.as_object()?.members().find_map(|(key, item)| match control(key) {
        Some(found) => Some((key.escape_default().to_string(), found)),
        None => {
            let (path, found) = control_at(item)?;
            Some((join(key, path), found))
        }
    })
}

fn join(head: &str, tail: String) -> String {
    if tail.is_empty() { head.to_owned() } else { format!("{head}.{tail}") }
}

/// What the generated `router` adds around the operations (which include its fallback for
/// unknown paths): a body declared over the limit refused before any of it is read, and a last
/// line of defence that turns any error response not already in the error object into it,
/// keeping its status and headers (but for an error the document itself gives in another media
/// type, answered through [`raw_response`]). The limit itself is [`read_body`]'s (and the
/// multipart reader's), not axum's `DefaultBodyLimit`, which would add an extension to every
/// request for extractors the handlers do not use.
pub fn finish_router(router: axum::Router) -> axum::Router {
    router.layer(Finish)
}

/// [`finish_router`]'s layer: one service of its own around each route rather than axum's
/// `from_fn` and `map_response`, each of which clones the route under it and boxes a future per
/// request.
#[derive(Debug, Clone, Copy)]
struct Finish;

impl<S> tower::Layer<S> for Finish {
    type Service = Finished<S>;

    fn layer(&self, inner: S) -> Finished<S> {
        Finished(inner)
    }
}

#[derive(Debug, Clone)]
struct Finished<S>(S);

impl<S> tower::Service<axum::extract::Request> for Finished<S>
where
    S: tower::Service<axum::extract::Request, Response = Response, Error = std::convert::Infallible>,
    S::Future: Send + Unpin + 'static,
{
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = Answer<S::Future>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, request: axum::extract::Request) -> Answer<S::Future> {
        match declared_oversize(&request) {
            Some(refused) => Answer::Refused(Some(refused)),
            None => Answer::Answering(self.0.call(request)),
        }
    }
}

/// [`Finished`]'s future: the route's answer, made uniform. Boxed only to rewrite an error
/// whose body is not the error object (which must be read first: a rejection of axum's own),
/// not for every request.
enum Answer<F> {
    Refused(Option<Response>),
    Answering(F),
    Rewriting(std::pin::Pin<Box<dyn std::future::Future<Output = Response> + Send>>),
}

impl<F> std::future::Future for Answer<F>
where
    F: std::future::Future<Output = Result<Response, std::convert::Infallible>> + Unpin,
{
    type Output = Result<Response, std::convert::Infallible>;

    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> std::task::Poll<Self::Output> {
        use std::task::Poll;
        loop {
            match &mut *self {
                Answer::Refused(refused) => return Poll::Ready(Ok(refused.take().expect("polled once answered"))),
                Answer::Answering(answering) => {
                    let Poll::Ready(Ok(response)) = std::pin::Pin::new(answering).poll(cx) else {
                        return Poll::Pending;
                    };
                    if uniform(&response) {
                        return Poll::Ready(Ok(response));
                    }
                    *self = Answer::Rewriting(Box::pin(uniform_errors(response)));
                }
                Answer::Rewriting(rewriting) => return rewriting.as_mut().poll(cx).map(Ok),
            }
        }
    }
}

/// Whether `response` is as [`uniform_errors`] leaves it: a success, or an error in the error
/// object (or in a media type the document gives it).
fn uniform(response: &Response) -> bool {
    let status = response.status();
    !(status.is_client_error() || status.is_server_error())
        || is_json(response.headers())
        || response.extensions().get::<Documented>().is_some()
}

/// A body whose declared length is over the limit is refused before any of it is read: `413`
/// with the error object at once, instead of waiting for bytes that will be refused anyway. The
/// connection is closed, since the body is left unread on it.
fn declared_oversize(request: &axum::extract::Request) -> Option<Response> {
    let declared = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    if declared.is_none_or(|length| length <= BODY_LIMIT as u64) {
        return None;
    }
    // A multipart body is read as it streams, under limits of its own (`multipart`).
    const MULTIPART: &str = "multipart/form-data";
    let content_type = request.headers().get(header::CONTENT_TYPE).map(|v| v.as_bytes().trim_ascii_start());
    if content_type
        .is_some_and(|v| v.len() >= MULTIPART.len() && v[..MULTIPART.len()].eq_ignore_ascii_case(MULTIPART.as_bytes()))
    {
        return None;
    }
    let mut response = too_large().into_response();
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    Some(response)
}

/// `response` (not [`uniform`]) as the error object.
async fn uniform_errors(response: Response) -> Response {
    let status = response.status();
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, BODY_LIMIT).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text).trim().to_string();
    let message = match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            let allowed = parts.headers.get(header::ALLOW).and_then(|v| v.to_str().ok()).unwrap_or("");
            format!("Method not allowed; this path allows {allowed}")
        }
        StatusCode::PAYLOAD_TOO_LARGE => too_large().message,
        _ if !text.is_empty() => text,
        _ => status.canonical_reason().unwrap_or("Error").to_string(),
    };
    parts.headers.remove(header::CONTENT_TYPE);
    parts.headers.remove(header::CONTENT_LENGTH);
    let mut converted = ApiError::new(status, message).into_response();
    for (name, value) in parts.headers.iter() {
        converted.headers_mut().entry(name).or_insert(value.clone());
    }
    converted
}
