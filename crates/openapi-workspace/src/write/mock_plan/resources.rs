//! The resources a stateful mock keeps, inferred from the document's paths: a collection path and
//! its item path (`/pets` and `/pets/{petId}`; nested, `/owners/{ownerId}/pets` and
//! `/owners/{ownerId}/pets/{petId}`, scoped by the owner; or what a create's `links` pair,
//! `links.rs`), and each operation's part in them:
//! `POST` to the collection creates, `GET` lists; on the item `GET` reads, `PUT` replaces,
//! `PATCH` merges, `DELETE` removes; a `POST` to one of the item's own paths
//! (`/orders/{id}/cancel`) is an action, which sets the item's status-like property to the
//! value of its enum the action names (`cancelled`). The root's `x-mock-resources: false` turns
//! it off; an operation's `x-mock-role: none` (or `create`, `read`, `replace`, `merge`,
//! `delete`, `list`, `action`) overrides its part, an action's `x-mock-set: {status:
//! cancelled}` what it sets, and `x-mock-id: slug` on any of a resource's operations which
//! property holds its id.

use std::collections::BTreeMap;

use openapi_workspace_runtime::mock::{IdKind, KeyPlan, ResourcePlan, Role, StatePlan};
use serde_json::{Map, Value};

use super::paging;
use crate::model::idempotency::Key;
use crate::model::operation::Op;
use crate::read::document::resolve_schema;

/// The extension on an operation that says its part (or `none`).
pub(crate) const ROLE: &str = "x-mock-role";
/// The extension on the document's root that, `false`, keeps the mock stateless.
pub(crate) const RESOURCES: &str = "x-mock-resources";
/// The extension on an action that says which property it sets, to what.
pub(crate) const SET: &str = "x-mock-set";
/// The extension on a resource's operation that names the item's property holding its id.
pub(crate) const ID: &str = "x-mock-id";

