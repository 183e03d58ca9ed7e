//! progenitor's view of the document: the read view adapted to what progenitor 0.15 accepts
//! without panicking — one request media type, one success type and one error type per
//! operation, parameters it cannot write given to it as carriers (`styles`), event streams and
//! multipart bodies as it can take them.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::status_errors::ErrorEnum;
use crate::error::{Result, bail};
use crate::read::Spec;
use crate::read::document::Names;
use crate::read::document::{METHODS, essence, pointer, resolve, rust_name};

/// Schemas progenitor is to replace with a Rust type: the schema's name, the type's path.
type Replacements = Vec<(String, String)>;

/// The document as progenitor reads it.
pub(crate) struct View {
    pub openapi: openapiv3::OpenAPI,
    /// Schemas of `openapi` progenitor is to replace with a model: name, the model's Rust path.
    pub replacements: Replacements,
    /// The schemas typed as `serde_json::Value` (`untypable`), with their pointers in the view.
    pub notes: Vec<crate::read::Note>,
    /// The operations whose errors are typed per status (`status_errors`).
    pub errors: Vec<ErrorEnum>,
}

impl View {
    pub(crate) fn of(spec: &Spec) -> Result<Self> {
        let mut client = spec.raw.clone();
        // Pointers into the view are turned into the document's by the callers (`Spec::locate`).
        let (replacements, errors) = for_client(&mut client)?;
        let notes = super::untypable::bound_merges(&mut client);
        Ok(Self { openapi: crate::read::openapi_model(client)?, replacements, notes, errors })
    }
}

/// How progenitor reads a response: its JSON schema, a raw stream, an upgrade, or nothing.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Json(String),
    Upgrade,
    Raw,
    None,
}

fn response_kind(status: &str, response: &Value) -> Kind {
    let content = response.get("content").and_then(Value::as_object);
    let json = content.and_then(|c| {
        c.iter().find(|(media, _)| media.as_str() == "application/json" || media.starts_with("application/json;"))
    });
    match json {
        Some((_, media)) => Kind::Json(media.get("schema").unwrap_or(&json!({})).to_string()),
        None if status == "101" => Kind::Upgrade,
        None if content.is_some_and(|c| !c.is_empty()) => Kind::Raw,
        None => Kind::None,
    }
}

/// Progenitor's view of the shared document: see the module's documentation. Answers the
/// replacements progenitor is to make (`styles::for_client`, `status_errors`) and the operations
/// whose errors are typed per status.
pub(crate) fn for_client(doc: &mut Value) -> Result<(Replacements, Vec<ErrorEnum>)> {
    let mut replacements = super::styles::for_client(doc)?;
    let mut errors = Vec::new();
    super::events::for_client(doc)?;
    let components = doc.get("components").cloned().unwrap_or_else(|| json!({}));
    let mut schemas = components.get("schemas").and_then(Value::as_object).cloned().unwrap_or_default();
    let mut names = Names::new(&schemas);
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return Ok((replacements, errors)) };
    for (path, item) in paths.iter_mut() {
        for method in METHODS {
            let Some(operation) = item.get_mut(method) else { continue };
            let at = ["paths", path.as_str(), method];
            client_parameters(operation);
            client_body(operation, &components, &at)?;
            let mut named = Named { schemas: &mut schemas, names: &mut names, replacements: &mut replacements };
            errors.extend(client_responses(operation, &components, &mut named, &at)?);
        }
    }
    if !schemas.is_empty() {
        doc["components"]["schemas"] = Value::Object(schemas);
    }
    Ok((replacements, errors))
}

/// A path or header parameter is sent as text, present or not: a `nullable` one (FastAPI's
/// `bool | None`) would be an `Option` that progenitor's client formats as if it were a value.
fn client_parameters(operation: &mut Value) {
    for parameter in operation.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten() {
        if matches!(parameter.get("in").and_then(Value::as_str), Some("path" | "header"))
            && let Some(schema) = parameter.get_mut("schema").and_then(Value::as_object_mut)
        {
            schema.remove("nullable");
        }
    }
}

/// The one media type progenitor's client sends (`media::chosen`): JSON when offered, else form,
/// bytes or text.
fn client_body(operation: &mut Value, components: &Value, at: &[&str]) -> Result<()> {
    let Some(body) = operation.get("requestBody") else { return Ok(()) };
    let mut body = resolve(body, components, "requestBodies").cloned().unwrap_or_default();
    let Some(content) = body.get("content").and_then(Value::as_object) else { return Ok(()) };
    let Some((media, chosen)) = super::media::chosen(content) else {
        let offered: Vec<&String> = content.keys().collect();
        bail!(
            format!("{}/requestBody", pointer(at)),
            "offered as {offered:?}; the client sends a body in a media type it can name: not a range \
             (`image/*`), not multipart other than multipart/form-data"
        );
    };
    // progenitor writes JSON as application/json only, and no media type it does not know; the
    // request hook relabels them (`media`).
    let media = super::media::as_progenitor_writes(media).to_owned();
    let mut chosen = chosen.clone();
    if let Some(chosen) = chosen.as_object_mut() {
        chosen.remove("encoding");
    }
    if essence(&media) == "multipart/form-data" {
        super::multipart::for_client(operation, &mut body, chosen, at)?;
        return Ok(());
    }
    match essence(&media).as_str() {
        "application/octet-stream" => chosen["schema"] = json!({"type": "string", "format": "binary"}),
        "text/plain" | "text/x-markdown" => chosen["schema"] = json!({"type": "string"}),
        _ if chosen.get("schema").is_none() => chosen["schema"] = json!({}),
        _ => {}
    }
    body["content"] = json!({ media: chosen });
    operation["requestBody"] = body;
    Ok(())
}

