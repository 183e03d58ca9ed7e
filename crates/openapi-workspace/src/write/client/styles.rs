//! The client's side of parameter styles: progenitor's client writes only the default styles of
//! scalars and arrays, and no cookie, so each parameter it cannot write is given to it as a
//! query parameter of the same schema, a *carrier*, and the client's request hook (the runtime's
//! `client::styles`) moves each carrier into its place and style before the request leaves.

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::{Value, json};

use crate::error::{Result, bail};
use crate::read::Spec;
use crate::read::document::{METHODS, pointer, resolve};
use crate::read::wire::{self, Place, Shape, Wire};

/// Gives progenitor, in the client's view of the document, a query parameter (a carrier) for
/// every parameter it cannot write (see the module's documentation), and moves an operation with
/// a carried path parameter to a path whose template has a placeholder in its place.
///
/// progenitor cannot take a parameter whose model has a builder (an object: it panics, as it
/// takes only a body so); such a parameter refers instead to a copy of its schema that progenitor is told to
/// replace with the model itself. Answers those replacements: the copy's type name, the model's
/// path.
pub(crate) fn for_client(doc: &mut Value) -> Result<Vec<(String, String)>> {
    let components = doc.get("components").cloned().unwrap_or_else(|| json!({}));
    let mut replacements = Vec::new();
    let mut copies = serde_json::Map::new();
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return Ok(replacements) };
    let mut moves = Vec::new();
    for (path, item) in paths.iter_mut() {
        for method in METHODS {
            let Some(operation) = item.get_mut(method) else { continue };
            let at = ["paths", path.as_str(), method];
            scalars_in_deep_object(operation, &components);
            let moved = carry(operation, path, &components, &at, &mut copies, &mut replacements)?;
            optional_objects(operation, &components, &mut copies, &mut replacements);
            if moved != *path {
                moves.push((path.clone(), method, moved));
            }
        }
    }
    for (from, method, to) in moves {
        if paths.contains_key(&to) && paths[&to].get(method).is_some() {
            bail!(pointer(&["paths", &from, method]), "the client's placeholder path {to} is taken");
        }
        let operation = paths[&from].as_object_mut().and_then(|item| item.remove(method)).expect("found above");
        paths.entry(to).or_insert_with(|| json!({}))[method] = operation;
        if paths[&from].as_object().is_some_and(|item| !METHODS.iter().any(|m| item.contains_key(*m))) {
            paths.remove(&from);
        }
    }
    for (name, schema) in copies {
        doc["components"]["schemas"][name] = schema;
    }
    Ok(replacements)
}

/// Gives progenitor, which writes no deepObject, each scalar the document puts in one as the
/// `form` parameter it is on the wire (`read::wire` reads it so).
fn scalars_in_deep_object(operation: &mut Value, components: &Value) {
    for parameter in operation.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten() {
        let resolved = resolve(parameter, components, "parameters").unwrap_or(parameter);
        let deep = resolved.get("style").and_then(Value::as_str) == Some("deepObject");
        if deep && wire::of(resolved, components).is_ok_and(|wire| wire.style == wire::Style::Form) {
            let mut form = resolved.clone();
            form["style"] = json!("form");
            form["explode"] = json!(true);
            *parameter = form;
        }
    }
}

