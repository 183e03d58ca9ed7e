//! Each operation's parameters, as the generators take them: the path item's copied into the
//! operation, checked, an `apiKey` scheme's credential read as the scheme, and those that would
//! be one Rust name kept apart — a path parameter renamed, another dropped or its operation left
//! out (the stage after `normalise`'s renaming of operations).

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::error::{Result, bail};
use crate::read::document::{pointer, resolve, rust_name};

/// A parameter's `(in, name)`, following a `$ref` to `components/parameters`.
pub(super) fn parameter_key(parameter: &Value, components: &Value) -> Option<(String, String)> {
    let resolved = resolve(parameter, components, "parameters")?;
    Some((resolved.get("in")?.as_str()?.to_string(), resolved.get("name")?.as_str()?.to_string()))
}

/// Copies the path item's parameters into the operation (an operation's own parameter of the same
/// name and place wins), so each operation owns its parameters and their inline types.
pub(super) fn own_parameters(
    operation: &mut Value,
    shared: Option<&Value>,
    components: &Value,
    at: &[&str],
) -> Result<()> {
    let own = operation.get("parameters").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut merged = Vec::new();
    for parameter in shared.and_then(Value::as_array).into_iter().flatten() {
        let key = parameter_key(parameter, components);
        if key.is_none() || !own.iter().any(|p| parameter_key(p, components) == key) {
            merged.push(parameter.clone());
        }
    }
    merged.extend(own);
    for (i, parameter) in merged.iter().enumerate() {
        if parameter_key(parameter, components).is_none() {
            bail!(
                format!("{}/parameters/{i}", pointer(at)),
                "a parameter needs `in` and `name` (or a $ref to one in components/parameters)"
            );
        }
    }
    if !merged.is_empty() {
        operation["parameters"] = Value::Array(merged);
    }
    Ok(())
}

/// Parameters the generators can serve: path, query, header and cookie, in the styles
/// `wire::Wire` reads, each with a schema; every `{name}` of the path template a required path
/// parameter, and no other.
pub(super) fn check_parameters(path: &str, operation: &Value, components: &Value, at: &[&str]) -> Result<()> {
    let mut in_path = BTreeSet::new();
    for (i, parameter) in operation.get("parameters").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let here = format!("{}/parameters/{i}", pointer(at));
        let resolved = resolve(parameter, components, "parameters").expect("checked in own_parameters");
        let (place, name) = parameter_key(parameter, components).expect("checked in own_parameters");
        crate::read::wire::of(resolved, components).map_err(|why| crate::error::Error::at(&here, format!("{why}")))?;
        if resolved.get("schema").is_none() {
            bail!(here, "parameter {name} needs a `schema` (`content` is not supported)");
        }
        if place == "path" {
            if resolved.get("required") != Some(&Value::Bool(true)) {
                bail!(here, "path parameter {name} must be `required: true`");
            }
            in_path.insert(name);
        }
    }
    let template: BTreeSet<String> = crate::read::document::template_names(path).map(str::to_owned).collect();
    if template != in_path {
        bail!(pointer(at), "the path's template names {template:?} but its path parameters are {in_path:?}");
    }
    Ok(())
}