/// The schemas the view adds, the names they take, and the replacements progenitor is to make.
struct Named<'a> {
    schemas: &'a mut Map<String, Value>,
    names: &'a mut Names,
    replacements: &'a mut Replacements,
}

/// One success type and one error type per operation, as progenitor requires: error statuses
/// with differing bodies become one enum of them (`status_errors`), differing JSON success
/// schemas one `oneOf` (`{Op}Success`), any other mix of successes a raw response; a `default`
/// that would be a third type is left out (the client then reports those statuses as
/// unexpected, with the response). Answers the operation's error enum, where it has one.
fn client_responses(
    operation: &mut Value,
    components: &Value,
    named: &mut Named,
    at: &[&str],
) -> Result<Option<ErrorEnum>> {
    let id = operation["operationId"].as_str().unwrap_or_default().to_string();
    // dropshot's websocket: its `default` is the protocol switch, which progenitor reads itself.
    let websocket = operation.get("x-dropshot-websocket").is_some();
    let Some(responses) = operation.get_mut("responses").and_then(Value::as_object_mut) else { return Ok(None) };
    for response in responses.values_mut() {
        let mut resolved = resolve(response, components, "responses").cloned().unwrap_or_default();
        for media in resolved.get_mut("content").and_then(Value::as_object_mut).into_iter().flat_map(|c| c.values_mut())
        {
            if let Some(media) = media.as_object_mut() {
                media.remove("encoding");
                media.entry("schema").or_insert_with(|| json!({}));
            }
        }
        *response = resolved;
    }
    let class = |status: &str| -> Option<bool> {
        match status {
            "101" | "2XX" | "2xx" => Some(true),
            "4XX" | "5XX" | "4xx" | "5xx" => Some(false),
            _ => match status.parse::<u16>() {
                Ok(200..=299) => Some(true),
                Ok(400..=599) => Some(false),
                _ => None,
            },
        }
    };
    // A success listed (a 3xx counts: progenitor answers it too): else `default` is the success.
    let success_listed = responses.keys().any(|s| class(s) == Some(true) || s.starts_with('3'));
    let errors = match websocket {
        true => None,
        false => {
            super::status_errors::plan(&id, responses, success_listed, named.schemas, named.names, named.replacements)
        }
    };
    for (success, suffix) in [(true, "success"), (false, "error")] {
        if !success && errors.is_some() {
            continue;
        }
        let statuses: Vec<String> = responses.keys().filter(|s| class(s) == Some(success)).cloned().collect();
        let kinds: BTreeSet<Kind> = statuses.iter().map(|s| response_kind(s, &responses[s])).collect();
        if kinds.len() <= 1 {
            continue;
        }
        if kinds.contains(&Kind::Upgrade) {
            bail!(
                format!("{}/responses/101", pointer(at)),
                "a protocol switch beside other success responses is not supported"
            );
        }
        if kinds.iter().all(|k| matches!(k, Kind::Json(_))) {
            let name = named.names.claim(&rust_name(&format!("{id}-{suffix}"), true));
            let variants: Vec<Value> = kinds
                .iter()
                .map(|k| match k {
                    Kind::Json(schema) => serde_json::from_str(schema).expect("serialised above"),
                    _ => unreachable!(),
                })
                .collect();
            named.schemas.insert(name.clone(), json!({ "oneOf": variants }));
            for status in &statuses {
                let media = json_media(&mut responses[status]);
                media["schema"] = json!({ "$ref": format!("#/components/schemas/{name}") });
            }
        } else {
            for status in &statuses {
                responses[status]["content"] = json!({ "*/*": { "schema": {} } });
            }
        }
    }
    if let Some(default) = responses.get("default") {
        let kind = response_kind("default", default);
        let differs =
            |success: bool| responses.iter().any(|(s, r)| class(s) == Some(success) && response_kind(s, r) != kind);
        // Errors listed beside a `default` and no success: progenitor would make `default` the
        // success and the error both, then add a catch-all arm no value reaches (refused under
        // `-D warnings`); without it, it reads any 2xx as a success of no type, as the document
        // says nothing of one.
        let errors_listed = responses.len() > 1;
        if differs(true) || differs(false) || (!success_listed && errors_listed && !websocket) {
            responses.remove("default");
        }
    }
    Ok(errors)
}

/// The JSON media type entry of a response (the one `response_kind` found).
fn json_media(response: &mut Value) -> &mut Value {
    let content = response["content"].as_object_mut().expect("a JSON response has content");
    let key = content
        .keys()
        .find(|m| m.as_str() == "application/json" || m.starts_with("application/json;"))
        .cloned()
        .expect("a JSON response has a JSON media type");
    &mut content[&key]
}
