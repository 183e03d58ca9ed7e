//! The oracle that keeps the engine honest: for each pair of schemas the engine judges, values
//! are built from both (the mock's value, every enum value, each bound's edges and one past it,
//! optional properties present and absent, a property no one named, `null`, a value of each
//! other type) and checked with a JSON Schema validator in the direction that matters — what a
//! client sent the base must still be valid under the head; what the head may answer must be
//! valid under the base. A value the oracle finds breaking where the engine said compatible is
//! a failing test (a false negative); the engine's breaking verdicts the oracle cannot show with
//! a value are counted as false positives and listed.

use serde_json::{Map, Value, json};

use super::schemas::{At, Schemas};
use super::{Direction, Level, Side};
use crate::model::json_schema::to_json_schema;
use crate::read::document::resolve_schema;

/// Values to try against both sides of a pair: built from `schema` (with `components`).
fn values(schema: &Value, components: &Value, depth: usize, out: &mut Vec<Value>) {
    let Some(schema) = resolve_schema(schema, components) else { return };
    if depth > 3 {
        return;
    }
    out.push(crate::model::mock::value_for(schema, components));
    if schema.get("nullable") == Some(&Value::Bool(true)) {
        out.push(Value::Null);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        out.extend(values.iter().cloned());
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        for arm in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            values(arm, components, depth + 1, out);
        }
    }
    let number = |key: &str| schema.get(key).and_then(Value::as_f64);
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => {
            out.extend(
                ["", "x", "A1 -._~", "2026-11-27T10:15:30Z", "9f6c1a52-3c1e-4d59-9b7e-2f0b8c6f4a10"].map(Value::from),
            );
            for length in [number("minLength"), number("maxLength")].into_iter().flatten() {
                let length = length as usize;
                out.extend([length.saturating_sub(1), length, length + 1].map(|n| Value::from("a".repeat(n))));
            }
        }
        Some(kind @ ("integer" | "number")) => {
            out.extend([json!(0), json!(1), json!(-1), json!(1_000_000_007)]);
            if kind == "number" {
                out.push(json!(0.5));
            }
            for bound in [number("minimum"), number("maximum"), number("multipleOf")].into_iter().flatten() {
                out.extend(
                    [bound - 1.0, bound, bound + 1.0, bound * 3.0]
                        .map(|n| if n.fract() == 0.0 { json!(n as i64) } else { json!(n) }),
                );
            }
        }
        Some("boolean") => out.extend([json!(true), json!(false)]),
        Some("array") => {
            let mut items = Vec::new();
            if let Some(item) = schema.get("items") {
                values(item, components, depth + 1, &mut items);
            }
            out.push(json!([]));
            for item in items.iter().take(6) {
                out.push(json!([item]));
                out.push(json!([item, item]));
            }
            if let Some(max) = number("maxItems") {
                out.push(Value::Array(vec![items.first().cloned().unwrap_or(json!(1)); max as usize + 1]));
            }
        }
        Some("object") | None if schema.get("properties").is_some() || schema.get("type").is_some() => {
            let properties = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
            let whole: Map<String, Value> = properties
                .iter()
                .map(|(name, property)| (name.clone(), crate::model::mock::value_for(property, components)))
                .collect();
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            out.push(Value::Object(whole.clone()));
            out.push(Value::Object(
                whole
                    .iter()
                    .filter(|(n, _)| required.contains(&n.as_str()))
                    .map(|(n, v)| (n.clone(), v.clone()))
                    .collect(),
            ));
            let mut extra = whole.clone();
            extra.insert("not_in_the_document".into(), json!(1));
            out.push(Value::Object(extra));
            if let Some(other @ Value::Object(_)) = schema.get("additionalProperties") {
                let mut others = Vec::new();
                values(other, components, depth + 1, &mut others);
                for value in others.into_iter().take(12) {
                    let mut one = whole.clone();
                    one.insert("another".into(), value);
                    out.push(Value::Object(one));
                }
            }
            // Each property in turn given each value it may take.
            for (name, property) in &properties {
                let mut variants = Vec::new();
                values(property, components, depth + 1, &mut variants);
                for variant in variants.into_iter().take(12) {
                    let mut one = whole.clone();
                    one.insert(name.clone(), variant);
                    out.push(Value::Object(one));
                }
                let mut without = whole.clone();
                without.remove(name);
                out.push(Value::Object(without));
            }
        }
        _ => {}
    }
    if depth == 0 {
        out.extend([json!("x"), json!(1), json!(1.5), json!(true), json!(null), json!({}), json!([])]);
    }
}

