//! The nullable reference. OpenAPI 3.0.3 lets `nullable: true` add `null` only to the `type` of
//! its own schema object, so `{allOf: [$ref], nullable: true}` still refuses `null` under strict
//! validators. The document therefore writes "a `Recipient` or null" as
//!
//! ```yaml
//! oneOf:
//!   - $ref: '#/components/schemas/Recipient'
//!   - {type: object, nullable: true, enum: [null]}
//! ```
//!
//! which every 3.0 validator reads as meant. Generators don't: typify would make it an untagged
//! enum. This module recognises the idiom so the models stay `Option<Recipient>`, the 3.1
//! rendition says `oneOf: [$ref, {type: 'null'}]`, and the reference reads "Recipient or null".

use serde_json::{Map, Value, json};

/// `{enum: [null], nullable: true}`: the schema whose only value is `null`.
pub fn is_null_only(schema: &Value) -> bool {
    schema.get("nullable") == Some(&Value::Bool(true))
        && schema.get("enum").and_then(Value::as_array).is_some_and(|values| values == &[Value::Null])
}

/// The schema a nullable reference wraps: the one member beside the null-only one in a
/// two-member `oneOf` or `anyOf`.
pub(crate) fn nullable_member(schema: &Value) -> Option<&Value> {
    let members = ["oneOf", "anyOf"].iter().find_map(|key| schema.get(*key)?.as_array())?;
    match members.as_slice() {
        [value, null] | [null, value] if is_null_only(null) && !is_null_only(value) => Some(value),
        _ => None,
    }
}

/// Rewrites every nullable reference in `document` into the form progenitor reads as an
/// `Option`: `{allOf: [member], nullable: true}`, keeping the annotations beside it.
pub(crate) fn for_progenitor(document: &mut Value) {
    match document {
        Value::Object(map) => {
            // Only a `oneOf` or `anyOf` can be the idiom: no copy of every other object.
            let composed = map.contains_key("oneOf") || map.contains_key("anyOf");
            if let Some(member) = composed.then(|| nullable_member(&Value::Object(map.clone())).cloned()).flatten() {
                let mut rewritten = Map::new();
                for (key, value) in map.iter() {
                    if key != "oneOf" && key != "anyOf" {
                        rewritten.insert(key.clone(), value.clone());
                    }
                }
                rewritten.insert("allOf".into(), json!([member]));
                rewritten.insert("nullable".into(), Value::Bool(true));
                *map = rewritten;
            }
            map.values_mut().for_each(for_progenitor);
        }
        Value::Array(items) => items.iter_mut().for_each(for_progenitor),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idiom_is_recognised_in_either_order_and_with_any_of() {
        let member = json!({"$ref": "#/components/schemas/Recipient"});
        let null_only = json!({"type": "object", "nullable": true, "enum": [null]});
        for key in ["oneOf", "anyOf"] {
            assert_eq!(nullable_member(&json!({key: [member, null_only]})), Some(&member));
            assert_eq!(nullable_member(&json!({key: [null_only, member]})), Some(&member));
        }
        // Not the idiom: three members, no null-only member, or a nullable enum with values.
        assert_eq!(nullable_member(&json!({"oneOf": [member, null_only, member]})), None);
        assert_eq!(nullable_member(&json!({"oneOf": [member, member]})), None);
        let nullable_enum = json!({"type": "string", "nullable": true, "enum": ["a", null]});
        assert_eq!(nullable_member(&json!({"oneOf": [member, nullable_enum]})), None);
    }

    #[test]
    fn progenitor_gets_a_nullable_all_of() {
        let mut document = json!({"properties": {"recipient": {
            "description": "d",
            "oneOf": [{"$ref": "#/x"}, {"type": "object", "nullable": true, "enum": [null]}]
        }}});
        for_progenitor(&mut document);
        assert_eq!(
            document,
            json!({"properties": {"recipient": {"description": "d", "allOf": [{"$ref": "#/x"}], "nullable": true}}})
        );
    }
}
