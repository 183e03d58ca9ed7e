//! Repairs (see `repair.rs`) of request bodies, each with a note:
//!
//! - a body offered as `multipart/form-data` beside other media types is read as the others (the
//!   server takes multipart only as a body's one media type);
//! - a body offered as a wildcard (`*/*`, `application/*`; Kubernetes offers every body so) is
//!   read as JSON when its schema is an object's, and as bytes otherwise — what a client can send
//!   and a server can read; beside a JSON media type the wildcard is dropped;
//! - a form or multipart body's inline schema with `properties` but no `type` is an object's (its
//!   properties are the form's fields, the parts); one whose schema is no object's (ASP.NET
//!   offers a JSON array as a form too) is dropped beside other media types; a multipart body
//!   that is one file (`{type: string, format: binary}`, loket.nl) is one part named `file`.

use serde_json::{Value, json};

use crate::read::Note;
use crate::read::document::{escape, essence};

/// A request body's wildcard media types read as JSON or bytes (see the module's documentation).
pub(super) fn wildcard_body(body: &mut Value, at: &str, components: &Value, notes: &mut Vec<Note>) {
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
pub(super) fn multipart_beside_others(body: &mut Value, at: &str, notes: &mut Vec<Note>) {
    let Some(content) = body.get_mut("content").and_then(Value::as_object_mut) else { return };
    let multipart: Vec<String> = content.keys().filter(|m| essence(m) == "multipart/form-data").cloned().collect();
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

/// A form or multipart body's schema: an inline one with `properties` but no `type` is an
/// object's; one that is no object's is dropped where the body has another media type (a
/// client cannot write an array or a scalar as form fields or parts).
pub(super) fn form_bodies(body: &mut Value, at: &str, components: &Value, notes: &mut Vec<Note>) {
    let Some(content) = body.get_mut("content").and_then(Value::as_object_mut) else { return };
    let forms: Vec<String> = content
        .keys()
        .filter(|m| matches!(essence(m).as_str(), "application/x-www-form-urlencoded" | "multipart/form-data"))
        .cloned()
        .collect();
    for media in forms {
        let pointer = format!("{at}/content/{}", escape(&media));
        if let Some(schema) = content[&media].get_mut("schema").and_then(Value::as_object_mut)
            && schema.contains_key("properties")
            && !schema.contains_key("type")
        {
            schema.insert("type".into(), json!("object"));
            notes.push(Note {
                pointer: format!("{pointer}/schema"),
                message: "properties without a type: read as an object's".into(),
            });
        }
        let file =
            content[&media].get("schema").and_then(|schema| crate::read::document::resolve_schema(schema, components));
        let file = file.is_some_and(|schema| {
            schema.get("type").and_then(Value::as_str) == Some("string")
                && schema.get("format").and_then(Value::as_str) == Some("binary")
        });
        if file && essence(&media) == "multipart/form-data" && content.len() == 1 {
            let schema = content[&media]["schema"].take();
            content[&media]["schema"] = json!({"type": "object", "required": ["file"], "properties": {"file": schema}});
            notes.push(Note {
                pointer: format!("{pointer}/schema"),
                message: "a multipart body that is one file (a binary string): read as one part named \"file\"".into(),
            });
            continue;
        }
        let object = content[&media].get("schema").is_some_and(|schema| object_schema(schema, components, 0));
        if !object && content.len() > 1 {
            content.remove(&media);
            let others: Vec<&String> = content.keys().collect();
            notes.push(Note {
                pointer,
                message: format!(
                    "{media} of a schema that is no object's is not served: the body is read as {others:?}"
                ),
            });
        }
    }
}
