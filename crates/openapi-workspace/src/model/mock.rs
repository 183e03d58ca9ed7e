//! What each operation answers in the mock (`mock_router`) until it is implemented: its first
//! success status, with the document's example of that response, or one built from its schema
//! — the first `enum` value, a `default`, a string meeting its `format`, `pattern` and lengths, a
//! number within its bounds, every property of an object — so a client (the generated one
//! included) reads it as the document says.

use serde_json::{Map, Value, json};

use crate::read::document::{essence, is_json, resolve, resolve_schema as resolved};

/// A mock answer: status, content type and body.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mock {
    pub status: u16,
    /// With the body: its media type, and the body as JSON or as text.
    pub body: Option<(String, Body)>,
    /// The same answer in the response's other media types, each given when the request's
    /// `Accept` prefers it to `body`'s (a status offering JSON and events).
    pub others: Vec<(String, Body)>,
    /// The response's required headers, each with its example (or a value of its schema).
    pub headers: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Body {
    Json(Value),
    Text(String),
}

impl Body {
    pub(crate) fn text(&self) -> String {
        match self {
            Body::Json(value) => value.to_string(),
            Body::Text(text) => text.clone(),
        }
    }
}

/// The mock answer of `operation` (normalised JSON) in a document whose components are
/// `components`; `None` when it documents no success.
pub(crate) fn mock(operation: &Value, components: &Value) -> Option<Mock> {
    let responses = operation.get("responses")?.as_object()?;
    let (status, response) = first_success(responses)?;
    let response = resolve(response, components, "responses")?;
    let headers = required_headers(response, components);
    let Some(content) = response.get("content").and_then(Value::as_object).filter(|content| !content.is_empty()) else {
        return Some(Mock { status, body: None, others: Vec::new(), headers });
    };
    // JSON first, as a client asks for it; else the first media type the document lists.
    let first = content.iter().position(|(media, _)| is_json(media)).unwrap_or(0);
    let (media_type, media) = content.iter().nth(first).expect("a listed media type");
    let body = answer(media_type, media, components);
    // A wildcard answers only as the first: it names no content type to ask for.
    let others = content
        .iter()
        .enumerate()
        .filter(|(at, (media_type, _))| *at != first && !media_type.contains('*'))
        .map(|(_, (media_type, media))| answer(media_type, media, components))
        .filter(|(content_type, _)| content_type != &body.0)
        .collect();
    Some(Mock { status, body: Some(body), others, headers })
}

/// The mock's body in `media_type` (whose media object is `media`), with the content type it is
/// sent with.
fn answer(media_type: &str, media: &Value, components: &Value) -> (String, Body) {
    let example = media_example(media, components);
    let built = |media: &Value| {
        let schema = media.get("schema").cloned().unwrap_or_else(|| json!({}));
        Builder { components, depth: 0 }.build(&schema)
    };
    let body = if essence(media_type) == "text/event-stream" {
        // One event, its data the example of the event type.
        let data = example.unwrap_or_else(|| built(media));
        Body::Text(format!("id: 1\ndata: {data}\n\n"))
    } else if media.get(crate::read::marks::ITEMS).is_some() {
        // One item, the example of the item type, framed as the media type frames them.
        let item = example.unwrap_or_else(|| built(media));
        let separator = if essence(media_type) == "application/json-seq" { "\u{1e}" } else { "" };
        Body::Text(format!("{separator}{item}\n"))
    } else if is_json(media_type) {
        Body::Json(example.unwrap_or_else(|| built(media)))
    } else {
        let text = match example {
            Some(Value::String(text)) => text,
            _ if essence(media_type).starts_with("text/") => "example".to_string(),
            _ => String::new(),
        };
        Body::Text(text)
    };
    // A wildcard is no content type to answer with.
    let content_type =
        if media_type.contains('*') { "application/octet-stream".to_string() } else { media_type.to_owned() };
    (content_type, body)
}

