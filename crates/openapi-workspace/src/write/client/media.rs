//! The one media type the client sends an operation's body as, chosen once for progenitor's view
//! ([`chosen`]) and for the request hook ([`hook`]). progenitor writes JSON only as
//! `application/json`; a body offered only in another JSON media type (`application/merge-patch+json`,
//! `application/vnd.github+json`) is JSON to progenitor, and the hook then labels the request
//! with the media type the document asked for, so the server sees what it offers. Likewise a
//! body offered only in a media type progenitor does not know (`image/png`, OpenAI's
//! `application/sdp`) is bytes to progenitor (`application/octet-stream`), relabelled by the hook:
//! the server takes such a body as bytes too.

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::{Map, Value};

use crate::read::Spec;
use crate::read::document::{METHODS, essence, is_json, resolve};

/// How much the client prefers a media type, lower first; `None` for one it cannot send.
fn rank(media: &str) -> Option<u8> {
    match essence(media).as_str() {
        "application/json" => Some(0),
        // Of JSON's other forms, a merge patch is the one a typed body means as it stands.
        "application/merge-patch+json" => Some(1),
        _ if is_json(media) => Some(2),
        "application/x-www-form-urlencoded" => Some(3),
        "application/octet-stream" => Some(4),
        "text/plain" | "text/x-markdown" => Some(5),
        // progenitor has no multipart: its bytes are sent as a body of their own (`multipart`).
        "multipart/form-data" => Some(6),
        // Any other media type, named whole (a range such as `image/*` names no one type to send),
        // and writable as a header value: bytes, relabelled.
        other if !other.starts_with("multipart/") && !other.contains('*') && header_text(media) => Some(BYTES),
        _ => None,
    }
}

/// The media type the client sends a body of `content` as, and its entry; `None` if it can
/// send none of them.
pub(crate) fn chosen(content: &Map<String, Value>) -> Option<(&String, &Value)> {
    content.iter().filter(|(media, _)| rank(media).is_some()).min_by_key(|(media, _)| rank(media))
}

/// The media type the hook puts on a request in place of progenitor's (`application/json` for
/// JSON, `application/octet-stream` for bytes).
pub(crate) fn relabelled(media: &str) -> Option<&str> {
    let json = is_json(media) && essence(media) != "application/json";
    // A header value is visible ASCII: any other media type is left as progenitor sends it.
    ((json && header_text(media)) || rank(media) == Some(BYTES)).then_some(media)
}

/// The rank of a media type sent as bytes under its own label.
const BYTES: u8 = 7;

/// What progenitor writes a body of `media` as: itself, or what the hook relabels.
pub(crate) fn as_progenitor_writes(media: &str) -> &str {
    match relabelled(media) {
        Some(_) if is_json(media) => "application/json",
        Some(_) => "application/octet-stream",
        None => media,
    }
}

fn header_text(media: &str) -> bool {
    media.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// The request hook's part for bodies sent in a media type progenitor does not write (another
/// JSON media type, bytes of another): `None` when the document has none.
pub(crate) fn hook(spec: &Spec) -> Option<TokenStream> {
    let components = spec.raw.get("components").unwrap_or(&Value::Null);
    let mut arms = Vec::new();
    for item in spec.raw.get("paths").and_then(Value::as_object).into_iter().flat_map(|paths| paths.values()) {
        for operation in METHODS.iter().filter_map(|m| item.get(*m)) {
            let Some(body) = operation.get("requestBody").and_then(|b| resolve(b, components, "requestBodies")) else {
                continue;
            };
            let Some(content) = body.get("content").and_then(Value::as_object) else { continue };
            let Some(media) = chosen(content).and_then(|(media, _)| relabelled(media)) else { continue };
            let ids = super::events::hook_names(operation, components);
            arms.push(quote!(#(#ids)|* => #media,));
        }
    }
    if arms.is_empty() {
        return None;
    }
    Some(quote! {
        /// Labels a body with the media type its operation offers (progenitor writes every JSON
        /// body as `application/json`, and bytes in a media type it does not know as
        /// `application/octet-stream`).
        fn send_as_its_media_type(operation_id: &str, request: &mut reqwest::Request) {
            let media = match operation_id {
                #(#arms)*
                _ => return,
            };
            if request.body().is_some() {
                request.headers_mut().insert(
                    reqwest::header::CONTENT_TYPE,
                    reqwest::header::HeaderValue::from_static(media),
                );
            }
        }
    })
}

/// Every form body the client sends written by the runtime's `client::form` rather than by
/// progenitor's `form_urlencoded`, whose serde_urlencoded refuses nested values (an object, an
/// array): `builder.form_urlencoded(&body)` becomes `client::form::body(builder, &body)`, its
/// error progenitor's `InvalidRequest`.
pub(super) fn nested_forms(item: &mut syn::Item) {
    struct Forms;
    impl syn::visit_mut::VisitMut for Forms {
        fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
            syn::visit_mut::visit_expr_mut(self, expr);
            let syn::Expr::MethodCall(call) = expr else { return };
            if call.method != "form_urlencoded" || call.args.len() != 1 {
                return;
            }
            let (receiver, body) = (&call.receiver, &call.args[0]);
            *expr = syn::parse_quote!(
                openapi_workspace_runtime::client::form::body(#receiver, #body)
                    .map_err(progenitor_client::Error::InvalidRequest)
            );
        }
    }
    syn::visit_mut::VisitMut::visit_item_mut(&mut Forms, item);
}
