//! Each operation's response enum: one variant per documented status, carrying the body's model
//! and typed header fields, and how each variant becomes an HTTP response. The errors whose body
//! is the error object have none: they are answered as `Err(ApiError)` (ARCHITECTURE.md, "One
//! channel for errors").

use heck::ToShoutySnakeCase;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::doc_lines;
use crate::model::operation::{Op, ReplyBody, Status, status_name};

/// The status as a constant of `http::StatusCode` where it has one.
fn status_tokens(code: u16) -> TokenStream {
    match status_name(code) {
        Some(name) => {
            let constant = format_ident!("{}", name.to_shouty_snake_case());
            quote!(StatusCode::#constant)
        }
        None => quote!(StatusCode::from_u16(#code).expect("a valid status")),
    }
}

/// The statuses as the document writes them, `400`, `4XX` or `default`, joined.
pub(super) fn statuses(statuses: &[Status]) -> String {
    let each = statuses.iter().map(|status| match status {
        Status::Code(code) => format!("`{code}`"),
        Status::Range(class) => format!("`{class}XX`"),
        Status::Default => "`default`".to_string(),
    });
    each.collect::<Vec<_>>().join(", ")
}

/// The operation's answers, one variant per documented status but the errors [`Op::errors`],
/// and how each becomes HTTP.
pub(crate) fn response_enum(op: &Op, rt: &syn::Path) -> TokenStream {
    let ident = op.ident("Response");
    let mut doc = format!(" What [`Api::{}`] answers: one variant per status the document lists", op.fn_name);
    if op.errors.is_empty() {
        doc.push('.');
    } else {
        doc.push_str(&format!(" but {}, answered as `Err(ApiError)`.", statuses(&op.errors)));
    }
    let variants = op.replies.iter().map(|reply| {
        let variant = &reply.variant;
        let status = match reply.status {
            Status::Code(code) => code.to_string(),
            Status::Range(class) => format!("{class}XX"),
            Status::Default => "default".to_string(),
        };
        let mut doc = format!("`{status}`");
        if !reply.doc.trim().is_empty() {
            doc.push_str(": ");
            doc.push_str(reply.doc.trim());
        }
        let doc = doc_lines(&doc);
        let body = reply.body.as_ref().map(|b| body_type(b, rt));
        let fixed = matches!(reply.status, Status::Code(_));
        match (&body, reply.headers.is_empty() && fixed) {
            (None, true) => quote! { #(#doc)* #variant, },
            (Some(body), true) => quote! { #(#doc)* #variant(#body), },
            (body, false) => {
                let status = (!fixed).then(|| {
                    quote! {
                        /// The status to answer with.
                        status: StatusCode,
                    }
                });
                let body = body.as_ref().map(|ty| quote!(body: #ty,));
                let headers = reply.headers.iter().map(|h| {
                    let (field, ty) = (&h.ident, &h.ty);
                    let doc = doc_lines(&format!(
                        "The `{}` header{}",
                        h.name,
                        h.doc.as_deref().map(|d| format!(": {d}")).unwrap_or_default()
                    ));
                    if h.required { quote!(#(#doc)* #field: #ty,) } else { quote!(#(#doc)* #field: Option<#ty>,) }
                });
                quote! { #(#doc)* #variant { #status #body #(#headers)* }, }
            }
        }
    });
    let arms = op.replies.iter().map(|reply| {
        let variant = &reply.variant;
        let fixed = matches!(reply.status, Status::Code(_));
        // A class or `default` carries the status; one outside the class is the server's fault
        // (`in_class` below).
        let status = match reply.status {
            Status::Code(code) => status_tokens(code),
            Status::Range(_) | Status::Default => quote!(status),
        };
        let respond = match &reply.body {
            Some(ReplyBody::Json(_)) => quote!(#rt::json_response(#status, &body)),
            Some(ReplyBody::Raw { media_type }) => quote!(#rt::raw_response(#status, body, #media_type)),
            Some(ReplyBody::Upgrade) => quote!(body),
            Some(ReplyBody::Events(_)) => quote!(#rt::events::response(#status, body)),
            Some(ReplyBody::Items { media_type, .. }) => quote!(#rt::items::response(#status, #media_type, body)),
            Some(ReplyBody::Negotiated { .. }) => quote!(#rt::events::negotiated_response(#status, body)),
            None => quote!(#rt::empty_response(#status)),
        };
        let body_field = reply.body.as_ref().map(|_| quote!(body,));
        if reply.headers.is_empty() && fixed {
            return match &reply.body {
                None => quote! { Self::#variant => #respond, },
                Some(_) => quote! { Self::#variant(body) => #respond, },
            };
        }
        let status_field = (!fixed).then(|| quote!(status,));
        let in_class = |respond: TokenStream| match reply.status {
            Status::Range(class) => quote!(#rt::in_class(status, #class, |status| #respond)),
            _ => respond,
        };
        if reply.headers.is_empty() {
            let respond = in_class(respond);
            return quote! { Self::#variant { #status_field #body_field } => #respond, };
        }
        let fields = reply.headers.iter().map(|h| &h.ident);
        let sets = reply.headers.iter().map(|h| {
            let (field, name) = (&h.ident, &h.name);
            let value = if h.required { quote!(Some(&#field)) } else { quote!(#field.as_ref()) };
            quote! { #rt::set_header(&mut response, #name, #value); }
        });
        let respond = in_class(quote!({
            let mut response = #respond;
            #(#sets)*
            response
        }));
        quote! { Self::#variant { #status_field #body_field #(#fields),* } => #respond, }
    });
    // `From` for a success that carries only a body of a type no other variant carries, so an
    // implementation can answer `Ok(balance.into())`.
    let json_body = |reply: &crate::model::operation::Reply| match &reply.body {
        Some(ReplyBody::Json(ty)) => Some(ty.clone()),
        _ => None,
    };
    let body_types: Vec<String> = op.replies.iter().filter_map(|r| json_body(r).map(|b| b.to_string())).collect();
    let froms = op.replies.iter().filter_map(|reply| {
        let Status::Code(200..=299) = reply.status else { return None };
        let body = json_body(reply)?;
        if !reply.headers.is_empty() || body_types.iter().filter(|t| **t == body.to_string()).count() != 1 {
            return None;
        }
        let variant = &reply.variant;
        Some(quote! {
            impl From<#body> for #ident {
                fn from(body: #body) -> Self {
                    Self::#variant(body)
                }
            }
        })
    });
    // Raw bodies, upgrades, events and items hold a stream, which can be neither cloned nor compared.
    let streams = op.replies.iter().any(|r| {
        matches!(
            r.body,
            Some(
                ReplyBody::Raw { .. }
                    | ReplyBody::Upgrade
                    | ReplyBody::Events(_)
                    | ReplyBody::Items { .. }
                    | ReplyBody::Negotiated { .. },
            )
        )
    });
    let derives = if streams { quote!(#[derive(Debug)]) } else { quote!(#[derive(Debug, Clone, PartialEq)]) };
    // An answer written once, for answers that do not change: a stream is read once, so has none.
    let (prepared, prepared_arm) = match streams {
        true => (None, None),
        false => (
            Some({
                let rt_path = quote!(#rt).to_string().replace(' ', "");
                let doc = doc_lines(&format!(
                    "One of the answers above written once ([`{rt_path}::Prepared::new`]) and answered as \
                     written, for an answer that is the same every time."
                ));
                quote! { #(#doc)* Prepared(#rt::Prepared<Self>), }
            }),
            Some(quote! { Self::Prepared(prepared) => axum::response::IntoResponse::into_response(prepared), }),
        ),
    };
    quote! {
        #[doc = #doc]
        #derives
        pub enum #ident {
            #(#variants)*
            #prepared
        }

        impl axum::response::IntoResponse for #ident {
            fn into_response(self) -> Response {
                match self {
                    #(#arms)*
                    #prepared_arm
                }
            }
        }

        #(#froms)*
    }
}

fn body_type(body: &ReplyBody, rt: &syn::Path) -> TokenStream {
    match body {
        ReplyBody::Json(ty) => ty.clone(),
        ReplyBody::Raw { .. } => quote!(#rt::Raw),
        ReplyBody::Upgrade => quote!(Response),
        ReplyBody::Events(item) => quote!(#rt::events::EventStream<#item>),
        ReplyBody::Items { item, .. } => quote!(#rt::items::ItemStream<#item>),
        ReplyBody::Negotiated { json, item } => quote!(#rt::events::Negotiated<#json, #item>),
    }
}
