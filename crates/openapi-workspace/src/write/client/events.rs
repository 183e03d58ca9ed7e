//! Server-sent events on the client. progenitor answers an operation whose response is
//! `text/event-stream` with the response's bytes; for each such operation the client gains
//! `{operation}_events`, a stream of the document's event type (the runtime's
//! `client::events`), which reconnects with `Last-Event-ID` when the operation takes it.
//! The server's side is the server model's `ReplyBody::Events` and the runtime's `events`.
//!
//! An operation offering JSON and events for one status answers what `Accept` asks for. progenitor
//! takes one type per response, so its view of the document keeps the JSON on the operation and
//! adds a twin, `{operationId}EventStream` at `{path}~events`, answering the events; the request
//! hook sends the twin to the operation's own path with `Accept: text/event-stream`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::{Value, json};

use crate::error::{Result, bail};
use crate::model::operation::{Op, ReplyBody, Status};
use crate::read::Spec;
use crate::read::document::{essence, is_json, pointer, resolve, rust_name};

/// What a twin's path template ends with.
const TWIN: &str = "~events";

/// Whether `media` (a response's `content`) offers JSON and events, and nothing else.
fn both(content: &Value) -> bool {
    let Some(content) = content.as_object() else { return false };
    content.len() == 2
        && content.keys().any(|m| is_json(m))
        && content.keys().any(|m| essence(m) == "text/event-stream")
}

/// Whether `operation` (normalised JSON) offers JSON and events for a success status.
pub(crate) fn negotiated(operation: &Value, components: &Value) -> bool {
    operation.get("responses").and_then(Value::as_object).into_iter().flatten().any(|(status, response)| {
        status.starts_with('2')
            && resolve(response, components, "responses").is_some_and(|r| r.get("content").is_some_and(both))
    })
}

/// The names the request hook knows `operation` by (progenitor's method names): its own, and its
/// twin's when it offers JSON and events (the twin is sent as the operation is).
pub(crate) fn hook_names(operation: &Value, components: &Value) -> Vec<String> {
    let id = operation["operationId"].as_str().expect("normalise gives every operation an id");
    let mut names = vec![rust_name(id, false)];
    if negotiated(operation, components) {
        names.push(rust_name(&twin_id(id), false));
    }
    names
}

/// The name of an operation's twin.
pub(crate) fn twin_id(operation_id: &str) -> String {
    format!("{operation_id}EventStream")
}

/// Adds the twin of each negotiated operation to progenitor's view of the document (see the
/// module's documentation).
pub(crate) fn for_client(doc: &mut Value) -> Result<()> {
    let components = doc.get("components").cloned().unwrap_or_else(|| json!({}));
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return Ok(()) };
    let mut twins = Vec::new();
    for (path, item) in paths.iter_mut() {
        for method in crate::read::document::METHODS {
            let Some(operation) = item.get_mut(method) else { continue };
            if !negotiated(operation, &components) {
                continue;
            }
            let mut twin = operation.clone();
            twin["operationId"] = json!(twin_id(operation["operationId"].as_str().unwrap_or_default()));
            for (keep_events, responses) in [(false, &mut operation["responses"]), (true, &mut twin["responses"])] {
                for (status, response) in responses.as_object_mut().into_iter().flatten() {
                    let mut resolved = resolve(response, &components, "responses").cloned().unwrap_or_default();
                    if !status.starts_with('2') || !resolved.get("content").is_some_and(both) {
                        continue;
                    }
                    if let Some(content) = resolved["content"].as_object_mut() {
                        content.retain(|media, _| (essence(media) == "text/event-stream") == keep_events);
                    }
                    *response = resolved;
                }
            }
            twins.push((format!("{path}{TWIN}"), method, twin, pointer(&["paths", path, method])));
        }
    }
    for (path, method, twin, at) in twins {
        if paths.get(&path).and_then(|item| item.get(method)).is_some() {
            bail!(at, "the client's path for its events, {path}, is taken");
        }
        paths.entry(path).or_insert_with(|| json!({}))[method] = twin;
    }
    Ok(())
}

