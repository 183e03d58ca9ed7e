//! The `Api` trait's parts: each operation's method, and the types its parameters and body are
//! handed in (the query struct, the body enum of its media types, a multipart body's parts).

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use serde_json::Value;

use super::doc_lines;
use super::validation::literal;
use crate::model::names::TypeKind;
use crate::model::operation::{self as model, MediaKind, Op};

pub(super) fn trait_method(op: &Op, rt: &syn::Path) -> TokenStream {
    let mut doc = op.doc.clone();
    if !op.errors.is_empty() {
        doc.push_str(&format!(
            "\n\nIts documented errors in the error object ({}) are answered as `Err(ApiError)`.",
            super::responses::statuses(&op.errors)
        ));
    }
    let doc = doc_lines(&doc);
    let name = &op.fn_name;
    let operation_id = &op.operation_id;
    let caller = if op.secured() { quote!(P) } else { quote!(()) };
    let mut unused = vec![quote!(context)];
    let param_args = op.path_params.iter().chain(&op.header_params).chain(&op.cookie_params).map(|p| {
        let (ident, ty) = (&p.ident, &p.ty);
        unused.push(ident.to_token_stream());
        let optional = !p.required && p.default.is_none();
        if optional { quote!(#ident: Option<#ty>,) } else { quote!(#ident: #ty,) }
    });
    let param_args: Vec<TokenStream> = param_args.collect();
    let query_arg = (!op.query_params.is_empty()).then(|| {
        unused.push(quote!(query));
        let ty = op.ident("Query");
        quote!(query: #ty,)
    });
    let body_arg = op.body.as_ref().map(|b| {
        unused.push(quote!(body));
        let ty = body_type(op);
        if b.required { quote!(body: #ty,) } else { quote!(body: Option<#ty>,) }
    });
    let output = op.ident("Response");
    quote! {
        #(#doc)*
        fn #name(
            &self,
            context: RequestContext<#caller>,
            #(#param_args)*
            #query_arg
            #body_arg
        ) -> impl Future<Output = Result<#output, ApiError>> + Send {
            let _ = (#(#unused,)*);
            async { Err(#rt::not_implemented(#operation_id)) }
        }
    }
}

/// The type of the operation's body argument: the one media type's, or the enum of them.
pub(super) fn body_type(op: &Op) -> TokenStream {
    match op.body.as_ref().map(|b| b.media.as_slice()) {
        Some([only]) => only.kind.ty(),
        _ => op.ident("Body").into_token_stream(),
    }
}

/// The struct of a multipart body: a field per part, files as the runtime's `multipart::File`.
pub(super) fn parts_struct(op: &Op, rt: &syn::Path) -> Option<TokenStream> {
    let body = op.body.as_ref()?;
    let [model::Media { kind: MediaKind::Multipart { ty, fields, .. }, .. }] = body.media.as_slice() else {
        return None;
    };
    let doc = format!(" The parts of [`Api::{}`]'s `multipart/form-data` body.", op.fn_name);
    let fields = fields.iter().map(|f| {
        let ident = &f.ident;
        let docs = f.doc.as_deref().map(doc_lines).unwrap_or_default();
        let ty = match &f.kind {
            model::PartKind::File { .. } => quote!(#rt::multipart::File),
            model::PartKind::Files { .. } => quote!(::std::vec::Vec<#rt::multipart::File>),
            model::PartKind::Value { ty, .. } => ty.clone(),
        };
        let ty = if f.required || matches!(f.kind, model::PartKind::Files { .. }) { ty } else { quote!(Option<#ty>) };
        quote! { #(#docs)* pub #ident: #ty, }
    });
    Some(quote! {
        #[doc = #doc]
        #[derive(Debug)]
        pub struct #ty {
            #(#fields)*
        }
    })
}

/// The enum of a body offered in several media types: one variant per media type.
pub(super) fn body_enum(op: &Op) -> Option<TokenStream> {
    let body = op.body.as_ref().filter(|b| b.media.len() > 1)?;
    let ident = op.ident("Body");
    let doc = format!(" The body of [`Api::{}`], in the media type the request's `Content-Type` names.", op.fn_name);
    let variants = body.media.iter().map(|m| {
        let (variant, ty) = (&m.variant, m.kind.ty());
        let doc = format!(" `{}`", m.media_type);
        quote! { #[doc = #doc] #variant(#ty), }
    });
    Some(quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, PartialEq)]
        pub enum #ident {
            #(#variants)*
        }
    })
}

pub(super) fn query_struct(op: &Op) -> Option<TokenStream> {
    if op.query_params.is_empty() {
        return None;
    }
    let ident = op.ident("Query");
    let doc = format!(" Query parameters of [`Api::{}`].", op.fn_name);
    let mut defaults = Vec::new();
    let fields = op
        .query_params
        .iter()
        .map(|p| {
            let (field, ty, name) = (&p.ident, &p.ty, &p.name);
            let doc = p.doc.as_deref().map(doc_lines).unwrap_or_default();
            let rename =
                (field.to_string().trim_start_matches("r#") != name.as_str()).then(|| quote!(#[serde(rename = #name)]));
            if let Some(default) = &p.default {
                // An associated function of the query's struct: named after the operation and the
                // field alone, `get_search` + `members_limit` and `get_search_members` + `limit` would meet.
                let fn_ident = format_ident!("{}_default", field.to_string().trim_start_matches("r#"));
                let fn_path = format!("{ident}::{fn_ident}");
                let value = match default {
                    // A string default of a type that is not a `String` (a date-time, a UUID, an
                    // enum) is parsed; `repair` has checked it reads as its format.
                    Value::String(text) if p.kind != TypeKind::Text => {
                        quote!(#text.parse().expect("the document's default parses as its type"))
                    }
                    // `1` for a `number`: a float literal, as an `f64` takes no integer one.
                    Value::Number(n) if n.is_i64() && matches!(quote!(#ty).to_string().as_str(), "f64" | "f32") => {
                        let n = proc_macro2::Literal::f64_unsuffixed(n.as_f64().unwrap_or_default());
                        quote!(#n)
                    }
                    _ => literal(default),
                };
                defaults.push(quote! {
                    fn #fn_ident() -> #ty { #value }
                });
                quote! {
                    #(#doc)*
                    #rename
                    #[serde(default = #fn_path)]
                    pub #field: #ty,
                }
            } else if p.required {
                quote! { #(#doc)* #rename pub #field: #ty, }
            } else {
                quote! {
                    #(#doc)*
                    #rename
                    #[serde(default, skip_serializing_if = "Option::is_none")]
                    pub #field: Option<#ty>,
                }
            }
        })
        .collect::<Vec<_>>();
    let defaults = (!defaults.is_empty()).then(|| quote!(impl #ident { #(#defaults)* }));
    Some(quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct #ident {
            #(#fields)*
        }

        #defaults
    })
}
