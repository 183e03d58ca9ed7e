//! One document both generators can serve, made from any OpenAPI 3.0 document before either
//! reads it. [`normalise`] gives the view both share: every operation has an `operationId` whose
//! Rust name is unique, owns its parameters (a path item's are copied in), and names every schema
//! that becomes a Rust type of its own (inline objects, enums and compositions are moved to
//! `components/schemas` under the names progenitor would give them, `{Op}Body`, `{Op}Response`,
//! `{Op}{Param}`), so the server and the client refer to the same models. [`for_client`] then
//! adapts a copy to what progenitor 0.15 accepts without panicking: one request media type, one
//! success type and one error type per operation.
//!
//! What neither side can serve is refused here with the JSON pointer of the construct, never left
//! to panic or to produce code that does not compile. Our own document passes through unchanged.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::error::{Result, bail};
use crate::read::Serving;
use crate::read::document::{METHODS, Names, pointer, rust_name};
use crate::read::parameters::{
    check_parameters, colliding_parameters, credential_parameters, own_parameters, path_parameters_apart,
};

/// A string enum whose values typify cannot each give a variant name of their own (`a-b` beside
/// `a_b`; see [`variant_names`]): typify would panic, so the value is checked by a `pattern` of
/// exactly those values instead, and the model is a string.
fn unnameable_enums(value: &mut Value, pointer: &str, notes: &mut Vec<crate::read::Note>) {
    match value {
        Value::Object(map) => {
            let strings: Option<Vec<String>> = map
                .get("enum")
                .and_then(Value::as_array)
                .and_then(|values| values.iter().map(|v| v.as_str().map(str::to_owned)).collect());
            if let Some(values) = strings.filter(|values| !values.is_empty())
                && variant_names(&values).is_none()
            {
                let alternatives: Vec<String> = values.iter().map(|v| regex_escape(v)).collect();
                map.remove("enum");
                map.insert("type".into(), json!("string"));
                map.insert("pattern".into(), json!(format!("^(?:{})$", alternatives.join("|"))));
                notes.push(crate::read::Note {
                    pointer: format!("{pointer}/enum"),
                    message: format!(
                        "values {values:?} do not each make a Rust name: a string checked by the pattern of exactly \
                         them"
                    ),
                });
            }
            for (key, child) in map.iter_mut() {
                unnameable_enums(child, &format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1")), notes);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                unnameable_enums(item, &format!("{pointer}/{i}"), notes);
            }
        }
        _ => {}
    }
}

/// The variant names typify gives a string enum of `values`, as it makes them: each value
/// sanitised (`""` is `X`, `in_progress` `InProgress`), and when two collide, again with `_` and
/// what no identifier holds spelt `X`; `None` when those collide too, where typify panics.
fn variant_names(values: &[String]) -> Option<Vec<String>> {
    let unique = |names: &[String]| names.iter().collect::<BTreeSet<_>>().len() == names.len();
    let first: Vec<String> = values.iter().map(|value| sanitize(value)).collect();
    if unique(&first) {
        return Some(first);
    }
    let spelt = |value: &String| value.replace(|c: char| c == '_' || !unicode_ident::is_xid_continue(c), "X");
    let second: Vec<String> = values.iter().map(|value| sanitize(&spelt(value))).collect();
    unique(&second).then_some(second)
}

/// typify's name for a variant of value `text` (its `util::sanitize`, in Pascal case).
fn sanitize(text: &str) -> String {
    let cased = match text {
        "+1" => "plus1".to_owned(),
        "-1" => "minus1".to_owned(),
        _ => heck::ToPascalCase::to_pascal_case(
            text.replace('\'', "").replace(|c: char| !unicode_ident::is_xid_continue(c), "-").as_str(),
        ),
    };
    let named = match cased.chars().next() {
        None => "X".to_owned(),
        Some(c) if unicode_ident::is_xid_start(c) => cased,
        Some(_) => format!("X{cased}"),
    };
    // Pascal case meets one keyword.
    if named == "Self" { format!("{named}_") } else { named }
}

/// `text` as a regular expression matching exactly it.
fn regex_escape(text: &str) -> String {
    text.chars().map(|c| if "\\.+*?()|[]{}^$".contains(c) { format!("\\{c}") } else { c.to_string() }).collect()
}

/// The shared view: see the module's documentation. Answers the operations left out (path,
/// method): with `Serving::WhatItCan`, one whose parameters cannot be served is, with a note
/// (`Serving::AsWritten` keeps it, noted).
pub(crate) fn normalise(
    doc: &mut Value,
    notes: &mut Vec<crate::read::Note>,
    serving: Serving,
) -> Result<Vec<(String, String)>> {
    // The diff judges schemas as written: naming them (and spelling enums no Rust name can hold
    // as patterns) is the generators' business, and its pointers would name the view's models.
    let naming = serving != Serving::AsWritten;
    if naming {
        unnameable_enums(doc, "", notes);
    }
    let mut paths = match doc.get_mut("paths").map(Value::take) {
        Some(Value::Object(paths)) => paths,
        Some(Value::Null) | None => Map::new(),
        Some(_) => bail!("#/paths: must be an object"),
    };
    let components = doc.get("components").cloned().unwrap_or_else(|| json!({}));
    let mut schemas = components.get("schemas").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut names = Names::new(&schemas);
    let mut shapes = BTreeMap::new();

    operation_ids(&mut paths, notes)?;
    let global_security = doc.get("security").cloned();
    let mut left_out = Vec::new();
    for (path, item) in paths.iter_mut() {
        let path_parameters = item.as_object_mut().and_then(|i| i.remove("parameters"));
        for method in METHODS {
            let Some(operation) = item.get_mut(method) else { continue };
            let at = ["paths", path.as_str(), method];
            let served = own_parameters(operation, path_parameters.as_ref(), &components, &at)
                .and_then(|()| check_parameters(path, operation, &components, &at))
                .and_then(|()| match serving {
                    Serving::AsWritten => Ok(()),
                    _ => {
                        credential_parameters(operation, global_security.as_ref(), &components, &at, notes);
                        colliding_parameters(operation, &components, &at, notes)
                    }
                });
            match (served, serving) {
                (Ok(()), Serving::AsWritten) => {}
                (Ok(()), _) => hoist_operation(operation, &mut schemas, &mut names, &mut shapes),
                (Err(error), Serving::Whole) => return Err(error),
                (Err(error), Serving::WhatItCan) => {
                    notes.push(crate::read::Note {
                        pointer: pointer(&at).trim_start_matches('#').to_owned(),
                        message: format!("left out of the workspace: {}", error.chain()),
                    });
                    item.as_object_mut().expect("an operation's path item is an object").remove(method);
                    left_out.push((path.clone(), method.to_string()));
                }
                (Err(error), Serving::AsWritten) => {
                    notes.push(crate::read::Note {
                        pointer: pointer(&at).trim_start_matches('#').to_owned(),
                        message: format!("not one the workspace can serve: {}", error.chain()),
                    });
                }
            }
        }
    }
    if naming {
        path_parameters_apart(&mut paths, &components, notes);
    }
    doc["paths"] = Value::Object(paths);
    if !naming {
        return Ok(left_out);
    }
    let mut components = components;
    if let Some(parameters) = components.get_mut("parameters").and_then(Value::as_object_mut) {
        for (name, parameter) in parameters.iter_mut() {
            if let Some(schema) = parameter.get_mut("schema") {
                hoist(schema, &mut schemas, &mut names, &rust_name(name, true));
            }
        }
    }
    for kind in ["requestBodies", "responses"] {
        if let Some(items) = components.get_mut(kind).and_then(Value::as_object_mut) {
            for (name, item) in items.iter_mut() {
                hoist_content(item, &mut schemas, &mut names, &rust_name(name, true), None);
                if kind == "requestBodies" {
                    multipart_parts(item, &mut schemas, &mut names);
                }
                for (header, value) in item.get_mut("headers").and_then(Value::as_object_mut).into_iter().flatten() {
                    if let Some(schema) = value.get_mut("schema") {
                        hoist(schema, &mut schemas, &mut names, &rust_name(&format!("{name}-{header}"), true));
                    }
                }
            }
        }
    }
    if let Some(headers) = components.get_mut("headers").and_then(Value::as_object_mut) {
        for (name, header) in headers.iter_mut() {
            if let Some(schema) = header.get_mut("schema") {
                hoist(schema, &mut schemas, &mut names, &rust_name(&format!("{name}-header"), true));
            }
        }
    }
    if !schemas.is_empty() {
        components["schemas"] = Value::Object(schemas);
    }
    if components.as_object().is_some_and(|c| !c.is_empty()) {
        doc["components"] = components;
    }
    unclaimed_titles(doc, &mut names);
    colliding_properties(doc, &mut names);
    Ok(left_out)
}

/// typify names an inline schema under a component's property `{Component}{Property}`
/// (`code-scanning-variant-analysis`'s `status`: `CodeScanningVariantAnalysisStatus`), and one
/// deeper after that (`{Component}{Property}{Property}`, an array's items `…Item`, a titled
/// schema's properties after its title: Stripe's `payment_method_options`' `konbini` is
/// `PaymentMethodOptionsKonbini`), which can be a component's own name: such a schema is moved
/// to `components/schemas` under a name of its own. A nullable composition (typify would name
/// the type inside it like the component) becomes a nullable reference to the composition,
/// moved to `{Component}Value`.
fn colliding_properties(doc: &mut Value, names: &mut Names) {
    let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) else { return };
    let mut moved = Vec::new();
    for (key, schema) in schemas.iter_mut() {
        nested_names(schema, &rust_name(key, true), names, &mut moved);
    }
    schemas.extend(moved);
    let mut values = Vec::new();
    for (key, schema) in schemas.iter_mut() {
        let composed =
            ["oneOf", "anyOf"].iter().any(|k| schema.get(*k).and_then(Value::as_array).is_some_and(|a| a.len() > 1));
        if composed
            && schema.get("nullable") == Some(&Value::Bool(true))
            && let Some(object) = schema.as_object_mut()
        {
            object.remove("nullable");
            let name = names.claim(&format!("{}Value", rust_name(key, true)));
            let mut nullable =
                json!({ "allOf": [{ "$ref": format!("#/components/schemas/{name}") }], "nullable": true });
            if let Some(description) = object.get("description") {
                nullable["description"] = description.clone();
            }
            values.push((name, std::mem::replace(schema, nullable)));
        }
    }
    schemas.extend(values);
}

