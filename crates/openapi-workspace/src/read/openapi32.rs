//! The 3.1 view of an OpenAPI 3.2 document (utoipa 6 writes 3.2 on request), read before the
//! 3.1 one (`openapi31`), so a 3.2 document takes the same road as any other. 3.2 adds to 3.1;
//! what it adds is mapped or, where the generator has nothing to serve it with, refused with its
//! JSON pointer:
//!
//! - kept as documentation only, so dropped from the view: `$self`, a tag's `summary`, `parent`
//!   and `kind`, a server's `name`, a response's `summary`, a security scheme's
//!   `oauth2MetadataUrl` and `deprecated`, the `deviceAuthorization` OAuth flow (every OAuth2
//!   scheme is a bearer token to the router), a discriminator's `defaultMapping` that names no
//!   arm of its union (noted);
//! - a response without `description` (3.2 made it optional) gets an empty one;
//! - `components.mediaTypes` and the media types that refer to one are inlined;
//! - refused: `query` and `additionalOperations` in webhooks (a receiver is posted to), `in:
//!   querystring` parameters but of form-encoded objects, and `itemSchema` but on event streams,
//!   JSON Lines and JSON text sequences (`multipart/mixed`, say).
//! - mapped: a discriminator's `defaultMapping` naming an arm to the view's mark for it
//!   (`marks::DEFAULT_MAPPING`); an event stream's `itemSchema` (each event) to the `schema` of
//!   its data, as 3.0 and 3.1 documents write an event stream (one without a `data` property is
//!   the data's, noted); a JSON Lines or JSON text sequence's `itemSchema` to
//!   its `schema`, marked as the items' (`items`); a cookie parameter's `style: cookie` to `form` with
//!   an extension saying its values are not percent-encoded (`styles::COOKIE_STYLE`); an
//!   `in: querystring` parameter of a form-encoded object to the exploded `form` query
//!   parameter it is on the wire; a path's `query` and `additionalOperations` to operations of
//!   the view (`methods`), whose pointers are the document's again in every message.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::read::Note;
use crate::read::document::escape;

/// OpenAPI 3.2's own dialect, which a 3.2 document may name.
const OAS_32_DIALECT_PREFIX: &str = "https://spec.openapis.org/oas/3.2/dialect/";

/// Whether `version` (the document's `openapi`) is a 3.2 one.
pub(crate) fn is_32(version: &str) -> bool {
    version.starts_with("3.2.")
}

/// Turns the 3.2 `document` into its 3.1 view, in place. Answers where the view moved what:
/// pairs of pointers, the view's and the document's.
pub(crate) fn to_31(document: &mut Value, notes: &mut Vec<Note>) -> Result<Vec<(String, String)>> {
    let object = document.as_object_mut().ok_or_else(|| Error::Document("the document is not an object".into()))?;
    object.insert("openapi".into(), Value::String("3.1.1".into()));
    object.remove("$self");
    if object.get("jsonSchemaDialect").and_then(Value::as_str).is_some_and(|d| d.starts_with(OAS_32_DIALECT_PREFIX)) {
        object.remove("jsonSchemaDialect");
    }
    for tag in object.get_mut("tags").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(tag) = tag.as_object_mut() {
            for keyword in ["summary", "parent", "kind"] {
                tag.remove(keyword);
            }
        }
    }
    for server in object.get_mut("servers").and_then(Value::as_array_mut).into_iter().flatten() {
        if let Some(server) = server.as_object_mut() {
            server.remove("name");
        }
    }
    let media_types = object
        .get_mut("components")
        .and_then(Value::as_object_mut)
        .and_then(|components| components.remove("mediaTypes"))
        .unwrap_or_default();
    if let Some(schemes) = object
        .get_mut("components")
        .and_then(|components| components.get_mut("securitySchemes"))
        .and_then(Value::as_object_mut)
    {
        for scheme in schemes.values_mut().filter_map(Value::as_object_mut) {
            scheme.remove("oauth2MetadataUrl");
            scheme.remove("deprecated");
            if let Some(flows) = scheme.get_mut("flows").and_then(Value::as_object_mut) {
                flows.remove("deviceAuthorization");
            }
        }
    }
    let moved = other_methods(document)?;
    walk(document, "", Within::Other, &media_types, notes)?;
    Ok(moved)
}

