//! The operations of two documents compared: found again by method and path template (the
//! parameters' names aside), then their parameters (by place and name), request bodies and
//! media types, responses by status, media type, header and link, security requirements, and the
//! security schemes both define. The schemas they carry are compared in the direction their
//! values travel (`schemas`).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::schemas::{At, Compared, Schemas};
use super::{Audience, Change, Direction, Level, Rule, Side};
use crate::read::document::{METHODS, escape, resolve, template};

/// One operation: where it is, its method and path as shown, its object.
struct Operation<'a> {
    at: String,
    shown: String,
    operation: &'a Value,
    /// The document's security, which an operation without its own follows.
    security: Option<&'a Value>,
}

/// The operations of a document by method and path template (`get /pets/{}`).
fn operations(side: Side<'_>, audience: Audience) -> BTreeMap<String, Operation<'_>> {
    let mut found = BTreeMap::new();
    let security = side.raw.get("security");
    for (path, item) in side.raw.get("paths").and_then(Value::as_object).into_iter().flatten() {
        for method in METHODS {
            let Some(operation) = item.get(method) else { continue };
            let template = template(path);
            let shown = match audience {
                Audience::Api => format!("{} {path}", method.to_uppercase()),
                Audience::Webhooks => format!("the webhook {}", path.trim_start_matches('/')),
            };
            let at = match audience {
                Audience::Api => format!("#/paths/{}/{method}", escape(path)),
                Audience::Webhooks => format!("#/webhooks/{}/{method}", escape(path.trim_start_matches('/'))),
            };
            found.insert(format!("{method} {template}"), Operation { at, shown, operation, security });
        }
    }
    found
}

/// Every operation of `base` gone (a document without webhooks any more).
pub(super) fn all_gone(changes: &mut Vec<Change>, base: Side<'_>, audience: Audience) {
    for operation in operations(base, audience).into_values() {
        changes.push(gone(&operation, audience));
    }
}

/// Every operation of `head` new.
pub(super) fn all_new(changes: &mut Vec<Change>, head: Side<'_>, audience: Audience) {
    for operation in operations(head, audience).into_values() {
        changes.push(new(&operation, audience));
    }
}

fn gone(operation: &Operation<'_>, audience: Audience) -> Change {
    let deprecated = operation.operation.get("deprecated") == Some(&Value::Bool(true));
    let (level, rule, message) = match audience {
        Audience::Api if deprecated => {
            (Level::Warning, Rule::OperationRemoved, format!("{} was removed (it was deprecated)", operation.shown))
        }
        Audience::Api => (Level::Breaking, Rule::OperationRemoved, format!("{} was removed", operation.shown)),
        Audience::Webhooks => (Level::Warning, Rule::WebhookRemoved, format!("{} is no longer sent", operation.shown)),
    };
    Change { level, rule, base: Some(operation.at.clone()), head: None, message }
}

fn new(operation: &Operation<'_>, audience: Audience) -> Change {
    let rule = match audience {
        Audience::Api => Rule::OperationAdded,
        Audience::Webhooks => Rule::WebhookAdded,
    };
    let message = format!("{} is new", operation.shown);
    Change { level: Level::Info, rule, base: None, head: Some(operation.at.clone()), message }
}

/// Compares the operations of `base` and `head`; gives back the pairs of schemas it compared.
pub(super) fn compare<'a>(
    changes: &mut Vec<Change>,
    base: Side<'a>,
    head: Side<'a>,
    audience: Audience,
) -> Vec<Compared<'a>> {
    let (base_operations, head_operations) = (operations(base, audience), operations(head, audience));
    let mut schemas = Schemas::new(base, head);
    for (key, b) in &base_operations {
        match head_operations.get(key) {
            None => changes.push(gone(b, audience)),
            Some(h) => {
                let mut pair = Pair { base, head, changes, schemas: &mut schemas, audience };
                pair.operation(b, h);
            }
        }
    }
    for (key, h) in &head_operations {
        if !base_operations.contains_key(key) {
            changes.push(new(h, audience));
        }
    }
    changes.append(&mut schemas.changes);
    schemas.handed
}