/// The resources of `ops` (as served, each at its route) and each operation's part, by index.
pub(crate) fn resources(ops: &[Op], raw: &Value) -> (Vec<ResourcePlan>, BTreeMap<usize, StatePlan>) {
    let mut resources = Vec::new();
    let mut roles = BTreeMap::new();
    if raw.get(RESOURCES) == Some(&Value::Bool(false)) {
        return (resources, roles);
    }
    let components = raw.get("components").unwrap_or(&Value::Null);
    // How each list pages, as the client follows it (an `x-pagination` it refuses pages nothing).
    let pagings = crate::model::pagination::of_document(raw).unwrap_or_default();
    // Where each create's idempotency key is, as the client's retries send it.
    let keys = crate::model::idempotency::keys(raw).unwrap_or_default();
    let operation = |op: &Op| raw.pointer(&op.raw).unwrap_or(&Value::Null);
    // Each item path, whose collection path (it less its last segment, a parameter) is served
    // too — or that with a slash at its end, as FastAPI's `/automations/` beside `/automations/{id}`.
    let mut items: Vec<(&str, String)> = Vec::new();
    for op in ops {
        let Some((collection, last)) = op.path.rsplit_once('/') else { continue };
        let whole_parameter = last.starts_with('{') && last.ends_with('}') && last.matches('{').count() == 1;
        let served = |path: &str| ops.iter().any(|other| other.path == path);
        let slashed = format!("{collection}/");
        let collection = match (collection.is_empty(), served(collection), served(&slashed)) {
            (false, true, _) => collection.to_owned(),
            (false, false, true) => slashed,
            _ => continue,
        };
        if whole_parameter && !items.iter().any(|(item, _)| *item == op.path) {
            items.push((&op.path, collection));
        }
    }
    // And each a create's link names, with the id property it names.
    let linked = super::links::linked(ops, raw);
    for (item, collection, _) in &linked {
        if !items.iter().any(|(known, _)| known == item) {
            items.push((item, collection.clone()));
        }
    }
    for (item, collection) in &items {
        let (item, collection) = (*item, collection.as_str());
        // An item's own path: `/orders/{id}/cancel`, its verb.
        let verb = |op: &Op| {
            let rest = op.path.strip_prefix(item)?.strip_prefix('/')?;
            (!rest.contains('/') && !rest.contains('{')).then(|| rest.to_owned())
        };
        let here: Vec<(usize, &Op, Role)> = ops
            .iter()
            .enumerate()
            .filter(|(_, op)| op.path == collection || op.path == item || verb(op).is_some())
            .filter_map(|(i, op)| {
                let inferred = match (op.path == collection, op.path == item, op.method.as_str()) {
                    (true, _, "post") => Some(Role::Create),
                    (true, _, "get") => Some(Role::List),
                    (_, true, "get") => Some(Role::Read),
                    (_, true, "put") => Some(Role::Replace),
                    (_, true, "patch") => Some(Role::Merge),
                    (_, true, "delete") => Some(Role::Delete),
                    (false, false, "post") => Some(Role::Action),
                    _ => None,
                };
                let role = match operation(op).get(ROLE).and_then(Value::as_str) {
                    Some(said) => role_named(said),
                    None => inferred,
                };
                Some((i, op, role?))
            })
            .collect();
        // Nothing to keep without a way to make an item and one to find it again.
        let has = |wanted: Role| here.iter().any(|(_, _, role)| *role == wanted);
        if !has(Role::Create) || !(has(Role::Read) || has(Role::List)) {
            continue;
        }
        let id_param = item.rsplit_once('{').map_or("id", |(_, rest)| rest.trim_end_matches('}')).to_owned();
        // The item's schema: what reading, or else creating, answers.
        let answered = |wanted: Role| {
            here.iter()
                .find(|(_, _, role)| *role == wanted)
                .and_then(|(_, op, _)| answer_schema(op, operation(op), components))
        };
        let item_schema = answered(Role::Read).or_else(|| answered(Role::Create)).unwrap_or(&Value::Null);
        let properties = resolve_schema(item_schema, components)
            .and_then(|schema| schema.get("properties"))
            .and_then(Value::as_object);
        let property = |name: &str| properties.is_some_and(|p| p.contains_key(name));
        // Said by any of its operations, else the property named like the parameter, or `id`.
        let said = here
            .iter()
            .find_map(|(_, op, _)| operation(op).get(ID).and_then(Value::as_str))
            .or_else(|| linked.iter().find(|(linked, _, _)| *linked == item).map(|(_, _, id)| id.as_str()));
        // `{pool_name}` finds a pool by its `name`, before its `id`.
        let tail = last_word(&id_param);
        let id_property = said
            .into_iter()
            .chain([id_param.as_str(), tail.as_str(), "id", "uuid", "key"].into_iter().filter(|name| property(name)))
            .next()
            .unwrap_or(id_param.as_str())
            .to_owned();
        let param_schema = here
            .iter()
            .find(|(_, op, _)| op.path == item)
            .and_then(|(_, op, _)| op.path_params.iter().find(|p| p.wire.name == id_param))
            .map(|param| &param.schema);
        // Made to the id property's schema where the item has one (nexus' `{certificate}` takes
        // a name or an id, the id a UUID), else to the parameter's.
        let id_schema = properties
            .and_then(|p| p.get(&id_property))
            .map(|schema| resolve_schema(schema, components).unwrap_or(schema))
            .or(param_schema);
        let id_kind = match id_schema.and_then(|schema| schema.get("type")).and_then(Value::as_str) {
            Some("integer") => IdKind::Integer,
            _ if id_schema.and_then(|s| s.get("format")).and_then(Value::as_str) == Some("uuid") => IdKind::Uuid,
            _ => IdKind::Text,
        };
        let (mut created, mut updated) = (Vec::new(), Vec::new());
        for (name, schema) in properties.into_iter().flatten() {
            let schema = resolve_schema(schema, components).unwrap_or(schema);
            if schema.get("format").and_then(Value::as_str) != Some("date-time") {
                continue;
            }
            // `created_at`, `createdAt`, `time_created`, `date_modified`, `updatedOn`…
            let lower = name.to_ascii_lowercase();
            if lower.contains("created") {
                created.push(name.clone());
            } else if lower.contains("updated") || lower.contains("modified") {
                updated.push(name.clone());
            }
        }
        let list_schema = answered(Role::List).and_then(|schema| resolve_schema(schema, components));
        let list_property = match list_schema {
            Some(schema) if schema.get("type").and_then(Value::as_str) == Some("array") => None,
            Some(schema) => schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .find(|(_, property)| {
                    resolve_schema(property, components).and_then(|p| p.get("type")).and_then(Value::as_str)
                        == Some("array")
                })
                .map(|(name, _)| name.clone()),
            None => None,
        };
        // What a body may set: the item's properties, but those never answered (write-only).
        let fields = properties.map(|properties| {
            properties
                .iter()
                .filter(|(_, schema)| {
                    let schema = resolve_schema(schema, components).unwrap_or(schema);
                    schema.get("writeOnly") != Some(&Value::Bool(true))
                })
                .map(|(name, _)| name.clone())
                .collect()
        });
        let paging = here.iter().find(|(_, _, role)| *role == Role::List).and_then(|(_, op, _)| {
            let page = list_property.as_ref().and(list_schema);
            let paged = pagings.iter().find(|(id, _)| *id == op.operation_id).map(|(_, paging)| paging);
            paging::paging(op, paged, page, documented(op, operation(op), components), components)
        });
        let index = resources.len();
        let mut parts = Vec::new();
        for (i, op, role) in here {
            let raw = operation(op);
            let set = match role {
                Role::Action => match raw.get(SET).and_then(Value::as_object).and_then(|set| set.iter().next()) {
                    Some((property, value)) => Some((property.clone(), value.clone())),
                    None => verb(op).and_then(|verb| status_set(&verb, properties, components)),
                },
                _ => None,
            };
            let creates = role == Role::Create;
            let idempotency = match keys.iter().find(|(id, _)| creates && *id == op.operation_id) {
                Some((_, Key::Header(name))) => Some(KeyPlan::Header(name.clone())),
                Some((_, Key::Body(name))) => Some(KeyPlan::Body(name.clone())),
                None => None,
            };
            let location = creates
                && documented(op, raw, components)
                    .is_some_and(|response| crate::read::document::documents_header(response, "location"));
            parts.push((i, StatePlan { resource: index, role, set, idempotency, location }));
        }
        resources.push(ResourcePlan {
            name: collection.trim_end_matches('/').rsplit('/').next().unwrap_or(collection).to_owned(),
            collection: collection.to_owned(),
            scope: crate::read::document::template_names(collection).map(str::to_owned).collect(),
            id_param,
            id_property,
            id_kind,
            list_property,
            created,
            updated,
            fields,
            paging,
            parent: None,
        });
        roles.extend(parts);
    }
    // Each resource's parent: the one whose item path its collection path is under.
    let item_paths: Vec<String> =
        resources.iter().map(|r| format!("{}/{{{}}}", r.collection.trim_end_matches('/'), r.id_param)).collect();
    for resource in &mut resources {
        let under = resource.collection.trim_end_matches('/').rsplit_once('/').map(|(under, _)| under);
        resource.parent = item_paths.iter().position(|item| Some(item.as_str()) == under);
    }
    (resources, roles)
}

