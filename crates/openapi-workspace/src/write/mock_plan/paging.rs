//! How a stateful list pages: as the generated client's page streams follow it
//! (`model/pagination.rs`, which reads the operation's `x-pagination` or infers it from the
//! names of its parameters, fields and headers), so what the client asks for next the mock
//! answers; and the page's size, from a query parameter named like one (`limit`, `per_page`…).

use openapi_workspace_runtime::mock::{NextForm, NextPlan, PagingPlan, StartPlan};
use serde_json::Value;

use crate::model::operation::Op;
use crate::model::pagination::{Next, Paging};
use crate::read::document::{documents_header, resolve_schema, type_is};

/// Names of a page's size, lower case without `_` or `-`.
const SIZE: &[&str] = &["limit", "perpage", "pagesize", "size", "maxresults", "top", "take", "maxitems", "pagelimit"];

/// `list`'s paging: `paging` the document's (the client's), `page` the list object's schema
/// (when the list is one) and `response` its documented response.
pub(super) fn paging(
    list: &Op,
    paging: Option<&Paging>,
    page: Option<&Value>,
    response: Option<&Value>,
    components: &Value,
) -> Option<PagingPlan> {
    let plain = |name: &str| name.replace(['_', '-'], "").to_ascii_lowercase();
    let size = list.query_params.iter().find(|p| SIZE.contains(&plain(&p.wire.name).as_str()));
    if size.is_none() && paging.is_none() {
        return None;
    }
    let integer =
        |name: &str| list.query_params.iter().any(|p| p.wire.name == name && type_is(p.schema.get("type"), "integer"));
    let start = paging.map(|Paging { param, next, .. }| match next {
        Next::Offset { .. } => StartPlan::Offset(param.clone()),
        Next::Page { start } => StartPlan::Page { name: param.clone(), first: u64::try_from(*start).unwrap_or(1) },
        Next::Link if integer(param) => StartPlan::Page { name: param.clone(), first: 1 },
        Next::AfterLast { .. } | Next::Cursor { .. } | Next::Link => StartPlan::After(param.clone()),
    });
    let next = match paging.map(|paging| &paging.next) {
        Some(Next::Cursor { field }) => page.and_then(|page| next_plan(page, field, components)),
        _ => None,
    };
    let documented_link = response.is_some_and(|response| documents_header(response, "link"));
    Some(PagingPlan {
        size: size.map(|p| p.wire.name.clone()),
        default_size: size.and_then(|p| p.default.as_ref()).and_then(Value::as_u64),
        start,
        next,
        link: documented_link || matches!(paging.map(|paging| &paging.next), Some(Next::Link)),
    })
}

/// The list object's `field` (a path) as the mock fills it: its form by its schema, and whether
/// its object requires it.
fn next_plan(page: &Value, field: &[String], components: &Value) -> Option<NextPlan> {
    let (last, holders) = field.split_last()?;
    let mut holder = page;
    for name in holders {
        holder = resolve_schema(holder.get("properties")?.get(name)?, components)?;
    }
    let schema = resolve_schema(holder.get("properties")?.get(last)?, components)?;
    let types = |wanted: &str| type_is(schema.get("type"), wanted);
    let form = match schema.get("format").and_then(Value::as_str) {
        _ if types("integer") || types("number") => NextForm::Number,
        Some("uri" | "url" | "uri-reference") => NextForm::Url,
        _ => NextForm::Text,
    };
    let required = holder.get("required").and_then(Value::as_array).is_some_and(|r| r.iter().any(|n| n == last));
    Some(NextPlan { property: field.to_vec(), form, required })
}
