//! A stateful list as its operation answers it: filtered by the query parameters that name the
//! items' properties, cut into the page its paging parameters ask for (`PagingPlan`), and
//! written bare or in its documented object, whose counts, `has_more`-like flags and next-page
//! property are made true; the next page's URL goes in a `Link` header where the document
//! promises one.

use serde_json::{Map, Value};

use super::plan::{NextForm, PagingPlan, ResourcePlan, StartPlan};

/// A list request: its query's pairs, and its URL less the query (`http://host/path`), which
/// the next page's URL is made from.
pub(super) struct Listing<'a> {
    pub query: &'a [(String, String)],
    pub url: &'a str,
    /// The document's example of the list's answer, whose other fields the page keeps.
    pub example: Option<Value>,
}

/// A page, and the value of its `Link` header.
pub(super) struct Page {
    pub value: Value,
    pub link: Option<String>,
}

/// `items` (newest first, each with its id) listed as `resource`'s list operation answers them.
pub(super) fn page(resource: &ResourcePlan, items: Vec<(&str, &Value)>, listing: Listing<'_>) -> Page {
    let paging = resource.paging.as_ref();
    let paged: Vec<&str> = paging.into_iter().flat_map(paging_params).collect();
    let text = |name: &str| listing.query.iter().find(|(key, _)| key == name).map(|(_, text)| text.as_str());
    let kept: Vec<(&str, &Value)> = items
        .into_iter()
        .filter(|(_, item)| {
            listing
                .query
                .iter()
                .filter(|(name, _)| !paged.contains(&name.as_str()))
                .all(|(name, text)| matches(item.get(name), text))
        })
        .collect();
    let total = kept.len();
    let size = paging.and_then(|p| p.size.as_deref().and_then(text).and_then(|t| t.parse().ok()).or(p.default_size));
    let starts = paging.and_then(|p| p.start.as_ref());
    // The page asked for (its first where none is).
    let page = match starts {
        Some(StartPlan::Page { name, first }) => text(name).and_then(|t| t.parse::<u64>().ok()).unwrap_or(*first),
        _ => 0,
    };
    let start = match starts {
        Some(StartPlan::Offset(name)) => text(name).and_then(|t| t.parse::<usize>().ok()).unwrap_or(0),
        Some(StartPlan::Page { first, .. }) => {
            usize::try_from(page.saturating_sub(*first).saturating_mul(size.unwrap_or(u64::MAX))).unwrap_or(usize::MAX)
        }
        // An id not listed starts nowhere: an empty page.
        Some(StartPlan::After(name)) => match text(name) {
            Some(after) => kept.iter().position(|(id, _)| *id == after).map_or(total, |at| at + 1),
            None => 0,
        },
        None => 0,
    };
    let end = match size {
        Some(size) => start.saturating_add(usize::try_from(size).unwrap_or(usize::MAX)).min(total),
        None => total,
    };
    let more = end < total;
    let from = start.min(total);
    let shown: Vec<Value> = kept[from..end.max(from)].iter().map(|(_, item)| (*item).clone()).collect();
    // What the next page's request sends as its start parameter.
    let next_start = match (more, starts) {
        (true, Some(StartPlan::Offset(name))) => Some((name, end.to_string())),
        (true, Some(StartPlan::Page { name, .. })) => Some((name, (page + 1).to_string())),
        (true, Some(StartPlan::After(name))) => kept.get(end.wrapping_sub(1)).map(|(id, _)| (name, (*id).to_owned())),
        _ => None,
    };
    let next_url = next_start.as_ref().map(|(name, value)| url_with(&listing, name, value));
    let link = match paging {
        Some(PagingPlan { link: true, .. }) => next_url.as_ref().map(|url| format!("<{url}>; rel=\"next\"")),
        _ => None,
    };
    let Some(property) = &resource.list_property else { return Page { value: Value::Array(shown), link } };
    let mut object = match listing.example {
        Some(Value::Object(fields)) => fields,
        _ => Map::new(),
    };
    object.insert(property.clone(), Value::Array(shown));
    for (name, value) in object.iter_mut() {
        let lower = name.to_ascii_lowercase().replace('_', "");
        if value.is_boolean() && matches!(lower.as_str(), "hasmore" | "hasnext" | "hasnextpage" | "more") {
            *value = Value::Bool(more);
        } else if value.is_number()
            && matches!(lower.as_str(), "total" | "totalcount" | "count" | "totalitems" | "totalresults" | "totalsize")
        {
            *value = Value::from(total);
        } else if value.is_number() && paging.is_some_and(|p| p.size.as_deref() == Some(name.as_str())) {
            *value = size.map_or(Value::from(total), Value::from);
        } else if value.is_number() && paged.contains(&name.as_str()) {
            // The page or offset parameter echoed.
            if let Some(sent) = text(name).and_then(|t| t.parse::<u64>().ok()) {
                *value = Value::from(sent);
            }
        }
    }
    if let Some(next) = paging.and_then(|p| p.next.as_ref()) {
        let value = match (next.form, &next_start, &next_url) {
            (NextForm::Url, _, Some(url)) => Some(Value::String(url.clone())),
            (NextForm::Text, Some((_, value)), _) => Some(Value::String(value.clone())),
            (NextForm::Number, Some((_, value)), _) => value.parse::<u64>().ok().map(Value::from),
            _ => None,
        };
        // Its holder (`meta`), made where the example has none.
        let (last, holders) = next.property.split_last().expect("a next-page property has a name");
        let mut holder = &mut object;
        for name in holders {
            let entry = holder.entry(name.clone()).or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            holder = entry.as_object_mut().expect("made an object above");
        }
        match value {
            Some(value) => drop(holder.insert(last.clone(), value)),
            None if next.required => drop(holder.insert(last.clone(), Value::Null)),
            None => drop(holder.remove(last)),
        }
    }
    Page { value: Value::Object(object), link }
}

/// Whether an item's property is what a query parameter's text says (one the items lack
/// filters nothing).
fn matches(property: Option<&Value>, text: &str) -> bool {
    match property {
        Some(Value::String(value)) => value == text,
        Some(value @ (Value::Number(_) | Value::Bool(_))) => {
            serde_json::from_str::<Value>(text).is_ok_and(|given| given == *value)
        }
        _ => true,
    }
}

/// The paging parameters' names, which filter nothing.
fn paging_params(paging: &PagingPlan) -> impl Iterator<Item = &str> {
    let start = paging.start.as_ref().map(|start| match start {
        StartPlan::Offset(name) | StartPlan::Page { name, .. } | StartPlan::After(name) => name.as_str(),
    });
    paging.size.as_deref().into_iter().chain(start)
}

/// The list's URL with its `name` parameter set to `value`, its other parameters as sent.
fn url_with(listing: &Listing<'_>, name: &str, value: &str) -> String {
    let mut query = form_urlencoded::Serializer::new(String::new());
    for (key, sent) in listing.query.iter().filter(|(key, _)| key != name) {
        query.append_pair(key, sent);
    }
    query.append_pair(name, value);
    format!("{}?{}", listing.url, query.finish())
}