/// The headers `response` requires, with their example or a value built from their schema, as
/// text (a string as it is, anything else as its JSON).
fn required_headers(response: &Value, components: &Value) -> Vec<(String, String)> {
    let mut headers = Vec::new();
    for (name, header) in response.get("headers").and_then(Value::as_object).into_iter().flatten() {
        let Some(header) = resolve(header, components, "headers") else { continue };
        if header.get("required") != Some(&Value::Bool(true)) {
            continue;
        }
        let value = header.get("example").cloned().unwrap_or_else(|| {
            let schema = header.get("schema").cloned().unwrap_or_else(|| json!({"type": "string"}));
            Builder { components, depth: 0 }.build(&schema)
        });
        let text = match value {
            Value::String(text) => text,
            value => value.to_string(),
        };
        headers.push((name.to_ascii_lowercase(), text));
    }
    headers
}

/// The response a mock of `status` answers with (as [`mock`] chose it).
pub(crate) fn response<'a>(operation: &'a Value, components: &'a Value, status: u16) -> Option<&'a Value> {
    let responses = operation.get("responses")?.as_object()?;
    let (chosen, response) = first_success(responses)?;
    (chosen == status).then(|| resolve(response, components, "responses")).flatten()
}

/// The lowest `2xx` the document lists, else `2XX`, `default`, then a `1xx` or `3xx` (answered
/// as `200` when a class or `default`).
fn first_success(responses: &Map<String, Value>) -> Option<(u16, &Value)> {
    let code = |wanted: std::ops::RangeInclusive<u16>| {
        responses
            .iter()
            .filter_map(|(status, response)| Some((status.parse::<u16>().ok()?, response)))
            .filter(|(status, _)| wanted.contains(status))
            .min_by_key(|(status, _)| *status)
    };
    code(200..=299)
        .or_else(|| responses.get("2XX").or_else(|| responses.get("2xx")).map(|r| (200, r)))
        .or_else(|| responses.get("default").map(|r| (200, r)))
        .or_else(|| code(100..=399).filter(|(status, _)| *status != 101))
}

/// The media type's (or a parameter's) own example: `example`, or the first of `examples` (each
/// `value`, or a `$ref` to `components/examples`).
pub(crate) fn media_example(media: &Value, components: &Value) -> Option<Value> {
    if let Some(example) = media.get("example") {
        return Some(example.clone());
    }
    let first = media.get("examples")?.as_object()?.values().next()?;
    resolve(first, components, "examples")?.get("value").cloned()
}

/// A value `schema` accepts, built as a mock answer's is (an example or default where the
/// schema has one): what the samples send where the document gives no example.
pub(crate) fn value_for(schema: &Value, components: &Value) -> Value {
    Builder { components, depth: 0 }.build(schema)
}

struct Builder<'a> {
    components: &'a Value,
    depth: usize,
}

