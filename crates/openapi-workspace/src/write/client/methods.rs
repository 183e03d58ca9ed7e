//! Operations of methods OpenAPI 3.0 has no field for: 3.2's `query` (the QUERY method) and its
//! `additionalOperations` (any other method, spelt as it is sent). openapiv3 and progenitor know
//! 3.0's eight methods only, so the view every document is read through (`openapi32`) keeps each
//! such operation as a `post` at `{path}~{METHOD}`, marked with [`EXTENSION`]; the server model
//! routes it at its own path and method ([`route`]) and the client's request hook ([`hook`])
//! sends it so. Pointers into the view are turned back into the document's (`Spec::locate`).

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::Value;

use crate::read::Spec;
use crate::read::document::METHODS;
use crate::read::marks::{METHOD as EXTENSION, view_path};

/// The request hook's part for moved operations: `None` when the document has none.
pub(crate) fn hook(spec: &Spec) -> Option<TokenStream> {
    let components = spec.raw.get("components").unwrap_or(&Value::Null);
    let mut arms = Vec::new();
    for item in spec.raw.get("paths").and_then(Value::as_object).into_iter().flat_map(|paths| paths.values()) {
        for operation in METHODS.iter().filter_map(|m| item.get(*m)) {
            let Some(method) = operation.get(EXTENSION).and_then(Value::as_str) else { continue };
            let suffix = view_path("", method);
            let ids = super::events::hook_names(operation, components);
            arms.push(quote!(#(#ids)|* => (#method, #suffix),));
        }
    }
    if arms.is_empty() {
        return None;
    }
    Some(quote! {
        /// Sends an operation of a method progenitor has no word for (OpenAPI 3.2's QUERY and
        /// `additionalOperations`) with its method, to its own path.
        fn send_with_its_method(operation_id: &str, request: &mut reqwest::Request) {
            let (method, suffix) = match operation_id {
                #(#arms)*
                _ => return,
            };
            let path = request.url().path();
            let path = path.strip_suffix(suffix).unwrap_or(path).to_owned();
            request.url_mut().set_path(&path);
            *request.method_mut() = reqwest::Method::from_bytes(method.as_bytes()).expect("the generator checked the method");
        }
    })
}

/// progenitor's documentation of the client, saying how each moved operation is sent: its
/// method, to its own path (progenitor says `POST`, to the view's).
pub(crate) fn client_docs(spec: &Spec, client: &str) -> String {
    let mut client = client.to_owned();
    for (path, item) in spec.raw.get("paths").and_then(Value::as_object).into_iter().flatten() {
        let Some(method) = item.pointer(&format!("/post/{EXTENSION}")).and_then(Value::as_str) else { continue };
        let own = path.strip_suffix(&view_path("", method)).unwrap_or(path);
        client = client
            .replace(&format!("Sends a `POST` request to `{path}`"), &format!("Sends a `{method}` request to `{own}`"));
    }
    client
}
