//! The tape a JSON body is validated on (`src/json_tape.rs`) against what it stands in for:
//! jsonschema's contract for a representation, serde_json's `Value` and its parser, and the same
//! validators' answers on the same bodies given as a `Value`.
use jsonschema::json::Node;
use openapi_workspace_runtime::SchemaSet;
use openapi_workspace_runtime::json_tape::{Instance, RequestJson, Tape};
use serde_json::{Value, json};

#[test]
fn the_tape_keeps_the_validators_contract() {
    let document = jsonschema::json::conformance::document();
    let text = serde_json::to_vec(&document).unwrap();
    let tape = Tape::parse(&text).unwrap();
    jsonschema::json::conformance::assert_conformance::<RequestJson>(&tape.root());
    jsonschema::json::conformance::assert_conformance::<RequestJson>(&Instance::Value(&document));
}

/// Texts whose tape must read as serde_json's `Value` does: escapes, repeated names (the
/// last kept), names out of order, numbers of every kind, nesting, empty containers.
const TEXTS: &[&str] = &[
    r#"{"b":1,"a":[true,false,null],"c":{"z":"\u00e9t\u00e9","y":"\n"}}"#,
    r#"{"a":1,"a":2,"b":{"x":1},"a":3,"b":"last"}"#,
    r#"[0,-0,1.0,-1,1e2,1.5e-3,18446744073709551615,18446744073709551616,-9223372036854775808,-9223372036854777000]"#,
    r#"{"\u0000":"", "é":"\"quoted\"", "":{"":[[],{}]}}"#,
    r#"  "text"  "#,
    "42",
    "[[[[{\"deep\":[1,[2,[3]]]}]]]]",
];

#[test]
fn a_tape_reads_as_serde_json_reads() {
    for text in TEXTS {
        let tape = Tape::parse(text.as_bytes()).unwrap();
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(tape.root().to_value().into_owned(), value, "{text}");
    }
}

/// The one number a tape reads otherwise: a literal below i64::MIN that an f64 rounds to it
/// exactly, which would meet an int64's bound as i64::MIN itself (schemathesis sends one).
#[test]
fn a_literal_below_i64_min_stays_below_it() {
    let schemas = SchemaSet::parse(&json!({"components": {}}).to_string());
    let validator = schemas.validator(&json!({"type": "integer", "minimum": i64::MIN}).to_string());
    for (text, taken) in
        [("-9223372036854775808", true), ("-9223372036854775809", false), ("-9223372036854776800", false)]
    {
        let tape = Tape::parse(text.as_bytes()).unwrap();
        assert_eq!(validator.check_body(&tape).is_ok(), taken, "{text}");
    }
}

#[test]
fn malformed_text_is_refused_in_serde_json_s_words() {
    let deep = "[".repeat(200) + &"]".repeat(200);
    for text in ["", "{", "{\"a\":}", "[1,]", "{} {}", "\"\\x\"", "nul", "1e999", "\"\u{1}\"", &deep] {
        let tape = Tape::parse(text.as_bytes()).err().map(|e| e.to_string());
        let value = serde_json::from_str::<Value>(text).err().map(|e| e.to_string());
        assert!(value.is_some(), "{text:?} is malformed");
        assert_eq!(tape, value, "{text:?}");
    }
}

#[test]
fn a_tape_is_validated_as_its_value_is_and_refused_in_the_same_words() {
    let schema = json!({
        "type": "object",
        "required": ["name", "amount"],
        "additionalProperties": false,
        "properties": {
            "name": {"type": "string", "minLength": 1, "maxLength": 4},
            "amount": {"type": "integer", "minimum": 1, "maximum": 100},
            "currency": {"enum": ["GBP", "EUR"]},
            "tags": {"type": "array", "uniqueItems": true, "items": {"type": "string", "pattern": "^[a-z]+$"}},
            "metadata": {"type": "object", "propertyNames": {"maxLength": 3}, "maxProperties": 2},
            "rate": {"type": "number", "exclusiveMinimum": 0, "multipleOf": 0.5},
            "when": {"type": "string", "format": "date-time"},
            "kind": {"const": 3}
        }
    });
    let schemas = SchemaSet::parse(&json!({"components": {}}).to_string());
    let validator = schemas.validator(&schema.to_string());
    let bodies = [
        r#"{"name":"Ann","amount":5,"currency":"GBP","tags":["a","b"],"metadata":{"k":1},"rate":1.5,"when":"2026-01-01T00:00:00Z","kind":3}"#,
        r#"{"name":"","amount":0}"#,
        r#"{"zeta":1,"alpha":2,"name":"Ann","amount":5}"#,
        r#"{"amount":500,"amount":5,"name":"Ann","name":"toolong"}"#,
        r#"{"name":"Ann","amount":5,"currency":"USD","tags":["a","a","B"]}"#,
        r#"{"name":"Ann","amount":5,"metadata":{"long":1,"b":2,"c":3}}"#,
        r#"{"name":"Ann","amount":5.0,"rate":0.3,"when":"yesterday","kind":3.0}"#,
        r#"{"name":"A\u0007n","amount":5,"tags":["ok","b\u0001"]}"#,
        r#"{"b\u0002":1,"a\u0003":2}"#,
        r#"[1,2]"#,
    ];
    let mut refusals = Vec::new();
    for body in bodies {
        let tape = Tape::parse(body.as_bytes()).unwrap();
        let value: Value = serde_json::from_str(body).unwrap();
        let answer = |result: Result<(), openapi_workspace_runtime::ApiError>| result.err().map(|e| e.to_string());
        let refused = answer(validator.check_body(&tape));
        assert_eq!(refused, answer(validator.check(&value, "")), "{body}");
        refusals.push(refused);
    }
    assert_eq!(refusals[0], None, "a body that meets the schema is taken");
    assert!(refusals[1..].iter().all(Option::is_some), "{refusals:#?}");
    // Names in `Value`'s order (sorted), whatever the body's; a repeated name's last value.
    assert_eq!(
        refusals[2].as_deref(),
        Some("400 Invalid request: Additional properties are not allowed ('alpha', 'zeta' were unexpected)")
    );
    assert_eq!(refusals[3].as_deref(), Some("400 Invalid request: name: \"toolong\" is longer than 4 characters"));
}
