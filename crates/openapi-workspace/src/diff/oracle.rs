//! The oracle that keeps the engine honest: for each pair of schemas the engine judges, values
//! are built from both (the mock's value, every enum value, each bound's edges and one past it,
//! optional properties present and absent, a property no one named, `null`, a value of each
//! other type) and checked with a JSON Schema validator in the direction that matters — what a
//! client sent the base must still be valid under the head; what the head may answer must be
//! valid under the base. A value the oracle finds breaking where the engine said compatible is
//! a miss (a false negative: the tests fail on one); the engine's breaking verdicts the oracle
//! cannot show with a value are listed as unshown (false positives, or changes no value shows:
//! a format, a pattern).
//!
//! Built for the tests and, with the `oracle` feature, for xtask's gate and comparison table.

#[cfg(test)]
mod cases;
#[cfg(test)]
mod patches;

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use super::schemas::{At, Compared, Schemas};
use super::{Direction, Level, Side};
use crate::model::json_schema::to_json_schema;
use crate::read::Spec;
use crate::read::document::resolve_schema;

/// What the oracle found on a pair of documents.
#[derive(Debug, Default)]
#[cfg_attr(not(feature = "oracle"), allow(unreachable_pub))]
pub struct Proof {
    /// Pairs of schemas judged, each in the direction its values travel.
    pub judged: usize,
    /// Breaks a value shows that the engine did not report, each with the value.
    pub misses: Vec<String>,
    /// The engine's breaking verdicts that no value of the oracle's shows.
    pub unshown: Vec<String>,
}

/// Every pair of schemas the engine compares between `base` and `head`, judged by values.
pub(crate) fn prove(base: &Spec, head: &Spec) -> Proof {
    let (_, handed) = super::compared(base, head);
    let mut proof = Proof::default();
    let mut converted = Converted::default();
    let mut done = std::collections::HashSet::new();
    for pair in handed {
        let Compared { base, head, sides, at, direction } = pair;
        // The same pair of schemas reached by many operations is judged once.
        if !done.insert((base.to_string(), head.to_string(), direction)) {
            continue;
        }
        proof.judged += 1;
        let judged = judge(&base, &head, sides, &at, direction, &mut converted);
        let label = format!("{} ({direction:?})", at.base);
        match (judged.broken_by, judged.engine_breaks) {
            (Some(value), false) => proof.misses.push(format!("{label}: the engine saw no break, yet {value} breaks")),
            (None, true) => proof.unshown.push(label),
            _ => {}
        }
    }
    proof
}

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
            // As many properties as each bound on their number, one fewer and one more.
            let other = match schema.get("additionalProperties") {
                Some(other @ Value::Object(_)) => crate::model::mock::value_for(other, components),
                _ => json!("x"),
            };
            for bound in [number("minProperties"), number("maxProperties")].into_iter().flatten() {
                for count in [bound as usize, bound as usize + 1, (bound as usize).saturating_sub(1)] {
                    out.push(Value::Object((0..count).map(|i| (format!("p{i}"), other.clone())).collect()));
                }
            }
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

/// `schema` (or components) as a tolerant reader takes it: without `enum`s on strings, without
/// `additionalProperties: false`, and a `oneOf` read as an `anyOf` — a client reads a union by
/// trying its arms, so a value two arms take (as opened enums make arms overlap) is still read.
fn tolerant(schema: &Value) -> Value {
    // An enum of strings, typed or not (or a union of such enums), is read as any string.
    let strings = |schema: &Value| {
        schema.get("enum").and_then(Value::as_array).is_some_and(|values| values.iter().all(Value::is_string))
            && schema.as_object().is_some_and(|map| {
                map.keys().all(|key| matches!(key.as_str(), "type" | "enum" | "description" | "title" | "nullable"))
            })
    };
    let union = ["oneOf", "anyOf"].iter().find_map(|key| schema.get(*key)?.as_array());
    if strings(schema) || union.is_some_and(|arms| arms.iter().all(strings)) {
        let nullable = schema.get("nullable").cloned().unwrap_or(json!(false));
        return json!({"type": "string", "nullable": nullable});
    }
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
                    .map(|(key, value)| (if key == "oneOf" { "anyOf".into() } else { key.clone() }, tolerant(value)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(tolerant).collect()),
        other => other.clone(),
    }
}

