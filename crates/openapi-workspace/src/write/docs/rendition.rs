//! The OpenAPI 3.1 rendition of the 3.0.3 source, for readers and tools that prefer 3.1: JSON
//! Schema 2020-12 schemas and a real `webhooks` section (3.0 can only carry `x-webhooks`). It is
//! read back through utoipa's typed 3.1 model, so what we publish is a well-formed 3.1 document.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::json_schema::to_json_schema;
use crate::read::Spec;
use crate::write::samples::{self, Guide, Sample};

/// The rendition, each operation with its `samples` (`x-codeSamples`, and after its
/// description, which Swagger UI shows beside it), and the `guide` ("Getting started") as the
/// first section of the document's description, which Swagger UI shows first and Redoc and
/// Scalar make a page of.
pub fn openapi_31(spec: &Spec, samples: &[Sample], guide: Option<&Guide>) -> Result<String> {
    let mut doc = spec.original();
    convert_schemas(&mut doc);
    with_samples(&mut doc, samples);
    if let (Some(guide), Some(info)) = (guide, doc.get_mut("info").and_then(Value::as_object_mut)) {
        // After the description's opening, before its first section: what a reader sees first.
        let description = info.get("description").and_then(Value::as_str).unwrap_or_default();
        let at = description.find("\n## ").map_or(description.len(), |at| at + 1);
        let (opening, sections) = description.split_at(at);
        let separator = if opening.ends_with("\n\n") || opening.is_empty() { "" } else { "\n\n" };
        let description = format!("{opening}{separator}{}\n{sections}", guide.markdown);
        info.insert("description".into(), Value::String(description));
    }
    let object = doc.as_object_mut().expect("an OpenAPI document is an object");
    object.insert("openapi".into(), Value::String("3.1.0".into()));
    if let Some(webhooks) = object.remove("x-webhooks") {
        object.insert("webhooks".into(), webhooks);
    }
    license_identifier(object);
    let typed: utoipa::openapi::OpenApi = serde_json::from_value(doc.clone()).map_err(|e| {
        Error::library(format!("the 3.1 rendition does not fit utoipa's model{}", locate_misfit(&doc)), e)
    })?;
    // Through a `Value`, whose maps are ordered: utoipa keeps extensions in a `HashMap`, so an
    // object with two of them would otherwise come out in another order at each run.
    let typed = serde_json::to_value(&typed).map_err(|e| Error::library("serialising the 3.1 rendition", e))?;
    let mut text =
        serde_json::to_string_pretty(&typed).map_err(|e| Error::library("serialising the 3.1 rendition", e))?;
    text.push('\n');
    Ok(text)
}

/// Every operation (and webhook) of `doc` that has a sample gets it, found by its `operationId`.
fn with_samples(doc: &mut Value, samples: &[Sample]) {
    let Some(doc) = doc.as_object_mut() else { return };
    let items = doc
        .iter_mut()
        .filter(|(key, _)| matches!(key.as_str(), "paths" | "webhooks" | "x-webhooks"))
        .filter_map(|(_, items)| items.as_object_mut())
        .flat_map(|items| items.values_mut());
    let operations = items.filter_map(Value::as_object_mut).flat_map(|item| item.values_mut());
    for operation in operations.filter_map(Value::as_object_mut) {
        let id = operation.get("operationId").and_then(Value::as_str);
        let Some(sample) = samples.iter().find(|s| Some(s.operation_id.as_str()) == id) else { continue };
        let description = match operation.get("description").and_then(Value::as_str) {
            Some(own) => format!("{own}\n\n{}", samples::markdown(sample)),
            None => samples::markdown(sample),
        };
        operation.insert("description".into(), Value::String(description));
        operation.insert("x-codeSamples".into(), samples::code_samples(sample));
    }
}

/// 3.0's license is a name and a URL; 3.1 added the SPDX `identifier`, for licences (and
/// expressions such as `MIT OR Apache-2.0`) that have no one URL. A license without a URL whose
/// name is written as an SPDX expression gets it as its identifier.
fn license_identifier(document: &mut Map<String, Value>) {
    let Some(license) =
        document.get_mut("info").and_then(|info| info.get_mut("license")).and_then(Value::as_object_mut)
    else {
        return;
    };
    let Some(name) = license.get("name").and_then(Value::as_str) else { return };
    let spdx = name.split_whitespace().all(|word| {
        matches!(word, "AND" | "OR" | "WITH")
            || word.trim_matches(['(', ')']).chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'))
    });
    if spdx && !license.contains_key("url") {
        license.insert("identifier".into(), Value::String(name.to_owned()));
    }
}

/// Converts every schema object in the document (the component schemas and every `schema` of a
/// parameter, header or media type) and spells out parameters' `required`.
fn convert_schemas(value: &mut Value) {
    match value {
        Value::Object(map) => {
            // utoipa's model wants `required` spelled out on parameters (3.x defaults it to false).
            if map.contains_key("in") && map.contains_key("name") && !map.contains_key("required") {
                map.insert("required".into(), Value::Bool(false));
            }
            // An extension is the document's own words, not a parameter or a schema.
            for (key, child) in map.iter_mut().filter(|(key, _)| !key.starts_with("x-") || *key == "x-webhooks") {
                if key == "schema" {
                    *child = to_json_schema(child);
                } else if key == "schemas" && is_schema_map(child) {
                    if let Value::Object(schemas) = child {
                        for schema in schemas.values_mut() {
                            *schema = to_json_schema(schema);
                        }
                    }
                } else {
                    convert_schemas(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(convert_schemas),
        _ => {}
    }
}

fn is_schema_map(value: &Value) -> bool {
    value.as_object().is_some_and(|m: &Map<String, Value>| m.values().all(Value::is_object))
}

/// Names the first component schema or path utoipa cannot read, to make the error actionable.
fn locate_misfit(doc: &Value) -> String {
    let schemas = doc.pointer("/components/schemas").and_then(Value::as_object);
    for (name, schema) in schemas.into_iter().flatten() {
        if let Err(e) = serde_json::from_value::<utoipa::openapi::RefOr<utoipa::openapi::Schema>>(schema.clone()) {
            return format!(" (in components/schemas/{name}: {e})");
        }
    }
    let paths = doc.get("paths").and_then(Value::as_object);
    for (path, item) in paths.into_iter().flatten() {
        if let Err(e) = serde_json::from_value::<utoipa::openapi::PathItem>(item.clone()) {
            return format!(" (in paths/{path}: {e})");
        }
    }
    String::new()
}
