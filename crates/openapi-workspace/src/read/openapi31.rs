//! The 3.0 view of an OpenAPI 3.1 document. progenitor and `openapiv3` read 3.0 only, so a 3.1
//! document is turned, before anything else reads it, into the 3.0.3 document that means the
//! same to a code generator; from there ours and anyone's take the one road (`normalise`, the
//! server model, progenitor). Each change is the inverse of what 3.1 changed:
//!
//! - schemas are JSON Schema 2020-12: `type: [T, "null"]` and a `{type: "null"}` arm of
//!   `anyOf`/`oneOf` become `nullable` (a nullable reference is written as this generator's 3.0
//!   documents write it: `oneOf: [$ref, null]`, see `nullable`); `const` a one-value `enum`;
//!   numeric `exclusiveMinimum`/`exclusiveMaximum` the 3.0 pair; `examples` an `example`;
//!   `contentEncoding: base64` a `byte` string and `contentMediaType` a `binary` one;
//!   `$comment`, `propertyNames` and the keywords no 3.0 schema has are dropped, with a note;
//! - `webhooks` is `x-webhooks`; `components.pathItems` and path items that refer to one are
//!   inlined; an operation without `responses` gets none (3.0 wants the field);
//! - `info.summary` and `license.identifier` (3.1's) are dropped from the view, which only the
//!   code is generated from.
//!
//! What cannot be read so is refused with its JSON pointer: a `jsonSchemaDialect` other than
//! OpenAPI's own.

use serde_json::{Map, Value, json};

use crate::error::{Error, Result};
use crate::read::Note;
use crate::read::document::{escape, unescape};

/// OpenAPI 3.1's own dialect, which a document may name (or leave implied).
const OAS_DIALECT: &str = "https://spec.openapis.org/oas/3.1/dialect/base";

/// Whether `version` (the document's `openapi`) is a 3.1 one.
pub(crate) fn is_31(version: &str) -> bool {
    version.starts_with("3.1.")
}

/// Turns the 3.1 `document` into its 3.0.3 view, in place; what was left out is noted.
pub(crate) fn to_30(document: &mut Value, notes: &mut Vec<Note>) -> Result<()> {
    let object = document.as_object_mut().ok_or_else(|| Error::Document("the document is not an object".into()))?;
    if let Some(dialect) = object.get("jsonSchemaDialect").and_then(Value::as_str)
        && dialect != OAS_DIALECT
    {
        return Err(Error::at(
            "/jsonSchemaDialect",
            format!(
                "schemas in the dialect {dialect:?} cannot be read; only OpenAPI 3.1's own \
             ({OAS_DIALECT}) is"
            ),
        ));
    }
    object.remove("jsonSchemaDialect");
    object.insert("openapi".into(), Value::String("3.0.3".into()));
    // 3.1 documents may describe only webhooks, or only components; 3.0 wants `paths`.
    object.entry("paths").or_insert_with(|| json!({}));
    if let Some(info) = object.get_mut("info").and_then(Value::as_object_mut) {
        info.remove("summary");
        if let Some(license) = info.get_mut("license").and_then(Value::as_object_mut) {
            license.remove("identifier");
        }
    }
    if let Some(webhooks) = object.remove("webhooks") {
        object.entry("x-webhooks").or_insert(webhooks);
    }
    inline_path_items(object)?;
    mutual_tls(object, notes);
    for (path, item) in object.get_mut("paths").and_then(Value::as_object_mut).into_iter().flatten() {
        for (method, operation) in item.as_object_mut().into_iter().flatten() {
            if crate::read::document::METHODS.contains(&method.as_str())
                && let Some(operation) = operation.as_object_mut()
            {
                operation.entry("responses").or_insert_with(|| json!({}));
            }
        }
        let _ = path;
    }
    schemas_in(document, "", notes);
    Ok(())
}