/// `schema` (or components) as a tolerant reader takes it: without `enum`s on strings and without
/// `additionalProperties: false`.
fn tolerant(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let string = map.get("type") == Some(&json!("string"));
            Value::Object(
                map.iter()
                    .filter(|(key, value)| {
                        let open_enum = string && *key == "enum";
                        let closed = *key == "additionalProperties" && **value == json!(false);
                        !(open_enum || closed)
                    })
                    .map(|(key, value)| (key.clone(), tolerant(value)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(tolerant).collect()),
        other => other.clone(),
    }
}

/// A validator for `schema` of a document whose component schemas are `components`.
fn validator(schema: &Value, components: &Value) -> jsonschema::Validator {
    let mut root = match to_json_schema(schema) {
        Value::Object(root) => root,
        other => return jsonschema::options().build(&other).expect("a schema"),
    };
    let converted: Map<String, Value> = components
        .get("schemas")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, schema)| (name.clone(), to_json_schema(schema)))
        .collect();
    root.insert("components".into(), json!({"schemas": converted}));
    jsonschema::options()
        .should_validate_formats(true)
        .build(&Value::Object(root))
        .expect("a schema the validator takes")
}

/// What the oracle and the engine say of one pair in one direction.
#[derive(Debug)]
struct Judged {
    /// A value that breaks, if the oracle found one.
    broken_by: Option<Value>,
    engine_breaks: bool,
}

fn judge(base: &Value, head: &Value, components: (&Value, &Value), direction: Direction) -> Judged {
    let (base_components, head_components) = components;
    let mut candidates = Vec::new();
    values(base, base_components, 0, &mut candidates);
    values(head, head_components, 0, &mut candidates);
    // The versioning rule clients are written to: they read an enum value they do not know and
    // ignore a property they do not know. So what a client receives is held to the base with
    // its enums and closed objects opened.
    let held_to = match direction {
        Direction::Sent => base.clone(),
        Direction::Received => tolerant(base),
    };
    let base_components = &match direction {
        Direction::Sent => base_components.clone(),
        Direction::Received => tolerant(base_components),
    };
    let (base_validator, head_validator) = (validator(&held_to, base_components), validator(head, head_components));
    let broken_by = candidates.into_iter().find(|value| match direction {
        Direction::Sent => base_validator.is_valid(value) && !head_validator.is_valid(value),
        Direction::Received => head_validator.is_valid(value) && !base_validator.is_valid(value),
    });
    let (base_raw, head_raw) = (json!({"components": base_components}), json!({"components": head_components}));
    let mut schemas = Schemas::new(
        Side { raw: &base_raw, components: &base_raw["components"] },
        Side { raw: &head_raw, components: &head_raw["components"] },
    );
    let at = At { base: "#/base".into(), head: "#/head".into() };
    schemas.compare(base, head, &at, direction, "the value");
    let engine_breaks = schemas.changes.iter().any(|change| change.level == Level::Breaking);
    Judged { broken_by, engine_breaks }
}