/// Moves each path's `query` and `additionalOperations` operations to the view's paths for them
/// (`methods`), a path item each, with the path's parameters. A path item that refers to one of
/// `components/pathItems` with such operations is inlined first (that component is then read
/// through the paths that use it). Answers the moves, as `to_31` does.
fn other_methods(document: &mut Value) -> Result<Vec<(String, String)>> {
    let fields = |item: &Value| item.get("query").is_some() || item.get("additionalOperations").is_some();
    let shared = document.pointer("/components/pathItems").cloned().unwrap_or_default();
    let mut inlined = Vec::new();
    let Some(paths) = document.get_mut("paths").and_then(Value::as_object_mut) else { return Ok(Vec::new()) };
    let mut views = Vec::new();
    for (path, item) in paths.iter_mut() {
        let at = format!("/paths/{}", escape(path));
        let name = item.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/pathItems/"));
        if let Some(name) = name.map(str::to_owned)
            && let Some(target) = shared.get(&name).filter(|target| fields(target))
        {
            let mut whole = target.clone();
            for (key, value) in item.as_object().into_iter().flatten().filter(|(key, _)| *key != "$ref") {
                whole[key] = value.clone();
            }
            *item = whole;
            inlined.push(name);
        }
        let Some(item) = item.as_object_mut() else { continue };
        let mut operations = Vec::new();
        if let Some(operation) = item.remove("query") {
            operations.push(("QUERY".to_owned(), operation, format!("{at}/query")));
        }
        match item.remove("additionalOperations") {
            None => {}
            Some(Value::Object(more)) => {
                for (method, operation) in more {
                    let here = format!("{at}/additionalOperations/{}", escape(&method));
                    if !crate::read::marks::is_additional(&method) {
                        return Err(Error::at(
                            &here,
                            format!(
                                "{method:?} is not an additional method: it must be an HTTP method name \
                             (a token) that no fixed field of the path item (get, put, post, delete, options, \
                             head, patch, trace, query) names"
                            ),
                        ));
                    }
                    operations.push((method, operation, here));
                }
            }
            Some(_) => {
                return Err(Error::at(
                    format!("{at}/additionalOperations"),
                    "must map methods to operations".to_string(),
                ));
            }
        }
        for (method, mut operation, real) in operations {
            let Some(object) = operation.as_object_mut() else {
                return Err(Error::at(real, "an operation must be an object".to_string()));
            };
            object.insert(crate::read::marks::METHOD.into(), Value::String(method.clone()));
            let mut view = serde_json::json!({ "post": operation });
            if let Some(parameters) = item.get("parameters") {
                view["parameters"] = parameters.clone();
            }
            views.push((crate::read::marks::view_path(path, &method), view, real, at.clone()));
        }
    }
    let mut moved = Vec::new();
    for (path, view, real, item_at) in views {
        let at = format!("/paths/{}", escape(&path));
        if paths.contains_key(&path) {
            return Err(Error::at(real, format!("the generator's path for this operation, {path:?}, is taken")));
        }
        paths.insert(path, view);
        // The operation's pointer first: the item's would replace its prefix.
        moved.push((format!("{at}/post"), real));
        moved.push((at, item_at));
    }
    for name in inlined {
        if let Some(item) =
            document.pointer_mut(&format!("/components/pathItems/{}", escape(&name))).and_then(Value::as_object_mut)
        {
            item.remove("query");
            item.remove("additionalOperations");
        }
    }
    Ok(moved)
}

/// A `text/event-stream` media type whose `itemSchema` describes each event (3.2): its
/// `data` property's schema becomes the media type's `schema`, the event type as 3.0 and 3.1
/// documents write it — `contentSchema` when the data is JSON (`contentMediaType:
/// application/json`), else the data's own (a string: the text itself). Other fields of the
/// event (`event`, `id`, `retry`) are the format's, which the generated code reads as such.
///
/// An `itemSchema` without a `data` property is, as most authors write it, the schema of each
/// event's data (JSON): read so, with a note.
fn event_items(media: &str, item: &mut Value, at: &str, notes: &mut Vec<Note>) {
    if crate::read::document::essence(media) != "text/event-stream" {
        return;
    }
    let Some(items) = item.as_object_mut().and_then(|item| item.remove("itemSchema")) else { return };
    let Some(data) = items.pointer("/properties/data") else {
        notes.push(Note {
            pointer: format!("{at}/itemSchema"),
            message: "an event stream's itemSchema without a `data` property (the event's fields) is read as the \
                      schema of each event's data, as JSON"
                .into(),
        });
        item["schema"] = items;
        return;
    };
    let json = data.get("contentMediaType").and_then(Value::as_str).is_some_and(crate::read::document::is_json);
    let schema = match data.get("contentSchema") {
        Some(schema) if json => schema.clone(),
        _ if json => serde_json::json!({}),
        _ => data.clone(),
    };
    item["schema"] = schema;
}

