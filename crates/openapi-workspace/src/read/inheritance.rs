//! OpenAPI's inheritance form of a `discriminator`: a parent schema names the tag's property and
//! its children extend it by `allOf` (`Pet` with `pet_type`; `Cat` is `allOf: [Pet, {…}]`). Where
//! the document gives a value the parent's schema, the value is any of its descendants, told by
//! the tag — but a model of the parent alone is a struct of its own fields, and a cat read as one
//! loses every field of its own. So the view splits such a parent: its schema moves to
//! `{Parent}Base`, which its children extend instead, and the parent becomes a `oneOf` of its
//! descendants and that base, with the mapping made explicit (a descendant the mapping does not
//! name is tagged by its component name, the base by the parent's), and the base as the default
//! mapping (`marks::DEFAULT_MAPPING`): a tag that names no descendant reads the parent's fields,
//! as the document as written would. That union is then honoured as any discriminated one is
//! (`model::discriminator`). A parent that only its children refer to stays as it is.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::read::document::{mapped_schema, rust_name};
use crate::read::marks;

const PREFIX: &str = "#/components/schemas/";

/// Splits every parent of `doc`'s components that the document uses as a value's schema.
pub(crate) fn split_parents(doc: &mut Value) {
    let Some(schemas) = doc.pointer("/components/schemas").and_then(Value::as_object) else { return };
    let parents: Vec<String> = schemas
        .iter()
        .filter(|(_, schema)| {
            schema.pointer("/discriminator/propertyName").is_some_and(Value::is_string)
                && !["oneOf", "anyOf"].iter().any(|union| schema.get(*union).is_some())
        })
        .map(|(name, _)| name.clone())
        .collect();
    if parents.is_empty() {
        return;
    }
    let mut uses = BTreeMap::new();
    count_references(doc, &mut uses);
    // The Rust names taken, kept as the splits add bases: made once, not once a parent (a
    // document of thousands of parents and components, Graph's, spent seconds making them).
    let mut taken: BTreeSet<String> = schemas.keys().map(|name| rust_name(name, true)).collect();
    for parent in parents {
        split(doc, &parent, &uses, &mut taken);
    }
}

/// How many times each `$ref` occurs in `value`.
fn count_references(value: &Value, uses: &mut BTreeMap<String, usize>) {
    match value {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
                *uses.entry(reference.to_owned()).or_default() += 1;
            }
            map.values().for_each(|child| count_references(child, uses));
        }
        Value::Array(items) => items.iter().for_each(|item| count_references(item, uses)),
        _ => {}
    }
}

/// Each component's children, by the reference they extend, in the components' order: a child
/// has an `allOf` naming its parent beside something of its own (a component that is only
/// `allOf: [parent]` is another name for it, not a child). Made once a split, in one pass: asked
/// of each descendant in turn, it was a pass a descendant.
fn children(schemas: &Map<String, Value>) -> BTreeMap<&str, Vec<&String>> {
    let mut children: BTreeMap<&str, Vec<&String>> = BTreeMap::new();
    for (name, schema) in schemas {
        let Some(parts) = schema.get("allOf").and_then(Value::as_array) else { continue };
        if parts.len() == 1 && schema.get("properties").is_none() {
            continue;
        }
        for reference in parts.iter().filter_map(|part| part.get("$ref").and_then(Value::as_str)) {
            let extending = children.entry(reference).or_default();
            if extending.last() != Some(&name) {
                extending.push(name);
            }
        }
    }
    children
}

