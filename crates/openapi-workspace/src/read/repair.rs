//! Small defects real documents carry, repaired the way their authors meant them, each with a
//! note (its JSON pointer and what was done) that `--strict` turns into a refusal:
//!
//! - a path parameter the path's template does not name is dropped; a name in the template
//!   with no parameter gets a `string` one; a path parameter not marked `required` is required
//!   (a path cannot go without it);
//! - a parameter, or a response's header, with neither `schema` nor `content` is a `string`;
//!   one whose `content` is a scalar's schema in one media type has that `schema`;
//! - a number in `exclusiveMinimum`/`exclusiveMaximum` of a 3.0 document (3.1's spelling) is
//!   read as 3.1 means it;
//! - a `default` of the wrong type is converted when the text says the same value (`"10"` for
//!   an integer, `"true"` for a boolean), and dropped otherwise, as is a `default` outside its
//!   `enum`.
//!   A `default` on a `oneOf`/`anyOf` (OpenAI's `"auto"` on a choice of a string and a number) is
//!   dropped, but a nullable one's `null`: typify checks such a default against the variants it
//!   made and refuses many a valid one, so the models hold no such default.
//!   An object `default` that lacks a property its schema requires (Kubernetes' `default: {}` on
//!   every nested object), or holds one its schema does not name (NetBox's `{"id": 1, "label":
//!   …, "value": …}` on a `{label, value}`), is dropped: the models cannot hold it.
//!
//! - a schema keyword whose value is of another kind than the keyword takes (`pattern: 0`) is
//!   dropped, or read as what its text says (`minLength: "5"`);
//! - a `format` on a type it cannot describe (`format: uri-map` on an object) is ignored; a
//!   `number` of an integer format (`int32`) is an `integer` where every value it gives is one;
//!   a schema with no type whose format names one (`format: double`) is of that type;
//!
//! - a keyword for another type than the schema's (`uniqueItems` on a boolean, `minimum` on a
//!   string) is dropped without a note: JSON Schema ignores it, so nothing changes but what the
//!   libraries after this stage would trip on.
//!
//! - a security requirement naming a scheme `components/securitySchemes` lacks drops it; an
//!   alternative that asked for nothing else is dropped whole (it would otherwise read as
//!   anonymous access), unless no alternative would be left — then the model refuses it.
//!
//! - request bodies: see `bodies.rs`;
//!
//! - a `$ref` to a JSON pointer of the document that is not a component (another operation's
//!   response: `#/paths/~1v2/get/responses/401`), or to a callback, is read as a copy of its
//!   target;
//! - an alternative of a `security` requirement naming an HTTP scheme the router cannot check
//!   (`mutual`, `digest`) is dropped while another alternative remains;
//! - a response that is not an object (`"200": null`) is dropped; one that is a `$ref` to a
//!   schema is a JSON body of it;
//! - a component schema named so that no Rust type can bear its name (`400Error`, `_401`, `-`,
//!   `Self`) is
//!   named `Schema…` (`Schema400Error`), and every `$ref` to it follows.
//!
//! A parameter whose schema is a choice between strings only (FastAPI's `UUID | str`) is read
//! as a string, which is what it is on the wire; progenitor cannot take a parameter of a
//! composed type.

use std::collections::BTreeSet;
use std::fmt::Write;

use serde_json::{Map, Value, json};

use super::bodies::{form_bodies, multipart_beside_others, wildcard_body};
use super::defaults::{composed_default, incomplete_default, wrong_default};
use super::keywords::{
    enum_of_another_kind, exclusive_bounds, foreign_keywords, integer_bounds, keywords_of_another_kind,
    misplaced_format, properties_of_one_field, typed_by_format,
};
use super::references::{extensions_among_webhooks, pointer_references, unnameable_schemas};
use crate::read::Note;
use crate::read::document::{METHODS, escape, holds_values, push_segment};

