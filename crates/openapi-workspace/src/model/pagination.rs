//! Which operations answer a page of a list, where the page's items are, and how the next page is
//! asked for: what the client's page and item streams are written from. The operation's
//! `x-pagination` extension says so (`false` says it is not one); without it, the scheme is
//! inferred from the names of a `GET`'s query parameters, response fields and headers — Stripe's
//! `starting_after` with `has_more`, ours the same without it, GitHub's `Link` header, a cursor
//! field, an offset, a page number.

use serde_json::{Map, Value};

use crate::error::{Result, bail};
use crate::read::document::{METHODS, is_json, pointer, resolve, resolve_schema};

/// The extension that says how an operation pages.
pub(crate) const EXTENSION: &str = "x-pagination";

/// How an operation pages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Paging {
    /// The query parameter the next page is asked for with.
    pub param: String,
    /// The property of the response's object holding the items; `None`: the response is the array.
    pub items: Option<String>,
    pub next: Next,
}

/// Where the next page's value comes from, and when there is none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// The last item's property (`id`); none after an empty page, or one whose `has_more` (a
    /// boolean property of the response) is false.
    AfterLast { id: String, has_more: Option<String> },
    /// A response property, or one of its object's (`pagination.next_cursor`); none when it is
    /// absent, null or empty, or repeats the value just sent.
    Cursor { field: Vec<String> },
    /// The parameter's value in the `Link` header's `rel="next"` URL; none without one.
    Link,
    /// A count of items, from `start`, advanced by each page's items; none after an empty page.
    Offset { start: i64 },
    /// A page number, from `start`, advanced by one; none after an empty page.
    Page { start: i64 },
}

const ITEMS: [&str; 8] = ["data", "items", "results", "values", "records", "entries", "elements", "list"];
const CURSOR_PARAMS: [&str; 13] = [
    "cursor",
    "page_token",
    "pageToken",
    "next_token",
    "nextToken",
    "continuation_token",
    "continuationToken",
    "page_cursor",
    "marker",
    "after",
    "next",
    "starting_after",
    // Stripe's searches: a `page` of text, its next in `next_page`.
    "page",
];
const CURSOR_FIELDS: [&str; 13] = [
    "next_cursor",
    "next_page",
    "nextCursor",
    "next_page_token",
    "nextPageToken",
    "next_token",
    "nextToken",
    "continuation_token",
    "continuationToken",
    "next_marker",
    "nextMarker",
    "cursor",
    "next",
];
/// Objects of the response a cursor field may be in.
const CURSOR_HOLDERS: [&str; 6] = ["pagination", "meta", "paging", "page_info", "pageInfo", "response_metadata"];

/// Every paginated operation's paging, by `operationId`, in the document's order.
pub(crate) fn of_document(raw: &Value) -> Result<Vec<(String, Paging)>> {
    let components = raw.get("components").unwrap_or(&Value::Null);
    let mut found = Vec::new();
    let Some(paths) = raw.get("paths").and_then(Value::as_object) else { return Ok(found) };
    for (path, item) in paths {
        let Some(item) = item.as_object() else { continue };
        for method in METHODS {
            let Some(operation) = item.get(method) else { continue };
            let Some(id) = operation.get("operationId").and_then(Value::as_str) else { continue };
            let at = pointer(&["paths", path, method]);
            let params = query_params(operation, item.get("parameters"), components);
            let declared = operation.get(EXTENSION);
            let paging = match declared {
                Some(Value::Bool(false)) => None,
                Some(declared) => Some(extension(declared, &params, &format!("{at}/{EXTENSION}"))?),
                None if method == "get" => inferred(operation, &params, components),
                None => None,
            };
            if let Some(paging) = paging {
                found.push((id.to_owned(), paging));
            }
        }
    }
    Ok(found)
}

/// The operation's query parameters (its path's too): name, schema.
fn query_params<'a>(operation: &'a Value, shared: Option<&'a Value>, components: &'a Value) -> Map<String, Value> {
    let mut params = Map::new();
    let listed =
        shared.and_then(Value::as_array).into_iter().chain(operation.get("parameters").and_then(Value::as_array));
    for parameter in listed.flatten() {
        let Some(parameter) = resolve(parameter, components, "parameters") else { continue };
        if parameter.get("in").and_then(Value::as_str) != Some("query") {
            continue;
        }
        let Some(name) = parameter.get("name").and_then(Value::as_str) else { continue };
        let schema = parameter.get("schema").and_then(|s| resolve_schema(s, components)).cloned();
        params.insert(name.to_owned(), schema.unwrap_or(Value::Null));
    }
    params
}