/// The properties of `schema`, named by typify `{parent}{Property}`: see `colliding_properties`.
fn nested_names(schema: &mut Value, parent: &str, names: &mut Names, moved: &mut Vec<(String, Value)>) {
    for (property, inner) in schema.get_mut("properties").and_then(Value::as_object_mut).into_iter().flatten() {
        if !reference_with_annotations(inner) {
            nested_name(inner, format!("{parent}{}", rust_name(property, true)), names, moved);
        }
    }
}

/// `schema`, which typify names `wanted` unless it has a title, kept from colliding (and its
/// own properties after it).
fn nested_name(schema: &mut Value, wanted: String, names: &mut Names, moved: &mut Vec<(String, Value)>) {
    if !needs_name(schema) && !constrained_string(schema) {
        if schema.get("type") == Some(&json!("array"))
            && let Some(items) = schema.get_mut("items")
        {
            nested_name(items, format!("{wanted}Item"), names, moved);
        }
        return;
    }
    // A title names it (`unclaimed_titles` keeps those unique).
    if let Some(title) = schema.get("title").and_then(Value::as_str) {
        let title = rust_name(title, true);
        nested_names(schema, &title, names, moved);
    } else if names.take(wanted.clone()) {
        nested_names(schema, &wanted, names, moved);
    } else {
        let name = names.claim(&wanted);
        let mut taken = std::mem::replace(schema, json!({ "$ref": format!("#/components/schemas/{name}") }));
        nested_names(&mut taken, &name, names, moved);
        moved.push((name, taken));
    }
}