/// Repairs `doc` (in its 3.0 view; `was_30`: whether it was written as 3.0), noting each repair.
pub(crate) fn repair(doc: &mut Value, was_30: bool, as_written: bool, notes: &mut Vec<Note>) {
    // The diff judges a parameter given as content as written (a restyling is a change to it).
    if !as_written {
        scalar_contents(doc, "", false, notes);
    }
    pointer_references(doc, notes);
    extensions_among_webhooks(doc);
    unnameable_schemas(doc, notes);
    if was_30 {
        schemas(doc, "", &mut |schema, at| exclusive_bounds(schema, at, notes));
    }
    schemas(doc, "", &mut |schema, at| keywords_of_another_kind(schema, at, notes));
    schemas(doc, "", &mut |schema, at| typed_by_format(schema, at, notes));
    schemas(doc, "", &mut |schema, _| foreign_keywords(schema));
    schemas(doc, "", &mut |schema, at| misplaced_format(schema, at, notes));
    schemas(doc, "", &mut |schema, at| integer_bounds(schema, at, notes));
    schemas(doc, "", &mut |schema, at| enum_of_another_kind(schema, at, notes));
    // The diff compares every property as written.
    if !as_written {
        schemas(doc, "", &mut |schema, at| properties_of_one_field(schema, at, notes));
    }
    schemas(doc, "", &mut |schema, at| wrong_default(schema, at, notes));
    let components = doc.get("components").cloned().unwrap_or(Value::Null);
    schemas(doc, "", &mut |schema, at| incomplete_default(schema, at, &components, notes));
    schemas(doc, "", &mut |schema, at| composed_default(schema, at, notes));
    let defined = components.get("securitySchemes").and_then(Value::as_object).cloned().unwrap_or_default();
    let uncheckable = uncheckable(&defined);
    if let Some(security) = doc.get_mut("security") {
        undefined_schemes(security, "/security", &defined, notes);
        uncheckable_alternatives(security, "/security", &uncheckable, notes);
    }
    if let Some(headers) = doc.pointer_mut("/components").filter(|c| c.get("headers").is_some()) {
        headers_without_schema(headers, "/components", notes);
    }
    if let Some(responses) = doc.pointer_mut("/components/responses").and_then(Value::as_object_mut) {
        for (name, response) in responses.iter_mut() {
            headers_without_schema(response, &format!("/components/responses/{}", escape(name)), notes);
        }
    }
    if let Some(bodies) = doc.pointer_mut("/components/requestBodies").and_then(Value::as_object_mut) {
        for (name, body) in bodies.iter_mut() {
            let at = format!("/components/requestBodies/{}", escape(name));
            wildcard_body(body, &at, &components, notes);
            multipart_beside_others(body, &at, notes);
            form_bodies(body, &at, &components, notes);
        }
    }
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else { continue };
        let template: BTreeSet<String> = crate::read::document::template_names(path).map(str::to_owned).collect();
        let item_at = format!("/paths/{}", escape(path));
        let shared = item.get("parameters").cloned();
        if let Some(parameters) = item.get_mut("parameters").and_then(Value::as_array_mut) {
            parameters_repaired(parameters, &template, &format!("{item_at}/parameters"), &components, notes);
        }
        for method in METHODS {
            let Some(operation) = item.get_mut(method).and_then(Value::as_object_mut) else { continue };
            let at = format!("{item_at}/{method}");
            if let Some(responses) = operation.get_mut("responses").and_then(Value::as_object_mut) {
                for (status, response) in responses.iter_mut() {
                    let Some(reference) = response.get("$ref").and_then(Value::as_str) else { continue };
                    if reference.starts_with("#/components/schemas/") {
                        notes.push(Note {
                            pointer: format!("{at}/responses/{}", escape(status)),
                            message: format!("a response that is a schema ({reference}): read as a JSON body of it"),
                        });
                        *response = json!({"description": "", "content": {"application/json": {"schema": {"$ref": reference}}}});
                    }
                }
                for (status, response) in responses.iter_mut() {
                    headers_without_schema(response, &format!("{at}/responses/{}", escape(status)), notes);
                }
                responses.retain(|status, response| {
                    let keep = response.is_object() || status.starts_with("x-");
                    if !keep {
                        notes.push(Note {
                            pointer: format!("{at}/responses/{}", escape(status)),
                            message: format!("the response {status} is {response}, not a response: dropped"),
                        });
                    }
                    keep
                });
            }
            if let Some(security) = operation.get_mut("security") {
                undefined_schemes(security, &format!("{at}/security"), &defined, notes);
                uncheckable_alternatives(security, &format!("{at}/security"), &uncheckable, notes);
            }
            if let Some(body) = operation.get_mut("requestBody") {
                wildcard_body(body, &format!("{at}/requestBody"), &components, notes);
                multipart_beside_others(body, &format!("{at}/requestBody"), notes);
                form_bodies(body, &format!("{at}/requestBody"), &components, notes);
            }
            let mut named: BTreeSet<String> = BTreeSet::new();
            for list in [shared.as_ref(), operation.get("parameters")] {
                for parameter in list.and_then(Value::as_array).into_iter().flatten() {
                    let parameter = resolve(parameter, &components);
                    if parameter.get("in").and_then(Value::as_str) == Some("path")
                        && let Some(name) = parameter.get("name").and_then(Value::as_str)
                        && template.contains(name)
                    {
                        named.insert(name.to_owned());
                    }
                }
            }
            let parameters = operation.entry("parameters").or_insert_with(|| json!([]));
            let Some(parameters) = parameters.as_array_mut() else { continue };
            parameters_repaired(parameters, &template, &format!("{at}/parameters"), &components, notes);
            for missing in template.difference(&named) {
                notes.push(Note {
                    pointer: format!("{at}/parameters"),
                    message: format!("the path names {{{missing}}} but no parameter does: read as a required string"),
                });
                parameters.push(json!({"name": missing, "in": "path", "required": true, "schema": {"type": "string"}}));
            }
            if parameters.is_empty() {
                operation.remove("parameters");
            }
        }
    }
}