/// A document's component schemas as JSON Schema, converted once per document and reading.
#[derive(Default)]
struct Converted(HashMap<(usize, Direction, bool), Value>);

impl Converted {
    /// `components` as seen in `direction` (tolerantly read if `tolerant_reader`), as the
    /// `components` a root schema carries.
    fn of(&mut self, components: &Value, direction: Direction, tolerant_reader: bool) -> &Value {
        let key = (std::ptr::from_ref(components) as usize, direction, tolerant_reader);
        self.0.entry(key).or_insert_with(|| {
            let schemas: Map<String, Value> = components
                .get("schemas")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .map(|(name, schema)| {
                    let schema = seen(schema, components, direction);
                    let schema = if tolerant_reader { tolerant(&schema) } else { schema };
                    (name.clone(), to_json_schema(&schema))
                })
                .collect();
            json!({"schemas": schemas})
        })
    }
}

/// `schema` as it travels in `direction`: without the properties that never do (`readOnly` ones
/// are not sent, `writeOnly` ones not received), which leave `required` with them.
fn seen(schema: &Value, components: &Value, direction: Direction) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out: Map<String, Value> =
                map.iter().map(|(key, value)| (key.clone(), seen(value, components, direction))).collect();
            let unseen: Vec<String> = map
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter(|(_, property)| {
                    resolve_schema(property, components).is_some_and(|property| direction.never_carries(property))
                })
                .map(|(name, _)| name.clone())
                .collect();
            if let Some(Value::Object(properties)) = out.get_mut("properties") {
                properties.retain(|name, _| !unseen.contains(name));
            }
            if let Some(Value::Array(required)) = out.get_mut("required") {
                required.retain(|name| name.as_str().is_none_or(|name| !unseen.iter().any(|u| u == name)));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|item| seen(item, components, direction)).collect()),
        other => other.clone(),
    }
}

/// A validator for `schema` of a document whose component schemas, converted, are `components`.
fn validator(schema: &Value, components: &Value) -> jsonschema::Validator {
    let mut root = match to_json_schema(schema) {
        Value::Object(root) => root,
        other => return jsonschema::options().build(&other).expect("a schema"),
    };
    root.insert("components".into(), components.clone());
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

fn judge(
    base: &Value,
    head: &Value,
    (base_side, head_side): (Side<'_>, Side<'_>),
    at: &At,
    direction: Direction,
    converted: &mut Converted,
) -> Judged {
    let mut candidates = Vec::new();
    values(base, base_side.components, 0, &mut candidates);
    values(head, head_side.components, 0, &mut candidates);
    // The versioning rule clients are written to: they read an enum value they do not know and
    // ignore a property they do not know. So what a client receives is held to the base with
    // its enums and closed objects opened.
    let received = direction == Direction::Received;
    let base_seen = seen(base, base_side.components, direction);
    let held_to = if received { tolerant(&base_seen) } else { base_seen };
    let base_validator = validator(&held_to, converted.of(base_side.components, direction, received));
    let head_seen = seen(head, head_side.components, direction);
    let head_validator = validator(&head_seen, converted.of(head_side.components, direction, false));
    let broken_by = candidates.into_iter().find(|value| match direction {
        Direction::Sent => base_validator.is_valid(value) && !head_validator.is_valid(value),
        Direction::Received => head_validator.is_valid(value) && !base_validator.is_valid(value),
    });
    // The engine on this pair alone, so that a verdict reported where the pair was first reached
    // counts here too.
    let mut schemas = Schemas::new(base_side, head_side);
    schemas.compare(base, head, at, direction, "the value");
    let engine_breaks = schemas.changes.iter().any(|change| change.level == Level::Breaking);
    Judged { broken_by, engine_breaks }
}
