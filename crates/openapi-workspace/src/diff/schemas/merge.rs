//! A schema as the comparison reads it: its `allOf` parts merged in, and a union of enum-only
//! arms read as the one enum it is (drift's `enum-to-oneof`: the same values, written twice).

use serde_json::{Map, Value};

use super::{arms, resolved};

/// The schema as it is compared: its `allOf` parts merged in ([`all_of`]), and a union of
/// arms that are each only an enum read as the one enum it is.
pub(super) fn merged(schema: &Map<String, Value>, components: &Value) -> Map<String, Value> {
    let mut out = all_of(schema, components);
    // A union whose arms are each only an enum (of one type) is the enum of all their values.
    if let Some((key, arms)) = arms(&out) {
        let enums: Option<Vec<(Option<Value>, &Vec<Value>)>> = arms
            .iter()
            .map(|arm| {
                let arm = resolved(arm, components, "").0.as_object()?;
                let plain = arm.keys().all(|key| matches!(key.as_str(), "type" | "enum" | "description" | "title"));
                Some((arm.get("type").cloned(), arm.get("enum")?.as_array().filter(|_| plain)?))
            })
            .collect();
        if let Some(enums) = enums {
            let mut values: Vec<Value> = Vec::new();
            for value in enums.iter().flat_map(|(_, values)| values.iter()) {
                if !values.contains(value) {
                    values.push(value.clone());
                }
            }
            let first = enums.first().and_then(|(kind, _)| kind.clone());
            let one_type = first.filter(|kind| enums.iter().all(|(other, _)| other.as_ref() == Some(kind)));
            out.remove(key);
            out.insert("enum".into(), Value::Array(values));
            if let Some(kind) = one_type {
                out.insert("type".into(), kind);
            }
        }
    }
    out
}

/// The schema with its `allOf` parts' properties, `required` and keywords merged in (a part's
/// keyword where the schema has none).
fn all_of(schema: &Map<String, Value>, components: &Value) -> Map<String, Value> {
    let Some(parts) = schema.get("allOf").and_then(Value::as_array) else { return schema.clone() };
    let mut out = schema.clone();
    out.remove("allOf");
    for part in parts {
        let (part, _) = resolved(part, components, "");
        let Some(part) = part.as_object() else { continue };
        let part = all_of(part, components);
        for (key, value) in part {
            match (key.as_str(), out.get_mut(&key)) {
                ("properties", Some(Value::Object(properties))) => {
                    if let Value::Object(more) = value {
                        for (name, property) in more {
                            properties.entry(name).or_insert(property);
                        }
                    }
                }
                ("required", Some(Value::Array(required))) => {
                    for name in value.as_array().into_iter().flatten() {
                        if !required.contains(name) {
                            required.push(name.clone());
                        }
                    }
                }
                (_, Some(_)) => {}
                (_, None) => {
                    out.insert(key, value);
                }
            }
        }
    }
    out
}