/// `{allOf: [{$ref}]}`, or the nullable reference (`nullable.rs`: `anyOf: [{$ref}, null]`, as
/// FastAPI writes every optional model), with nothing beside it but annotations: the referenced
/// model itself (or its `Option`) to typify, not a type of its own.
fn reference_with_annotations(schema: &Value) -> bool {
    let Some(map) = schema.as_object() else { return false };
    let single_reference =
        map.get("allOf").and_then(Value::as_array).is_some_and(|arms| arms.len() == 1 && arms[0].get("$ref").is_some());
    let nullable_reference =
        crate::read::nullable::nullable_member(schema).is_some_and(|member| member.get("$ref").is_some());
    let annotations = ["nullable", "description", "title", "default", "example", "readOnly", "writeOnly"];
    let composition: &[&str] = match (single_reference, nullable_reference) {
        (true, _) => &["allOf"],
        (false, true) => &["anyOf", "oneOf"],
        (false, false) => return false,
    };
    map.keys()
        .all(|key| annotations.contains(&key.as_str()) || composition.contains(&key.as_str()) || key.starts_with("x-"))
}

/// typify names a schema with a `title` after it: a title that would name a second type like one
/// already named (a component's, another title's; `nullable-simple-user` titled "Simple User"
/// beside `simple-user`), or the type inside a nullable component like the component itself, is
/// dropped, and the type is named from where it stands. A title is an annotation:
/// nothing on the wire changes, so there is no note.
fn unclaimed_titles(doc: &mut Value, names: &mut Names) {
    let own = |at: &str| at.strip_prefix("/components/schemas/").filter(|key| !key.contains('/')).map(str::to_owned);
    crate::read::repair::schemas(doc, "", &mut |schema, at| {
        let Some(title) = schema.get("title").and_then(Value::as_str) else { return };
        let name = rust_name(title, true);
        let nullable = schema.get("nullable") == Some(&Value::Bool(true));
        let named_by_key = own(at).is_some_and(|key| rust_name(&crate::read::document::unescape(&key), true) == name);
        // A nullable component is `Name(Option<Inner>)`: the title would name Inner `Name` too.
        if (named_by_key && nullable) || (!named_by_key && !names.take(name)) {
            schema.remove("title");
        }
    });
}

