//! OpenAPI 3.0 schema objects to JSON Schema 2020-12, which is also the OpenAPI 3.1 dialect.
//! The differences that matter: 3.0's `nullable: true` becomes a `null` type (or an `anyOf`
//! with `null` around a `$ref`/`allOf`), and 3.0's boolean `exclusiveMinimum`/`exclusiveMaximum`
//! become numbers; a `discriminator` makes each arm of its union require its tags, so that arms
//! that overlap are told apart as the document says they are.

use serde_json::{Map, Value, json};

use crate::error::Result;
use crate::read::Spec;

/// [`to_json_schema`], for a validator: each integer bounded by its `format` too.
pub(crate) fn to_validated_schema(schema: &Value) -> Value {
    bounded(to_json_schema(schema))
}

/// A JSON Schema with each integer bounded by its `format` (a generated server's typed readers
/// bound its parameters so; the mock engine, reading them untyped, by this).
pub(crate) fn bounded(mut schema: Value) -> Value {
    bound_formats(&mut schema);
    schema
}

/// Every schema in `value` given its integer format's bounds (values — examples, defaults,
/// enums — left as they are).
fn bound_formats(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            format_bounds(fields);
            for (key, inner) in fields.iter_mut() {
                if !matches!(key.as_str(), "example" | "examples" | "default" | "enum" | "const") {
                    bound_formats(inner);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(bound_formats),
        _ => {}
    }
}

/// Converts one schema, recursively.
pub(crate) fn to_json_schema(schema: &Value) -> Value {
    let Value::Object(object) = schema else {
        return schema.clone();
    };
    if crate::read::nullable::is_null_only(schema) {
        return json!({"type": "null"});
    }
    let mut out = Map::new();
    for (key, value) in object {
        let converted = match key.as_str() {
            "properties" | "patternProperties" => match value {
                Value::Object(props) => {
                    Value::Object(props.iter().map(|(k, v)| (k.clone(), to_json_schema(v))).collect())
                }
                other => other.clone(),
            },
            "items" | "additionalProperties" | "not" => to_json_schema(value),
            "allOf" | "anyOf" | "oneOf" => match value {
                Value::Array(list) => Value::Array(list.iter().map(to_json_schema).collect()),
                other => other.clone(),
            },
            "nullable" | crate::read::marks::DEFAULT_MAPPING | crate::read::marks::PREFIX_ITEMS => continue,
            _ => value.clone(),
        };
        out.insert(key.clone(), converted);
    }
    exclusive_bound(&mut out, "exclusiveMinimum", "minimum");
    exclusive_bound(&mut out, "exclusiveMaximum", "maximum");
    if let Some(discriminator) = super::discriminator::of(object) {
        tagged_arms(&mut out, &discriminator);
    }
    if object.get("nullable") == Some(&Value::Bool(true)) { make_nullable(out) } else { Value::Object(out) }
}

/// Each arm of the union `discriminator` reads, wanting its tags in the tag's property when the
/// value has it; the default arm, if there is one, any tag the others do not name. Many documents
/// leave the property optional in some arms: without it, the union is judged as written.
fn tagged_arms(schema: &mut Map<String, Value>, discriminator: &super::discriminator::Discriminator) {
    let Some(arms) = schema.get_mut(discriminator.union).and_then(Value::as_array_mut) else { return };
    let property = &discriminator.property;
    for (place, arm) in discriminator.arms.iter().enumerate() {
        let tags = if discriminator.fallback == Some(place) {
            // The default arm: any tag no other arm names.
            let others: Vec<&String> = discriminator
                .arms
                .iter()
                .enumerate()
                .filter(|(other, _)| *other != place)
                .flat_map(|(_, other)| &other.tags)
                .collect();
            json!({"not": {"enum": others}})
        } else {
            json!({"enum": arm.tags})
        };
        if let Some(schema) = arms.get_mut(arm.index) {
            let tagged = json!({"properties": {property.as_str(): tags}});
            *schema = json!({"allOf": [schema.take(), tagged]});
        }
    }
}

/// The range an integer's `format` implies (64 bits without one), where the schema gives no
/// bound of its own: what the model's type for it (`i32`, `u64`…) holds. A validator then
/// refuses what the typed server cannot read, and so does the mock engine, which reads values
/// untyped.
fn format_bounds(schema: &mut Map<String, Value>) {
    let (min, max): (Value, Value) = match schema.get("format").and_then(Value::as_str) {
        Some("int8") => (i8::MIN.into(), i8::MAX.into()),
        Some("int16") => (i16::MIN.into(), i16::MAX.into()),
        Some("int32") => (i32::MIN.into(), i32::MAX.into()),
        Some("int64") => (i64::MIN.into(), i64::MAX.into()),
        Some("uint8") => (0.into(), u8::MAX.into()),
        Some("uint16") => (0.into(), u16::MAX.into()),
        Some("uint32") => (0.into(), u32::MAX.into()),
        Some("uint64" | "uint") => (0.into(), u64::MAX.into()),
        // No format: the model's 64-bit integer (`i64`, or `u64` where it cannot be negative).
        None => (i64::MIN.into(), u64::MAX.into()),
        _ => return,
    };
    if !crate::read::document::type_is(schema.get("type"), "integer") {
        return;
    }
    if !schema.contains_key("minimum") && !schema.contains_key("exclusiveMinimum") {
        schema.insert("minimum".into(), min);
    }
    if !schema.contains_key("maximum") && !schema.contains_key("exclusiveMaximum") {
        schema.insert("maximum".into(), max);
    }
}

fn exclusive_bound(schema: &mut Map<String, Value>, exclusive: &str, inclusive: &str) {
    match schema.get(exclusive) {
        Some(Value::Bool(true)) => {
            if let Some(bound) = schema.remove(inclusive) {
                schema.insert(exclusive.into(), bound);
            }
        }
        Some(Value::Bool(false)) => {
            schema.remove(exclusive);
        }
        _ => {}
    }
}

fn make_nullable(mut schema: Map<String, Value>) -> Value {
    let composed = ["$ref", "allOf", "anyOf", "oneOf"].iter().any(|k| schema.contains_key(*k));
    match schema.get("type").cloned() {
        Some(Value::String(t)) if !composed => {
            schema.insert("type".into(), json!([t, "null"]));
            if let Some(Value::Array(values)) = schema.get_mut("enum") {
                values.push(Value::Null);
            }
            Value::Object(schema)
        }
        _ => {
            // A `$ref` or composition: the annotations stay outside, the value may be null.
            let mut outer = Map::new();
            for key in ["description", "title", "default", "example", "deprecated"] {
                if let Some(v) = schema.remove(key) {
                    outer.insert(key.into(), v);
                }
            }
            outer.insert("anyOf".into(), json!([Value::Object(schema), {"type": "null"}]));
            Value::Object(outer)
        }
    }
}

/// The extension on a document's root that refuses text holding a control character (the
/// runtime's `SchemaSet` reads it from the schema document).
pub(crate) const REFUSE_CONTROL_CHARACTERS: &str = "x-refuse-control-characters";

/// The document the server validates against: every component schema, converted, at the same
/// JSON pointer as in the OpenAPI document so `$ref`s resolve unchanged.
pub(crate) fn schema_document(spec: &Spec) -> Result<String> {
    let schemas: Map<String, Value> =
        spec.component_schemas().map(|(name, schema)| (name.clone(), to_validated_schema(schema))).collect();
    let mut document = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$comment": "Generated by `cargo xtask codegen` from the OpenAPI document. Do not edit by hand.",
        "components": { "schemas": schemas },
    });
    // The document's own rule, stricter than JSON Schema, which the validators then keep.
    if spec.raw.get(REFUSE_CONTROL_CHARACTERS) == Some(&Value::Bool(true)) {
        document[REFUSE_CONTROL_CHARACTERS] = Value::Bool(true);
    }
    Ok(serde_json::to_string_pretty(&document).expect("JSON values serialise") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_arm_of_a_discriminated_union_wants_its_tags() {
        let schema = json!({
            "oneOf": [{"$ref": "#/components/schemas/Cat"}, {"$ref": "#/components/schemas/Dog"}],
            "discriminator": {"propertyName": "kind", "mapping": {"cat": "Cat"}},
        });
        assert_eq!(
            to_json_schema(&schema)["oneOf"],
            json!([
                {"allOf": [{"$ref": "#/components/schemas/Cat"}, {"properties": {"kind": {"enum": ["cat"]}}}]},
                {"allOf": [{"$ref": "#/components/schemas/Dog"}, {"properties": {"kind": {"enum": ["Dog"]}}}]},
            ])
        );
    }

    #[test]
    fn nullable_string_gains_a_null_type_and_enum_value() {
        let schema = json!({"type": "string", "enum": ["a"], "nullable": true});
        assert_eq!(to_json_schema(&schema), json!({"type": ["string", "null"], "enum": ["a", null]}));
    }

    #[test]
    fn nullable_ref_becomes_any_of_null() {
        let schema = json!({"type": "object", "allOf": [{"$ref": "#/x"}], "nullable": true, "description": "d"});
        assert_eq!(
            to_json_schema(&schema),
            json!({"description": "d", "anyOf": [{"type": "object", "allOf": [{"$ref": "#/x"}]}, {"type": "null"}]})
        );
    }

    #[test]
    fn boolean_exclusive_bounds_become_numbers() {
        let schema = json!({"type": "integer", "minimum": 0, "exclusiveMinimum": true});
        assert_eq!(to_json_schema(&schema), json!({"type": "integer", "exclusiveMinimum": 0}));
    }
}