/// Points each query parameter of `operation` (carriers included) whose model is an object at a
/// copy of its schema, `{name}.optional`, which progenitor replaces with the model (it cannot
/// take an optional parameter of a type with a builder).
fn optional_objects(
    operation: &mut Value,
    components: &Value,
    copies: &mut serde_json::Map<String, Value>,
    replacements: &mut Vec<(String, String)>,
) {
    for parameter in operation.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten() {
        let resolved = resolve(parameter, components, "parameters").cloned().unwrap_or_else(|| parameter.clone());
        let Ok(wire) = wire::of(&resolved, components) else { continue };
        let reference = resolved.pointer("/schema/$ref").and_then(Value::as_str);
        let Some(name) = reference.and_then(|r| r.strip_prefix(MODELS)) else { continue };
        let (schema, model) = (components["schemas"][name].clone(), model_type(name));
        // An object holding objects, in `form` style, is one opaque value to the wire's reading,
        // but a model with a builder to progenitor all the same.
        let object = schema.get("properties").is_some() || schema.get("type") == Some(&json!("object"));
        if wire.place != Place::Query
            || !(matches!(wire.shape, Shape::Object(_)) || wire.shape == Shape::Opaque && object)
        {
            continue;
        }
        let copy = replaced_copy(format!("{name}.optional"), schema, model, copies, replacements);
        let mut parameter_now = resolved;
        parameter_now["schema"] = copy;
        *parameter = parameter_now;
    }
}

const MODELS: &str = "#/components/schemas/";

/// A reference to `copy`, a schema (`schema`) that progenitor is told to replace with the Rust
/// type `replaced` (recorded in `copies` and `replacements` once).
fn replaced_copy(
    copy: String,
    schema: Value,
    replaced: String,
    copies: &mut serde_json::Map<String, Value>,
    replacements: &mut Vec<(String, String)>,
) -> Value {
    let reference = json!({ "$ref": format!("{MODELS}{copy}") });
    if !copies.contains_key(&copy) {
        // typify keys a replacement by the name it would give the type.
        replacements.push((heck::ToUpperCamelCase::to_upper_camel_case(copy.as_str()), replaced));
        copies.insert(copy, schema);
    }
    reference
}

/// The client's type of the model named `model`.
fn model_type(model: &str) -> String {
    format!("types::{}", heck::ToUpperCamelCase::to_upper_camel_case(model))
}

/// The model `schema` names, and how many arrays deep (`{"$ref": model}`: 0; an array of it: 1).
fn named_within(schema: &Value) -> Option<(&str, usize)> {
    match schema.get("$ref") {
        Some(reference) => Some((reference.as_str()?.strip_prefix(MODELS)?, 0)),
        None if schema.get("type") == Some(&json!("array")) => {
            named_within(schema.get("items")?).map(|(model, lists)| (model, lists + 1))
        }
        None => None,
    }
}

/// The placeholder a carried path parameter has in the client's path template.
pub(crate) fn placeholder(index: usize) -> String {
    format!("~style{index}~")
}

/// A parameter progenitor cannot write, given to it as a query parameter, its carrier.
struct Carried {
    /// Its place among the operation's parameters.
    index: usize,
    wire: Wire,
    /// The carrier's name: the parameter's own, unless a query parameter has that name (then
    /// `{name}-{place}`).
    key: String,
    /// Whether progenitor writes it under `key` as the runtime's `styles::Keyed` (a nested
    /// value, or an object whose properties' names another parameter writes too), rather than
    /// as its properties.
    keyed: bool,
}

