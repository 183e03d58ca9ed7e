//! The document's own error object: the schema most of its error responses share (or the one
//! `x-error-object` names), and how the generated server writes a refusal of its own in it —
//! the message in a text property, the status in `code`/`status`, a value the schema allows in
//! every other required property. A document without one gets RFC 9457's problem details.
//!
//! The properties are written in one order whatever the document's (the normalised document
//! keeps none): fixed values by name, then the reason (`title`), the status, the message, then
//! the other required properties by name. Ours reads `{"request":"error","code":…,"message":…}`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::read::Note;
use crate::read::document::{essence, is_json, required_names, resolve, resolve_schema};

/// The extension that names the error object where the guess is wrong: at the document's root,
/// a schema's name (or `$ref`); `false` for RFC 9457 problem details.
pub(crate) const EXTENSION: &str = "x-error-object";

/// How the server writes its own refusals.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ErrorObject {
    /// The media type its responses give it (`application/json`, `application/problem+json`).
    pub media: String,
    /// Its JSON text, with the error's parts in their places.
    pub parts: Vec<Part>,
    /// The schema it is: the `$ref` or the inline schema's JSON text; `None` for problem details.
    pub schema: Option<String>,
    /// Whether every property the schema allows is one written here (a slot or a fixed value):
    /// then an implementation answers the responses of that schema with `ApiError`.
    pub complete: bool,
}

/// A piece of the error object's text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// JSON text, as it is.
    Text(String),
    /// The error's message, as a JSON string of at most so many characters where the schema
    /// bounds it.
    Message(Option<u64>),
    /// The status, as a JSON number.
    Status,
    /// The status, as a JSON string (`"404"`).
    StatusText,
    /// The status's reason phrase, as a JSON string (`"Not Found"`).
    Reason,
}

/// The error object of the normalised document `raw`, and a note where the document names or
/// uses one that cannot be written (then problem details are).
pub(crate) fn find(raw: &Value) -> (ErrorObject, Option<Note>) {
    let components = raw.get("components").unwrap_or(&Value::Null);
    let chosen = match raw.get(EXTENSION) {
        Some(Value::Bool(false)) => return (problem_details(), None),
        Some(Value::String(name)) => {
            let reference = crate::read::document::mapped_schema(name);
            let media = candidates(raw)
                .into_iter()
                .find(|candidate| candidate.key == reference)
                .map_or_else(|| "application/json".to_owned(), |candidate| candidate.media);
            Some(Candidate { schema: serde_json::json!({ "$ref": reference }), key: reference, media, count: 0 })
        }
        Some(_) => {
            let message = "must name a schema, or be false: the server's own refusals are RFC 9457 problem details";
            return (problem_details(), Some(Note { pointer: format!("/{EXTENSION}"), message: message.into() }));
        }
        None => candidates(raw).into_iter().max_by_key(|candidate| candidate.count),
    };
    let Some(chosen) = chosen else { return (problem_details(), None) };
    match written(&chosen.schema, components) {
        Some((parts, complete)) => {
            (ErrorObject { media: chosen.media, parts, schema: Some(chosen.key), complete }, None)
        }
        None => {
            let message = format!(
                "the error object the error responses share has no text property for a message (message, \
                 detail, error_description, title, or one nested in error or in a list's object): the server's own refusals are \
                 RFC 9457 problem details; {EXTENSION} names another"
            );
            let pointer = chosen.key.strip_prefix('#').unwrap_or_default().to_owned();
            (problem_details(), Some(Note { pointer, message }))
        }
    }
}

/// The statuses an operation's refusals are answered with where it documents other ones than
/// ours: a request that breaks the document (`400`) is `422` where the operation documents `422`
/// and neither `400`, `4XX` nor `default` (FastAPI's validation errors); a path's text that names
/// nothing (`404`) is that status too where the operation documents a refusal but no `404`.
/// Such text is any path parameter's (a UUID that is no id, `path::Id`, or an item a stateful
/// mock does not keep). `None`: ours (`400`, and `404` for such text). `op` is `operation` in the
/// model.
pub(crate) fn refusals(op: &crate::model::operation::Op, operation: &Value) -> Option<(u16, bool)> {
    let (has, any_client_error) = documented(operation)?;
    let invalid = if has("422") && !has("400") && !any_client_error { 422 } else { 400 };
    let names = !op.path_params.is_empty();
    let ids_not_found = !names || has("404") || any_client_error || !(has("400") || has("422"));
    (invalid != 400 || !ids_not_found).then_some((invalid, ids_not_found))
}

