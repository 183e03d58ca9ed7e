//! Where each operation's idempotency key is: what lets a generated client send a `POST` or
//! `PATCH` again after a failure without making a second change. The document says so in one of
//! two ways:
//!
//! - the operation's `x-idempotency-key` extension, `{in: body, name: <property>}` (a top-level
//!   property of its JSON request body that the caller gives, such as an order's reference) or
//!   `{in: header, name: <header>}`;
//! - else a header parameter named `Idempotency-Key` (any case), which the client fills with a
//!   fresh UUID when the caller gives none.

use serde_json::Value;

use crate::error::{Result, bail};
use crate::read::document::{essence, is_json, pointer, resolve, resolve_schema};

/// The extension that names an operation's key.
pub(crate) const EXTENSION: &str = "x-idempotency-key";

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Key {
    Header(String),
    Body(String),
}

/// Every operation's key, by its `operationId`, in the document's order (operations without one
/// are not listed).
pub(crate) fn keys(raw: &Value) -> Result<Vec<(String, Key)>> {
    let components = raw.get("components").unwrap_or(&Value::Null);
    let mut keys = Vec::new();
    let Some(paths) = raw.get("paths").and_then(Value::as_object) else { return Ok(keys) };
    for (path, item) in paths {
        let Some(item) = item.as_object() else { continue };
        for (method, operation) in item {
            let Some(id) = operation.get("operationId").and_then(Value::as_str) else { continue };
            let at = pointer(&["paths", path, method]);
            let shared = item.get("parameters");
            if let Some(key) = of(operation, shared, components, &at)? {
                keys.push((id.to_owned(), key));
            }
        }
    }
    Ok(keys)
}

/// The key of `operation` (at `at`; `shared` its path's parameters).
fn of(operation: &Value, shared: Option<&Value>, components: &Value, at: &str) -> Result<Option<Key>> {
    if let Some(named) = operation.get(EXTENSION) {
        let at = format!("{at}/{EXTENSION}");
        let place = named.get("in").and_then(Value::as_str);
        let Some(name) = named.get("name").and_then(Value::as_str).filter(|name| !name.is_empty()) else {
            bail!(at, "names no key: it is `{{in: body|header, name: <name>}}`");
        };
        return match place {
            Some("header") => {
                if header_name(name) {
                    Ok(Some(Key::Header(name.to_owned())))
                } else {
                    bail!(at, "`{name}` is not a header name")
                }
            }
            Some("body") => {
                if body_has(operation, name, components) {
                    Ok(Some(Key::Body(name.to_owned())))
                } else {
                    bail!(at, "names `{name}`, which is not a property of the operation's JSON request body")
                }
            }
            _ => bail!(at, "says where the key is with `in: body` or `in: header`"),
        };
    }
    let parameters = operation.get("parameters").into_iter().chain(shared).filter_map(Value::as_array).flatten();
    for parameter in parameters {
        let Some(parameter) = resolve(parameter, components, "parameters") else { continue };
        let name = parameter.get("name").and_then(Value::as_str).unwrap_or_default();
        if parameter.get("in").and_then(Value::as_str) == Some("header") && name.eq_ignore_ascii_case("idempotency-key")
        {
            return Ok(Some(Key::Header(name.to_owned())));
        }
    }
    Ok(None)
}

/// Whether `property` is a top-level property of the JSON request body of `operation` (its
/// schema's or that of one of its `allOf` parts).
fn body_has(operation: &Value, property: &str, components: &Value) -> bool {
    let Some(body) = operation.get("requestBody").and_then(|body| resolve(body, components, "requestBodies")) else {
        return false;
    };
    let Some(content) = body.get("content").and_then(Value::as_object) else { return false };
    content
        .iter()
        .filter(|(media, _)| is_json(&essence(media)))
        .any(|(_, media)| media.get("schema").is_some_and(|schema| declares(schema, property, components, 0)))
}

fn declares(schema: &Value, property: &str, components: &Value, depth: usize) -> bool {
    let Some(schema) = resolve_schema(schema, components).filter(|_| depth < 16) else { return false };
    schema.get("properties").and_then(|properties| properties.get(property)).is_some()
        || schema
            .get("allOf")
            .and_then(Value::as_array)
            .is_some_and(|parts| parts.iter().any(|part| declares(part, property, components, depth + 1)))
}

/// Whether `name` is a header's name (RFC 9110's token).
fn header_name(name: &str) -> bool {
    name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(operation: Value) -> Value {
        serde_json::json!({
            "paths": {"/orders": {"post": operation}},
            "components": {"schemas": {"Order": {"type": "object", "properties": {"order_id": {"type": "string"}}}}}
        })
    }

    #[test]
    fn the_extension_names_a_body_property_or_a_header_and_is_checked() {
        let body =
            serde_json::json!({"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Order"}}}});
        let keyed = |key: Value| {
            keys(&document(serde_json::json!({"operationId": "create", "requestBody": body, EXTENSION: key})))
        };
        assert_eq!(
            keyed(serde_json::json!({"in": "body", "name": "order_id"})).unwrap(),
            [("create".to_owned(), Key::Body("order_id".into()))]
        );
        assert_eq!(
            keyed(serde_json::json!({"in": "header", "name": "X-Request-Key"})).unwrap(),
            [("create".to_owned(), Key::Header("X-Request-Key".into()))]
        );
        let error = keyed(serde_json::json!({"in": "body", "name": "orderid"})).unwrap_err().to_string();
        assert!(error.contains("/paths/~1orders/post/x-idempotency-key") && error.contains("`orderid`"), "{error}");
        assert!(keyed(serde_json::json!({"in": "query", "name": "k"})).is_err());
        assert!(keyed(serde_json::json!({"in": "header", "name": "a b"})).is_err());
    }

    #[test]
    fn an_idempotency_key_header_parameter_is_a_key_without_the_extension() {
        let parameter = serde_json::json!({"name": "idempotency-key", "in": "header", "schema": {"type": "string"}});
        let found = keys(&document(serde_json::json!({"operationId": "create", "parameters": [parameter]})));
        assert_eq!(found.unwrap(), [("create".to_owned(), Key::Header("idempotency-key".into()))]);
        assert!(keys(&document(serde_json::json!({"operationId": "create"}))).unwrap().is_empty());
    }
}