/// The security schemes both documents define, compared as a client writes their credentials:
/// a scheme whose type, place, name or HTTP scheme changed takes credentials the base's clients do
/// not send (an API key moved from a header to the query, basic become bearer).
pub(super) fn security_schemes(changes: &mut Vec<Change>, base: Side<'_>, head: Side<'_>) {
    let schemes = |side: Side<'_>| side.components.get("securitySchemes").and_then(Value::as_object).cloned();
    let (Some(base_schemes), Some(head_schemes)) = (schemes(base), schemes(head)) else { return };
    // What a client's request carries: the scheme's kind, where and under which name.
    let written = |scheme: &Value| -> Vec<String> {
        let field = |name: &str| scheme.get(name).and_then(Value::as_str).unwrap_or_default().to_owned();
        let place = field("in");
        let name = if place == "query" { field("name") } else { field("name").to_ascii_lowercase() };
        vec![field("type"), place, name, field("scheme").to_ascii_lowercase()]
    };
    for (name, scheme) in &base_schemes {
        let Some(other) = head_schemes.get(name) else { continue };
        let (was, is) = (written(scheme), written(other));
        if was != is {
            let at = format!("#/components/securitySchemes/{}", escape(name));
            let shown =
                |parts: &[String]| parts.iter().filter(|p| !p.is_empty()).cloned().collect::<Vec<_>>().join(" ");
            let message = format!(
                "the security scheme `{name}` is now {}, was {}: credentials sent as before are refused",
                shown(&is),
                shown(&was)
            );
            changes.push(Change {
                level: Level::Breaking,
                rule: Rule::SecuritySchemeChanged,
                base: Some(at.clone()),
                head: Some(at),
                message,
            });
        }
    }
}

/// A parameter's schema: its own, or that of its one media type (`content`; a parameter's
/// `content` has exactly one, as OpenAPI says).
fn parameter_schema(parameter: &Value) -> Option<&Value> {
    parameter.get("schema").or_else(|| parameter.get("content")?.as_object()?.values().next()?.get("schema"))
}

struct Pair<'a, 'c, 's> {
    base: Side<'a>,
    head: Side<'a>,
    changes: &'c mut Vec<Change>,
    schemas: &'s mut Schemas<'a>,
    audience: Audience,
}