/// The parameters of `operation` progenitor cannot write, in their order; and every name
/// progenitor will write in the query, with the place of the parameter it writes it for.
fn carried(operation: &Value, components: &Value) -> (Vec<Carried>, Vec<(String, usize)>) {
    let parameters = operation.get("parameters").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let resolved: Vec<&Value> = parameters.iter().map(|p| resolve(p, components, "parameters").unwrap_or(p)).collect();
    let wires: Vec<Wire> = resolved.iter().map(|p| wire::of(p, components).expect("checked by normalise")).collect();
    let writes = |w: &Wire| w.place == Place::Query && w.client_writes();
    let mut taken: Vec<String> = wires.iter().filter(|w| writes(w)).map(|w| w.name.clone()).collect();
    let mut written: Vec<(String, usize)> = (wires.iter().enumerate())
        .filter(|(_, w)| writes(w))
        .flat_map(|(index, w)| wire::query_keys(w, &w.name).into_iter().map(move |k| (k, index)))
        .collect();
    let mut out = Vec::new();
    for (index, wire) in wires.into_iter().enumerate().filter(|(_, w)| !w.client_writes()) {
        let mut key = wire.name.clone();
        if wire.place != Place::Query && taken.contains(&key) {
            key = format!("{}-{}", wire.name, format!("{:?}", wire.place).to_lowercase());
        }
        taken.push(key.clone());
        let keys = wire::query_keys(&wire, &key);
        let named_model =
            resolved[index].pointer("/schema/$ref").and_then(Value::as_str).is_some_and(|r| r.starts_with(MODELS));
        let keyed = wire.shape == Shape::Nested
            || matches!(wire.shape, Shape::Object(_) | Shape::ScalarOrObject(..))
                && named_model
                && keys.iter().any(|k| written.iter().any(|(other, _)| other == k));
        written.extend(if keyed { vec![key.clone()] } else { keys }.into_iter().map(|k| (k, index)));
        out.push(Carried { index, wire, key, keyed });
    }
    (out, written)
}

/// Turns `operation`'s parameters that progenitor cannot write into carriers; answers the path
/// its template becomes. A keyed carrier refers to a copy of its model's schema, `{name}.keyed`,
/// which progenitor is told to replace with `styles::Keyed<{model}>` (in `copies` and
/// `replacements`).
fn carry(
    operation: &mut Value,
    path: &str,
    components: &Value,
    at: &[&str],
    copies: &mut serde_json::Map<String, Value>,
    replacements: &mut Vec<(String, String)>,
) -> Result<String> {
    let mut path = path.to_string();
    let (carried, mut keys) = carried(operation, components);
    let Some(parameters) = operation.get_mut("parameters").and_then(Value::as_array_mut) else { return Ok(path) };
    for Carried { index: i, wire, key, keyed } in carried {
        let resolved = resolve(&parameters[i], components, "parameters").cloned().expect("checked by normalise");
        if wire.place == Place::Path {
            path = path.replace(&format!("{{{}}}", wire.name), &placeholder(i));
        }
        let mut schema = resolved.get("schema").cloned().unwrap_or_else(|| json!({}));
        if keyed {
            // The read stage names every object a parameter holds: a nested value is a model,
            // or an array of them.
            let Some((model, lists)) = named_within(&schema) else {
                bail!(
                    format!("{}/parameters/{i}", pointer(at)),
                    "the client writes a nested deepObject value only of a named model or arrays of one"
                );
            };
            let copied = if lists == 0 { components["schemas"][model].clone() } else { schema.clone() };
            let mut ty = model_type(model);
            for _ in 0..lists {
                ty = format!("Vec<{ty}>");
            }
            let keyed = format!("openapi_workspace_runtime::client::styles::Keyed<{ty}>");
            let copy = format!("{model}.keyed{}", "-list".repeat(lists));
            schema = replaced_copy(copy, copied, keyed, copies, replacements);
        }
        let mut carrier = json!({
            "name": key,
            "in": "query",
            "required": resolved.get("required").and_then(Value::as_bool).unwrap_or(false),
            "schema": schema,
        });
        if let Some(description) = resolved.get("description") {
            carrier["description"] = description.clone();
        }
        parameters[i] = carrier;
    }
    keys.sort();
    if let Some(pair) = keys.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        bail!(
            format!("{}/parameters/{}", pointer(at), pair[1].1),
            "the client would write query parameter {:?} for two parameters (an object in `form` style writes \
             each property under its own name)",
            pair[0].0
        );
    }
    Ok(path)
}