/// Every parameter's and header's `content` of a scalar read as its schema ([`scalar_content`]);
/// `headers`: `value` is a map of headers.
fn scalar_contents(value: &mut Value, at: &str, headers: bool, notes: &mut Vec<Note>) {
    match value {
        Value::Object(map) => {
            if map.contains_key("content") && (headers || map.contains_key("in")) {
                scalar_content(map, at, notes);
            }
            for (key, child) in map.iter_mut() {
                if !holds_values(child)
                    || matches!(key.as_str(), "example" | "examples" | "schema")
                    || (!headers && key.starts_with("x-"))
                {
                    continue;
                }
                let here = format!("{at}/{}", escape(key));
                if headers {
                    // A header by its name: the header's own keys are not headers.
                    if let Value::Object(header) = child
                        && header.contains_key("content")
                    {
                        scalar_content(header, &here, notes);
                    }
                    continue;
                }
                scalar_contents(child, &here, key == "headers", notes);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                scalar_contents(item, &format!("{at}/{i}"), false, notes);
            }
        }
        _ => {}
    }
}

/// A parameter's or header's `content` of one media type is read as a `schema`: a scalar's (a
/// string, a number, a boolean) as that schema, since such a value is the same text on the wire;
/// any other (an object or array sent as JSON text, Superset's `q`) as a string, the text the
/// caller writes in that media type.
fn scalar_content(item: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    let Some(content) = item.get("content").and_then(Value::as_object).filter(|c| c.len() == 1) else { return };
    let (media, media_type) = content.iter().next().expect("one");
    let schema = media_type.get("schema").cloned().unwrap_or_else(|| json!({}));
    let scalar =
        matches!(schema.get("type").and_then(Value::as_str), Some("string" | "integer" | "number" | "boolean"));
    let (schema, message) = match scalar && schema.get("properties").is_none() {
        true => (schema, format!("a scalar given as content ({media}): read as its schema")),
        false => {
            let mut text = json!({"type": "string"});
            if let Some(description) = item.get("description").or_else(|| schema.get("description")) {
                text["description"] = description.clone();
            }
            (text, format!("a value given as content ({media}): read as a string, the {media} text the caller writes"))
        }
    };
    notes.push(Note { pointer: format!("{at}/content"), message });
    item.remove("content");
    item.insert("schema".into(), schema);
}

/// The headers of `response` (at `at`) with neither `schema` nor `content`, read as strings.
fn headers_without_schema(response: &mut Value, at: &str, notes: &mut Vec<Note>) {
    let headers = response.get_mut("headers").and_then(Value::as_object_mut).into_iter().flatten();
    for (name, header) in headers {
        let Some(header) = header.as_object_mut() else { continue };
        if !["schema", "content", "$ref"].iter().any(|key| header.contains_key(*key)) {
            notes.push(Note {
                pointer: format!("{at}/headers/{}", escape(name)),
                message: format!("header {name} has no schema: read as a string"),
            });
            header.insert("schema".into(), json!({"type": "string"}));
        }
    }
}