/// The status a stateful mock's conflict is answered with where `operation` documents no `409`
/// (nor a class or `default` that holds it) but another refusal: `422`, else `400`.
pub(crate) fn conflict(operation: &Value) -> Option<u16> {
    let (has, any_client_error) = documented(operation)?;
    if has("409") || any_client_error {
        return None;
    }
    [422, 400].into_iter().find(|code| has(&code.to_string()))
}

/// Whether `operation` documents a status (as its responses key it), and whether it documents
/// every client error at once (`4XX`, `default`).
fn documented(operation: &Value) -> Option<(impl Fn(&str) -> bool + '_, bool)> {
    let responses = operation.get("responses").and_then(Value::as_object)?;
    let has = |code: &str| responses.contains_key(code);
    let any_client_error = has("4XX") || has("4xx") || has("default");
    Some((has, any_client_error))
}

/// The error objects of one operation's responses, where one differs from the document's
/// (`document`): for each error status (a code, a class, `default`) whose JSON response has a
/// schema the router can write, that schema's object. The router writes the operation's refusals in the
/// one for their status, and in the document's where none is.
pub(crate) fn of_operation(
    operation: &Value,
    components: &Value,
    document: &ErrorObject,
) -> Vec<(crate::model::operation::Status, ErrorObject)> {
    use crate::model::operation::Status;
    let mut own = Vec::new();
    for (status, media, schema, key) in error_bodies(operation, components) {
        let status = match status {
            "default" => Status::Default,
            "4XX" | "4xx" => Status::Range(4),
            "5XX" | "5xx" => Status::Range(5),
            code => match code.parse::<u16>() {
                Ok(code) if (400..=599).contains(&code) => Status::Code(code),
                _ => continue,
            },
        };
        if document.schema.as_ref() == Some(&key) {
            // Kept, so that a status answered in the document's is not taken by a class's own.
            own.push((status, document.clone()));
        } else if let Some((parts, complete)) = written(schema, components) {
            own.push((status, ErrorObject { media, parts, schema: Some(key), complete }));
        }
    }
    // Only an operation with an object of its own needs them.
    match own.iter().all(|(_, object)| object == document) {
        true => Vec::new(),
        false => own,
    }
}

/// RFC 9457 problem details: `{"title":…,"status":…,"detail":…}`.
pub(crate) fn problem_details() -> ErrorObject {
    ErrorObject {
        media: "application/problem+json".into(),
        parts: vec![
            Part::Text("{\"title\":".into()),
            Part::Reason,
            Part::Text(",\"status\":".into()),
            Part::Status,
            Part::Text(",\"detail\":".into()),
            Part::Message(None),
            Part::Text("}".into()),
        ],
        schema: None,
        complete: false,
    }
}

/// A schema some error responses give their JSON body.
struct Candidate {
    schema: Value,
    /// The schema's `$ref`, or its JSON text.
    key: String,
    media: String,
    /// How many error responses give it.
    count: usize,
}

/// The schemas of every `4XX`, `5XX` and `default` JSON response, counted, in the order first met
/// (the first of the most common wins).
fn candidates(raw: &Value) -> Vec<Candidate> {
    let components = raw.get("components").unwrap_or(&Value::Null);
    let mut found: Vec<Candidate> = Vec::new();
    let mut at: BTreeMap<String, usize> = BTreeMap::new();
    let paths = raw.get("paths").and_then(Value::as_object).into_iter().flatten();
    for (_, item) in paths {
        let operations = item.as_object().into_iter().flatten().filter(|(method, _)| !method.starts_with("x-"));
        for (_, operation) in operations {
            for (_, media, schema, key) in error_bodies(operation, components) {
                match at.get(&key) {
                    Some(&index) => found[index].count += 1,
                    None => {
                        at.insert(key.clone(), found.len());
                        found.push(Candidate { schema: schema.clone(), key, media, count: 1 });
                    }
                }
            }
        }
    }
    // `max_by_key` keeps the last of equals: the first met is made the last.
    found.reverse();
    found
}

