//! OpenAPI's `discriminator`: which arm of a `oneOf`/`anyOf` of references a value is, told by one
//! property's value, read once for the three that honour it — the server's validation
//! (`json_schema`: each arm requires its tags), the mock (`mock`: its value carries its arm's
//! tag) and the models (`write/client/discriminated.rs`: a union reads the tag first). Without
//! it, arms that overlap make a valid value match two arms: refused by `oneOf`, read as the first.
//!
//! An arm's tags are the `mapping` keys that name it (by `$ref` or by component name), or else
//! its component's name. Only arms that are references have tags, as the specification says. A
//! union may name one arm as its default (3.2's `defaultMapping`, and the base of a parent that
//! children extend by `allOf`, which `read::inheritance` turns into such a union): a value whose
//! tag names no other arm is that one.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::read::document::mapped_schema;
use crate::read::marks::DEFAULT_MAPPING;

/// A union's discriminator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Discriminator {
    /// The property that holds the tag.
    pub property: String,
    /// The union's keyword: `oneOf`, else `anyOf`.
    pub union: &'static str,
    /// Every arm that is a reference, in the union's order.
    pub arms: Vec<Arm>,
    /// The place in `arms` of the arm a tag that names no other arm reads as.
    pub fallback: Option<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Arm {
    /// The arm's place in `oneOf`/`anyOf`.
    pub index: usize,
    /// The component it refers to.
    pub component: String,
    /// The tag values that name it, never empty.
    pub tags: Vec<String>,
}

/// The discriminator of `schema`, when it has one and a union with an arm that is a reference.
pub(crate) fn of(schema: &Map<String, Value>) -> Option<Discriminator> {
    let discriminator = schema.get("discriminator")?;
    let property = discriminator.get("propertyName")?.as_str()?.to_owned();
    let union = if schema.contains_key("oneOf") { "oneOf" } else { "anyOf" };
    let arms = schema.get(union)?.as_array()?;
    // The mapping's tags by the component they name, read once: matching each arm against every
    // entry was quadratic, and Microsoft Graph's unions are large.
    let mut named: HashMap<String, Vec<String>> = HashMap::new();
    for (tag, target) in discriminator.get("mapping").and_then(Value::as_object).into_iter().flatten() {
        let Some(target) = target.as_str() else { continue };
        if let Some(component) = mapped_schema(target).strip_prefix("#/components/schemas/") {
            named.entry(component.to_owned()).or_default().push(tag.clone());
        }
    }
    let arms: Vec<Arm> = arms
        .iter()
        .enumerate()
        .filter_map(|(index, arm)| {
            let component = arm.get("$ref")?.as_str()?.strip_prefix("#/components/schemas/")?.to_owned();
            let tags = named.get(&component).cloned().unwrap_or_else(|| vec![component.clone()]);
            Some(Arm { index, component, tags })
        })
        .collect();
    let fallback = schema.get(DEFAULT_MAPPING).and_then(Value::as_str).and_then(|target| {
        arms.iter().position(|arm| target.strip_prefix("#/components/schemas/") == Some(&arm.component))
    });
    (!arms.is_empty()).then_some(Discriminator { property, union, arms, fallback })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Arm, of};

    #[test]
    fn tags_come_from_the_mapping_by_reference_or_name_else_from_the_component() {
        let schema = json!({
            "oneOf": [
                {"$ref": "#/components/schemas/Cat"},
                {"type": "string"},
                {"$ref": "#/components/schemas/Dog"},
                {"$ref": "#/components/schemas/Bird"},
            ],
            "discriminator": {"propertyName": "kind", "mapping": {
                "cat": "#/components/schemas/Cat", "kitten": "#/components/schemas/Cat", "dog": "Dog",
            }},
        });
        let found = of(schema.as_object().unwrap()).unwrap();
        assert_eq!((found.property.as_str(), found.union), ("kind", "oneOf"));
        let arm = |index, component: &str, tags: &[&str]| Arm {
            index,
            component: component.into(),
            tags: tags.iter().map(|t| t.to_string()).collect(),
        };
        assert_eq!(found.arms, [arm(0, "Cat", &["cat", "kitten"]), arm(2, "Dog", &["dog"]), arm(3, "Bird", &["Bird"])]);
        assert_eq!(found.fallback, None);
        let mut defaulted = schema.clone();
        defaulted["x-codegen-default-mapping"] = "#/components/schemas/Bird".into();
        assert_eq!(of(defaulted.as_object().unwrap()).unwrap().fallback, Some(2), "the place in arms, not in oneOf");
        assert!(
            of(json!({"oneOf": [{"type": "string"}], "discriminator": {"propertyName": "k"}}).as_object().unwrap())
                .is_none()
        );
        assert!(of(json!({"oneOf": [{"$ref": "#/components/schemas/A"}]}).as_object().unwrap()).is_none());
    }
}