/// `x-pagination` as written: `{kind, param, field, id, has_more, items, start}`.
fn extension(declared: &Value, params: &Map<String, Value>, at: &str) -> Result<Paging> {
    let text = |key: &str| declared.get(key).and_then(Value::as_str).map(str::to_owned);
    let Some(param) = text("param") else {
        bail!(at, "names no `param`: the query parameter the next page is asked with")
    };
    if !params.contains_key(&param) {
        bail!(at, "`param` {param:?} is not a query parameter of the operation");
    }
    let start = |default: i64| declared.get("start").and_then(Value::as_i64).unwrap_or(default);
    let next = match text("kind").as_deref() {
        Some("after-last") => {
            Next::AfterLast { id: text("id").unwrap_or_else(|| "id".into()), has_more: text("has_more") }
        }
        Some("cursor") => match text("field") {
            Some(field) => Next::Cursor { field: field.split('.').map(str::to_owned).collect() },
            None => bail!(at, "a cursor names the response `field` that carries the next value"),
        },
        Some("link") => Next::Link,
        Some("offset") => Next::Offset { start: start(0) },
        Some("page") => Next::Page { start: start(1) },
        other => bail!(at, "`kind` is {other:?}; it is one of after-last, cursor, link, offset, page"),
    };
    Ok(Paging { param, items: text("items"), next })
}

/// The paging a `GET` shows by its names, if any.
fn inferred(operation: &Value, params: &Map<String, Value>, components: &Value) -> Option<Paging> {
    let response = success(operation, components)?;
    let body = response
        .get("content")
        .and_then(Value::as_object)?
        .iter()
        .find(|(media, _)| is_json(media))
        .and_then(|(_, media)| media.get("schema"))
        .and_then(|schema| resolve_schema(schema, components))?;
    let (items, item) = items_of(body, components)?;
    let properties = body.get("properties").and_then(Value::as_object);
    let property = |name: &str| properties.and_then(|p| p.get(name)).and_then(|s| resolve_schema(s, components));
    let has = |name: &str| params.contains_key(name);
    let link = crate::read::document::documents_header(response, "link");
    let paging = |param: &str, next| Some(Paging { param: param.to_owned(), items: items.clone(), next });
    if link && let Some(param) = ["page", "cursor", "after", "page_token", "since"].into_iter().find(|p| has(p)) {
        return paging(param, Next::Link);
    }
    let item_has_id = item.get("properties").and_then(|p| p.get("id")).is_some();
    if let Some(param) = ["starting_after", "startingAfter"].into_iter().find(|p| has(p))
        && item_has_id
    {
        let has_more = ["has_more", "hasMore"]
            .into_iter()
            .find(|name| property(name).is_some_and(|s| s.get("type") == Some(&Value::from("boolean"))));
        return paging(param, Next::AfterLast { id: "id".into(), has_more: has_more.map(str::to_owned) });
    }
    if let Some(param) = CURSOR_PARAMS.into_iter().find(|p| has(p)) {
        let top = CURSOR_FIELDS.iter().find(|f| property(f).is_some()).map(|f| vec![(*f).to_owned()]);
        let nested = || {
            CURSOR_HOLDERS.iter().find_map(|holder| {
                let inner = property(holder)?.get("properties")?;
                let field = CURSOR_FIELDS.iter().find(|f| inner.get(**f).is_some())?;
                Some(vec![(*holder).to_owned(), (*field).to_owned()])
            })
        };
        if let Some(field) = top.or_else(nested) {
            return paging(param, Next::Cursor { field });
        }
    }
    // A count is an integer: a `page` of text is a cursor or nothing this can follow.
    let integer = |param: &str| params.get(param).and_then(|s| s.get("type")) == Some(&Value::from("integer"));
    let start = |param: &str, default: i64| {
        let schema = params.get(param);
        let number = |key: &str| schema.and_then(|s| s.get(key)).and_then(Value::as_i64);
        number("default").or_else(|| number("minimum")).unwrap_or(default)
    };
    if has("offset") && integer("offset") {
        return paging("offset", Next::Offset { start: start("offset", 0) });
    }
    if has("page") && integer("page") {
        return paging("page", Next::Page { start: start("page", 1) });
    }
    None
}

/// The operation's first 2xx response (resolved).
fn success<'a>(operation: &'a Value, components: &'a Value) -> Option<&'a Value> {
    let responses = operation.get("responses")?.as_object()?;
    let (_, response) = responses.iter().find(|(status, _)| status.starts_with('2'))?;
    resolve(response, components, "responses")
}