/// Every operation gets an `operationId` (`{method}_{path}` when it has none), and no two may
/// become the same Rust method.
fn operation_ids(paths: &mut Map<String, Value>, notes: &mut Vec<crate::read::Note>) -> Result<()> {
    let mut taken: BTreeMap<String, String> = BTreeMap::new();
    let mut missing = Vec::new();
    for (path, item) in paths.iter_mut() {
        if item.get("$ref").is_some() {
            bail!(pointer(&["paths", path]), "path items that are $refs are not supported; write the path item out");
        }
        for method in METHODS {
            let Some(operation) = item.get_mut(method) else { continue };
            let at = pointer(&["paths", path, method]);
            match operation.get("operationId") {
                Some(Value::String(id)) => {
                    let rust = rust_name(id, false);
                    let Some(other) = taken.get(&rust).cloned() else {
                        taken.insert(rust, at);
                        continue;
                    };
                    // The second of one method's name is numbered (ndhm.gov.in's copied operations).
                    let (id, mut n) = (id.clone(), 1);
                    let renamed = loop {
                        n += 1;
                        let renamed = format!("{id}_{n}");
                        if !taken.contains_key(&rust_name(&renamed, false)) {
                            break renamed;
                        }
                    };
                    notes.push(crate::read::Note {
                        pointer: format!("{at}/operationId").trim_start_matches('#').to_owned(),
                        message: format!(
                            "operationId {id:?} is the Rust method `{rust}`, as is the operation at {other}: named {renamed:?}"
                        ),
                    });
                    taken.insert(rust_name(&renamed, false), at);
                    operation["operationId"] = Value::String(renamed);
                }
                Some(_) => bail!(format!("{at}/operationId"), "must be a string"),
                None => missing.push((path.clone(), method)),
            }
        }
    }
    for (path, method) in missing {
        let mut id = rust_name(&format!("{method} {path}"), false);
        let base = id.clone();
        let mut n = 1;
        while taken.contains_key(&id) {
            n += 1;
            id = format!("{base}_{n}");
        }
        taken.insert(id.clone(), pointer(&["paths", &path, method]));
        paths[&path][method]["operationId"] = Value::String(id);
    }
    Ok(())
}