/// The client's part: the runtime's `client::styles`, and `carriers`, the
/// carried parameters of each operation, by the name progenitor's hook gives it; `None` when
/// progenitor writes every parameter itself.
pub(crate) fn client(spec: &Spec) -> Result<Option<TokenStream>> {
    let components = spec.raw.get("components").unwrap_or(&Value::Null);
    let module = quote!(openapi_workspace_runtime::wire);
    let mut arms = Vec::new();
    for (_, item) in spec.raw.get("paths").and_then(Value::as_object).into_iter().flatten() {
        for method in METHODS {
            let Some(operation) = item.get(method) else { continue };
            let (carried, _) = carried(operation, components);
            if carried.is_empty() {
                continue;
            }
            // A negotiated operation's twin (`events`) carries the same parameters.
            let ids = super::events::hook_names(operation, components);
            let carriers = carried.iter().map(|Carried { index, wire, key, keyed }| {
                let placeholder = match wire.place {
                    Place::Path => {
                        let placeholder = placeholder(*index);
                        quote!(Some(#placeholder))
                    }
                    _ => quote!(None),
                };
                let mut wire = wire.clone();
                if wire.place == Place::Header {
                    wire.name = wire.name.to_ascii_lowercase();
                }
                let wire = crate::write::wire::tokens(&wire, &module);
                quote!(styles::Carrier { key: #key, placeholder: #placeholder, wire: #wire, keyed: #keyed })
            });
            arms.push(quote!(#(#ids)|* => &[#(#carriers),*],));
        }
    }
    if arms.is_empty() {
        return Ok(None);
    }
    Ok(Some(quote! {
        pub use openapi_workspace_runtime::client::styles;

        /// The parameters of `operation_id` that progenitor writes as query parameters and
        /// [`styles::restyle`] moves into their place and style.
        fn carriers(operation_id: &str) -> &'static [styles::Carrier] {
            match operation_id {
                #(#arms)*
                _ => &[],
            }
        }
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{carried, carry};

    fn components() -> Value {
        json!({"schemas": {
            "Range": {"type": "object", "properties": {"gt": {"type": "integer"}, "lt": {"type": "integer"}}},
        }})
    }

    fn parameter(name: &str, style: &str, explode: bool) -> Value {
        json!({"name": name, "in": "query", "style": style, "explode": explode,
               "schema": {"$ref": "#/components/schemas/Range"}})
    }

    #[test]
    fn an_object_whose_properties_another_writes_too_is_keyed_unless_the_wire_merges_them() {
        let components = components();
        // Two deepObject ranges: the second goes under its own key, and is moved from there.
        let mut operation = json!({"parameters": [
            parameter("created", "deepObject", true), parameter("due", "deepObject", true),
        ]});
        let keyed: Vec<(String, bool)> =
            carried(&operation, &components).0.into_iter().map(|c| (c.key, c.keyed)).collect();
        assert_eq!(keyed, [("created".to_owned(), false), ("due".to_owned(), true)]);
        let (mut copies, mut replacements) = (serde_json::Map::new(), Vec::new());
        carry(&mut operation, "/x", &components, &["paths", "/x", "get"], &mut copies, &mut replacements).unwrap();
        assert_eq!(operation["parameters"][1]["schema"], json!({"$ref": "#/components/schemas/Range.keyed"}));
        assert_eq!(copies["Range.keyed"], components["schemas"]["Range"]);
        let keyed = "openapi_workspace_runtime::client::styles::Keyed<types::Range>";
        assert_eq!(replacements, [("RangeKeyed".to_owned(), keyed.to_owned())]);

        // An exploded `form` object, which progenitor writes itself, is `gt=1` on the wire, as a
        // query parameter `gt` is: refused.
        let mut operation = json!({"parameters": [
            {"name": "gt", "in": "query", "schema": {"type": "integer"}}, parameter("range", "form", true),
        ]});
        assert!(carried(&operation, &components).0.is_empty());
        let error = carry(&mut operation, "/x", &components, &["paths", "/x", "get"], &mut copies, &mut replacements)
            .unwrap_err()
            .to_string();
        assert!(error.contains("the client would write query parameter \"gt\" for two parameters"), "{error}");
    }
}
