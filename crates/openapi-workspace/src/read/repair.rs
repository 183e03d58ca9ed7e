//! Small defects real documents carry, repaired the way their authors meant them, each with a
//! note (its JSON pointer and what was done) that `--strict` turns into a refusal:
//!
//! - a path parameter the path's template does not name is dropped; a name in the template
//!   with no parameter gets a `string` one; a path parameter not marked `required` is required
//!   (a path cannot go without it);
//! - a parameter with neither `schema` nor `content` is a `string`;
//! - a number in `exclusiveMinimum`/`exclusiveMaximum` of a 3.0 document (3.1's spelling) is
//!   read as 3.1 means it;
//! - a `default` of the wrong type is converted when the text says the same value (`"10"` for
//!   an integer, `"true"` for a boolean), and dropped otherwise, as is a `default` outside its
//!   `enum`.
//!   A `default` on a `oneOf`/`anyOf` (OpenAI's `"auto"` on a choice of a string and a number) is
//!   dropped, but a nullable one's `null`: typify checks such a default against the variants it
//!   made and refuses many a valid one, so the models hold no such default.
//!   An object `default` that lacks a property its schema requires (Kubernetes' `default: {}` on
//!   every nested object) is dropped: it is not a value of the schema.
//!
//! - a keyword for another type than the schema's (`uniqueItems` on a boolean, `minimum` on a
//!   string) is dropped without a note: JSON Schema ignores it, so nothing changes but what the
//!   libraries after this stage would trip on.
//!
//! - a security requirement naming a scheme `components/securitySchemes` lacks drops it; an
//!   alternative that asked for nothing else is dropped whole (it would otherwise read as
//!   anonymous access), unless no alternative would be left — then the model refuses it.
//!
//! - a request body offered as `multipart/form-data` beside other media types is read as the
//!   others (the server takes multipart only as a body's one media type);
//! - a request body offered as a wildcard (`*/*`, `application/*`; Kubernetes offers every body
//!   so) is read as JSON when its schema is an object's, and as bytes otherwise — what a client
//!   can send and a server can read; beside a JSON media type the wildcard is dropped.
//!
//! A parameter whose schema is a choice between strings only (FastAPI's `UUID | str`) is read
//! as a string, which is what it is on the wire; progenitor cannot take a parameter of a
//! composed type.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::read::Note;
use crate::read::document::{METHODS, escape};