fn split(doc: &mut Value, parent: &str, uses: &BTreeMap<String, usize>, taken: &mut BTreeSet<String>) {
    let schemas = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut).expect("read by the caller");
    let reference = format!("{PREFIX}{parent}");
    let (direct, descendants) = {
        let children = children(schemas);
        let of = |name: &str| children.get(format!("{PREFIX}{name}").as_str()).into_iter().flatten().copied();
        let direct: Vec<String> = of(parent).cloned().collect();
        // Every descendant, children of children too.
        let mut descendants: BTreeSet<String> = direct.iter().cloned().collect();
        let mut newest: Vec<String> = direct.clone();
        while !newest.is_empty() {
            let grown: Vec<String> =
                newest.iter().flat_map(|name| of(name)).filter(|name| *name != parent).cloned().collect();
            newest = grown.into_iter().filter(|name| descendants.insert(name.clone())).collect();
        }
        (direct, descendants)
    };
    let used_as_value = uses.get(&reference).copied().unwrap_or_default() > direct.len();
    if direct.is_empty() || !used_as_value {
        return;
    }
    let base = (1..)
        .map(|n| if n == 1 { format!("{parent}Base") } else { format!("{parent}Base{n}") })
        .find(|name| !taken.contains(&rust_name(name, true)))
        .expect("an unbounded range");
    taken.insert(rust_name(&base, true));
    let base_reference = format!("{PREFIX}{base}");

    let mut own = schemas.remove(parent).expect("a parent is a component");
    let object = own.as_object_mut().expect("a parent has a discriminator, so is an object");
    let discriminator = object.remove("discriminator").expect("a parent has a discriminator");
    let nullable = object.remove("nullable");
    let description = object.get("description").cloned();
    // The mapping as the document writes it, each target a reference; the parent's is the base's.
    let target = |written: &str| {
        let reference = mapped_schema(written);
        if reference == format!("{PREFIX}{parent}") { base_reference.clone() } else { reference }
    };
    let mut mapping: Map<String, Value> = discriminator
        .get("mapping")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(tag, written)| Some((tag.clone(), Value::String(target(written.as_str()?)))))
        .collect();
    let mapped: BTreeSet<String> = mapping.values().filter_map(Value::as_str).map(str::to_owned).collect();
    for (name, tag_reference) in descendants
        .iter()
        .map(|name| (name.clone(), format!("{PREFIX}{name}")))
        .chain([(parent.to_owned(), base_reference.clone())])
    {
        if !mapped.contains(&tag_reference) && !mapping.contains_key(&name) {
            mapping.insert(name, Value::String(tag_reference));
        }
    }
    // The union's arms: the descendants, what else the mapping names, and the base last.
    let mut arms: Vec<String> = descendants.iter().map(|name| format!("{PREFIX}{name}")).collect();
    for reference in mapping.values().filter_map(Value::as_str) {
        if !arms.iter().any(|arm| arm == reference) && reference != base_reference {
            arms.push(reference.to_owned());
        }
    }
    arms.push(base_reference.clone());

    let mut union = Map::new();
    if let Some(description) = description {
        union.insert("description".into(), description);
    }
    union.insert("oneOf".into(), arms.into_iter().map(|arm| json!({"$ref": arm})).collect());
    let mut discriminator = discriminator.as_object().cloned().unwrap_or_default();
    discriminator.insert("mapping".into(), Value::Object(mapping));
    union.insert("discriminator".into(), Value::Object(discriminator));
    union.insert(marks::DEFAULT_MAPPING.into(), Value::String(base_reference.clone()));
    if let Some(nullable) = nullable {
        union.insert("nullable".into(), nullable);
    }
    schemas.insert(parent.to_owned(), Value::Object(union));
    schemas.insert(base, own);
    for child in &direct {
        let parts = schemas.get_mut(child).and_then(|child| child.get_mut("allOf")).and_then(Value::as_array_mut);
        for part in parts.into_iter().flatten() {
            if part.get("$ref").and_then(Value::as_str) == Some(reference.as_str()) {
                part["$ref"] = Value::String(base_reference.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::split_parents;

    fn pets() -> serde_json::Value {
        json!({
            "paths": {"/pets": {"get": {"responses": {"200": {"description": "", "content": {"application/json": {
                "schema": {"$ref": "#/components/schemas/Pet"}}}}}}}},
            "components": {"schemas": {
                "Pet": {
                    "type": "object", "required": ["kind"], "description": "A pet.",
                    "properties": {"kind": {"type": "string"}},
                    "discriminator": {"propertyName": "kind", "mapping": {"cat": "Cat"}},
                },
                "Cat": {"allOf": [{"$ref": "#/components/schemas/Pet"}, {"properties": {"indoor": {"type": "boolean"}}}]},
                "Dog": {"allOf": [{"$ref": "#/components/schemas/Pet"}, {"properties": {"good": {"type": "boolean"}}}]},
                "Puppy": {"allOf": [{"$ref": "#/components/schemas/Dog"}, {"properties": {"age": {"type": "integer"}}}]},
                "PetAlias": {"allOf": [{"$ref": "#/components/schemas/Pet"}]},
            }},
        })
    }

    #[test]
    fn a_parent_used_as_a_value_becomes_a_union_of_its_descendants_and_its_base() {
        let mut doc = pets();
        split_parents(&mut doc);
        let schemas = &doc["components"]["schemas"];
        assert_eq!(
            schemas["Pet"],
            json!({
                "description": "A pet.",
                "oneOf": [
                    {"$ref": "#/components/schemas/Cat"},
                    {"$ref": "#/components/schemas/Dog"},
                    {"$ref": "#/components/schemas/Puppy"},
                    {"$ref": "#/components/schemas/PetBase"},
                ],
                "discriminator": {"propertyName": "kind", "mapping": {
                    "cat": "#/components/schemas/Cat",
                    "Dog": "#/components/schemas/Dog",
                    "Puppy": "#/components/schemas/Puppy",
                    "Pet": "#/components/schemas/PetBase",
                }},
                "x-codegen-default-mapping": "#/components/schemas/PetBase",
            })
        );
        assert_eq!(schemas["PetBase"]["required"], json!(["kind"]));
        assert!(schemas["PetBase"].get("discriminator").is_none());
        assert_eq!(schemas["Cat"]["allOf"][0], json!({"$ref": "#/components/schemas/PetBase"}));
        assert_eq!(schemas["Puppy"]["allOf"][0], json!({"$ref": "#/components/schemas/Dog"}), "a grandchild's parent");
        assert_eq!(schemas["PetAlias"]["allOf"][0], json!({"$ref": "#/components/schemas/Pet"}), "another name");
    }

    #[test]
    fn a_parent_only_its_children_name_stays_as_written() {
        let mut doc = pets();
        doc["paths"] = json!({});
        doc["components"]["schemas"].as_object_mut().unwrap().remove("PetAlias");
        let written = doc.clone();
        split_parents(&mut doc);
        assert_eq!(doc, written);
    }
}