impl Builder<'_> {
    /// A value `schema` accepts.
    fn build(&mut self, schema: &Value) -> Value {
        self.depth += 1;
        let value = self.value(schema);
        self.depth -= 1;
        value
    }

    fn value(&mut self, schema: &Value) -> Value {
        let Some(schema) = resolved(schema, self.components) else { return json!({}) };
        if self.depth > 12 {
            return if schema.get("nullable") == Some(&Value::Bool(true)) { Value::Null } else { json!({}) };
        }
        for word in ["example", "default"] {
            if let Some(value) = schema.get(word) {
                return value.clone();
            }
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array).filter(|e| !e.is_empty()) {
            // The first value but `null`, unless it is the only one (dropshot's empty answer).
            return values.iter().find(|v| !v.is_null()).unwrap_or(&values[0]).clone();
        }
        if let Some(discriminator) = schema.as_object().and_then(super::discriminator::of) {
            // The first arm with a tag, carrying its first tag.
            let arm = &discriminator.arms[0];
            let mut value = schema
                .get(discriminator.union)
                .and_then(|union| union.get(arm.index))
                .map(|arm| self.build(arm))
                .unwrap_or_default();
            if let Value::Object(fields) = &mut value {
                fields.insert(discriminator.property.clone(), Value::String(arm.tags[0].clone()));
            }
            return value;
        }
        if let Some(arms) = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array) {
            // The first arm that is not only `null`.
            let arm = arms.iter().find(|arm| !is_null_only(arm, self.components)).or(arms.first());
            if let Some(arm) = arm {
                return self.build(arm);
            }
        }
        if let Some(parts) = schema.get("allOf").and_then(Value::as_array) {
            let mut merged = Map::new();
            let mut other = None;
            for part in parts {
                match self.build(part) {
                    Value::Object(fields) => merged.extend(fields),
                    value => other = other.or(Some(value)),
                }
            }
            let own = self.object(schema);
            if let Value::Object(fields) = own {
                merged.extend(fields);
            }
            return match other {
                Some(value) if merged.is_empty() => value,
                _ => Value::Object(merged),
            };
        }
        let kind = schema.get("type").and_then(Value::as_str).or_else(|| {
            if schema.get("properties").is_some() || schema.get("additionalProperties").is_some() {
                Some("object")
            } else if schema.get("items").is_some() {
                Some("array")
            } else {
                None
            }
        });
        match kind {
            Some("string") => Value::String(string(schema)),
            Some("integer") => number(schema, true),
            Some("number") => number(schema, false),
            Some("boolean") => Value::Bool(true),
            Some("array") => self.array(schema),
            Some("object") => self.object(schema),
            _ if schema.get("nullable") == Some(&Value::Bool(true)) => Value::Null,
            _ => json!({}),
        }
    }

    fn array(&mut self, schema: &Value) -> Value {
        // A tuple: one of each of its items, in their order.
        if let Some(Value::Array(prefix)) = schema.get(crate::read::marks::PREFIX_ITEMS) {
            return Value::Array(prefix.iter().map(|item| self.build(item)).collect());
        }
        let Some(items) = schema.get("items") else { return json!([]) };
        let min = schema.get("minItems").and_then(Value::as_u64).unwrap_or(0);
        let max = schema.get("maxItems").and_then(Value::as_u64).unwrap_or(u64::MAX);
        // One item shows its shape; as many as `minItems` asks for (distinct ones for
        // `uniqueItems` would need more than a copy).
        let count = min.max(1).min(max) as usize;
        let item = self.build(items);
        if count > 1 && schema.get("uniqueItems") == Some(&Value::Bool(true)) {
            return Value::Array(vec![item]);
        }
        Value::Array(vec![item; count])
    }

    /// Every property but write-only ones (a response does not carry them).
    fn object(&mut self, schema: &Value) -> Value {
        let mut fields = Map::new();
        let required: Vec<&str> =
            schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
        for (name, property) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
            let resolved = resolved(property, self.components).unwrap_or(property);
            if resolved.get("writeOnly") == Some(&Value::Bool(true)) && !required.contains(&name.as_str()) {
                continue;
            }
            // Past a few levels, only what is required: a recursive model ends.
            if self.depth > 4 && !required.contains(&name.as_str()) {
                continue;
            }
            fields.insert(name.clone(), self.build(property));
        }
        Value::Object(fields)
    }
}

fn is_null_only(schema: &Value, components: &Value) -> bool {
    let schema = resolved(schema, components).unwrap_or(schema);
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("enum").and_then(Value::as_array).is_some_and(|e| e.iter().all(Value::is_null))
}