/// Repairs `doc` (in its 3.0 view; `was_30`: whether it was written as 3.0), noting each repair.
pub(crate) fn repair(doc: &mut Value, was_30: bool, notes: &mut Vec<Note>) {
    if was_30 {
        schemas(doc, "", &mut |schema, at| exclusive_bounds(schema, at, notes));
    }
    schemas(doc, "", &mut |schema, _| foreign_keywords(schema));
    schemas(doc, "", &mut |schema, at| wrong_default(schema, at, notes));
    let components = doc.get("components").cloned().unwrap_or(Value::Null);
    schemas(doc, "", &mut |schema, at| incomplete_default(schema, at, &components, notes));
    schemas(doc, "", &mut |schema, at| composed_default(schema, at, notes));
    let defined = components.get("securitySchemes").and_then(Value::as_object).cloned().unwrap_or_default();
    if let Some(security) = doc.get_mut("security") {
        undefined_schemes(security, "/security", &defined, notes);
    }
    if let Some(bodies) = doc.pointer_mut("/components/requestBodies").and_then(Value::as_object_mut) {
        for (name, body) in bodies.iter_mut() {
            let at = format!("/components/requestBodies/{}", escape(name));
            wildcard_body(body, &at, &components, notes);
            multipart_beside_others(body, &at, notes);
        }
    }
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else { continue };
        let template: BTreeSet<String> =
            path.split('{').skip(1).filter_map(|s| s.split_once('}')).map(|(name, _)| name.to_owned()).collect();
        let item_at = format!("/paths/{}", escape(path));
        let shared = item.get("parameters").cloned();
        if let Some(parameters) = item.get_mut("parameters").and_then(Value::as_array_mut) {
            parameters_repaired(parameters, &template, &format!("{item_at}/parameters"), &components, notes);
        }
        for method in METHODS {
            let Some(operation) = item.get_mut(method).and_then(Value::as_object_mut) else { continue };
            let at = format!("{item_at}/{method}");
            if let Some(security) = operation.get_mut("security") {
                undefined_schemes(security, &format!("{at}/security"), &defined, notes);
            }
            if let Some(body) = operation.get_mut("requestBody") {
                wildcard_body(body, &format!("{at}/requestBody"), &components, notes);
                multipart_beside_others(body, &format!("{at}/requestBody"), notes);
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

/// A request body's wildcard media types read as JSON or bytes (see the module's documentation).
fn wildcard_body(body: &mut Value, at: &str, components: &Value, notes: &mut Vec<Note>) {
    let Some(content) = body.get_mut("content").and_then(Value::as_object_mut) else { return };
    for wildcard in ["*/*", "application/*"] {
        let Some(media) = content.remove(wildcard) else { continue };
        let pointer = format!("{at}/content/{}", escape(wildcard));
        if content.keys().any(|m| crate::read::document::is_json(m)) {
            notes.push(Note { pointer, message: "a wildcard beside JSON: the body is read as JSON".into() });
            continue;
        }
        let object = media.get("schema").is_some_and(|schema| object_schema(schema, components, 0));
        let read_as = if object { "application/json" } else { "application/octet-stream" };
        notes.push(Note {
            pointer,
            message: format!(
                "a body of any media type, with {} schema: read as {read_as}",
                if object { "an object's" } else { "a non-object" }
            ),
        });
        content.entry(read_as).or_insert(media);
    }
}

/// A body offered as `multipart/form-data` and as other media types is read as the others: a
/// server cannot yet take multipart beside them (see the module's documentation).
fn multipart_beside_others(body: &mut Value, at: &str, notes: &mut Vec<Note>) {
    let Some(content) = body.get_mut("content").and_then(Value::as_object_mut) else { return };
    let multipart: Vec<String> =
        content.keys().filter(|m| crate::read::document::essence(m) == "multipart/form-data").cloned().collect();
    if multipart.is_empty() || multipart.len() == content.len() {
        return;
    }
    for media in multipart {
        content.remove(&media);
        let others: Vec<&String> = content.keys().collect();
        notes.push(Note {
            pointer: format!("{at}/content/{}", escape(&media)),
            message: format!("multipart/form-data beside {others:?} is not served: the body is read as those"),
        });
    }
}

/// Whether `schema` (through `$ref`s and `allOf`s) describes a JSON object.
fn object_schema(schema: &Value, components: &Value, depth: usize) -> bool {
    let Some(schema) = crate::read::document::resolve_schema(schema, components) else { return false };
    depth < 16
        && (schema.get("type").and_then(Value::as_str) == Some("object")
            || schema.get("properties").is_some()
            || schema.get("additionalProperties").is_some()
            || schema
                .get("allOf")
                .and_then(Value::as_array)
                .is_some_and(|arms| arms.iter().any(|arm| object_schema(arm, components, depth + 1))))
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

/// `exclusiveMinimum: 5` in a 3.0 document: the 3.1 spelling of `minimum: 5, exclusiveMinimum: true`.
fn exclusive_bounds(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    for (exclusive, inclusive) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
        let Some(bound) = schema.get(exclusive).filter(|b| b.is_number()).cloned() else { continue };
        notes.push(Note {
            pointer: format!("{at}/{exclusive}"),
            message: format!(
                "a number here is OpenAPI 3.1's spelling; read as 3.0's `{inclusive}: {bound}, {exclusive}: true`"
            ),
        });
        schema.insert(inclusive.into(), bound);
        schema.insert(exclusive.into(), Value::Bool(true));
    }
}

/// Drops the keywords that apply to other types than the schema's one `type`.
fn foreign_keywords(schema: &mut Map<String, Value>) {
    const ARRAY: &[&str] = &["items", "prefixItems", "uniqueItems", "minItems", "maxItems", "contains"];
    const OBJECT: &[&str] = &[
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
    ];
    const STRING: &[&str] = &["minLength", "maxLength", "pattern"];
    const NUMBER: &[&str] = &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];
    let Some(kind) = schema.get("type").and_then(Value::as_str) else { return };
    let own: &[&str] = match kind {
        "array" => ARRAY,
        "object" => OBJECT,
        "string" => STRING,
        "integer" | "number" => NUMBER,
        "boolean" | "null" => &[],
        _ => return,
    };
    for keyword in [ARRAY, OBJECT, STRING, NUMBER].concat() {
        // A parameter's or header's `required` is a boolean, and not this keyword.
        let a_parameters = keyword == "required" && schema.get(keyword).is_some_and(Value::is_boolean);
        if !own.contains(&keyword) && !a_parameters {
            schema.remove(keyword);
        }
    }
}

/// A `default` that is not of its schema's `type` (or not in its `enum`).
fn wrong_default(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    let Some(default) = schema.get("default") else { return };
    let nullable = schema.get("nullable") == Some(&Value::Bool(true));
    if default.is_null() && nullable {
        return;
    }
    let fits = |value: &Value, kind: &str| match kind {
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "string" => value.is_string(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        _ => true,
    };
    let kind = schema.get("type").and_then(Value::as_str).unwrap_or("");
    let mut repaired = None;
    let mut message = None;
    if !fits(default, kind) {
        let converted = default.as_str().and_then(|text| match kind {
            "integer" => text.trim().parse::<i64>().ok().map(Value::from),
            "number" => {
                text.trim().parse::<f64>().ok().and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
            }
            "boolean" => text.trim().parse::<bool>().ok().map(Value::Bool),
            _ => None,
        });
        let converted = converted.or_else(|| match (kind, default) {
            ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
            ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
            _ => None,
        });
        message = Some(match &converted {
            Some(value) => format!("the default {default} is not {}: read as {value}", with_article(kind)),
            None => format!("the default {default} is not {}: dropped", with_article(kind)),
        });
        repaired = Some(converted);
    }
    if repaired.is_none()
        && let (Some(text), Some(format)) = (default.as_str(), schema.get("format").and_then(Value::as_str))
        && !reads_as(text, format)
    {
        message = Some(format!("the default {default} is not a {format}: dropped"));
        repaired = Some(None);
    }
    let value = match &repaired {
        Some(value) => value.clone(),
        None => Some(default.clone()),
    };
    if let (Some(value), Some(Value::Array(allowed))) = (&value, schema.get("enum"))
        && !allowed.contains(value)
    {
        message = Some(format!("the default {value} is not one of the schema's `enum` values: dropped"));
        repaired = Some(None);
    }
    let (Some(repaired), Some(message)) = (repaired, message) else { return };
    notes.push(Note { pointer: format!("{at}/default"), message });
    match repaired {
        Some(value) => schema.insert("default".into(), value),
        None => schema.remove("default"),
    };
}

/// An object `default` without every property its schema (through `$ref`s and `allOf`s) requires.
fn incomplete_default(schema: &mut Map<String, Value>, at: &str, components: &Value, notes: &mut Vec<Note>) {
    let Some(Value::Object(default)) = schema.get("default") else { return };
    let mut required = BTreeSet::new();
    required_of(&Value::Object(schema.clone()), components, &mut required, 0);
    let missing: Vec<&String> = required.iter().filter(|name| !default.contains_key(*name)).collect();
    if missing.is_empty() {
        return;
    }
    notes.push(Note {
        pointer: format!("{at}/default"),
        message: format!("the default {} lacks the required {missing:?}: dropped", Value::Object(default.clone())),
    });
    schema.remove("default");
}

/// A `default` on a composition (see the module's documentation).
fn composed_default(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    let Some(default) = schema.get("default") else { return };
    let composed = schema.contains_key("oneOf") || schema.contains_key("anyOf");
    let nullable_null = default.is_null() && schema.get("nullable") == Some(&Value::Bool(true));
    if !composed || nullable_null {
        return;
    }
    notes.push(Note {
        pointer: format!("{at}/default"),
        message: format!("the default {default} of a oneOf/anyOf is not kept in the models: dropped"),
    });
    schema.remove("default");
}

/// The properties `schema` requires, through `$ref`s and `allOf`s.
fn required_of(schema: &Value, components: &Value, required: &mut BTreeSet<String>, depth: usize) {
    let Some(schema) = crate::read::document::resolve_schema(schema, components) else { return };
    if depth > 16 {
        return;
    }
    required.extend(
        schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned),
    );
    for arm in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        required_of(arm, components, required, depth + 1);
    }
}

/// Calls `visit` on every schema object of the document (anything with a `type`, a
/// composition or a `$ref` beside other keywords), never inside examples, enums, defaults or
/// extensions, which are values rather than schemas.
pub(crate) fn schemas(value: &mut Value, at: &str, visit: &mut impl FnMut(&mut Map<String, Value>, &str)) {
    walk(value, at, false, visit);
}

/// `named`: the map's keys are names (of properties, schemas, paths, media types...), not
/// keywords.
fn walk(value: &mut Value, at: &str, named: bool, visit: &mut impl FnMut(&mut Map<String, Value>, &str)) {
    match value {
        Value::Object(map) => {
            let security = map.get("type").is_some_and(|t| {
                matches!(t.as_str(), Some("apiKey" | "http" | "oauth2" | "openIdConnect" | "mutualTLS"))
            });
            if !named
                && !security
                && ["type", "allOf", "anyOf", "oneOf", "properties", "items"].iter().any(|k| map.contains_key(*k))
            {
                visit(map, at);
            }
            for (key, child) in map.iter_mut() {
                let here = format!("{at}/{}", escape(key));
                if named {
                    walk(child, &here, false, visit);
                } else if matches!(key.as_str(), "example" | "examples" | "enum" | "default" | "const")
                    || key.starts_with("x-") && key != "x-webhooks"
                {
                    continue;
                } else {
                    let names = matches!(
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
                    ) && child.is_object();
                    walk(child, &here, names, visit);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                walk(item, &format!("{at}/{i}"), false, visit);
            }
        }
        _ => {}
    }
}

/// A parameter, following a `$ref` to `components/parameters` (itself when that names nothing).
fn resolve<'a>(parameter: &'a Value, components: &'a Value) -> &'a Value {
    crate::read::document::resolve(parameter, components, "parameters").unwrap_or(parameter)
}

/// Whether `text` has the shape of `format` (the formats that become types other than `String`).
fn reads_as(text: &str, format: &str) -> bool {
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    let date = |d: &str| d.len() == 10 && d.split('-').map(digits).filter(|ok| *ok).count() == 3;
    match format {
        "date" => date(text),
        "date-time" => text.get(..10).is_some_and(date) && matches!(text.as_bytes().get(10), Some(b'T' | b't')),
        "uuid" => {
            text.len() == 36
                && text
                    .char_indices()
                    .all(|(i, c)| if [8, 13, 18, 23].contains(&i) { c == '-' } else { c.is_ascii_hexdigit() })
        }
        _ => true,
    }
}

fn with_article(kind: &str) -> String {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) { format!("an {kind}") } else { format!("a {kind}") }
}