/// The schemes of `defined` the router cannot check: HTTP authentication other than bearer and
/// basic (`mutual`, `digest`, `hoba`…), each with what it is.
fn uncheckable(defined: &Map<String, Value>) -> Map<String, Value> {
    defined
        .iter()
        .filter(|(_, scheme)| scheme.get("type").and_then(Value::as_str) == Some("http"))
        .filter_map(|(name, scheme)| {
            let kind = scheme.get("scheme").and_then(Value::as_str).unwrap_or_default();
            let checked = ["bearer", "basic"].iter().any(|k| k.eq_ignore_ascii_case(kind));
            (!checked).then(|| (name.clone(), Value::String(kind.to_owned())))
        })
        .collect()
}

/// The alternatives of `security` (at `at`) that ask for a scheme the router cannot check are
/// dropped while another remains (with none left, the operation is refused as it was).
fn uncheckable_alternatives(security: &mut Value, at: &str, uncheckable: &Map<String, Value>, notes: &mut Vec<Note>) {
    let Some(alternatives) = security.as_array() else { return };
    let asks = |alternative: &Value| {
        alternative.as_object().and_then(|schemes| schemes.keys().find(|name| uncheckable.contains_key(*name)).cloned())
    };
    if alternatives.iter().all(|alternative| asks(alternative).is_some()) {
        return;
    }
    for (index, alternative) in alternatives.iter().enumerate() {
        if let Some(name) = asks(alternative) {
            notes.push(Note {
                pointer: format!("{at}/{index}"),
                message: format!(
                    "asks for {name}, HTTP {} authentication, which the router cannot check: this alternative is dropped",
                    uncheckable[&name].as_str().unwrap_or_default()
                ),
            });
        }
    }
    let kept: Vec<Value> = alternatives.iter().filter(|alternative| asks(alternative).is_none()).cloned().collect();
    *security = Value::Array(kept);
}

/// The requirements of `security` (at `at`) without the schemes `defined` lacks; see the
/// module's documentation for an alternative left asking for nothing.
fn undefined_schemes(security: &mut Value, at: &str, defined: &Map<String, Value>, notes: &mut Vec<Note>) {
    let Some(alternatives) = security.as_array() else { return };
    let mut kept = Vec::new();
    let mut found = Vec::new();
    for (index, alternative) in alternatives.iter().enumerate() {
        let Some(schemes) = alternative.as_object() else {
            kept.push(alternative.clone());
            continue;
        };
        let (known, unknown): (Map<String, Value>, Map<String, Value>) =
            schemes.clone().into_iter().partition(|(name, _)| defined.contains_key(name));
        for name in unknown.keys() {
            let pointer = format!("{at}/{index}/{}", name.replace('~', "~0").replace('/', "~1"));
            found.push((pointer, name.clone(), known.is_empty()));
        }
        if unknown.is_empty() || !known.is_empty() {
            kept.push(Value::Object(known));
        }
    }
    if found.is_empty() || kept.is_empty() {
        return;
    }
    for (pointer, name, whole) in found {
        let done = if whole { "the alternative, which asked for nothing else, dropped" } else { "dropped from it" };
        notes.push(Note {
            pointer,
            message: format!("security scheme {name} is not in components/securitySchemes: {done}"),
        });
    }
    *security = Value::Array(kept);
}