impl Pair<'_, '_, '_> {
    fn push(&mut self, level: Level, rule: Rule, base: Option<String>, head: Option<String>, message: String) {
        self.changes.push(Change { level, rule, base, head, message });
    }

    /// Which way a part of the operation travels: the request is the client's to send for the
    /// API's operations, and to receive for a webhook (and the other way round for responses).
    fn direction(&self, request: bool) -> Direction {
        match (self.audience, request) {
            (Audience::Api, true) | (Audience::Webhooks, false) => Direction::Sent,
            _ => Direction::Received,
        }
    }

    fn operation(&mut self, b: &Operation<'_>, h: &Operation<'_>) {
        self.parameters(b, h);
        self.request_body(b, h);
        self.responses(b, h);
        if self.audience == Audience::Api {
            self.security(b, h);
        }
    }

    fn parameters(&mut self, b: &Operation<'_>, h: &Operation<'_>) {
        let direction = self.direction(true);
        let listed = |operation: &Operation<'_>, side: Side<'_>| -> BTreeMap<(String, String), (String, Value)> {
            let parameters = operation.operation.get("parameters").and_then(Value::as_array);
            let mut found = BTreeMap::new();
            for (i, parameter) in parameters.into_iter().flatten().enumerate() {
                let Some(parameter) = resolve(parameter, side.components, "parameters") else { continue };
                let place = parameter.get("in").and_then(Value::as_str).unwrap_or_default().to_owned();
                let mut name = parameter.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
                if place == "header" {
                    name = name.to_ascii_lowercase();
                }
                found.insert((place, name), (format!("{}/parameters/{i}", operation.at), parameter.clone()));
            }
            found
        };
        let (base_parameters, head_parameters) = (listed(b, self.base), listed(h, self.head));
        let required = |p: &Value| p.get("required") == Some(&Value::Bool(true));
        for ((place, name), (at_base, parameter)) in &base_parameters {
            match head_parameters.get(&(place.clone(), name.clone())) {
                Some((at_head, other)) => {
                    let at = At { base: at_base.clone(), head: at_head.clone() };
                    let what = format!("{}: the {place} parameter `{name}`", b.shown);
                    if required(other) && !required(parameter) {
                        let message = format!("{what} is now required");
                        self.push(
                            Level::Breaking,
                            Rule::ParameterNowRequired,
                            Some(at.base.clone()),
                            Some(at.head.clone()),
                            message,
                        );
                    }
                    // A parameter written as `content` is that media type's text (JSON, say) on
                    // the wire: a change to or from it is a change of style.
                    let media = |p: &Value| p.get("content").and_then(Value::as_object)?.keys().next().cloned();
                    let style = |p: &Value| (p.get("style").cloned(), p.get("explode").cloned(), media(p));
                    if style(parameter) != style(other) {
                        let message = format!(
                            "{what} is written in another style: the server reads what clients write otherwise"
                        );
                        self.push(
                            Level::Breaking,
                            Rule::ParameterRestyled,
                            Some(at.base.clone()),
                            Some(at.head.clone()),
                            message,
                        );
                    }
                    if let (Some(bs), Some(hs)) = (parameter_schema(parameter), parameter_schema(other)) {
                        let at = At { base: format!("{}/schema", at.base), head: format!("{}/schema", at.head) };
                        self.schemas.compare_handed(bs, hs, &at, direction, &what);
                    }
                }
                None if place == "path" => {}
                None => {
                    let moved = head_parameters.iter().find(|((p, n), _)| n == name && p != place && p != "path");
                    match moved {
                        Some(((to, _), (at_head, _))) => {
                            let message = format!("{}: the {place} parameter `{name}` moved to the {to}", b.shown);
                            self.push(
                                Level::Breaking,
                                Rule::ParameterMoved,
                                Some(at_base.clone()),
                                Some(at_head.clone()),
                                message,
                            );
                        }
                        None => {
                            let message = format!(
                                "{}: the {place} parameter `{name}` was removed; a server may refuse it",
                                b.shown
                            );
                            self.push(Level::Warning, Rule::ParameterRemoved, Some(at_base.clone()), None, message);
                        }
                    }
                }
            }
        }
        for ((place, name), (at_head, parameter)) in &head_parameters {
            if base_parameters.contains_key(&(place.clone(), name.clone())) || place == "path" {
                continue;
            }
            if base_parameters.keys().any(|(p, n)| n == name && p != place && p != "path") {
                continue; // Reported as moved.
            }
            let (level, rule, message) = match required(parameter) {
                true => (
                    Level::Breaking,
                    Rule::ParameterAddedRequired,
                    format!("{}: the {place} parameter `{name}` is new and required", b.shown),
                ),
                false => {
                    (Level::Info, Rule::ParameterAdded, format!("{}: the {place} parameter `{name}` is new", b.shown))
                }
            };
            self.push(level, rule, None, Some(at_head.clone()), message);
        }
    }

    fn request_body(&mut self, b: &Operation<'_>, h: &Operation<'_>) {
        let direction = self.direction(true);
        let body = |operation: &Operation<'_>, side: Side<'_>| {
            operation
                .operation
                .get("requestBody")
                .and_then(|body| resolve(body, side.components, "requestBodies"))
                .cloned()
        };
        let (at_base, at_head) = (format!("{}/requestBody", b.at), format!("{}/requestBody", h.at));
        let required = |body: &Value| body.get("required") == Some(&Value::Bool(true));
        match (body(b, self.base), body(h, self.head)) {
            (None, None) => {}
            (None, Some(added)) => {
                let (level, rule) = match required(&added) {
                    true => (Level::Breaking, Rule::RequestBodyAddedRequired),
                    false => (Level::Info, Rule::RequestBodyAdded),
                };
                let message = format!(
                    "{}: a request body is new{}",
                    b.shown,
                    if required(&added) { " and required" } else { "" }
                );
                self.push(level, rule, None, Some(at_head), message);
            }
            (Some(_), None) => {
                let message = format!("{}: the request body was removed; what clients send may be refused", b.shown);
                self.push(Level::Warning, Rule::RequestBodyRemoved, Some(at_base), None, message);
            }
            (Some(base_body), Some(head_body)) => {
                if required(&head_body) && !required(&base_body) {
                    let message = format!("{}: the request body is now required", b.shown);
                    self.push(
                        Level::Breaking,
                        Rule::RequestBodyNowRequired,
                        Some(at_base.clone()),
                        Some(at_head.clone()),
                        message,
                    );
                }
                let what = format!("{}: the request body", b.shown);
                self.contents(&base_body, &head_body, (&at_base, &at_head), direction, &what, true);
            }
        }
    }

    /// The media types of a body (request or response) and their schemas.
    fn contents(
        &mut self,
        base: &Value,
        head: &Value,
        (at_base, at_head): (&str, &str),
        direction: Direction,
        what: &str,
        request: bool,
    ) {
        let content = |v: &Value| v.get("content").and_then(Value::as_object).cloned().unwrap_or_default();
        let (base_content, head_content) = (content(base), content(head));
        for (media, b) in &base_content {
            let at = At {
                base: format!("{at_base}/content/{}", escape(media)),
                head: format!("{at_head}/content/{}", escape(media)),
            };
            match head_content.get(media) {
                Some(h) => {
                    if let (Some(bs), Some(hs)) = (b.get("schema"), h.get("schema")) {
                        let at = At { base: format!("{}/schema", at.base), head: format!("{}/schema", at.head) };
                        self.schemas.compare_handed(bs, hs, &at, direction, what);
                    }
                }
                None => {
                    let (rule, message) = match request {
                        true => (Rule::RequestMediaTypeRemoved, format!("{what}: `{media}` is no longer taken")),
                        false => (Rule::ResponseMediaTypeRemoved, format!("{what}: `{media}` is no longer answered")),
                    };
                    // A response's media type gone is breaking only if the client may have asked
                    // for it alone; a request's always is.
                    let level = if request || head_content.is_empty() { Level::Breaking } else { Level::Warning };
                    self.push(level, rule, Some(at.base), None, message);
                }
            }
        }
        for media in head_content.keys().filter(|media| !base_content.contains_key(*media)) {
            let rule = if request { Rule::RequestMediaTypeAdded } else { Rule::ResponseMediaTypeAdded };
            let message = format!("{what}: `{media}` is new");
            self.push(Level::Info, rule, None, Some(format!("{at_head}/content/{}", escape(media))), message);
        }
    }

    fn responses(&mut self, b: &Operation<'_>, h: &Operation<'_>) {
        let direction = self.direction(false);
        let responses = |operation: &Operation<'_>| {
            operation.operation.get("responses").and_then(Value::as_object).cloned().unwrap_or_default()
        };
        let (base_responses, head_responses) = (responses(b), responses(h));
        for (status, response) in &base_responses {
            let at_base = format!("{}/responses/{}", b.at, escape(status));
            let Some(base_response) = resolve(response, self.base.components, "responses") else { continue };
            match head_responses.get(status).and_then(|r| resolve(r, self.head.components, "responses")) {
                Some(head_response) => {
                    let at_head = format!("{}/responses/{}", h.at, escape(status));
                    let what = format!("{}: the `{status}` response", b.shown);
                    let (base_response, head_response) = (base_response.clone(), head_response.clone());
                    self.contents(&base_response, &head_response, (&at_base, &at_head), direction, &what, false);
                    self.headers(&base_response, &head_response, (&at_base, &at_head), direction, &what);
                    self.links(&base_response, &head_response, (&at_base, &at_head), &what);
                }
                None => {
                    let success = status.starts_with('2');
                    let (level, message) = match success {
                        true => (Level::Breaking, format!("{}: the `{status}` response was removed", b.shown)),
                        false => {
                            (Level::Warning, format!("{}: the `{status}` response is no longer documented", b.shown))
                        }
                    };
                    self.push(level, Rule::ResponseRemoved, Some(at_base), None, message);
                }
            }
        }
        for status in head_responses.keys().filter(|status| !base_responses.contains_key(*status)) {
            let success = status.starts_with('2');
            let (level, message) = match success {
                true => {
                    (Level::Warning, format!("{}: `{status}` is a new success; a client may not expect it", b.shown))
                }
                false => (Level::Info, format!("{}: `{status}` is newly documented", b.shown)),
            };
            let at = format!("{}/responses/{}", h.at, escape(status));
            self.push(level, Rule::ResponseAdded, None, Some(at), message);
        }
    }

    /// A response's headers (names read case-insensitively, through `components/headers`): one
    /// the base promised (`required`) gone or no longer promised breaks a client that reads it,
    /// one it only documented gone is a warning; each kept header's schema is compared as the
    /// response's are.
    fn headers(
        &mut self,
        base: &Value,
        head: &Value,
        (at_base, at_head): (&str, &str),
        direction: Direction,
        what: &str,
    ) {
        let headers = |response: &Value, side: Side<'_>, at: &str| -> BTreeMap<String, (String, Value)> {
            let listed = response.get("headers").and_then(Value::as_object).into_iter().flatten();
            listed
                .filter_map(|(name, header)| {
                    let header = resolve(header, side.components, "headers")?.clone();
                    Some((name.to_ascii_lowercase(), (format!("{at}/headers/{}", escape(name)), header)))
                })
                .collect()
        };
        let (base_headers, head_headers) = (headers(base, self.base, at_base), headers(head, self.head, at_head));
        let required = |header: &Value| header.get("required") == Some(&Value::Bool(true));
        for (name, (at_b, header)) in &base_headers {
            match head_headers.get(name) {
                Some((at_h, other)) => {
                    if required(header) && !required(other) {
                        let message = format!("{what}: the header `{name}` is no longer promised");
                        let rule = Rule::ResponseHeaderNoLongerRequired;
                        self.push(Level::Breaking, rule, Some(at_b.clone()), Some(at_h.clone()), message);
                    }
                    if let (Some(bs), Some(hs)) = (parameter_schema(header), parameter_schema(other)) {
                        let at = At { base: format!("{at_b}/schema"), head: format!("{at_h}/schema") };
                        self.schemas.compare_handed(bs, hs, &at, direction, &format!("{what}: the header `{name}`"));
                    }
                }
                None => {
                    let level = if required(header) { Level::Breaking } else { Level::Warning };
                    let message = format!("{what}: the header `{name}` is no longer sent");
                    self.push(level, Rule::ResponseHeaderRemoved, Some(at_b.clone()), None, message);
                }
            }
        }
        for (name, (at_h, _)) in head_headers.iter().filter(|(name, _)| !base_headers.contains_key(*name)) {
            let message = format!("{what}: the header `{name}` is new");
            self.push(Level::Info, Rule::ResponseHeaderAdded, None, Some(at_h.clone()), message);
        }
    }

    /// A response's links (through `components/links`): a client that follows one needs it, to the
    /// same operation with the same parameters. One gone or pointed elsewhere is a warning (no
    /// generated client follows links; a person or a hypermedia client does), a new one info.
    fn links(&mut self, base: &Value, head: &Value, (at_base, at_head): (&str, &str), what: &str) {
        let links = |response: &Value, side: Side<'_>| -> BTreeMap<String, Value> {
            let listed = response.get("links").and_then(Value::as_object).into_iter().flatten();
            listed
                .filter_map(|(name, link)| Some((name.clone(), resolve(link, side.components, "links")?.clone())))
                .collect()
        };
        let (base_links, head_links) = (links(base, self.base), links(head, self.head));
        // Where a link leads: its operation and the values it fills in (not its description).
        let target = |link: &Value| {
            ["operationId", "operationRef", "parameters", "requestBody", "server"].map(|key| link.get(key).cloned())
        };
        let at = |at: &str, name: &str| format!("{at}/links/{}", escape(name));
        for (name, link) in &base_links {
            match head_links.get(name) {
                Some(other) if target(link) != target(other) => {
                    let message = format!("{what}: the link `{name}` leads elsewhere now");
                    let rule = Rule::ResponseLinkChanged;
                    self.push(Level::Warning, rule, Some(at(at_base, name)), Some(at(at_head, name)), message);
                }
                Some(_) => {}
                None => {
                    let message = format!("{what}: the link `{name}` was removed");
                    self.push(Level::Warning, Rule::ResponseLinkRemoved, Some(at(at_base, name)), None, message);
                }
            }
        }
        for name in head_links.keys().filter(|name| !base_links.contains_key(*name)) {
            let message = format!("{what}: the link `{name}` is new");
            self.push(Level::Info, Rule::ResponseLinkAdded, None, Some(at(at_head, name)), message);
        }
    }

    /// Each way a client could authenticate before (a set of schemes used together) must still
    /// be one; an operation that asked for nothing must still ask for nothing.
    fn security(&mut self, b: &Operation<'_>, h: &Operation<'_>) {
        let alternatives = |operation: &Operation<'_>| -> BTreeSet<BTreeSet<String>> {
            let security = operation.operation.get("security").or(operation.security);
            let Some(requirements) = security.and_then(Value::as_array) else {
                return BTreeSet::from([BTreeSet::new()]);
            };
            if requirements.is_empty() {
                return BTreeSet::from([BTreeSet::new()]);
            }
            requirements
                .iter()
                .filter_map(Value::as_object)
                .map(|requirement| requirement.keys().cloned().collect())
                .collect()
        };
        let (base_alternatives, head_alternatives) = (alternatives(b), alternatives(h));
        for alternative in base_alternatives.difference(&head_alternatives) {
            let (rule, message) = match alternative.is_empty() {
                true => (Rule::SecurityRequirementAdded, format!("{}: it now asks for credentials", b.shown)),
                false => (
                    Rule::SecurityAlternativeRemoved,
                    format!("{}: credentials of {alternative:?} are no longer taken", b.shown),
                ),
            };
            self.push(Level::Breaking, rule, Some(b.at.clone()), Some(h.at.clone()), message);
        }
        // Where credentials are newly asked for, that one change says it.
        let newly_asked = base_alternatives.contains(&BTreeSet::new()) && !head_alternatives.contains(&BTreeSet::new());
        for alternative in head_alternatives.difference(&base_alternatives).filter(|a| !a.is_empty() && !newly_asked) {
            let message = format!("{}: credentials of {alternative:?} are also taken", b.shown);
            self.push(Level::Info, Rule::SecurityAlternativeAdded, Some(b.at.clone()), Some(h.at.clone()), message);
        }
    }
}