/// Where a response's items are (`None`: it is the array), and the item's schema (resolved).
fn items_of<'a>(body: &'a Value, components: &'a Value) -> Option<(Option<String>, &'a Value)> {
    let item = |array: &'a Value| -> Option<&'a Value> {
        match array.get("type").and_then(Value::as_str) {
            Some("array") => resolve_schema(array.get("items")?, components),
            _ => None,
        }
    };
    if let Some(found) = item(body) {
        return Some((None, found));
    }
    let properties = body.get("properties")?.as_object()?;
    let arrays: Vec<(&String, &Value)> = properties
        .iter()
        .filter_map(|(name, schema)| Some((name, item(resolve_schema(schema, components)?)?)))
        .collect();
    let named = arrays.iter().find(|(name, _)| ITEMS.contains(&name.as_str()));
    let (name, found) = match (named, arrays.as_slice()) {
        (Some(named), _) => *named,
        (None, [only]) => *only,
        _ => return None,
    };
    Some((Some(name.clone()), found))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn paging(operation: Value) -> Vec<(String, Paging)> {
        let thing = json!({"type": "object", "properties": {"id": {"type": "string"}}});
        of_document(&json!({
            "paths": {"/things": {"get": operation}},
            "components": {"schemas": {"Thing": thing}},
        }))
        .unwrap()
    }

    /// Query parameters, each a string but the counts (`page`, `offset`, `limit`, `per_page`).
    fn query(names: &[&str]) -> Value {
        let kind = |name: &str| match name {
            "page" | "offset" | "limit" | "per_page" => "integer",
            _ => "string",
        };
        names.iter().map(|name| json!({"name": name, "in": "query", "schema": {"type": kind(name)}})).collect()
    }

    fn answering(schema: Value, headers: Value) -> Value {
        json!({"200": {"description": "", "headers": headers, "content": {"application/json": {"schema": schema}}}})
    }

    #[test]
    fn each_scheme_is_found_by_its_names_and_none_where_the_document_says_so() {
        let things = json!({"type": "array", "items": {"$ref": "#/components/schemas/Thing"}});
        let stripe = json!({"type": "object", "properties": {"data": things, "has_more": {"type": "boolean"}}});
        let cases = [
            (
                query(&["starting_after", "limit"]),
                answering(things.clone(), json!({})),
                Some(("starting_after", None, Next::AfterLast { id: "id".into(), has_more: None })),
            ),
            (
                query(&["starting_after"]),
                answering(stripe, json!({})),
                Some((
                    "starting_after",
                    Some("data"),
                    Next::AfterLast { id: "id".into(), has_more: Some("has_more".into()) },
                )),
            ),
            (
                query(&["page", "per_page"]),
                answering(things.clone(), json!({"Link": {"schema": {"type": "string"}}})),
                Some(("page", None, Next::Link)),
            ),
            (query(&["page"]), answering(things.clone(), json!({})), Some(("page", None, Next::Page { start: 1 }))),
            (
                query(&["offset", "limit"]),
                answering(things.clone(), json!({})),
                Some(("offset", None, Next::Offset { start: 0 })),
            ),
            (query(&["limit"]), answering(things.clone(), json!({})), None),
        ];
        // Stripe's searches: a `page` of text, the next one in `next_page`.
        let search = json!({"type": "object", "properties": {"data": things, "next_page": {"type": "string", "nullable": true}}});
        let text_page = json!([{"name": "page", "in": "query", "schema": {"type": "string"}}]);
        let found =
            paging(json!({"operationId": "list", "parameters": text_page, "responses": answering(search, json!({}))}));
        let cursor = Paging {
            param: "page".into(),
            items: Some("data".into()),
            next: Next::Cursor { field: vec!["next_page".into()] },
        };
        assert_eq!(found, [("list".to_owned(), cursor)]);
        let text_page = json!([{"name": "page", "in": "query", "schema": {"type": "string"}}]);
        let counted = paging(
            json!({"operationId": "list", "parameters": text_page, "responses": answering(things.clone(), json!({}))}),
        );
        assert_eq!(counted, [], "a page of text is no count");
        for (parameters, responses, expected) in cases {
            let found = paging(json!({"operationId": "list", "parameters": parameters, "responses": responses}));
            let expected: Vec<(String, Paging)> = expected
                .into_iter()
                .map(|(param, items, next)| {
                    ("list".to_owned(), Paging { param: param.into(), items: items.map(Into::into), next })
                })
                .collect();
            assert_eq!(found, expected);
        }
        let refused = json!({"operationId": "list", "x-pagination": false, "parameters": query(&["page"]), "responses": answering(things.clone(), json!({}))});
        assert_eq!(paging(refused), []);
        // Only a `GET` is inferred to page.
        let post = of_document(&json!({"paths": {"/things": {"post": {"operationId": "make", "parameters": query(&["page"]), "responses": answering(things, json!({}))}}}})).unwrap();
        assert_eq!(post, []);
    }

    #[test]
    fn an_extension_that_names_no_parameter_of_the_operation_is_refused_with_its_pointer() {
        let operation = json!({"operationId": "list", "x-pagination": {"kind": "cursor", "param": "from", "field": "next"}, "responses": {}});
        let error = of_document(&json!({"paths": {"/things": {"get": operation}}})).unwrap_err().to_string();
        assert!(error.contains("#/paths/~1things/get/x-pagination") && error.contains("\"from\""), "{error}");
    }
}