/// The inline parameters of one list, repaired; a `$ref` is left to the component it names.
fn parameters_repaired(
    parameters: &mut Vec<Value>,
    template: &BTreeSet<String>,
    at: &str,
    components: &Value,
    notes: &mut Vec<Note>,
) {
    // Pointers name each parameter where the document has it, before any is dropped.
    let mut kept = Vec::new();
    for (index, parameter) in std::mem::take(parameters).into_iter().enumerate() {
        let here = format!("{at}/{index}");
        let resolved = resolve(&parameter, components);
        if resolved.get("in").and_then(Value::as_str) == Some("path")
            && let Some(name) = resolved.get("name").and_then(Value::as_str)
            && !template.contains(name)
        {
            notes.push(Note { pointer: here, message: format!("path parameter {name} is not in the path: dropped") });
            continue;
        }
        kept.push((here, parameter));
    }
    for (here, parameter) in kept.iter_mut() {
        let here = &*here;
        let Some(object) = parameter.as_object_mut() else { continue };
        if object.contains_key("$ref") {
            continue;
        }
        let name = object.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
        if object.get("in").and_then(Value::as_str) == Some("path")
            && object.get("required") != Some(&Value::Bool(true))
        {
            notes.push(Note {
                pointer: format!("{here}/required"),
                message: format!("path parameter {name} is not marked required; a path cannot go without it: required"),
            });
            object.insert("required".into(), Value::Bool(true));
        }
        if !object.contains_key("schema") && !object.contains_key("content") {
            notes.push(Note {
                pointer: here.to_owned(),
                message: format!("parameter {name} has no schema: read as a string"),
            });
            object.insert("schema".into(), json!({"type": "string"}));
        }
        if let Some(schema) = object.get_mut("schema").and_then(Value::as_object_mut) {
            strings_only(schema, &format!("{here}/schema"), notes);
        }
    }
    parameters.extend(kept.into_iter().map(|(_, parameter)| parameter));
}

/// A parameter's `anyOf`/`oneOf` whose every arm is a string, read as a string.
fn strings_only(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    for keyword in ["anyOf", "oneOf"] {
        let Some(arms) = schema.get(keyword).and_then(Value::as_array) else { continue };
        if arms.is_empty() || !arms.iter().all(|arm| arm.get("type").and_then(Value::as_str) == Some("string")) {
            continue;
        }
        notes.push(Note {
            pointer: format!("{at}/{keyword}"),
            message: "a choice between strings, read as a string (which is what it is on the wire)".into(),
        });
        schema.remove(keyword);
        schema.insert("type".into(), "string".into());
    }
}

/// Calls `visit` on every schema object of the document (anything with a `type`, a
/// composition or a `$ref` beside other keywords), never inside examples, enums, defaults or
/// extensions, which are values rather than schemas.
pub(crate) fn schemas(value: &mut Value, at: &str, visit: &mut impl FnMut(&mut Map<String, Value>, &str)) {
    walk(value, &mut at.to_owned(), false, visit);
}

/// `named`: the map's keys are names (of properties, schemas, paths, media types...), not
/// keywords. `at` is the pointer of `value`, one buffer for the whole walk: each repair walks
/// every node of the document, and a pointer written anew for each was most of a walk's time.
fn walk(value: &mut Value, at: &mut String, named: bool, visit: &mut impl FnMut(&mut Map<String, Value>, &str)) {
    match value {
        Value::Object(map) => {
            let security = map.get("type").is_some_and(|t| {
                matches!(t.as_str(), Some("apiKey" | "http" | "oauth2" | "openIdConnect" | "mutualTLS"))
            });
            if !named
                && !security
                && ["type", "allOf", "anyOf", "oneOf", "properties", "items", "format"]
                    .iter()
                    .any(|k| map.contains_key(*k))
            {
                visit(map, at);
            }
            for (key, child) in map.iter_mut() {
                if !holds_values(child) {
                    continue;
                }
                let names = if named {
                    false
                } else if matches!(key.as_str(), "example" | "examples" | "enum" | "default" | "const")
                    || key.starts_with("x-") && key != "x-webhooks"
                {
                    continue;
                } else {
                    matches!(
                        key.as_str(),
                        "properties"
                            | "patternProperties"
                            | "schemas"
                            | "paths"
                            | "responses"
                            | "parameters"
                            | "headers"
                            | "content"
                            | "requestBodies"
                            | "securitySchemes"
                            | "callbacks"
                            | "links"
                            | "encoding"
                            | "pathItems"
                            | "x-webhooks"
                    ) && child.is_object()
                };
                let parent = at.len();
                push_segment(at, key);
                walk(child, at, names, visit);
                at.truncate(parent);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                if !holds_values(item) {
                    continue;
                }
                let parent = at.len();
                // Writing into a `String` cannot fail.
                let _ = write!(at, "/{i}");
                walk(item, at, false, visit);
                at.truncate(parent);
            }
        }
        _ => {}
    }
}

/// A parameter, following a `$ref` to `components/parameters` (itself when that names nothing).
fn resolve<'a>(parameter: &'a Value, components: &'a Value) -> &'a Value {
    crate::read::document::resolve(parameter, components, "parameters").unwrap_or(parameter)
}