/// Moves the operation's inline schemas that become types of their own into `components/schemas`.
/// One written exactly like one moved before for another operation — a parameter's of the same
/// name, a request body's, a response's — is the type named for the first (`shapes`): Microsoft
/// Graph's `$select`, `$orderby` and `$expand` enums repeat one entity's properties on every path
/// that reaches it, and loket.nl's `GET` and `PUT` of a resource answer one inline shape.
fn hoist_operation(
    operation: &mut Value,
    schemas: &mut Map<String, Value>,
    names: &mut Names,
    shapes: &mut BTreeMap<String, String>,
) {
    let id = operation["operationId"].as_str().expect("set by operation_ids").to_string();
    for parameter in operation.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten() {
        let name = parameter.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        if let Some(schema) = parameter.get_mut("schema") {
            hoist_shared(
                schema,
                schemas,
                names,
                &rust_name(&format!("{id}-{name}"), true),
                Some((&format!("parameter {name}"), &mut *shapes)),
            );
        }
    }
    if let Some(body) = operation.get_mut("requestBody") {
        hoist_content(body, schemas, names, &rust_name(&format!("{id}-body"), true), Some(("body", &mut *shapes)));
        multipart_parts(body, schemas, names);
    }
    let Some(responses) = operation.get_mut("responses").and_then(Value::as_object_mut) else { return };
    // An operation that documents no success answers one as progenitor assumes: any 2xx, no body.
    let success = |status: &String| status == "default" || status.starts_with(['1', '2', '3']);
    if !responses.keys().any(success) {
        responses.insert("2XX".into(), json!({ "description": "Success (the document gives none)." }));
    }
    // `{Op}Response` when one response needs a type of its own, `{Op}Response{status}` for each
    // when several do.
    let needing = responses
        .values()
        .filter(|r| {
            r.get("content")
                .and_then(Value::as_object)
                .is_some_and(|c| c.values().any(|m| m.get("schema").is_some_and(needs_name)))
        })
        .count();
    for (status, response) in responses.iter_mut() {
        let name = if needing > 1 { format!("{id}-response-{status}") } else { format!("{id}-response") };
        hoist_content(response, schemas, names, &rust_name(&name, true), Some(("response", &mut *shapes)));
        for (header, value) in response.get_mut("headers").and_then(Value::as_object_mut).into_iter().flatten() {
            if let Some(schema) = value.get_mut("schema") {
                hoist(schema, schemas, names, &rust_name(&format!("{id}-{header}"), true));
            }
        }
    }
}

/// The server models each part of a multipart body as a type: a part's inline shape that becomes
/// a type of its own is named `{Body}{Part}` and moved to `components/schemas`, as typify would
/// name it.
fn multipart_parts(body: &Value, schemas: &mut Map<String, Value>, names: &mut Names) {
    let Some(content) = body.get("content").and_then(Value::as_object) else { return };
    for (media, item) in content {
        let reference = item.pointer("/schema/$ref").and_then(Value::as_str);
        let Some(name) = reference.and_then(|r| r.strip_prefix("#/components/schemas/")) else { continue };
        if crate::read::document::essence(media) != "multipart/form-data" {
            continue;
        }
        let Some(mut schema) = schemas.remove(name) else { continue };
        let body_name = rust_name(name, true);
        for (part, inner) in schema.get_mut("properties").and_then(Value::as_object_mut).into_iter().flatten() {
            hoist(inner, schemas, names, &format!("{body_name}{}", rust_name(part, true)));
        }
        schemas.insert(name.to_owned(), schema);
    }
}

