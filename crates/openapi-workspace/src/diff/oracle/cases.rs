//! The oracle on pairs of schemas: a case for each schema rule, both ways round and in both
//! directions, and the misses other tools' users reported.

use serde_json::{Value, json};

use super::{Converted, judge};
use crate::diff::schemas::At;
use crate::diff::{Direction, Side};

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
            "other properties opened (drift's object-additional-props-type-change)",
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "additionalProperties": true}),
        ),
        (
            "maxProperties raised",
            json!({"type": "object", "maxProperties": 2}),
            json!({"type": "object", "maxProperties": 5}),
        ),
        (
            "enum written as oneOf of enums, one value more",
            json!({"enum": ["a", "b"]}),
            json!({"oneOf": [{"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["b", "c"]}]}),
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
    let none = json!({"components": {}});
    let side = Side { raw: &none, components: &none["components"] };
    let at = At { base: "#/base".into(), head: "#/head".into() };
    let mut converted = Converted::default();
    let mut misses = Vec::new();
    let mut extra = Vec::new();
    let mut judged = 0;
    for (what, base, head) in cases() {
        // Each pair both ways round, in both directions.
        for (base, head, turned) in [(&base, &head, false), (&head, &base, true)] {
            for direction in [Direction::Sent, Direction::Received] {
                judged += 1;
                let verdict = judge(base, head, (side, side), &at, direction, &mut converted);
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