/// 3.1's `mutualTLS` schemes, which 3.0 readers cannot read, moved to the list
/// `components.x-mutual-tls-schemes`: the router leaves them to the transport (see
/// `server/security.rs`), and the documentation keeps them.
fn mutual_tls(object: &mut Map<String, Value>, notes: &mut Vec<Note>) {
    let Some(components) = object.get_mut("components").and_then(Value::as_object_mut) else { return };
    let Some(schemes) = components.get_mut("securitySchemes").and_then(Value::as_object_mut) else { return };
    let names: Vec<String> =
        schemes.iter().filter(|(_, s)| s.get("type") == Some(&json!("mutualTLS"))).map(|(n, _)| n.clone()).collect();
    for name in &names {
        schemes.remove(name);
        notes.push(Note {
            pointer: format!("/components/securitySchemes/{}", escape(name)),
            message: "mutualTLS is the transport's: the server's TLS checks the certificate, the router nothing".into(),
        });
    }
    if !names.is_empty() {
        components.insert("x-mutual-tls-schemes".into(), json!(names));
    }
}

/// `components.pathItems` (3.1's) and the path items that refer to one (or to another path),
/// inlined: 3.0 readers take a path item as written.
fn inline_path_items(object: &mut Map<String, Value>) -> Result<()> {
    let shared = object
        .get_mut("components")
        .and_then(Value::as_object_mut)
        .and_then(|components| components.remove("pathItems"))
        .unwrap_or_default();
    let paths_before = object.get("paths").cloned().unwrap_or_default();
    // Webhooks (here `x-webhooks`, pointed at as the document's `webhooks`) too.
    for (map, written) in [("paths", "paths"), ("x-webhooks", "webhooks")] {
        if let Some(items) = object.get_mut(map).and_then(Value::as_object_mut) {
            inline_items(items, written, &shared, &paths_before)?;
        }
    }
    Ok(())
}

/// The path items of `items` (the document's `written`) that refer to one, inlined.
fn inline_items(items: &mut Map<String, Value>, written: &str, shared: &Value, paths_before: &Value) -> Result<()> {
    for (path, item) in items.iter_mut() {
        let Some(reference) = item.get("$ref").and_then(Value::as_str).map(str::to_owned) else { continue };
        let pointer = format!("/{written}/{}/$ref", escape(path));
        let target = if let Some(name) = reference.strip_prefix("#/components/pathItems/") {
            shared.get(unescape(name).as_str()).cloned()
        } else if let Some(other) = reference.strip_prefix("#/paths/") {
            paths_before.get(unescape(other).as_str()).cloned()
        } else {
            return Err(Error::at(pointer, format!("{reference:?} is not a path item of this document")));
        };
        let Some(Value::Object(mut target)) = target else {
            return Err(Error::at(pointer, format!("{reference:?} names no path item")));
        };
        if target.contains_key("$ref") {
            return Err(Error::at(pointer, format!("{reference:?} refers on again; only one step is followed")));
        }
        // What the referring item says beside its `$ref` (a summary, parameters) wins.
        let own = item.as_object().cloned().unwrap_or_default();
        for (key, value) in own {
            if key != "$ref" {
                target.insert(key, value);
            }
        }
        *item = Value::Object(target);
    }
    Ok(())
}

/// Converts every schema in `value` (found at `pointer`): the component schemas, and every
/// `schema` of a parameter, header or media type.
fn schemas_in(value: &mut Value, pointer: &str, notes: &mut Vec<Note>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                let here = format!("{pointer}/{}", escape(key));
                if key == "schema" {
                    schema(child, &here, notes);
                } else if key == "schemas" && pointer == "/components" {
                    for (name, each) in child.as_object_mut().into_iter().flatten() {
                        schema(each, &format!("{here}/{}", escape(name)), notes);
                    }
                } else {
                    schemas_in(child, &here, notes);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                schemas_in(item, &format!("{pointer}/{i}"), notes);
            }
        }
        _ => {}
    }
}