/// Hoists the schema of each media type of a request body or response, as `name` (`shared`: as
/// in [`hoist_shared`]).
fn hoist_content(
    item: &mut Value,
    schemas: &mut Map<String, Value>,
    names: &mut Names,
    name: &str,
    mut shared: Option<(&str, &mut BTreeMap<String, String>)>,
) {
    for content in item.get_mut("content").and_then(Value::as_object_mut).into_iter().flat_map(|c| c.values_mut()) {
        if let Some(schema) = content.get_mut("schema") {
            let shared = shared.as_mut().map(|(kind, shapes)| (*kind, &mut **shapes));
            hoist_shared(schema, schemas, names, name, shared);
        }
    }
}

/// Whether a schema becomes a Rust type of its own (a struct or an enum) rather than a primitive,
/// a `Vec` or `serde_json::Value`.
fn needs_name(schema: &Value) -> bool {
    let Some(schema) = schema.as_object() else { return false };
    if schema.contains_key("$ref") {
        return false;
    }
    let composed = ["properties", "additionalProperties", "allOf", "oneOf", "anyOf", "not"]
        .iter()
        .any(|k| schema.contains_key(*k));
    let enumerated = schema.get("enum").is_some_and(|e| e != &json!([null]));
    composed || enumerated || schema.get("type") == Some(&json!("object"))
}

/// A string with a length or a pattern: typify makes it a type of its own (a newtype that checks
/// them), named as a composed schema is.
fn constrained_string(schema: &Value) -> bool {
    schema.get("type") == Some(&json!("string"))
        && ["minLength", "maxLength", "pattern"].iter().any(|k| schema.get(*k).is_some())
}

/// Replaces an inline schema that needs a name by a `$ref` to it under `components/schemas`; for
/// an array, does the same to its items (`{name}Item`).
fn hoist(schema: &mut Value, schemas: &mut Map<String, Value>, names: &mut Names, name: &str) {
    hoist_shared(schema, schemas, names, name, None);
}