/// The last word of a parameter's name, lower-cased: `pool_name` and `poolName` give `name`.
fn last_word(name: &str) -> String {
    let bytes = name.as_bytes();
    let start = (1..bytes.len())
        .rev()
        .find(|&i| {
            matches!(bytes[i - 1], b'_' | b'-' | b'.')
                || (bytes[i].is_ascii_uppercase() && bytes[i - 1].is_ascii_lowercase())
        })
        .unwrap_or(0);
    name[start..].to_ascii_lowercase()
}

/// What an action named `verb` sets: the item's status-like property (`status`, `state`,
/// `…_status`) to the value of its enum that the verb names (`cancel`: `cancelled` or
/// `canceled`; `approve`: `approved`; `archive`: `archived`).
fn status_set(verb: &str, properties: Option<&Map<String, Value>>, components: &Value) -> Option<(String, Value)> {
    let verb = verb.to_ascii_lowercase().replace(['-', '_'], "");
    let stem = verb.trim_end_matches('e');
    properties?.iter().find_map(|(name, schema)| {
        let lower = name.to_ascii_lowercase();
        if !(lower.ends_with("status") || lower.ends_with("state")) {
            return None;
        }
        let values = resolve_schema(schema, components)?.get("enum")?.as_array()?;
        values.iter().find_map(|value| {
            let text = value.as_str()?.to_ascii_lowercase();
            let named = text == verb || (text.starts_with(stem) && text.ends_with('d') && text.len() - stem.len() <= 3);
            named.then(|| (name.clone(), value.clone()))
        })
    })
}

/// `op`'s documented success response (`operation` is `op` in the normalised document).
fn documented<'a>(op: &Op, operation: &'a Value, components: &'a Value) -> Option<&'a Value> {
    crate::model::mock::response(operation, components, op.mock.as_ref()?.status)
}

fn role_named(said: &str) -> Option<Role> {
    match said {
        "create" => Some(Role::Create),
        "read" => Some(Role::Read),
        "replace" => Some(Role::Replace),
        "merge" => Some(Role::Merge),
        "delete" => Some(Role::Delete),
        "list" => Some(Role::List),
        "action" => Some(Role::Action),
        _ => None,
    }
}

/// The schema of the JSON body of `op`'s mock answer (its first success); `operation` is `op` in
/// the normalised document.
pub(crate) fn answer_schema<'a>(op: &Op, operation: &'a Value, components: &'a Value) -> Option<&'a Value> {
    let response = documented(op, operation, components)?;
    let content = response.get("content")?.as_object()?;
    let (_, media) = content.iter().find(|(media, _)| crate::read::document::is_json(media))?;
    media.get("schema")
}