/// A parameter that is an `apiKey` security scheme's credential (in the same place, of the same
/// name: Trello lists `key` and `token` as query parameters of every operation, and declares them
/// as schemes no operation asks for) is the scheme's: the parameter is dropped and, when the
/// operation asks for no security, it asks for those schemes (together); the client then sends
/// them from its credentials and the server checks them. When the operation asks for security
/// that does not name the scheme, the parameter stays what the document says.
pub(super) fn credential_parameters(
    operation: &mut Value,
    global: Option<&Value>,
    components: &Value,
    at: &[&str],
    notes: &mut Vec<crate::read::Note>,
) {
    let Some(schemes) = components.get("securitySchemes").and_then(Value::as_object) else { return };
    let credential = |place: &str, name: &str| {
        schemes.iter().find_map(|(scheme, definition)| {
            let definition = resolve(definition, components, "securitySchemes")?;
            let same_place = definition.get("in").and_then(Value::as_str) == Some(place);
            let named = definition.get("name").and_then(Value::as_str).is_some_and(|n| match place {
                "header" => n.eq_ignore_ascii_case(name),
                _ => n == name,
            });
            (definition.get("type").and_then(Value::as_str) == Some("apiKey") && same_place && named)
                .then(|| scheme.clone())
        })
    };
    let asked = operation.get("security").or(global).and_then(Value::as_array).cloned();
    let names_scheme = |scheme: &str| asked.iter().flatten().any(|alternative| alternative.get(scheme).is_some());
    let Some(parameters) = operation.get_mut("parameters").and_then(Value::as_array_mut) else { return };
    let mut taken = Vec::new();
    let mut index = 0;
    parameters.retain(|parameter| {
        index += 1;
        let Some((place, name)) = parameter_key(parameter, components) else { return true };
        let Some(scheme) = credential(&place, &name) else { return true };
        if asked.as_ref().is_some_and(|a| !a.is_empty()) && !names_scheme(&scheme) {
            return true;
        }
        notes.push(crate::read::Note {
            pointer: format!("{}/parameters/{}", pointer(at), index - 1).trim_start_matches('#').to_owned(),
            message: format!(
                "{place} parameter {name} is the credential of security scheme {scheme}: read as the operation asking for {scheme}"
            ),
        });
        taken.push(scheme);
        false
    });
    if !taken.is_empty() && asked.is_none_or(|a| a.is_empty()) {
        let alternative: Map<String, Value> = taken.into_iter().map(|scheme| (scheme, json!([]))).collect();
        operation["security"] = json!([alternative]);
    }
}

/// A path parameter that has the Rust name of another parameter of an operation under its path
/// (combell.com's `{accountId}` beside the query's `account_id`, both required): the template and
/// the path parameters name it `{name}_path` instead, with a note. A path parameter's name is not
/// on the wire (the template places its value), so nothing a client sends or a server reads
/// changes, and both parameters are served. Run once every operation owns its parameters and
/// those that are credentials are gone (`own_parameters`, `credential_parameters`).
pub(super) fn path_parameters_apart(
    paths: &mut Map<String, Value>,
    components: &Value,
    notes: &mut Vec<crate::read::Note>,
) {
    // The paths as they will be: a rename that would give a path another already has is not made.
    let mut taken: BTreeSet<String> = paths.keys().cloned().collect();
    let mut renamed = Vec::new();
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else { continue };
        // Every parameter of the path item's operations (each owns its own by now): (in, name).
        let lists = crate::read::document::METHODS.iter().map(|m| item.get(*m).and_then(|o| o.get("parameters")));
        let keys: BTreeSet<(String, String)> = lists
            .flatten()
            .filter_map(Value::as_array)
            .flatten()
            .filter_map(|parameter| parameter_key(parameter, components))
            .collect();
        let rust_names: BTreeSet<String> = keys.iter().map(|(_, name)| rust_name(name, false)).collect();
        // Each template name to rename: (name, its new name, the note).
        let mut renames = Vec::new();
        for name in crate::read::document::template_names(path) {
            let rust = rust_name(name, false);
            let Some((place, other)) = keys
                .iter()
                .find(|(place, other)| rust_name(other, false) == rust && !(place == "path" && other == name))
            else {
                continue;
            };
            let fresh = (0..)
                .map(|n| if n == 0 { format!("{name}_path") } else { format!("{name}_path{n}") })
                .find(|fresh| !rust_names.contains(&rust_name(fresh, false)))
                .expect("a free name");
            let message = format!(
                "path parameter {name} is `{rust}` in Rust, as {place} parameter {other} is: named {fresh} (a path \
                 parameter's name is not sent)"
            );
            renames.push((name.to_owned(), fresh, message));
        }
        let path_now = renames
            .iter()
            .fold(path.clone(), |now, (name, fresh, _)| now.replace(&format!("{{{name}}}"), &format!("{{{fresh}}}")));
        if renames.is_empty() || !taken.insert(path_now.clone()) {
            continue;
        }
        for (name, fresh, message) in renames {
            notes.push(crate::read::Note {
                pointer: format!("/paths/{}", crate::read::document::escape(path)),
                message,
            });
            for method in crate::read::document::METHODS {
                let list = item.get_mut(method).and_then(|o| o.get_mut("parameters"));
                for parameter in list.and_then(Value::as_array_mut).into_iter().flatten() {
                    if parameter_key(parameter, components) != Some(("path".into(), name.clone())) {
                        continue;
                    }
                    let mut own = resolve(parameter, components, "parameters").cloned().unwrap_or_default();
                    own["name"] = Value::String(fresh.clone());
                    *parameter = own;
                }
            }
        }
        renamed.push((path.clone(), path_now));
    }
    for (old, new) in renamed {
        let item = paths.remove(&old).expect("a path of the loop above");
        paths.insert(new, item);
    }
}