/// The null-only schema as this generator's 3.0 documents write it (see `nullable`).
fn null_only() -> Value {
    json!({"type": "object", "nullable": true, "enum": [null]})
}

/// One schema, recursively.
fn schema(value: &mut Value, pointer: &str, notes: &mut Vec<Note>) {
    let object = match value {
        Value::Bool(true) => {
            *value = json!({});
            return;
        }
        Value::Bool(false) => {
            *value = json!({"not": {}});
            return;
        }
        Value::Object(object) => object,
        _ => return,
    };
    // Children first.
    for key in ["properties", "patternProperties", "$defs", "dependentSchemas"] {
        for (name, child) in object.get_mut(key).and_then(Value::as_object_mut).into_iter().flatten() {
            schema(child, &format!("{pointer}/{key}/{}", escape(name)), notes);
        }
    }
    for key in ["items", "additionalProperties", "not", "unevaluatedProperties", "unevaluatedItems", "contains"] {
        // `true` and `false` are schemas too; where 3.0 takes them as they are
        // (`additionalProperties`) or this reads them itself (`items`), they stay.
        if let Some(child) = object.get_mut(key).filter(|child| !child.is_boolean()) {
            schema(child, &format!("{pointer}/{key}"), notes);
        }
    }
    for key in ["allOf", "anyOf", "oneOf", "prefixItems"] {
        for (i, child) in object.get_mut(key).and_then(Value::as_array_mut).into_iter().flatten().enumerate() {
            schema(child, &format!("{pointer}/{key}/{i}"), notes);
        }
    }

    let mut note = |keyword: &str, message: &str| {
        notes.push(Note { pointer: format!("{pointer}/{keyword}"), message: message.to_owned() });
    };
    object.remove("$comment");
    if let Some(Value::Array(examples)) = object.remove("examples")
        && !object.contains_key("example")
        && let Some(first) = examples.into_iter().next()
    {
        object.insert("example".into(), first);
    }
    if let Some(constant) = object.remove("const") {
        // A default that is the constant says nothing more (pydantic writes one for every
        // `Literal` field), and typify refuses a default on a discriminator's tag.
        if object.get("default") == Some(&constant) {
            object.remove("default");
        }
        object.insert("enum".into(), Value::Array(vec![constant]));
    }
    for (exclusive, inclusive) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
        if let Some(bound) = object.get(exclusive).filter(|b| b.is_number()).cloned() {
            object.insert(inclusive.into(), bound);
            object.insert(exclusive.into(), Value::Bool(true));
        }
    }
    match object.remove("contentEncoding").as_ref().and_then(Value::as_str) {
        Some("base64" | "base64url") => {
            object.insert("format".into(), "byte".into());
        }
        Some(_) => {
            object.insert("format".into(), "binary".into());
        }
        None => {}
    }
    if let Some(media_type) = object.remove("contentMediaType")
        && !object.contains_key("format")
        && media_type.as_str().is_some_and(|t| !t.contains("json") && !t.starts_with("text/"))
    {
        object.insert("format".into(), "binary".into());
    }
    if object.remove("propertyNames").is_some() {
        note("propertyNames", "dropped: 3.0 schemas cannot bound a map's keys, which stay strings");
    }
    if let Some(unevaluated) = object.remove("unevaluatedProperties") {
        let composed = ["allOf", "anyOf", "oneOf"].iter().any(|k| object.contains_key(*k));
        if composed {
            note("unevaluatedProperties", "dropped: 3.0 cannot say it of a composition");
        } else {
            object.entry("additionalProperties").or_insert(unevaluated);
        }
    }
    if let Some(Value::Array(prefix)) = object.remove("prefixItems") {
        note("prefixItems", "read as an array of any of its item schemas, of their number: 3.0 has no tuples");
        let count = prefix.len();
        object.insert(super::marks::PREFIX_ITEMS.into(), Value::Array(prefix.clone()));
        let mut any: Vec<Value> = prefix;
        match object.remove("items") {
            // No item past the prefix.
            Some(Value::Bool(false)) => {
                object.entry("maxItems").or_insert(json!(count));
            }
            Some(tail @ Value::Object(_)) => any.push(tail),
            _ => {}
        }
        object.entry("minItems").or_insert(json!(count));
        // A tuple of one type (`[number, number]`, a point) is an array of it: an `anyOf` of
        // copies would make a model of optional arms that reads no number.
        let mut distinct: Vec<Value> = Vec::new();
        for item in any {
            if !distinct.contains(&item) {
                distinct.push(item);
            }
        }
        object
            .insert("items".into(), if distinct.len() == 1 { distinct.remove(0) } else { json!({"anyOf": distinct}) });
    }
    match object.get("items") {
        Some(Value::Bool(true)) => {
            object.insert("items".into(), json!({}));
        }
        Some(Value::Bool(false)) => {
            object.insert("items".into(), json!({}));
            object.insert("maxItems".into(), json!(0));
        }
        _ => {}
    }
    for keyword in [
        "$defs",
        "dependentSchemas",
        "dependentRequired",
        "if",
        "then",
        "else",
        "unevaluatedItems",
        "contains",
        "minContains",
        "maxContains",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$id",
        "$schema",
    ] {
        if object.remove(keyword).is_some() {
            note(keyword, "dropped: no 3.0 schema says it, so neither the models nor the server's checks do");
        }
    }
    nullable_types(object);
    nullable_arms(object);
}