/// A discriminator's `defaultMapping` (3.2: the schema of a value whose tag names no other)
/// that names an arm of its union (by `$ref` or component name) becomes the view's mark on the
/// union (`marks::DEFAULT_MAPPING`); one that names no arm is dropped with a note.
fn default_mapping(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    let Some(written) =
        schema.get_mut("discriminator").and_then(Value::as_object_mut).and_then(|d| d.remove("defaultMapping"))
    else {
        return;
    };
    let target = written.as_str().map(crate::read::document::mapped_schema);
    let arms = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array);
    let is_arm =
        |target: &String| arms.into_iter().flatten().any(|arm| arm.get("$ref").and_then(Value::as_str) == Some(target));
    match target.filter(is_arm) {
        Some(target) => {
            schema.insert(crate::read::marks::DEFAULT_MAPPING.into(), Value::String(target));
        }
        None => notes.push(Note {
            pointer: format!("{at}/discriminator/defaultMapping"),
            message: "dropped: it names no arm of the union, so a value naming no mapped schema is refused".into(),
        }),
    }
}

/// A `querystring` parameter (3.2: the whole query string as one value, described by its
/// `content`) as the query parameter it is on the wire: a form-encoded query string of an
/// object's fields is exactly an exploded `form` object (`a=x&b=2`), which the styles read and
/// write. The whole query string as JSON or another media type is refused.
fn querystring(parameter: &mut Map<String, Value>, at: &str) -> Result<()> {
    let form = "application/x-www-form-urlencoded";
    let media = parameter.get("content").and_then(Value::as_object).filter(|content| content.len() == 1);
    let Some((name, media)) = media.and_then(|content| content.iter().next()) else {
        return Err(Error::at(
            format!("{at}/content"),
            "a `querystring` parameter needs `content` with one media type".to_string(),
        ));
    };
    if crate::read::document::essence(name) != form {
        return Err(Error::at(
            format!("{at}/content/{}", escape(name)),
            format!(
                "a `querystring` parameter of {name} (the whole query string as one value) is not supported; a \
                 {form} query string of an object's fields is"
            ),
        ));
    }
    if media.get("encoding").is_some() {
        return Err(Error::at(
            format!("{at}/content/{}/encoding", escape(name)),
            "a `querystring` parameter's per-field encoding is not supported",
        ));
    }
    let schema = media.get("schema").cloned().unwrap_or_else(|| serde_json::json!({"type": "object"}));
    parameter.remove("content");
    parameter.insert("in".into(), Value::String("query".into()));
    parameter.insert("style".into(), Value::String("form".into()));
    parameter.insert("explode".into(), Value::Bool(true));
    parameter.insert("schema".into(), schema);
    Ok(())
}

/// A streamed media type (JSON Lines, a JSON text sequence: `items::streamed`) whose
/// `itemSchema` describes each item (3.2): the item schema becomes its `schema`, marked as the
/// items' (`items::EXTENSION`).
/// `body`: whether the media type is a request body's, which is refused (requests are read
/// whole).
fn stream_items(media: &str, item: &mut Value, at: &str, body: bool) -> Result<()> {
    if !crate::read::marks::streamed(&crate::read::document::essence(media)) {
        return Ok(());
    }
    let Some(object) = item.as_object_mut() else { return Ok(()) };
    let Some(items) = object.remove("itemSchema") else { return Ok(()) };
    if body {
        return Err(Error::at(
            format!("{at}/itemSchema"),
            "a request body of streamed items (OpenAPI 3.2's itemSchema) is not supported: \
             responses stream, requests are read whole"
                .to_string(),
        ));
    }
    object.insert("schema".into(), items);
    object.insert(crate::read::marks::ITEMS.into(), Value::Bool(true));
    Ok(())
}