/// `operation`'s error responses (`4…`, `5…`, `default`) with a JSON body: each one's status as
/// the document keys it, media type (its essence), schema, and that schema's key (its `$ref`,
/// or its JSON text), in the document's order.
fn error_bodies<'a>(
    operation: &'a Value,
    components: &'a Value,
) -> impl Iterator<Item = (&'a str, String, &'a Value, String)> {
    let responses = operation.get("responses").and_then(Value::as_object).into_iter().flatten();
    responses.filter_map(move |(status, response)| {
        if !(status.starts_with('4') || status.starts_with('5') || status == "default") {
            return None;
        }
        let response = resolve(response, components, "responses")?;
        let content = response.get("content").and_then(Value::as_object).into_iter().flatten();
        let (media, schema) =
            content.filter(|(media, _)| is_json(media)).find_map(|(media, m)| Some((media, m.get("schema")?)))?;
        let key = match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) => reference.to_owned(),
            None => schema.to_string(),
        };
        Some((status.as_str(), essence(media), schema, key))
    })
}

/// The names a message is given by, in the order they are looked for.
const MESSAGES: [&str; 7] = ["message", "detail", "error_description", "title", "description", "error", "msg"];
/// The names a status is given by.
const STATUSES: [&str; 4] = ["code", "status", "status_code", "statusCode"];

/// An object schema's properties and required names, its `allOf` parts merged.
fn object(schema: &Value, components: &Value) -> Option<(Map<String, Value>, Vec<String>)> {
    let schema = resolve_schema(schema, components)?;
    let mut properties = Map::new();
    let mut required = Vec::new();
    for part in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        let (more, names) = object(part, components)?;
        properties.extend(more);
        required.extend(names);
    }
    if let Some(own) = schema.get("properties").and_then(Value::as_object) {
        properties.extend(own.iter().map(|(name, property)| (name.clone(), property.clone())));
    }
    let Value::Object(map) = schema else { return None };
    required.extend(required_names(map));
    let typed = schema.get("type").and_then(Value::as_str);
    (typed.is_none_or(|t| t == "object") && !properties.is_empty()).then_some((properties, required))
}

/// Whether `schema` is a string any text of at least `room` characters fits (no enumeration,
/// pattern or format), and its longest where it has one.
fn free_text(schema: &Value, components: &Value, room: u64) -> Option<Option<u64>> {
    let schema = resolve_schema(schema, components)?;
    let longest = schema.get("maxLength").and_then(Value::as_u64);
    let free = schema.get("type").and_then(Value::as_str) == Some("string")
        && ["enum", "pattern", "format", "const"].iter().all(|key| schema.get(key).is_none())
        && schema.get("minLength").and_then(Value::as_u64).is_none_or(|n| n <= 1)
        && longest.is_none_or(|n| n >= room);
    free.then_some(longest)
}

/// The fewest characters a message property must hold to be one.
const MESSAGE_ROOM: u64 = 64;

/// `properties`' message: the first of [`MESSAGES`] that holds one, and its longest.
fn message_of(properties: &Map<String, Value>, components: &Value) -> Option<(String, Option<u64>)> {
    MESSAGES.iter().find_map(|name| {
        let longest = free_text(properties.get(*name)?, components, MESSAGE_ROOM)?;
        Some((name.to_string(), longest))
    })
}

/// How `schema` takes a status: a number (an integer from at most 400 to at least 599), text.
fn status_part(schema: &Value, components: &Value) -> Option<Part> {
    let schema = resolve_schema(schema, components)?;
    let bounded = |key: &str, keep: fn(f64) -> bool| schema.get(key).and_then(Value::as_f64).is_none_or(keep);
    match schema.get("type").and_then(Value::as_str)? {
        "integer" | "number"
            if ["enum", "multipleOf", "const", "exclusiveMinimum", "exclusiveMaximum"]
                .iter()
                .all(|key| schema.get(key).is_none())
                && bounded("minimum", |m| m <= 400.0)
                && bounded("maximum", |m| m >= 599.0) =>
        {
            Some(Part::Status)
        }
        "string" if free_text(schema, components, 3).is_some() => Some(Part::StatusText),
        _ => None,
    }
}