/// [`hoist`], where a schema written exactly like one moved before in the same place (`shared`'s
/// place and the schema's JSON text, a key of its map) becomes a `$ref` to that one instead of a
/// type of its own.
fn hoist_shared(
    schema: &mut Value,
    schemas: &mut Map<String, Value>,
    names: &mut Names,
    name: &str,
    shapes: Option<(&str, &mut BTreeMap<String, String>)>,
) {
    if needs_name(schema) {
        let shared = shapes.map(|(place, shapes)| (format!("{place} {schema}"), shapes));
        let known = shared.as_ref().and_then(|(shape, shapes)| shapes.get(shape).cloned());
        let name = known.clone().unwrap_or_else(|| names.claim(name));
        let moved = std::mem::replace(schema, json!({ "$ref": format!("#/components/schemas/{name}") }));
        if known.is_none() {
            if let Some((shape, shapes)) = shared {
                shapes.insert(shape, name.clone());
            }
            schemas.insert(name, moved);
        }
    } else if schema.get("type") == Some(&json!("array"))
        && let Some(items) = schema.get_mut("items")
    {
        hoist_shared(items, schemas, names, &format!("{name}Item"), shapes);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{normalise, variant_names};
    use crate::read::Serving;

    #[test]
    fn a_parameter_written_alike_in_several_operations_is_one_type() {
        let select = |values: &[&str]| json!({ "name": "$select", "in": "query", "schema": { "type": "array", "items": { "type": "string", "enum": values } } });
        let due = json!({ "name": "due", "in": "query", "schema": { "type": "string", "enum": ["a", "b"] } });
        let created = json!({ "name": "created", "in": "query", "schema": { "type": "string", "enum": ["a", "b"] } });
        let operation = |id: &str, parameters: serde_json::Value| json!({ "get": { "operationId": id, "parameters": parameters, "responses": { "204": { "description": "none" } } } });
        let mut doc = json!({
            "openapi": "3.0.3",
            "info": { "title": "t", "version": "1" },
            "paths": {
                "/users": operation("listUsers", json!([select(&["id", "name"]), created])),
                "/members": operation("listMembers", json!([select(&["id", "name"]), due])),
                "/groups": operation("listGroups", json!([select(&["id", "title"])])),
            },
        });
        normalise(&mut doc, &mut Vec::new(), Serving::WhatItCan).expect("normalised");
        let reference = |path: &str, i: usize| doc["paths"][path]["get"]["parameters"][i]["schema"].clone();
        let item = |path: &str| reference(path, 0)["items"]["$ref"].as_str().unwrap().to_owned();
        // Named for the first operation that has it.
        assert_eq!(item("/members"), "#/components/schemas/ListMembersSelectItem");
        assert_eq!(item("/users"), item("/members"));
        assert_eq!(item("/groups"), "#/components/schemas/ListGroupsSelectItem");
        // Alike but of parameters named apart: each its own, so `due` is never a `Created`.
        assert_eq!(reference("/users", 1)["$ref"], "#/components/schemas/ListUsersCreated");
        assert_eq!(reference("/members", 1)["$ref"], "#/components/schemas/ListMembersDue");
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        assert_eq!(schemas.len(), 4, "{:?}", schemas.keys().collect::<Vec<_>>());
    }

    #[test]
    fn a_body_or_an_answer_written_alike_in_several_operations_is_one_type() {
        let owners =
            json!({ "type": "object", "properties": { "owners": { "type": "array", "items": { "type": "string" } } } });
        let content = |schema: &serde_json::Value| json!({ "content": { "application/json": { "schema": schema } } });
        let mut answer = content(&owners);
        answer["description"] = json!("the owners");
        let mut doc = json!({
            "openapi": "3.0.3",
            "info": { "title": "t", "version": "1" },
            "paths": { "/owners": {
                "put": { "operationId": "addOwners", "requestBody": content(&owners), "responses": { "200": answer } },
                "delete": { "operationId": "removeOwners", "requestBody": content(&owners), "responses": { "200": answer } },
            } },
        });
        normalise(&mut doc, &mut Vec::new(), Serving::WhatItCan).expect("normalised");
        let at = |method: &str, place: &str| {
            let pointer = format!("/paths/~1owners/{method}/{place}/content/application~1json/schema/$ref");
            doc.pointer(&pointer).and_then(serde_json::Value::as_str).unwrap().to_owned()
        };
        // Named for the first operation in the order the generators walk them (`put` first).
        assert_eq!(at("put", "requestBody"), "#/components/schemas/AddOwnersBody");
        assert_eq!(at("delete", "requestBody"), at("put", "requestBody"));
        // A response alike is the response's type, never a body's.
        assert_eq!(at("put", "responses/200"), "#/components/schemas/AddOwnersResponse");
        assert_eq!(at("delete", "responses/200"), at("put", "responses/200"));
        assert_eq!(doc["components"]["schemas"].as_object().unwrap().len(), 2);
    }

    #[test]
    fn enum_values_are_named_as_typify_names_them_and_refused_where_it_would_panic() {
        let names = |values: &[&str]| variant_names(&values.iter().map(|v| v.to_string()).collect::<Vec<_>>());
        // Stripe's "unset" is typify's `X` (the models call it `Empty`).
        assert_eq!(names(&["", "none", "off_session"]).unwrap(), ["X", "None", "OffSession"]);
        assert_eq!(names(&["+1", "-1", "1st", "Self"]).unwrap(), ["plus1", "minus1", "X1st", "Self_"]);
        // Colliding once (`AB` twice), told apart by the second spelling: `a.b` is `AXb`.
        assert_eq!(names(&["a.b", "aB"]).unwrap(), ["AXb", "AB"]);
        // Colliding both times: typify would panic.
        assert_eq!(names(&["a-b", "a_b"]), None);
        assert_eq!(names(&["", "x"]), None);
    }
}