/// Whether the events of the operation at `at` (its pointer in the normalised document) are of
/// a string type (their data is then the text itself, not its JSON).
fn text_events(spec: &Spec, at: &str) -> bool {
    let components = spec.raw.get("components").unwrap_or(&Value::Null);
    let Some(responses) = spec.raw.pointer(&format!("{at}/responses")) else {
        return false;
    };
    let schema = responses.as_object().into_iter().flatten().filter(|(status, _)| status.starts_with('2')).find_map(
        |(_, response)| {
            let content = resolve(response, components, "responses")?.get("content")?.as_object()?;
            let (_, media) = content.iter().find(|(media, _)| essence(media) == "text/event-stream")?;
            media.get("schema").cloned()
        },
    );
    let schema = schema.unwrap_or_default();
    let schema = crate::read::document::resolve_schema(&schema, components);
    schema.and_then(|s| s.get("type")).and_then(Value::as_str) == Some("string")
}

/// The request hook's part for the twins: `None` when the document has none.
pub(crate) fn hook(spec: &Spec) -> Option<TokenStream> {
    let components = spec.raw.get("components").unwrap_or(&Value::Null);
    let twins: Vec<String> = spec
        .raw
        .get("paths")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|paths| paths.values())
        .flat_map(|item| crate::read::document::METHODS.iter().filter_map(|m| item.get(*m)))
        .filter(|operation| negotiated(operation, components))
        .filter_map(|operation| Some(rust_name(&twin_id(operation["operationId"].as_str()?), false)))
        .collect();
    if twins.is_empty() {
        return None;
    }
    Some(quote! {
        /// Sends the twin of an operation offering JSON and events (its `…EventStream`) to the
        /// operation's own path, asking for events.
        fn ask_for_events(operation_id: &str, request: &mut reqwest::Request) {
            if ![#(#twins),*].contains(&operation_id) {
                return;
            }
            let path = request.url().path().trim_end_matches(#TWIN).to_owned();
            request.url_mut().set_path(&path);
            request
                .headers_mut()
                .insert(reqwest::header::ACCEPT, reqwest::header::HeaderValue::from_static("text/event-stream"));
        }
    })
}

/// The client's event streams; `None` when no operation answers events.
pub(crate) fn client(spec: &Spec, ops: &[Op]) -> Option<TokenStream> {
    let mut methods = Vec::new();
    for op in ops {
        let item = op.replies.iter().find_map(|reply| match (&reply.body, reply.status) {
            (Some(ReplyBody::Events(item)), Status::Code(200..=299) | Status::Range(2)) => Some((item, false)),
            (Some(ReplyBody::Negotiated { item, .. }), Status::Code(200..=299) | Status::Range(2)) => {
                Some((item, true))
            }
            _ => None,
        });
        let Some((item, twin)) = item else { continue };
        let resume = op.header_params.iter().find(|p| p.name == "last-event-id");
        // A negotiated operation's events come from its twin's builder.
        let (method, builder) = match twin {
            false => (op.fn_name.clone(), format_ident!("{}", op.type_name)),
            true => {
                let id = twin_id(&op.operation_id);
                (format_ident!("{}", rust_name(&id, false)), format_ident!("{}", rust_name(&id, true)))
            }
        };
        let events = format_ident!("{}_events", op.fn_name.to_string().trim_start_matches("r#"));
        let resumable = resume.is_some();
        let set_last = resume.map(|p| {
            let setter = &p.ident;
            quote! {
                let builder = match last_event_id {
                    Some(id) => builder.#setter(id),
                    None => builder,
                };
            }
        });
        let unused = resume.is_none().then(|| quote!(let _ = last_event_id;));
        let text = text_events(spec, &op.raw);
        let doc = format!(
            " The events of [`Client::{method}`], each read as the document's event type. `request` sets the\n \
             operation's parameters, as on its builder.{}",
            if resumable {
                "\n\n When the connection ends, the request is made again with `Last-Event-ID` set to the\n \
                 last event's id, so nothing is lost or repeated, until the server answers `204`; it waits\n \
                 the server's `retry:` time when it sent one."
            } else {
                "\n\n The operation takes no `Last-Event-ID`: the stream ends with the response."
            }
        );
        methods.push(quote! {
            #[doc = #doc]
            pub fn #events<'a>(
                &'a self,
                request: impl Fn(builder::#builder<'a>) -> builder::#builder<'a> + 'a,
            ) -> impl futures::Stream<Item = Result<events::Event<#item>, Error<impl std::fmt::Debug + 'a>>> + 'a {
                events::stream(
                    move |last_event_id: Option<String>| {
                        let builder = request(self.#method());
                        #set_last
                        #unused
                        builder.send()
                    },
                    #resumable,
                    #text,
                    self.inner.retries.policy.clone(),
                )
            }
        });
    }
    if methods.is_empty() {
        return None;
    }
    Some(quote! {
        pub use openapi_workspace_runtime::client::events;

        impl Client {
            #(#methods)*
        }
    })
}
