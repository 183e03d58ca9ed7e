//! `multipart/form-data` bodies on the client. progenitor has no multipart: in its view of the
//! document such a body is `application/octet-stream` bytes and the operation takes a
//! `Content-Type` header; the client gains `{Op}Parts` (the parts, files as
//! `multipart::Upload`) and `.parts(parts)` on the operation's builder, which encodes them as a
//! streaming multipart body (the runtime's `client::multipart`) and sets
//! both. The server's side is the server model's `MediaKind::Multipart` and the runtime's
//! `multipart`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::{Value, json};

use crate::error::{Result, bail};
use crate::model::operation::{MediaKind, Op, PartKind, PartRead};
use crate::read::document::pointer;

/// progenitor's view of a multipart body (`body`, the operation's `requestBody`; `chosen`, its
/// multipart media type): bytes, and a `Content-Type` header for the boundary.
pub(crate) fn for_client(operation: &mut Value, body: &mut Value, mut chosen: Value, at: &[&str]) -> Result<()> {
    if let Some(chosen) = chosen.as_object_mut() {
        chosen.remove("encoding");
    }
    chosen["schema"] = json!({"type": "string", "format": "binary"});
    body["content"] = json!({ "application/octet-stream": chosen });
    operation["requestBody"] = body.clone();
    let parameters =
        operation.as_object_mut().expect("an operation is an object").entry("parameters").or_insert(json!([]));
    let Some(parameters) = parameters.as_array_mut() else { return Ok(()) };
    let taken = parameters.iter().any(|p| {
        p.get("in").and_then(Value::as_str) == Some("header")
            && p.get("name").and_then(Value::as_str).is_some_and(|n| n.eq_ignore_ascii_case("content-type"))
    });
    if taken {
        bail!(pointer(at), "a multipart body beside a Content-Type header parameter is not supported");
    }
    parameters.push(json!({
        "name": "Content-Type",
        "in": "header",
        "description": "Set by `.parts(…)`, with the body: `multipart/form-data` and its boundary.",
        "schema": {"type": "string"},
    }));
    Ok(())
}

/// The client's parts structs and builders' `.parts`; `None` when no operation takes multipart.
pub(crate) fn client(ops: &[Op]) -> Option<TokenStream> {
    let mut items = Vec::new();
    for op in ops {
        let Some(body) = &op.body else { continue };
        let [media] = body.media.as_slice() else { continue };
        let MediaKind::Multipart { ty, fields, .. } = &media.kind else { continue };
        let builder = format_ident!("{}", op.type_name);
        let doc = format!(" The parts of [`Client::{}`]'s `multipart/form-data` body, for `.parts(…)`.", op.fn_name);
        let struct_fields = fields.iter().map(|f| {
            let ident = &f.ident;
            let ty = match &f.kind {
                PartKind::File { .. } => quote!(multipart::Upload),
                PartKind::Files { .. } => quote!(::std::vec::Vec<multipart::Upload>),
                PartKind::Value { ty, .. } => ty.clone(),
            };
            let ty = if f.required || matches!(f.kind, PartKind::Files { .. }) { ty } else { quote!(Option<#ty>) };
            quote! { pub #ident: #ty, }
        });
        let pushes = fields.iter().map(|f| {
            let (ident, name) = (&f.ident, &f.name);
            let one = |value: TokenStream| match &f.kind {
                PartKind::File { .. } | PartKind::Files { .. } => quote!(multipart::Part::file(#name, #value)),
                PartKind::Value { read: PartRead::Json, .. } => quote!(multipart::Part::json(#name, &#value)),
                PartKind::Value { .. } => quote!(multipart::Part::text(#name, &#value)),
            };
            let many = matches!(f.kind, PartKind::Files { .. } | PartKind::Value { read: PartRead::Texts(_), .. });
            let each = one(quote!(value));
            match (many, f.required || matches!(f.kind, PartKind::Files { .. })) {
                (true, true) => quote! { for value in self.#ident { parts.push(#each); } },
                (true, false) => quote! { for value in self.#ident.into_iter().flatten() { parts.push(#each); } },
                (false, true) => {
                    let part = one(quote!(self.#ident));
                    quote! { parts.push(#part); }
                }
                (false, false) => quote! { if let Some(value) = self.#ident { parts.push(#each); } },
            }
        });
        items.push(quote! {
            #[doc = #doc]
            #[derive(Debug)]
            pub struct #ty {
                #(#struct_fields)*
            }

            impl #ty {
                fn into_parts(self) -> Vec<multipart::Part> {
                    let mut parts = Vec::new();
                    #(#pushes)*
                    parts
                }
            }

            impl<'a> builder::#builder<'a> {
                /// The body: `parts`, encoded as `multipart/form-data` as they stream out.
                pub fn parts(self, parts: #ty) -> Self {
                    let (content_type, body) = multipart::encode(parts.into_parts());
                    self.content_type(content_type).body(body)
                }
            }
        });
    }
    if items.is_empty() {
        return None;
    }
    Some(quote! {
        pub use openapi_workspace_runtime::client::multipart;
        #(#items)*
    })
}