/// A property's fixed value: its `const` or its enumeration's one value.
fn fixed(schema: &Value, components: &Value) -> Option<Value> {
    let schema = resolve_schema(schema, components)?;
    if let Some(value) = schema.get("const") {
        return Some(value.clone());
    }
    match schema.get("enum").and_then(Value::as_array).map(Vec::as_slice) {
        Some([one]) => Some(one.clone()),
        _ => None,
    }
}

/// What goes in one property of the object.
enum Slot {
    Fixed(Value),
    Part(Part),
    Nested(Vec<(String, Slot)>),
    /// An object as a list's one item.
    Listed(Vec<(String, Slot)>),
    /// A value the schema allows, for a required property nothing else fills.
    Filler(Value),
}

/// The object `schema` written: its parts, and whether it is complete (every property it allows
/// is a slot or a fixed value). `None` without a property for the message.
fn written(schema: &Value, components: &Value) -> Option<(Vec<Part>, bool)> {
    let (properties, required) = object(schema, components)?;
    let mut complete = resolve_schema(schema, components)?.get("nullable") != Some(&Value::Bool(true));
    let top = message_of(&properties, components).map(|message| (message, None));
    // A message nested one level down: `error.message` (Stripe's, OpenAI's).
    let nested = || {
        properties.iter().find_map(|(name, property)| {
            let (inner, inner_required) = object(property, components)?;
            let message = message_of(&inner, components)?;
            Some(((name.clone(), None), Some((inner, inner_required, message, false))))
        })
    };
    // …or in the one object of a list: JSON:API's `errors: [{detail}]` (crates.io's).
    let listed = || {
        properties.iter().find_map(|(name, property)| {
            let array = resolve_schema(property, components)?;
            if array.get("type").and_then(Value::as_str) != Some("array") {
                return None;
            }
            let (inner, inner_required) = object(array.get("items")?, components)?;
            let message = message_of(&inner, components)?;
            Some(((name.clone(), None), Some((inner, inner_required, message, true))))
        })
    };
    let ((message, longest), inner) = top.or_else(nested).or_else(listed)?;
    let slots = match inner {
        None => slots(&properties, &required, (&message, longest), components, &mut complete),
        Some((inner, inner_required, inner_message, listed)) => {
            complete = false;
            let mut outer = slots(&properties, &required, ("", None), components, &mut complete);
            outer.retain(|(name, _)| *name != message);
            let (inner_name, inner_longest) = inner_message;
            let nested = slots(&inner, &inner_required, (&inner_name, inner_longest), components, &mut complete);
            let at = outer.iter().position(|(_, slot)| matches!(slot, Slot::Filler(_))).unwrap_or(outer.len());
            let slot = if listed { Slot::Listed(nested) } else { Slot::Nested(nested) };
            outer.insert(at, (message, slot));
            outer
        }
    };
    let mut parts = Vec::new();
    render(&slots, &mut parts);
    Some((merged(parts), complete))
}

/// The slots of one object whose message goes in `message` (none where empty; at most so many
/// characters), in the order the module states; `complete` is cleared where a property is left
/// out or filled.
fn slots(
    properties: &Map<String, Value>,
    required: &[String],
    (message, longest): (&str, Option<u64>),
    components: &Value,
    complete: &mut bool,
) -> Vec<(String, Slot)> {
    let status =
        STATUSES.iter().find_map(|name| Some((name.to_string(), status_part(properties.get(*name)?, components)?)));
    let reason = (message != "title"
        && properties.get("title").is_some_and(|p| free_text(p, components, 64).is_some()))
    .then(|| "title".to_owned());
    let mut fixed_values = Vec::new();
    let mut fillers = Vec::new();
    for (name, property) in properties {
        let placed = Some(name.as_str()) == reason.as_deref()
            || status.as_ref().is_some_and(|(status, _)| status == name)
            || name == message;
        if placed {
            continue;
        }
        if let Some(value) = fixed(property, components) {
            fixed_values.push((name.clone(), Slot::Fixed(value)));
        } else {
            *complete = false;
            if required.contains(name) {
                fillers.push((name.clone(), Slot::Filler(crate::model::mock::value_for(property, components))));
            }
        }
    }
    let mut slots = fixed_values;
    slots.extend(reason.map(|name| (name, Slot::Part(Part::Reason))));
    slots.extend(status.map(|(name, part)| (name, Slot::Part(part))));
    if !message.is_empty() {
        slots.push((message.to_owned(), Slot::Part(Part::Message(longest))));
    }
    slots.extend(fillers);
    slots
}