/// Pairs of schemas (base, head): a case for each schema rule, both ways round, and the misses
/// other tools' users reported.
fn cases() -> Vec<(&'static str, Value, Value)> {
    let object =
        |properties: Value, required: Value| json!({"type": "object", "properties": properties, "required": required});
    let name = json!({"name": {"type": "string"}});
    vec![
        ("string to integer", json!({"type": "string"}), json!({"type": "integer"})),
        ("integer to number", json!({"type": "integer"}), json!({"type": "number"})),
        ("nullable added", json!({"type": "string"}), json!({"type": "string", "nullable": true})),
        (
            "enum value added",
            json!({"type": "string", "enum": ["a", "b"]}),
            json!({"type": "string", "enum": ["a", "b", "c"]}),
        ),
        ("enum added", json!({"type": "string"}), json!({"type": "string", "enum": ["a"]})),
        ("maxLength lowered", json!({"type": "string", "maxLength": 10}), json!({"type": "string", "maxLength": 5})),
        ("minLength raised", json!({"type": "string", "minLength": 1}), json!({"type": "string", "minLength": 3})),
        ("minimum raised", json!({"type": "integer", "minimum": 0}), json!({"type": "integer", "minimum": 10})),
        ("maximum set", json!({"type": "integer"}), json!({"type": "integer", "maximum": 100})),
        (
            "exclusive minimum",
            json!({"type": "integer", "minimum": 0}),
            json!({"type": "integer", "minimum": 0, "exclusiveMinimum": true}),
        ),
        ("multipleOf set", json!({"type": "integer"}), json!({"type": "integer", "multipleOf": 5})),
        (
            "multipleOf coarser",
            json!({"type": "integer", "multipleOf": 5}),
            json!({"type": "integer", "multipleOf": 10}),
        ),
        (
            "maxItems lowered",
            json!({"type": "array", "items": {"type": "string"}, "maxItems": 3}),
            json!({"type": "array", "items": {"type": "string"}, "maxItems": 1}),
        ),
        (
            "uniqueItems set",
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true}),
        ),
        (
            "items retyped",
            json!({"type": "array", "items": {"type": "string"}}),
            json!({"type": "array", "items": {"type": "integer"}}),
        ),
        ("pattern set", json!({"type": "string"}), json!({"type": "string", "pattern": "^[a-z]+$"})),
        ("format set", json!({"type": "string"}), json!({"type": "string", "format": "uuid"})),
        ("property required", object(name.clone(), json!([])), object(name.clone(), json!(["name"]))),
        (
            "property removed, closed",
            object(name.clone(), json!([])),
            json!({"type": "object", "additionalProperties": false}),
        ),
        ("property removed, open", object(name.clone(), json!(["name"])), json!({"type": "object"})),
        ("required property added", json!({"type": "object"}), object(name.clone(), json!(["name"]))),
        ("closed", json!({"type": "object"}), json!({"type": "object", "additionalProperties": false})),
        (
            "other properties retyped",
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "additionalProperties": {"type": "integer"}}),
        ),
        (
            "object to array (oasdiff #1090)",
            json!({"type": "object"}),
            json!({"type": "array", "items": {"type": "string"}}),
        ),
        (
            "wrapped into oneOf (oasdiff #1037)",
            object(name.clone(), json!(["name"])),
            json!({"oneOf": [object(name.clone(), json!(["name"])), {"type": "string"}]}),
        ),
        (
            "oneOf arm changed (oasdiff #314)",
            json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({"oneOf": [{"type": "string"}, {"type": "boolean"}]}),
        ),
        (
            "anyOf arm added",
            json!({"anyOf": [{"type": "string"}]}),
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
        ),
        (
            "allOf part added",
            json!({"allOf": [object(name.clone(), json!([]))]}),
            json!({"allOf": [object(name.clone(), json!([])), {"required": ["name"]}]}),
        ),
        (
            "read-only property removed (oasdiff #1211)",
            json!({"type": "object", "properties": {"id": {"type": "string", "readOnly": true}}}),
            json!({"type": "object", "properties": {}}),
        ),
        (
            "nested bound",
            object(json!({"tags": {"type": "array", "items": {"type": "string", "maxLength": 8}}}), json!([])),
            object(json!({"tags": {"type": "array", "items": {"type": "string", "maxLength": 4}}}), json!([])),
        ),
        ("type removed", json!({"type": "string"}), json!({})),
    ]
}

#[test]
fn the_engine_misses_no_break_the_oracle_can_show() {
    let none = json!({});
    let mut misses = Vec::new();
    let mut extra = Vec::new();
    let mut judged = 0;
    for (what, base, head) in cases() {
        // Each pair both ways round, in both directions.
        for (base, head, turned) in [(&base, &head, false), (&head, &base, true)] {
            for direction in [Direction::Sent, Direction::Received] {
                judged += 1;
                let verdict = judge(base, head, (&none, &none), direction);
                let label = format!("{what}{} ({direction:?})", if turned { ", reversed" } else { "" });
                match (&verdict.broken_by, verdict.engine_breaks) {
                    (Some(value), false) => {
                        misses.push(format!("{label}: the engine saw no break, yet {value} breaks"))
                    }
                    (None, true) => extra.push(label),
                    _ => {}
                }
            }
        }
    }
    eprintln!("{judged} judgements; false positives (breaking, no value shown): {}", extra.len());
    for label in &extra {
        eprintln!("  {label}");
    }
    assert!(misses.is_empty(), "false negatives:\n{}", misses.join("\n"));
}
