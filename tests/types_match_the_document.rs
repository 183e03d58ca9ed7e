//! The generated models against the document they came from, so the types can't drift
//! silently: for every component schema, the model's schemars schema has the same fields,
//! required fields, enum values and JSON types; the schema's example round-trips through the
//! model unchanged; and the model refuses values that break the schema's bounds.

use std::collections::BTreeSet;

use payments_types::components::ALL;
use serde_json::{Value, json};

fn document() -> Value {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../openapi/payments.yaml")).unwrap();
    serde_norway::from_str(&text).unwrap()
}

fn keys(value: &Value) -> BTreeSet<String> {
    value.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

fn strings(value: &Value) -> BTreeSet<String> {
    value.as_array().into_iter().flatten().filter_map(|v| v.as_str().map(String::from)).collect()
}

#[test]
fn every_component_has_a_model() {
    let doc = document();
    let components = keys(&doc["components"]["schemas"]);
    let models: BTreeSet<String> = ALL.iter().map(|c| c.name.to_string()).collect();
    assert_eq!(components, models);
}

/// `null` is a value of `schema`: `nullable: true`, or the nullable reference
/// `oneOf: [$ref, {nullable: true, enum: [null]}]`.
fn nullable(schema: &Value) -> bool {
    let null_only = |member: &Value| member["nullable"] == true && member["enum"] == json!([null]);
    schema["nullable"] == true || schema["oneOf"].as_array().is_some_and(|members| members.iter().any(null_only))
}

#[test]
fn schemars_schemas_agree_with_the_document() {
    let doc = document();
    for component in ALL {
        let spec = &doc["components"]["schemas"][component.name];
        let derived = serde_json::to_value((component.schema)()).unwrap();
        let name = component.name;

        if let Some(properties) = spec.get("properties") {
            assert_eq!(keys(&derived["properties"]), keys(properties), "{name}: fields");
            let spec_required = strings(&spec["required"]);
            let derived_required = strings(&derived["required"]);
            assert!(derived_required.is_subset(&spec_required), "{name}: {derived_required:?} ⊄ {spec_required:?}");
            for field in spec_required.difference(&derived_required) {
                // Required but nullable fields are `Option`s: present, possibly null.
                assert!(nullable(&properties[field]), "{name}.{field} is required in the document");
            }
            for field in derived_required.iter() {
                assert!(!nullable(&properties[field]), "{name}.{field} is nullable in the document");
            }
        }
        if let Some(values) = spec.get("enum") {
            assert_eq!(strings(&derived["enum"]), strings(values), "{name}: enum values");
        }
        if let Some(Value::String(ty)) = spec.get("type") {
            let derived_type = &derived["type"];
            let matches = derived_type == ty || derived_type.as_array().is_some_and(|t| t.contains(&json!(ty)));
            assert!(matches, "{name}: type {ty} in the document, {derived_type} in the model");
        }
    }
}

#[test]
fn examples_round_trip_through_the_models() {
    let doc = document();
    let mut checked = 0;
    for component in ALL {
        let Some(example) = doc["components"]["schemas"][component.name].get("example") else { continue };
        let back = (component.round_trip)(example.clone())
            .unwrap_or_else(|e| panic!("{}: the example does not fit the model: {e}", component.name));
        assert_eq!(&back, example, "{}: the example changes on a round trip", component.name);
        checked += 1;
    }
    assert!(checked >= 30, "only {checked} examples");
}

#[test]
fn models_refuse_what_breaks_a_bound() {
    let doc = document();
    let mut checked = 0;
    for component in ALL {
        let spec = &doc["components"]["schemas"][component.name];
        let Some(example) = spec.get("example") else { continue };
        let properties = spec["properties"].as_object().into_iter().flatten();
        for (field, schema) in properties {
            let Some(max) = schema.get("maxLength").and_then(Value::as_u64) else { continue };
            if schema.get("pattern").is_some() || !example[field].is_string() {
                continue;
            }
            let mut at_bound = example.clone();
            at_bound[field] = json!("é".repeat(max as usize));
            assert!(
                (component.round_trip)(at_bound).is_ok(),
                "{}.{field}: {max} characters are allowed",
                component.name
            );
            let mut over = example.clone();
            over[field] = json!("x".repeat(max as usize + 1));
            assert!(
                (component.round_trip)(over).is_err(),
                "{}.{field}: {} characters are refused",
                component.name,
                max + 1
            );
            checked += 1;
        }
    }
    assert!(checked >= 10, "only {checked} bounds");

    let amount = ALL.iter().find(|c| c.name == "Amount").unwrap();
    assert!((amount.round_trip)(json!(0)).is_err(), "amounts are positive");
    let currency = ALL.iter().find(|c| c.name == "CurrencyCode").unwrap();
    assert!((currency.round_trip)(json!("gbp")).is_err(), "currency codes match their pattern");
    assert!((currency.round_trip)(json!("GBPX")).is_err());
}