/// `type: [T, "null"]` (and a type list, and `type: "null"`) as 3.0 writes it.
fn nullable_types(object: &mut Map<String, Value>) {
    let types = match object.get("type").cloned() {
        Some(Value::Array(types)) => types,
        Some(Value::String(null)) if null == "null" => vec![Value::String(null)],
        _ => return,
    };
    let null = types.iter().any(|t| t == "null");
    let rest: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
    match rest.len() {
        0 => {
            object.clear();
            object.extend(null_only().as_object().cloned().unwrap_or_default());
            return;
        }
        1 => {
            object.insert("type".into(), rest[0].clone());
        }
        _ => {
            object.remove("type");
            let arms: Vec<Value> = rest.into_iter().map(|t| json!({ "type": t })).collect();
            object.insert("anyOf".into(), Value::Array(arms));
        }
    }
    if null {
        object.insert("nullable".into(), Value::Bool(true));
        // 3.0's nullable admits null itself; the generators add it back to an enum.
        if let Some(Value::Array(values)) = object.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
    }
}

/// An `anyOf`/`oneOf` with a null arm (FastAPI's and utoipa's optional): one other arm that is
/// a reference stays a `oneOf` of it and the null schema (this generator's 3.0 form of a
/// nullable reference); one inline arm is that schema made `nullable`; several stay, and the
/// whole is `nullable`.
fn nullable_arms(object: &mut Map<String, Value>) {
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(arms)) = object.get(key) else { continue };
        if !arms.iter().any(crate::read::nullable::is_null_only) {
            continue;
        }
        let rest: Vec<Value> = arms.iter().filter(|a| !crate::read::nullable::is_null_only(a)).cloned().collect();
        match rest.as_slice() {
            [only] if only.get("$ref").is_some() => {
                object.remove(key);
                object.insert("oneOf".into(), json!([only, null_only()]));
            }
            [Value::Object(only)] => {
                object.remove(key);
                for (k, v) in only {
                    object.entry(k.clone()).or_insert(v.clone());
                }
                object.insert("nullable".into(), Value::Bool(true));
                if let Some(Value::Array(values)) = object.get_mut("enum") {
                    values.retain(|v| !v.is_null());
                }
            }
            _ => {
                object.insert(key.into(), Value::Array(rest));
                object.insert("nullable".into(), Value::Bool(true));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(schema: Value) -> (Value, Vec<Note>) {
        let mut document = json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {},
                                  "components": {"schemas": {"S": schema}}});
        let mut notes = vec![];
        to_30(&mut document, &mut notes).unwrap();
        (document["components"]["schemas"]["S"].clone(), notes)
    }

    #[test]
    fn type_lists_and_null_arms_become_nullable() {
        assert_eq!(view(json!({"type": ["string", "null"]})).0, json!({"type": "string", "nullable": true}));
        assert_eq!(
            view(json!({"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "title": "Limit"})).0,
            json!({"title": "Limit", "type": "integer", "minimum": 1, "nullable": true})
        );
        assert_eq!(
            view(json!({"anyOf": [{"$ref": "#/components/schemas/T"}, {"type": "null"}], "description": "d"})).0,
            json!({"description": "d", "oneOf": [{"$ref": "#/components/schemas/T"}, null_only()]})
        );
        assert_eq!(view(json!({"type": "null"})).0, null_only());
        assert_eq!(
            view(json!({"type": ["string", "null"], "enum": ["a", null]})).0,
            json!({"type": "string", "nullable": true, "enum": ["a"]})
        );
    }

    #[test]
    fn keywords_3_1_changed_are_written_as_3_0_writes_them() {
        let (schema, notes) = view(json!({
            "type": "object", "$comment": "c", "propertyNames": {"pattern": "^a"},
            "properties": {
                "n": {"type": "number", "exclusiveMinimum": 0, "examples": [3, 4]},
                "k": {"const": "fixed"},
                "b": {"type": "string", "contentEncoding": "base64"},
                "f": {"type": "string", "contentMediaType": "image/png"},
                "t": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}], "items": false}
            },
            "unevaluatedProperties": false
        }));
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {
                    "n": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "example": 3},
                    "k": {"enum": ["fixed"]},
                    "b": {"type": "string", "format": "byte"},
                    "f": {"type": "string", "format": "binary"},
                    "t": {"type": "array", "minItems": 2, "maxItems": 2,
                          "items": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                          "x-codegen-prefix-items": [{"type": "string"}, {"type": "integer"}]}
                },
                "additionalProperties": false
            })
        );
        let said: Vec<&str> = notes.iter().map(|n| n.pointer.as_str()).collect();
        assert_eq!(said, ["/components/schemas/S/properties/t/prefixItems", "/components/schemas/S/propertyNames"]);
    }

    #[test]
    fn the_document_around_the_schemas() {
        let mut document = json!({
            "openapi": "3.1.0",
            "jsonSchemaDialect": OAS_DIALECT,
            "info": {"title": "t", "version": "1", "summary": "s", "license": {"name": "MIT", "identifier": "MIT"}},
            "paths": {"/a": {"$ref": "#/components/pathItems/A"}, "/b": {"get": {"operationId": "b"}}},
            "webhooks": {"made": {"post": {"responses": {"200": {"description": "ok"}}}}},
            "components": {"pathItems": {"A": {"get": {"operationId": "a", "responses": {}}}}}
        });
        to_30(&mut document, &mut vec![]).unwrap();
        assert_eq!(document["openapi"], "3.0.3");
        assert_eq!(document["info"], json!({"title": "t", "version": "1", "license": {"name": "MIT"}}));
        assert_eq!(document["paths"]["/a"]["get"]["operationId"], "a");
        assert_eq!(document["paths"]["/b"]["get"]["responses"], json!({}));
        assert!(document["x-webhooks"]["made"].is_object() && document.get("webhooks").is_none());
        assert!(document["components"].get("pathItems").is_none());

        let mut other = json!({"openapi": "3.1.0", "jsonSchemaDialect": "https://json-schema.org/draft/2019-09/schema",
                               "info": {"title": "t", "version": "1"}, "paths": {}});
        let refused = to_30(&mut other, &mut vec![]).unwrap_err();
        assert!(matches!(&refused, Error::At { at, .. } if at == "/jsonSchemaDialect"), "{refused}");
    }
}
