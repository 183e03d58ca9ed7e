//! Resources the paths do not pair but the document's OpenAPI `links` do: a create whose answer
//! links to the operation that reads what it made (`POST /users` answering a link to `GET
//! /user/{userId}` with `userId: $response.body#/id`). The read's path is then the item path, the
//! create's the collection, and the link's body pointer names the item's id property.

use serde_json::Value;

use crate::model::operation::Op;
use crate::read::document::resolve;

/// Each item path a create's link names, with its collection (the create's path) and the id
/// property (`id`, of `$response.body#/id`).
pub(super) fn linked<'a>(ops: &'a [Op], raw: &Value) -> Vec<(&'a str, String, String)> {
    let components = raw.get("components").unwrap_or(&Value::Null);
    let mut found = Vec::new();
    for op in ops.iter().filter(|op| op.method == "post") {
        let operation = raw.pointer(&op.raw).unwrap_or(&Value::Null);
        let Some(status) = op.mock.as_ref().map(|mock| mock.status) else { continue };
        let Some(response) = crate::model::mock::response(operation, components, status) else { continue };
        for link in response.get("links").and_then(Value::as_object).into_iter().flatten().map(|(_, link)| link) {
            let Some(link) = resolve(link, components, "links") else { continue };
            let Some(target) = link.get("operationId").and_then(Value::as_str) else { continue };
            let Some(read) = ops.iter().find(|other| other.operation_id == target && other.method == "get") else {
                continue;
            };
            let Some(param) =
                read.path.rsplit_once('/').and_then(|(_, last)| last.strip_prefix('{')?.strip_suffix('}'))
            else {
                continue;
            };
            let parameters = link.get("parameters").and_then(Value::as_object);
            let given = parameters.and_then(|p| p.get(param).or_else(|| p.get(&format!("path.{param}"))));
            let Some(property) = given.and_then(Value::as_str).and_then(|e| e.strip_prefix("$response.body#/")) else {
                continue;
            };
            if !property.contains('/') && !found.iter().any(|(item, _, _)| *item == read.path) {
                found.push((read.path.as_str(), op.path.clone(), property.to_owned()));
            }
        }
    }
    found
}