/// What the map being walked holds as values: path items, responses, or anything else.
#[derive(Clone, Copy, PartialEq)]
enum Within {
    PathItems,
    Responses,
    Other,
}

/// Maps or refuses what 3.2 adds, everywhere in the document. `within`: what the values of
/// the map being walked are.
fn walk(value: &mut Value, at: &str, within: Within, media_types: &Value, notes: &mut Vec<Note>) -> Result<()> {
    match value {
        Value::Object(map) => {
            if within != Within::Other {
                for (name, item) in map.iter_mut() {
                    let Some(item) = item.as_object_mut() else { continue };
                    path_item_or_response(item, &format!("{at}/{}", escape(name)), within)?;
                }
            }
            if map.get("in").and_then(Value::as_str) == Some("querystring") {
                querystring(map, at)?;
            }
            // openapiv3 (3.0's model) has no `cookie` style: it reads as `form`, with an
            // extension that tells `wire::Wire` the values are not percent-encoded.
            if map.get("in").and_then(Value::as_str) == Some("cookie")
                && map.get("style").and_then(Value::as_str) == Some("cookie")
            {
                map.insert("style".into(), Value::String("form".into()));
                map.insert(crate::read::marks::COOKIE_STYLE.into(), Value::Bool(true));
            }
            if map.contains_key("itemSchema") {
                return Err(Error::at(
                    format!("{at}/itemSchema"),
                    "OpenAPI 3.2's itemSchema is served on text/event-stream, application/jsonl, \
                     application/x-ndjson, application/x-jsonlines and application/json-seq only"
                        .to_string(),
                ));
            }
            default_mapping(map, at, notes);
            // A request body's (an operation's, or one of `components/requestBodies`).
            let body = at.ends_with("/requestBody")
                || (at.starts_with("/components/requestBodies/") && at.matches('/').count() == 3);
            if let Some(content) = map.get_mut("content").and_then(Value::as_object_mut) {
                for (media, item) in content.iter_mut() {
                    let here = format!("{at}/content/{}", escape(media));
                    event_items(media, item, &here, notes);
                    stream_items(media, item, &here, body)?;
                    let Some(name) = item
                        .get("$ref")
                        .and_then(Value::as_str)
                        .and_then(|r| r.strip_prefix("#/components/mediaTypes/"))
                        .map(str::to_owned)
                    else {
                        continue;
                    };
                    *item = media_types.get(&name).cloned().ok_or_else(|| {
                        Error::at(
                            format!("{at}/content/{}/$ref", escape(media)),
                            format!("no media type {name:?} in components/mediaTypes"),
                        )
                    })?;
                    event_items(media, item, &here, notes);
                    stream_items(media, item, &here, body)?;
                }
            }
            for (key, child) in map.iter_mut() {
                let holds = match key.as_str() {
                    "paths" | "webhooks" | "pathItems" if within == Within::Other => Within::PathItems,
                    "responses" if within == Within::Other => Within::Responses,
                    _ => Within::Other,
                };
                walk(child, &format!("{at}/{}", escape(key)), holds, media_types, notes)?;
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                walk(item, &format!("{at}/{i}"), Within::Other, media_types, notes)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// A path item's 3.2 methods refused; a response's 3.2 fields mapped.
fn path_item_or_response(item: &mut Map<String, Value>, at: &str, within: Within) -> Result<()> {
    match within {
        Within::PathItems => {
            // The paths' were moved (`other_methods`): these are a webhook's or an unused component's.
            for (refused, what) in [("query", "the QUERY method"), ("additionalOperations", "additionalOperations")] {
                if item.contains_key(refused) {
                    return Err(Error::at(
                        format!("{at}/{refused}"),
                        format!(
                            "OpenAPI 3.2's {what} is served on paths only: a webhook's receiver is \
                         posted to"
                        ),
                    ));
                }
            }
        }
        Within::Responses => {
            if !item.contains_key("$ref") {
                item.remove("summary");
                item.entry("description").or_insert_with(|| Value::String(String::new()));
            }
        }
        Within::Other => {}
    }
    Ok(())
}