/// Parameters of one operation that are one Rust name (`key.id` beside `key_id` in the query):
/// the client's builder and the server's struct would have two fields of that name. The first
/// required one (else the first) keeps it; another that is optional is dropped, with a note (a
/// client cannot send it); one that is required leaves the operation unserved. A path parameter
/// is not among them: it is renamed apart after (`path_parameters_apart`).
pub(super) fn colliding_parameters(
    operation: &mut Value,
    components: &Value,
    at: &[&str],
    notes: &mut Vec<crate::read::Note>,
) -> Result<()> {
    let Some(parameters) = operation.get_mut("parameters").and_then(Value::as_array_mut) else { return Ok(()) };
    let resolved: Vec<&Value> =
        parameters.iter().map(|p| resolve(p, components, "parameters").expect("checked in own_parameters")).collect();
    let wires: Vec<crate::read::wire::Wire> =
        resolved.iter().map(|p| crate::read::wire::of(p, components).expect("checked in check_parameters")).collect();
    // The client carries a parameter progenitor cannot write (a cookie...) as a query parameter,
    // named `{name}-{place}` beside a query parameter of its name (`write/client/styles.rs`).
    let written = |name: &str| {
        wires.iter().any(|w| w.place == crate::read::wire::Place::Query && w.client_writes() && w.name == name)
    };
    let facts: Vec<(String, String, String, bool)> = (parameters.iter().zip(&resolved).zip(&wires))
        .map(|((parameter, resolved), wire)| {
            let (place, name) = parameter_key(parameter, components).expect("checked in own_parameters");
            let carried = !wire.client_writes() && wire.place != crate::read::wire::Place::Query && written(&name);
            let key = if carried { format!("{name}-{place}") } else { name.clone() };
            (rust_name(&key, false), place, name, resolved.get("required") == Some(&Value::Bool(true)))
        })
        .collect();
    let mut dropped = BTreeSet::new();
    for (i, (rust, ..)) in facts.iter().enumerate() {
        if facts[i].1 == "path" {
            continue;
        }
        let same: Vec<usize> = (0..facts.len()).filter(|j| facts[*j].0 == *rust && facts[*j].1 != "path").collect();
        if same.len() < 2 || same[0] != i {
            continue;
        }
        let keeper = same.iter().copied().find(|j| facts[*j].3).unwrap_or(same[0]);
        let (_, place, name, _) = &facts[keeper];
        for other in same.into_iter().filter(|j| *j != keeper) {
            let (_, other_place, other_name, required) = &facts[other];
            let here = format!("{}/parameters/{other}", pointer(at));
            if *required {
                bail!(
                    here,
                    "{other_place} parameter {other_name} and {place} parameter {name} are both `{rust}` in Rust, and both required"
                );
            }
            notes.push(crate::read::Note {
                pointer: here.trim_start_matches('#').to_owned(),
                message: format!(
                    "{other_place} parameter {other_name} is `{rust}` in Rust, as {place} parameter {name} is: left out (it is optional)"
                ),
            });
            dropped.insert(other);
        }
    }
    let mut index = 0;
    parameters.retain(|_| {
        index += 1;
        !dropped.contains(&(index - 1))
    });
    Ok(())
}
