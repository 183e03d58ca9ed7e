//! The mock engine: a document's [`Plan`] served as it stands, without generating or compiling
//! anything — `openapi-workspace mock` serves one read from a document, a generated server its
//! `mock.json`. Every request goes through the same steps, with the same runtime functions, as
//! a generated handler's: its credential looked for, its path, header, cookie and query
//! parameters read by their styles and validated, its body checked against its media types and
//! schema; then the operation's mock answer, or the refusal in the document's error object.
//!
//! The plan is leaked once at start: the runtime's error objects, wires and answers are
//! `&'static` (what a generated server holds as constants), and a mock lives as long as its
//! process.

mod options;
mod pages;
mod patch;
mod plan;
mod state;

pub use options::{Options, OptionsError, Seed};
pub use plan::*;
pub use state::{Change, Keep, KeepError, Kept, KeptItem};

use std::sync::{Arc, OnceLock};

use axum::extract::{RawPathParams, Request, State};
use axum::http::{HeaderMap, Uri, header};
use axum::response::Response;
use serde_json::{Map, Value, json};

use super::{ApiError, ErrorObject, ErrorPart, ErrorStatus, SchemaSet, Validator};
use crate::wire::{Leaf, Place, Shape, Wire};

/// A parameter's wire form as the runtime's readers take it.
type StaticWire = Wire<&'static str, &'static [(&'static str, Leaf)]>;

/// The router serving `plan`: each operation at its path and method, every refusal in the
/// document's error object (the generated router's last layer, `finish_router`); every answer the
/// document's example.
pub fn router(plan: Plan) -> axum::Router {
    router_with(plan, Options::default()).expect("no seed file to refuse")
}

/// [`router`], as `options` say.
pub fn router_with(plan: Plan, options: Options) -> Result<axum::Router, OptionsError> {
    let control = options.control.as_deref().unwrap_or("/__mock").trim_end_matches('/');
    let reset = format!("{control}/reset");
    if !control.starts_with('/') || control.contains(['{', '}', '*', '?', '#']) {
        return Err(OptionsError(format!("the control prefix {control} is not a path")));
    }
    if options.stateful && plan.operations.iter().any(|operation| operation.path == reset) {
        return Err(OptionsError(format!("the document has {reset} itself: choose another control prefix")));
    }
    let plan: &'static Plan = Box::leak(Box::new(plan));
    let schemas = SchemaSet::of(&plan.schemas);
    let operations = plan.operations.iter().map(Operation::of).collect();
    let state = match options.stateful {
        true => Some(
            state::State::new(&plan.resources, state::seeds(plan, &options.seed)?, options.keep.clone())
                .map_err(|error| OptionsError(format!("the state kept cannot be read: {error}")))?,
        ),
        false => None,
    };
    let credential = options.credential.map(|credential| &*Box::leak(credential.into_boxed_str()));
    let engine = Arc::new(Engine { schemas, operations, plan, state, credential });
    let mut paths: Vec<(&str, Vec<usize>)> = Vec::new();
    for (i, operation) in plan.operations.iter().enumerate() {
        match paths.iter_mut().find(|(path, _)| *path == operation.path) {
            Some((_, here)) => here.push(i),
            None => paths.push((&operation.path, vec![i])),
        }
    }
    let mut router = axum::Router::new();
    for (path, here) in paths {
        // Another method answers 405 naming these, in the message and in `Allow`, as the
        // generated router's does (HEAD is GET's, whose body hyper does not send).
        let mut allowed: Vec<&str> = here.iter().map(|&i| plan.operations[i].method.as_str()).collect();
        if allowed.contains(&"GET") {
            allowed.push("HEAD");
        }
        allowed.sort_unstable();
        let allowed: &'static str = Box::leak(allowed.join(", ").into_boxed_str());
        let methods: Vec<(&'static str, usize)> =
            here.iter().map(|&i| (plan.operations[i].method.as_str(), i)).collect();
        router = router.route(
            path,
            axum::routing::any(
                move |State(engine): State<Arc<Engine>>, path: Result<RawPathParams, _>, request: Request| async move {
                    let method = request.method().as_str();
                    let method = if method == "HEAD" { "GET" } else { method };
                    match methods.iter().find(|(served, _)| *served == method) {
                        Some(&(_, i)) => engine.answer(i, path, request).await,
                        None => Ok(super::method_not_allowed(allowed)),
                    }
                },
            ),
        );
    }
    if engine.state.is_some() {
        router = router.route(
            &reset,
            axum::routing::post(|State(engine): State<Arc<Engine>>| async move {
                let reset = engine.state.as_ref().map(|state| state.reset(&engine.plan.resources));
                match reset {
                    Some(Err(error)) => Err(ApiError::new(
                        axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        format!("the state could not be reset: {error}"),
                    )),
                    _ => Ok(axum::http::StatusCode::NO_CONTENT),
                }
            }),
        );
    }
    let router = router.fallback(unknown_path).with_state(engine);
    Ok(super::finish_router(router, &plan.challenge, Box::leak(Box::new(error_object(&plan.error_object)))))
}

/// A path the document does not have: `404`, once the caller has shown a credential where the
/// document asks for one.
async fn unknown_path(State(engine): State<Arc<Engine>>, request: Request) -> Result<Response, ApiError> {
    if let Some(requirement) = &engine.plan.unknown_path {
        authenticate(requirement, engine.credential, request.headers(), request.uri())?;
    }
    Err(super::unknown_path(request.uri()))
}

struct Engine {
    schemas: SchemaSet,
    operations: Vec<Operation>,
    plan: &'static Plan,
    /// The resources' items, when stateful.
    state: Option<state::State>,
    /// The one credential let in, if only one is.
    credential: Option<&'static str>,
}

/// An operation ready to serve: its plan, and what the runtime's readers take made once.
struct Operation {
    plan: &'static OperationPlan,
    /// Path, header and cookie parameters, with their wire forms.
    params: Vec<(&'static ParamPlan, StaticWire)>,
    /// Every query parameter's wire form, and the api keys in the query that are not the
    /// operation's parameters.
    query: Vec<StaticWire>,
    credentials_in_query: Vec<&'static str>,
    params_validator: Lazy,
    query_validator: Lazy,
    /// One per media type of the body (never compiled for text and bytes).
    body_validators: Vec<Lazy>,
    parts: Vec<(&'static str, super::multipart::Kind)>,
    own_errors: &'static [(ErrorStatus, ErrorObject)],
    offered: Vec<(&'static str, &'static str)>,
    headers: Vec<(&'static str, &'static str)>,
    /// What a stateful answer is checked against.
    answer_validator: Option<Lazy>,
}

impl Operation {
    fn of(plan: &'static OperationPlan) -> Self {
        let (query, others): (Vec<&ParamPlan>, Vec<&ParamPlan>) =
            plan.params.iter().partition(|param| param.wire.place == Place::Query);
        let properties = |params: &[&ParamPlan]| -> Map<String, Value> {
            params.iter().map(|param| (param.wire.name.clone(), param.schema.clone())).collect()
        };
        let required: Vec<&str> = query.iter().filter(|p| p.required).map(|p| p.wire.name.as_str()).collect();
        let body_validators = plan
            .body
            .iter()
            .flat_map(|body| &body.media)
            .map(|media| match &media.kind {
                MediaKindPlan::Json(schema) | MediaKindPlan::Form(schema) | MediaKindPlan::Multipart { schema, .. } => {
                    Lazy::new(schema.clone())
                }
                MediaKindPlan::Text | MediaKindPlan::Bytes => Lazy::new(json!({})),
            })
            .collect();
        let parts = plan
            .body
            .iter()
            .flat_map(|body| &body.media)
            .filter_map(|media| match &media.kind {
                MediaKindPlan::Multipart { parts, .. } => Some(parts),
                _ => None,
            })
            .flatten()
            .map(|part| (part.name.as_str(), part_kind(&part.read)))
            .collect();
        let credentials_in_query = plan
            .requirement
            .iter()
            .flat_map(|requirement| requirement.alternatives.iter().flatten())
            .filter_map(|credential| match credential {
                CredentialPlan::Query(name) => Some(name.as_str()),
                _ => None,
            })
            .collect();
        let (offered, headers) = match &plan.answer {
            Some(answer) => (
                answer.offered.iter().map(|(media, body)| (media.as_str(), body.as_str())).collect(),
                answer.headers.iter().map(|(name, value)| (name.as_str(), value.as_str())).collect(),
            ),
            None => (Vec::new(), Vec::new()),
        };
        Operation {
            plan,
            params: others.iter().map(|&param| (param, wire(&param.wire))).collect(),
            query: query.iter().map(|param| wire(&param.wire)).collect(),
            credentials_in_query,
            params_validator: Lazy::new(json!({"type": "object", "properties": properties(&others)})),
            query_validator: Lazy::new(
                json!({"type": "object", "properties": properties(&query), "required": required}),
            ),
            body_validators,
            parts,
            own_errors: Box::leak(
                plan.own_errors
                    .iter()
                    .map(|(status, object)| (error_status(*status), error_object(object)))
                    .collect::<Vec<_>>()
                    .into_boxed_slice(),
            ),
            offered,
            headers,
            answer_validator: plan.answer.as_ref().and_then(|answer| answer.schema.clone()).map(Lazy::new),
        }
    }
}

impl Engine {
    /// Operation `i`'s answer to `request`: its refusals written in its own error objects
    /// where its responses give any.
    async fn answer(
        &self,
        i: usize,
        path: Result<RawPathParams, axum::extract::rejection::RawPathParamsRejection>,
        request: Request,
    ) -> Result<Response, ApiError> {
        let operation = &self.operations[i];
        let answer = async {
            match operation.own_errors {
                [] => self.serve(operation, path, request).await,
                objects => super::written_in(objects, self.serve(operation, path, request)).await,
            }
        };
        match operation.plan.refused_as {
            Some((invalid, ids_not_found)) => super::refused_as(invalid, ids_not_found, answer).await,
            None => answer.await,
        }
    }

    /// The steps of a generated handler, in its order.
    async fn serve(
        &self,
        operation: &Operation,
        path: Result<RawPathParams, axum::extract::rejection::RawPathParamsRejection>,
        request: Request,
    ) -> Result<Response, ApiError> {
        let (parts, body) = request.into_parts();
        let (headers, uri) = (&parts.headers, &parts.uri);
        let path = path.map_err(|rejection| ApiError::bad_request(rejection.body_text()))?;
        if let Some(requirement) = &operation.plan.requirement {
            authenticate(requirement, self.credential, headers, uri)?;
        }
        let mut params = Map::new();
        // The path parameters' texts, by name: a stateful resource's scope and id.
        let mut texts: Vec<(&str, String)> = Vec::new();
        for (param, wire) in &operation.params {
            let value = match wire.place {
                Place::Path if param.id => {
                    Some(Value::String(super::path::Id::of(&path, wire.name)?.read()?.to_string()))
                }
                Place::Path => Some(super::styles::path::<Value>(&path, wire)?),
                Place::Cookie => super::styles::cookie_param::<Value>(headers, wire)?,
                _ => super::styles::header_param::<Value>(headers, wire)?,
            };
            match value {
                Some(value) => {
                    if wire.place == Place::Path {
                        texts.push((wire.name, text_of(&value)));
                    }
                    params.insert(wire.name.to_owned(), value);
                }
                None if param.required && param.default.is_none() => {
                    return Err(match wire.place {
                        Place::Cookie => super::missing_cookie(wire.name),
                        _ => super::missing_header(wire.name),
                    });
                }
                None => {}
            }
        }
        if !params.is_empty() {
            operation.params_validator.get(&self.schemas).check(&Value::Object(params), "parameter ")?;
        }
        if !operation.query.is_empty() {
            let validator = operation.query_validator.get(&self.schemas);
            super::styles::query::<Value>(uri, validator, &operation.query, &operation.credentials_in_query)?;
        }
        let body = match &operation.plan.body {
            Some(body_plan) => self.read_body(operation, body_plan, headers, body).await?,
            None => None,
        };
        let Some(answer) = &operation.plan.answer else {
            return Err(super::not_implemented(&operation.plan.operation_id));
        };
        if let (Some(state), Some(part)) = (&self.state, &operation.plan.state) {
            // The api keys read as credentials are not the operation's: they filter nothing.
            let query = form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
                .filter(|(key, _)| !operation.credentials_in_query.contains(&key.as_ref()))
                .map(|(key, value)| (key.into_owned(), value.into_owned()))
                .collect();
            let key = match &part.idempotency {
                Some(KeyPlan::Header(name)) => super::header_text(headers, name).map(str::to_owned),
                Some(KeyPlan::Body(name)) => body.as_ref().and_then(|body| body.get(name)).map(text_of),
                None => None,
            };
            let url = match headers.get(header::HOST).and_then(|host| host.to_str().ok()) {
                Some(host) => format!("http://{host}{}", uri.path()),
                None => uri.path().to_owned(),
            };
            let sent = Sent { texts, body, query, key, url };
            if let Some(answered) = self.stateful(state, operation, part, answer, sent)? {
                return Ok(answered);
            }
        }
        Ok(match operation.offered.as_slice() {
            [] => super::mock_response(answer.status, None, "", &operation.headers),
            [(media, body)] => super::mock_response(answer.status, Some(media), *body, &operation.headers),
            offered => super::mock_negotiated(answer.status, offered, headers.get(header::ACCEPT), &operation.headers),
        })
    }

    /// The body read as a generated handler reads it: a multipart one as it streams, any
    /// other whole, by the media type its `Content-Type` names, parsed and validated.
    async fn read_body(
        &self,
        operation: &Operation,
        plan: &BodyPlan,
        headers: &HeaderMap,
        body: axum::body::Body,
    ) -> Result<Option<Value>, ApiError> {
        if let [MediaPlan { kind: MediaKindPlan::Multipart { .. }, .. }] = plan.media.as_slice() {
            if plan.required || headers.contains_key(header::CONTENT_TYPE) {
                let received = super::multipart::read(headers, body, &operation.parts).await?;
                received.validate(operation.body_validators[0].get(&self.schemas))?;
            }
            return Ok(None);
        }
        let bytes = super::read_body(body).await?;
        // One JSON media type, as ours are: the content type checked by the JSON reader itself.
        if let [MediaPlan { kind: MediaKindPlan::Json(_), .. }] = plan.media.as_slice() {
            let validator = operation.body_validators[0].get(&self.schemas);
            return match plan.required {
                true => super::json_body::<Value>(headers, bytes, validator).map(Some),
                false => super::optional_json_body::<Value>(headers, bytes, validator),
            };
        }
        if plan.required {
            super::required_body(headers, &bytes)?;
        } else if bytes.is_empty() && !headers.contains_key(header::CONTENT_TYPE) {
            return Ok(None);
        }
        let accepted: Vec<&str> = plan.media.iter().map(|media| media.media_type.as_str()).collect();
        let i = super::media_type(headers, &accepted)?;
        let validator = || operation.body_validators[i].get(&self.schemas);
        Ok(match &plan.media[i].kind {
            MediaKindPlan::Json(_) => Some(super::json_value::<Value>(&bytes, validator())?),
            MediaKindPlan::Form(_) => Some(super::form::<Value>(&bytes, validator())?),
            MediaKindPlan::Text => {
                super::text(&bytes)?;
                None
            }
            MediaKindPlan::Bytes | MediaKindPlan::Multipart { .. } => None,
        })
    }

    /// The answer of an operation with a part in a resource: the item or list the state gives,
    /// checked against the documented schema first (one that does not meet it is not sent: the
    /// example is, with a warning); `None` for the documented answer (a `DELETE`'s).
    fn stateful(
        &self,
        state: &state::State,
        operation: &Operation,
        part: &StatePlan,
        answer: &AnswerPlan,
        Sent { texts, body, query, key, url }: Sent<'_>,
    ) -> Result<Option<Response>, ApiError> {
        let resource = &self.plan.resources[part.resource];
        let text = |name: &str| texts.iter().find(|(key, _)| *key == name).map(|(_, text)| text.clone());
        let example = operation.offered.first().and_then(|(_, body)| serde_json::from_str(body).ok());
        let request = state::Request {
            scope: resource.scope.iter().map(|name| text(name).unwrap_or_default()).collect(),
            id: text(&resource.id_param),
            body,
            query,
            key,
            url: url.clone(),
            example,
        };
        let check = |value: &Value| match &operation.answer_validator {
            Some(validator) => {
                validator.get(&self.schemas).check(value, "").map_err(|refused| refused.message().to_owned())
            }
            None => Ok(()),
        };
        let (value, link) = match state.apply(&self.plan.resources, part, request, check) {
            // What the document answers without a JSON body (a `201` with none) it answers so.
            state::Done::Value(..) if answer.schema.is_none() => return Ok(None),
            state::Done::Value(value, link) => (value, link),
            state::Done::Documented => return Ok(None),
            state::Done::NotFound(message) => return Err(ApiError::names_nothing(message)),
            state::Done::Conflict(message) => {
                let status = operation.plan.conflict.and_then(|code| axum::http::StatusCode::from_u16(code).ok());
                return Err(match status {
                    Some(status) => ApiError::new(status, format!("Conflict: {message}")),
                    None => ApiError::conflict(message),
                });
            }
            state::Done::NotKept(why) => {
                return Err(ApiError::new(
                    axum::http::StatusCode::SERVICE_UNAVAILABLE,
                    format!("the change could not be kept, so it was not made: {why}"),
                ));
            }
            state::Done::Unfit(why) => {
                eprintln!(
                    "warning: {}: the state's answer does not meet the document's schema, so nothing changed and its \
                     example is sent ({why})",
                    operation.plan.operation_id
                );
                return Ok(None);
            }
        };
        let media = operation.offered.first().map_or("application/json", |(media, _)| *media);
        let location = match (part.location, value.get(&resource.id_property)) {
            (true, Some(id)) => Some(format!("{}/{}", url.trim_end_matches('/'), text_of(id))),
            _ => None,
        };
        let mut response = super::mock_response(answer.status, Some(media), value.to_string(), &operation.headers);
        for (name, value) in [(header::LOCATION, location), (header::LINK, link)] {
            if let Some(value) = value.and_then(|value| axum::http::HeaderValue::from_str(&value).ok()) {
                response.headers_mut().insert(name, value);
            }
        }
        Ok(Some(response))
    }
}

/// `401` unless the request presents every credential of one of `requirement`'s alternatives:
/// any of a kind the operation takes, as the generated `MockApi`, or, given `expected`, that one.
fn authenticate(
    requirement: &'static RequirementPlan,
    expected: Option<&str>,
    headers: &HeaderMap,
    uri: &Uri,
) -> Result<(), ApiError> {
    let fits = |given: &str| expected.is_none_or(|expected| given == expected);
    let present = |credential: &CredentialPlan| match credential {
        CredentialPlan::Bearer => super::bearer(headers).is_some_and(fits),
        CredentialPlan::Basic => super::basic(headers).is_some_and(|(_, password)| fits(&password)),
        CredentialPlan::Header(name) => super::header_text(headers, name).is_some_and(fits),
        CredentialPlan::Query(name) => super::query_text(uri, name).is_some_and(|given| fits(&given)),
        CredentialPlan::Cookie(name) => super::cookie(headers, name).is_some_and(fits),
    };
    if requirement.alternatives.iter().any(|together| together.iter().all(present)) {
        return Ok(());
    }
    Err(ApiError::unauthorized_for(&requirement.challenge, &requirement.hint).with_challenge(&requirement.challenge))
}

/// What a request sent, as the state reads it: its path parameters' texts by name, its JSON
/// body, its query's pairs.
struct Sent<'a> {
    texts: Vec<(&'a str, String)>,
    body: Option<Value>,
    query: Vec<(String, String)>,
    /// Its idempotency key, where the operation takes one.
    key: Option<String>,
    /// Its URL less the query: a new item's is this and its id; a next page's, this and a query.
    url: String,
}

/// A path parameter's value as text: a string as it is, anything else as its JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A validator compiled when first used: a large document's mock starts at once, and compiles
/// only what its requests reach.
struct Lazy {
    schema: Value,
    compiled: OnceLock<Validator>,
}

impl Lazy {
    fn new(schema: Value) -> Self {
        Self { schema, compiled: OnceLock::new() }
    }

    fn get(&self, schemas: &SchemaSet) -> &Validator {
        self.compiled.get_or_init(|| schemas.validator_of(self.schema.clone()))
    }
}

/// A plan's wire form, its text leaked.
fn wire(wire: &'static Wire<String, Vec<(String, Leaf)>>) -> StaticWire {
    let fields = |fields: &'static Vec<(String, Leaf)>| -> &'static [(&'static str, Leaf)] {
        Box::leak(fields.iter().map(|(name, leaf)| (name.as_str(), *leaf)).collect::<Vec<_>>().into_boxed_slice())
    };
    let shape = match &wire.shape {
        Shape::Scalar(leaf) => Shape::Scalar(*leaf),
        Shape::Array(leaf) => Shape::Array(*leaf),
        Shape::Object(f) => Shape::Object(fields(f)),
        Shape::ScalarOrObject(leaf, f) => Shape::ScalarOrObject(*leaf, fields(f)),
        Shape::Nested => Shape::Nested,
        Shape::Opaque => Shape::Opaque,
    };
    Wire { place: wire.place, name: wire.name.as_str(), style: wire.style, explode: wire.explode, shape }
}

fn part_kind(kind: &'static PartKindPlan) -> super::multipart::Kind {
    use super::multipart::Kind;
    match kind {
        PartKindPlan::File(accepted) => {
            Kind::File(Box::leak(accepted.iter().map(String::as_str).collect::<Vec<_>>().into_boxed_slice()))
        }
        PartKindPlan::Text(leaf) => Kind::Text(*leaf),
        PartKindPlan::Texts(leaf) => Kind::Texts(*leaf),
        PartKindPlan::Json => Kind::Json,
    }
}

fn error_status(status: StatusPlan) -> ErrorStatus {
    match status {
        StatusPlan::Code(code) => ErrorStatus::Code(code),
        StatusPlan::Class(class) => ErrorStatus::Class(class),
        StatusPlan::Default => ErrorStatus::Default,
    }
}

/// A plan's error object as the runtime's, its parts leaked.
fn error_object(object: &'static ErrorObjectPlan) -> ErrorObject {
    let parts = object
        .parts
        .iter()
        .map(|part| match part {
            PartPlan::Text(text) => ErrorPart::Text(text),
            PartPlan::Message => ErrorPart::Message,
            PartPlan::MessageUpTo(longest) => ErrorPart::MessageUpTo(*longest),
            PartPlan::Status => ErrorPart::Status,
            PartPlan::StatusText => ErrorPart::StatusText,
            PartPlan::Reason => ErrorPart::Reason,
        })
        .collect::<Vec<_>>();
    ErrorObject { media: &object.media, parts: Box::leak(parts.into_boxed_slice()) }
}