fn string(schema: &Value) -> String {
    let format = schema.get("format").and_then(Value::as_str).unwrap_or_default();
    let mut text = match format {
        "date-time" => "2026-01-01T12:00:00Z".to_string(),
        "date" => "2026-01-01".to_string(),
        "time" => "12:00:00Z".to_string(),
        "uuid" => "3fa85f64-5717-4562-b3fc-2c963f66afa6".to_string(),
        "email" => "user@example.com".to_string(),
        "uri" | "url" | "uri-reference" | "iri" => "https://example.com/".to_string(),
        "hostname" => "example.com".to_string(),
        "ipv4" => "192.0.2.1".to_string(),
        "ipv6" => "2001:db8::1".to_string(),
        "byte" => "ZXhhbXBsZQ==".to_string(),
        "binary" => String::new(),
        _ => match schema.get("pattern").and_then(Value::as_str).and_then(pattern) {
            Some(matching) => matching,
            None => "string".to_string(),
        },
    };
    let min = schema.get("minLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let max = schema.get("maxLength").and_then(Value::as_u64).map(|m| m as usize);
    while text.chars().count() < min {
        text.push('x');
    }
    if let Some(max) = max {
        text = text.chars().take(max).collect();
    }
    text
}

/// A string `pattern` (a regular expression) matches: each class's first plain character, each
/// repetition's least count, each alternation's first branch.
fn pattern(pattern: &str) -> Option<String> {
    use regex_syntax::hir::{Class, HirKind};
    fn walk(hir: &regex_syntax::hir::Hir, out: &mut String) {
        match hir.kind() {
            HirKind::Empty | HirKind::Look(_) => {}
            HirKind::Literal(literal) => out.push_str(&String::from_utf8_lossy(&literal.0)),
            HirKind::Class(Class::Unicode(class)) => {
                let plain = class.ranges().iter().find_map(|range| {
                    ['a', 'A', '0', '_', '-']
                        .into_iter()
                        .find(|c| (range.start()..=range.end()).contains(c))
                        .or_else(|| (range.start()..=range.end()).find(|c| !c.is_control()))
                });
                if let Some(c) = plain {
                    out.push(c);
                }
            }
            HirKind::Class(Class::Bytes(class)) => {
                if let Some(range) = class.ranges().first() {
                    out.push(char::from(range.start()));
                }
            }
            HirKind::Repetition(repetition) => {
                for _ in 0..repetition.min.min(64) {
                    walk(&repetition.sub, out);
                }
            }
            HirKind::Capture(capture) => walk(&capture.sub, out),
            HirKind::Concat(parts) => parts.iter().for_each(|part| walk(part, out)),
            HirKind::Alternation(branches) => {
                if let Some(first) = branches.first() {
                    walk(first, out);
                }
            }
        }
    }
    let hir = regex_syntax::parse(pattern).ok()?;
    let mut out = String::new();
    walk(&hir, &mut out);
    Some(out)
}

/// Zero, or the nearest value within the schema's bounds (a multiple of `multipleOf`).
fn number(schema: &Value, integer: bool) -> Value {
    let bound = |word: &str| schema.get(word).and_then(Value::as_f64);
    let exclusive = |word: &str| schema.get(word);
    let step = bound("multipleOf").filter(|s| *s > 0.0).unwrap_or(if integer { 1.0 } else { 0.0 });
    let mut low = bound("minimum");
    match exclusive("exclusiveMinimum") {
        Some(Value::Bool(true)) => low = low.map(|l| if step > 0.0 { l + step } else { l + 1.0 }),
        Some(Value::Number(n)) => low = n.as_f64().map(|l| if step > 0.0 { l + step } else { l + 1.0 }),
        _ => {}
    }
    let mut value = low.unwrap_or(0.0).max(0.0);
    if let Some(low) = low {
        value = if low > 0.0 { low } else { value.max(low) };
    }
    if step > 0.0 {
        value = (value / step).ceil() * step;
    }
    let mut high = bound("maximum");
    match exclusive("exclusiveMaximum") {
        Some(Value::Bool(true)) => high = high.map(|h| h - step.max(1.0)),
        Some(Value::Number(n)) => high = n.as_f64().map(|h| h - step.max(1.0)),
        _ => {}
    }
    if let Some(high) = high
        && value > high
    {
        value = if step > 0.0 { (high / step).floor() * step } else { high };
    }
    if integer { json!(value as i64) } else { json!(value) }
}
