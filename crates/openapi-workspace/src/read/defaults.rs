//! Repairs (see `repair.rs`) of `default`s the models cannot hold: of another type, outside
//! the `enum`, lacking a required property or holding one the schema does not name, or on a
//! union.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::read::Note;
use crate::read::document::with_article;

/// A `default` that is not of its schema's `type` (or not in its `enum`).
pub(super) fn wrong_default(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
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

/// An object `default` without every property its schema (through `$ref`s and `allOf`s) requires,
/// or with one its schema does not have (where the schema names its properties and takes no
/// others: a model has no field to hold it).
pub(super) fn incomplete_default(schema: &mut Map<String, Value>, at: &str, components: &Value, notes: &mut Vec<Note>) {
    let Some(Value::Object(default)) = schema.get("default") else { return };
    let whole = Value::Object(schema.clone());
    let mut required = BTreeSet::new();
    required_of(&whole, components, &mut required, 0);
    let missing: Vec<&String> = required.iter().filter(|name| !default.contains_key(*name)).collect();
    let mut known = BTreeSet::new();
    let unknown: Vec<&String> = match closed_properties(&whole, components, &mut known, 0) {
        true if !known.is_empty() => default.keys().filter(|key| !known.contains(*key)).collect(),
        _ => Vec::new(),
    };
    let message = match (missing.is_empty(), unknown.is_empty()) {
        (true, true) => return,
        (false, _) => format!("the default {} lacks the required {missing:?}: dropped", Value::Object(default.clone())),
        (true, false) => {
            format!(
                "the default {} has {unknown:?}, which its schema does not: dropped",
                Value::Object(default.clone())
            )
        }
    };
    notes.push(Note { pointer: format!("{at}/default"), message });
    schema.remove("default");
}

/// The properties `schema` names, through `$ref`s and `allOf`s, into `known`; whether those are
/// all it takes (no `additionalProperties` but `false`, no union that could add others).
fn closed_properties(schema: &Value, components: &Value, known: &mut BTreeSet<String>, depth: usize) -> bool {
    let Some(schema) = crate::read::document::resolve_schema(schema, components) else { return false };
    if depth > 16
        || schema.get("additionalProperties").is_some_and(|extra| extra != &Value::Bool(false))
        || ["anyOf", "oneOf", "patternProperties"].iter().any(|k| schema.get(*k).is_some())
    {
        return false;
    }
    known.extend(schema.get("properties").and_then(Value::as_object).into_iter().flat_map(|p| p.keys().cloned()));
    schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .all(|arm| closed_properties(arm, components, known, depth + 1))
}

/// A `default` on a composition (see the module's documentation).
pub(super) fn composed_default(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
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
    if let Some(object) = schema.as_object() {
        required.extend(crate::read::document::required_names(object));
    }
    for arm in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        required_of(arm, components, required, depth + 1);
    }
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