fn render(slots: &[(String, Slot)], parts: &mut Vec<Part>) {
    parts.push(Part::Text("{".into()));
    for (index, (name, slot)) in slots.iter().enumerate() {
        let comma = if index == 0 { "" } else { "," };
        parts.push(Part::Text(format!("{comma}{}:", Value::String(name.clone()))));
        match slot {
            Slot::Fixed(value) | Slot::Filler(value) => parts.push(Part::Text(value.to_string())),
            Slot::Part(part) => parts.push(part.clone()),
            Slot::Nested(inner) => render(inner, parts),
            Slot::Listed(inner) => {
                parts.push(Part::Text("[".into()));
                render(inner, parts);
                parts.push(Part::Text("]".into()));
            }
        }
    }
    parts.push(Part::Text("}".into()));
}

/// `parts` with neighbouring texts joined.
fn merged(parts: Vec<Part>) -> Vec<Part> {
    let mut out: Vec<Part> = Vec::new();
    for part in parts {
        match (out.last_mut(), part) {
            (Some(Part::Text(text)), Part::Text(more)) => text.push_str(&more),
            (_, part) => out.push(part),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The error object's text for a 404 saying `gone`, with the parts put in as the runtime does.
    fn written_for(document: &Value) -> (String, String, bool) {
        let (object, _) = find(document);
        let text = object
            .parts
            .iter()
            .map(|part| match part {
                Part::Text(text) => text.clone(),
                Part::Message(_) => "\"gone\"".into(),
                Part::Status => "404".into(),
                Part::StatusText => "\"404\"".into(),
                Part::Reason => "\"Not Found\"".into(),
            })
            .collect();
        (object.media, text, object.complete)
    }

    /// A document whose operations' `4XX` (and a `default`) give `schemas`' first (by name) its
    /// body, in `media`.
    fn document(schemas: Value, media: &str) -> Value {
        let first = schemas.as_object().unwrap().keys().next().unwrap().clone();
        let error = json!({"description": "", "content": {media: {"schema": {"$ref": format!("#/components/schemas/{first}")}}}});
        json!({
            "paths": {
                "/a": {"get": {"responses": {"200": {"description": ""}, "404": error, "422": error}}},
                "/b": {"get": {"responses": {"200": {"description": ""}, "default": error}}},
            },
            "components": {"schemas": schemas},
        })
    }

    #[test]
    fn ours_is_written_as_it_always_was() {
        let ours = json!({"Error": {"type": "object", "required": ["request", "code", "message"], "properties": {
            "request": {"type": "string", "enum": ["error"]},
            "code": {"type": "integer", "minimum": 400, "maximum": 599},
            "message": {"type": "string"},
        }}});
        let (media, text, complete) = written_for(&document(ours, "application/json"));
        assert_eq!(text, r#"{"request":"error","code":404,"message":"gone"}"#);
        assert_eq!((media.as_str(), complete), ("application/json", true));
    }

    #[test]
    fn github_stripe_and_openai_objects_get_the_message_where_they_keep_it() {
        // GitHub's `basic-error`: the status as text, the rest left out (none is required).
        let github = json!({"basic-error": {"type": "object", "properties": {
            "message": {"type": "string"}, "documentation_url": {"type": "string"},
            "url": {"type": "string"}, "status": {"type": "string"},
        }}});
        assert_eq!(written_for(&document(github, "application/json")).1, r#"{"status":"404","message":"gone"}"#);
        // Stripe's: the message nested in `error`, whose required `type` gets a value it allows.
        let stripe = json!({"Error": {"type": "object", "required": ["error"], "properties": {
            "error": {"$ref": "#/components/schemas/api_errors"},
        }}, "api_errors": {"type": "object", "required": ["type"], "properties": {
            "message": {"type": "string", "maxLength": 40000}, "code": {"type": "string", "maxLength": 5000},
            "type": {"type": "string", "enum": ["api_error", "card_error", "idempotency_error"]},
            "doc_url": {"type": "string"},
        }}});
        let (_, text, complete) = written_for(&document(stripe, "application/json"));
        assert_eq!(text, r#"{"error":{"code":"404","message":"gone","type":"api_error"}}"#);
        assert!(!complete);
        // OpenAI's: every property of the nested object required, `code` text (and nullable).
        let openai = json!({"ErrorResponse": {"type": "object", "required": ["error"], "properties": {
            "error": {"$ref": "#/components/schemas/error"},
        }}, "error": {"type": "object", "required": ["type", "message", "param", "code"], "properties": {
            "code": {"type": "string", "nullable": true}, "message": {"type": "string"},
            "param": {"type": "string", "nullable": true}, "type": {"type": "string"},
        }}});
        let (_, text, _) = written_for(&document(openai, "application/json"));
        assert_eq!(text, r#"{"error":{"code":"404","message":"gone","param":"string","type":"string"}}"#);
        // crates.io's (JSON:API's): the message in the one object of a list.
        let crates_io = json!({"ApiErrorResponse": {"type": "object", "required": ["errors"], "properties": {
            "errors": {"type": "array", "items": {"type": "object", "required": ["detail"], "properties": {
                "detail": {"type": "string"},
            }}},
        }}});
        assert_eq!(written_for(&document(crates_io, "application/json")).1, r#"{"errors":[{"detail":"gone"}]}"#);
        // FastAPI's `HTTPValidationError`: `detail`, a list of `{loc, msg, type}`.
        let fastapi = json!({"HTTPValidationError": {"type": "object", "properties": {
            "detail": {"type": "array", "items": {"$ref": "#/components/schemas/ValidationError"}},
        }}, "ValidationError": {"type": "object", "required": ["loc", "msg", "type"], "properties": {
            "loc": {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
            "msg": {"type": "string"}, "type": {"type": "string"},
        }}});
        let (_, text, _) = written_for(&document(fastapi, "application/json"));
        assert_eq!(text, r#"{"detail":[{"msg":"gone","loc":["string"],"type":"string"}]}"#);
    }

    #[test]
    fn problem_details_where_there_is_none_or_the_document_says_so() {
        let problem = r#"{"title":"Not Found","status":404,"detail":"gone"}"#;
        let none = json!({"paths": {"/a": {"get": {"responses": {"200": {"description": ""}}}}}});
        assert_eq!(written_for(&none).0, "application/problem+json");
        assert_eq!(written_for(&none).1, problem);
        // A schema with nowhere to put a message is not used: problem details, and a note.
        let numbers = json!({"Codes": {"type": "object", "properties": {"code": {"type": "integer"}}}});
        let (object, note) = find(&document(numbers, "application/json"));
        assert_eq!((object.schema, note.unwrap().pointer), (None, "/components/schemas/Codes".to_owned()));
        // The document's own problem schema keeps its media type; `title` beside `detail` is the reason.
        let declared = json!({"Problem": {"type": "object", "properties": {
            "type": {"type": "string", "format": "uri"}, "title": {"type": "string"},
            "status": {"type": "integer"}, "detail": {"type": "string"},
        }}});
        let (media, text, _) = written_for(&document(declared.clone(), "application/problem+json"));
        assert_eq!((media.as_str(), text.as_str()), ("application/problem+json", problem));
        // `x-error-object: false` over the guess.
        let mut overridden = document(declared, "application/json");
        overridden[EXTENSION] = json!(false);
        assert_eq!(written_for(&overridden).0, "application/problem+json");
    }

    #[test]
    fn the_most_shared_schema_wins_and_the_extension_names_another() {
        let mut schemas = document(
            json!({"Common": {"type": "object", "properties": {"message": {"type": "string"}}}}),
            "application/json",
        );
        schemas["components"]["schemas"]["Rare"] =
            json!({"type": "object", "required": ["detail"], "properties": {"detail": {"type": "string"}}});
        let rare = json!({"description": "", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Rare"}}}});
        schemas["paths"]["/a"]["get"]["responses"]["500"] = rare;
        assert_eq!(written_for(&schemas).1, r#"{"message":"gone"}"#);
        schemas[EXTENSION] = json!("Rare");
        assert_eq!(written_for(&schemas).1, r#"{"detail":"gone"}"#);
        schemas[EXTENSION] = json!("#/components/schemas/Rare");
        assert_eq!(written_for(&schemas).1, r#"{"detail":"gone"}"#);
    }
}
