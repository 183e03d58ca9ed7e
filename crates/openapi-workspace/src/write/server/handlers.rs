//! Each operation's handler: authentication, then its parameters and body read, validated and
//! handed to the trait, and the answer written.

use std::collections::BTreeSet;

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;

use super::api_trait::body_type;
use super::routes::needs_uri;
use super::validation::{body_validator, checked_params, literal};
use crate::model::names::TypeKind;
use crate::model::operation::{self as model, MediaKind, Op};
use crate::model::security;
use crate::read::document::rust_name;
use crate::read::wire::Place;

/// The `Credential` enum: a variant per scheme some operation (or an unknown path) asks for.
pub(super) fn credential_enum(
    schemes: &[security::Scheme],
    ops: &[Op],
    unknown_path: Option<&security::Requirement>,
    rt: &syn::Path,
) -> Option<TokenStream> {
    let used: BTreeSet<usize> = ops
        .iter()
        .filter_map(|op| op.requirement.as_ref())
        .chain(unknown_path)
        .flat_map(|r| r.alternatives.iter().flatten().copied())
        .collect();
    if used.is_empty() {
        return None;
    }
    let variants = used.iter().map(|&i| {
        let scheme = &schemes[i];
        let (variant, fields, doc) = (&scheme.variant, scheme.variant_fields(), scheme.describe());
        quote! { #[doc = #doc] #variant #fields, }
    });
    let _ = rt;
    Some(quote! {
        /// A credential a request presented, named after the document's security scheme it came
        /// through; [`Api::authenticate`] receives those of the requirement the request meets.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Credential<'a> {
            #(#variants)*
        }
    })
}

/// The name of the function that authenticates a request against `requirement`: its schemes'
/// names, `_and_` within an alternative, `_or_` between them.
pub(super) fn authenticator_name(requirement: &security::Requirement, schemes: &[security::Scheme]) -> Ident {
    let alternatives: Vec<String> = requirement
        .alternatives
        .iter()
        .map(|together| together.iter().map(|&i| rust_name(&schemes[i].name, false)).collect::<Vec<_>>().join("_and_"))
        .collect();
    format_ident!("authenticate_{}", alternatives.join("_or_"))
}

/// Whether authenticating against `requirement` reads the URI (an api key in the query), and
/// whether it reads the headers (every other scheme).
pub(super) fn reads(requirement: &security::Requirement, schemes: &[security::Scheme]) -> (bool, bool) {
    let mut used = requirement.alternatives.iter().flatten().map(|&i| schemes[i].needs_uri());
    (used.clone().any(|uri| uri), used.any(|uri| !uri))
}

/// The function that authenticates a request (its `headers`, and its `uri` when an api key is
/// in the query) against `requirement`, one per requirement the document has: the caller found
/// by the first alternative whose credentials the request presents and `Api::authenticate`
/// accepts, or the `401` naming what to send.
pub(super) fn authenticator(
    requirement: &security::Requirement,
    schemes: &[security::Scheme],
    rt: &syn::Path,
) -> TokenStream {
    let name = authenticator_name(requirement, schemes);
    let (challenge, hint) = (&requirement.challenge, &requirement.hint);
    let attempts = requirement.alternatives.iter().map(|together| {
        let found: Vec<Ident> = (0..together.len()).map(|k| format_ident!("found_{}", k)).collect();
        let extract = together.iter().map(|&i| schemes[i].extract(rt));
        let credentials = together.iter().zip(&found).map(|(&i, f)| schemes[i].credential(f));
        quote! {
            if let (#(Some(#found),)*) = (#(#extract,)*) {
                match <A as Api<P>>::authenticate(api, &[#(#credentials),*]).await {
                    Ok(caller) => return Ok(caller),
                    Err(error) if error.status() == StatusCode::UNAUTHORIZED => refused = Some(error),
                    Err(error) => return Err(error),
                }
            }
        }
    });
    let (uri, headers) = reads(requirement, schemes);
    let uri = uri.then(|| quote!(uri: &::axum::http::Uri,));
    let headers = headers.then(|| quote!(headers: &::axum::http::HeaderMap,));
    let named: Vec<String> = requirement
        .alternatives
        .iter()
        .map(|together| together.iter().map(|&i| format!("`{}`", schemes[i].name)).collect::<Vec<_>>().join(" and "))
        .collect();
    let doc = format!(
        " Authenticates a request against the security requirement {}: the caller, or the `401`.",
        named.join(", or ")
    );
    quote! {
        #[doc = #doc]
        async fn #name<P: Send + 'static, A: Api<P>>(
            api: &A,
            #headers
            #uri
        ) -> Result<P, ApiError> {
            let mut refused: Option<ApiError> = None;
            #(#attempts)*
            let refused = refused.unwrap_or_else(|| ApiError::unauthorized_for(#challenge, #hint));
            Err(refused.with_challenge(#challenge))
        }
    }
}

/// An expression that authenticates the request (`headers`, and `uri` when an api key is in the
/// query) against `requirement` with its [`authenticator`]: the caller, or an early return of
/// the `401`.
pub(super) fn authentication(requirement: &security::Requirement, schemes: &[security::Scheme]) -> TokenStream {
    let name = authenticator_name(requirement, schemes);
    let (uri, headers) = reads(requirement, schemes);
    let uri = uri.then(|| quote!(&uri,));
    let headers = headers.then(|| quote!(&headers,));
    quote!(#name::<P, A>(&shared.api, #headers #uri).await?)
}

/// `errors`: the error objects of the operation's own responses (`error_object::of_operation`),
/// which its refusals are written in rather than the document's; `refusals` the statuses they
/// are answered with where the operation documents others (`error_object::refusals`).
pub(super) fn handler(
    op: &Op,
    schemes: &[security::Scheme],
    rt: &syn::Path,
    errors: &[(model::Status, crate::model::error_object::ErrorObject)],
    refusals: Option<(u16, bool)>,
) -> TokenStream {
    let name = &op.fn_name;
    let doc = format!(" `{} {}`", op.http_method(), op.path);
    // The request is taken whole and split, not read through axum's `HeaderMap`, `Uri` and
    // `Extensions` extractors, each of which clones what it reads.
    let mut extractors = vec![quote!(State(shared): State<Arc<Shared<A>>>)];
    let mut steps = Vec::new();
    let mut args = vec![quote!(context)];

    let needs_uri = needs_uri(op, schemes);
    let styles = quote!(#rt::styles);
    let is_uuid = |p: &model::Param| p.kind == TypeKind::Uuid;
    // Read in place unless a parameter has a style.
    let in_place = !op.path_params.is_empty() && op.path_params.iter().all(|p| p.wire.plain());
    if in_place {
        // By axum's `Path`, in the route's order; a route it cannot read at all is
        // refused before the caller is authenticated, as axum refused it.
        let segments = op.path_params.iter().map(|p| {
            let ty = &p.ty;
            if is_uuid(p) { quote!(#rt::path::Id) } else { quote!(#rt::path::Segment<#ty>) }
        });
        extractors
            .push(quote!(path: Result<axum::extract::Path<(#(#segments,)*)>, axum::extract::rejection::PathRejection>));
        let idents = op.path_params.iter().map(|p| &p.ident);
        steps.push(quote! { let axum::extract::Path((#(#idents,)*)) = path.map_err(#rt::path::refused)?; });
    }
    match &op.requirement {
        Some(requirement) => {
            let authenticated = authentication(requirement, schemes);
            steps.push(quote! { let caller: P = #authenticated; });
        }
        None => steps.push(quote!(let caller = ();)),
    }
    if in_place {
        for p in &op.path_params {
            let (ident, ty, pname) = (&p.ident, &p.ty, &p.name);
            let read = if is_uuid(p) { quote!(#ident.read()?) } else { quote!(#ident.read(#pname)?) };
            steps.push(quote! { let #ident: #ty = #read; });
            args.push(quote!(#ident));
        }
    } else if !op.path_params.is_empty() {
        extractors.push(quote!(path: RawPathParams));
        for p in &op.path_params {
            let (ident, ty, pname) = (&p.ident, &p.ty, &p.name);
            // With one styled parameter the route's are read as `RawPathParams`, each by its style.
            let parse = if !p.wire.plain() {
                let wire = crate::write::wire::constructed(&p.wire);
                quote!(#styles::path(&path, &#wire)?)
            } else if is_uuid(p) {
                quote!(#rt::path::Id::of(&path, #pname)?.read()?)
            } else {
                quote!(#rt::path::Segment::<#ty>::of(&path, #pname)?.read(#pname)?)
            };
            steps.push(quote! { let #ident: #ty = #parse; });
            args.push(quote!(#ident));
        }
    }
    for p in op.header_params.iter().chain(&op.cookie_params) {
        let (ident, ty, pname) = (&p.ident, &p.ty, &p.name);
        let wire = crate::write::wire::constructed(&p.wire);
        let parse = match p.wire.place {
            Place::Cookie => quote!(#styles::cookie_param::<#ty>(&headers, &#wire)?),
            _ if !p.wire.plain() => quote!(#styles::header_param::<#ty>(&headers, &#wire)?),
            _ => quote!(#rt::header_param::<#ty>(&headers, #pname)?),
        };
        let missing = match p.wire.place {
            Place::Cookie => quote!(#rt::missing_cookie(#pname)),
            _ => quote!(#rt::missing_header(#pname)),
        };
        steps.push(match (&p.default, p.required) {
            (Some(default), _) => {
                let value = match default {
                    // A string default of a type that is not a `String` (a date-time, a UUID, an
                    // enum) is parsed; `repair` has checked it reads as its format.
                    Value::String(text) if p.kind != TypeKind::Text => {
                        quote!(#text.parse().expect("the document's default parses as its type"))
                    }
                    _ => literal(default),
                };
                quote! { let #ident: #ty = #parse.unwrap_or_else(|| #value); }
            }
            (None, true) => quote! { let #ident: #ty = #parse.ok_or_else(|| #missing)?; },
            (None, false) => quote! { let #ident: Option<#ty> = #parse; },
        });
        args.push(quote!(#ident));
    }
    let checked = checked_params(op);
    if !checked.is_empty() {
        let validator = format_ident!("{}_params", op.fn_name);
        let read = checked.iter().map(|p| {
            let (name, ident) = (&p.name, &p.ident);
            quote!((#name, serde_json::to_value(&#ident).unwrap_or_default()))
        });
        steps.push(quote! { #rt::check_params(&shared.validators.#validator, [#(#read),*])?; });
    }
    if !op.query_params.is_empty() {
        let ty = op.ident("Query");
        let validator = format_ident!("{}_query", op.fn_name);
        let credentials: Vec<String> = op
            .requirement
            .iter()
            .flat_map(|r| r.alternatives.iter().flatten())
            .filter_map(|&i| match &schemes[i].kind {
                security::Kind::ApiKey(security::Place::Query(name)) => Some(name.clone()),
                _ => None,
            })
            .collect();
        // Array parameters, each value its own pair (form style, exploded: the default).
        let arrays: Vec<&str> = op
            .query_params
            .iter()
            .filter(|p| p.schema.get("type").and_then(Value::as_str) == Some("array"))
            .map(|p| p.name.as_str())
            .collect();
        steps.push(if op.query_params.iter().any(|p| !p.wire.plain()) {
            // A parameter in a style the serde paths do not read: every parameter by its wire.
            let wires = op.query_params.iter().map(|p| crate::write::wire::constructed(&p.wire));
            quote! {
                let query: #ty = #styles::query(&uri, &shared.validators.#validator, &[#(#wires),*], &[#(#credentials),*])?;
            }
        } else if !arrays.is_empty() {
            quote! {
                let query: #ty = #rt::query_arrays(&uri, &shared.validators.#validator, &[#(#arrays),*], &[#(#credentials),*])?;
            }
        } else if credentials.is_empty() {
            quote! { let query: #ty = #rt::query(&uri, &shared.validators.#validator)?; }
        } else {
            quote! { let query: #ty = #rt::query_except(&uri, &shared.validators.#validator, &[#(#credentials),*])?; }
        });
        args.push(quote!(query));
    }
    if let Some(body) = &op.body {
        // A multipart body is read as it streams, under the multipart limits, not buffered.
        if !matches!(body.media.as_slice(), [model::Media { kind: MediaKind::Multipart { .. }, .. }]) {
            steps.push(quote! { let bytes = #rt::read_body(request_body).await?; });
        }
        steps.push(body_step(op, body, rt));
        args.push(quote!(body));
    }
    let upgrade = op.replies.iter().any(|r| matches!(r.body, Some(model::ReplyBody::Upgrade)));
    let context = if upgrade {
        // A protocol switch needs the connection's upgrade, which hyper leaves in the extensions.
        quote! {
            let mut context = RequestContext::new(caller, headers);
            context.extensions = extensions;
        }
    } else {
        quote! { let context = RequestContext::new(caller, headers); }
    };
    extractors.push(quote!(request: axum::extract::Request));
    let body_part = if op.body.is_some() { quote!(request_body) } else { quote!(_) };
    let uri = (!op.query_params.is_empty() || needs_uri).then(|| quote!(let uri = parts.uri;));
    let extensions = upgrade.then(|| quote!(let extensions = parts.extensions;));
    // A mock offering several media types answers the one `Accept` prefers.
    let negotiated = op.mock.as_ref().is_some_and(|mock| !mock.others.is_empty());
    // Named so that no parameter's local (an `Accept` header parameter is `accept`) shadows it.
    let accept = negotiated.then(|| quote!(let accept_for_mock_ = headers.get(axum::http::header::ACCEPT).cloned();));
    let split = quote! {
        let (parts, #body_part) = request.into_parts();
        let headers = parts.headers;
        #accept
        #uri
        #extensions
    };
    let call = quote!(<A as Api<P>>::#name(&shared.api, #(#args),*).await);
    let output = match &op.mock {
        Some(mock) => {
            let status = mock.status;
            let (content_type, body) = match &mock.body {
                Some((content_type, body)) => (quote!(Some(#content_type)), body.text()),
                None => (quote!(None), String::new()),
            };
            let headers = mock.headers.iter().map(|(name, value)| quote!((#name, #value)));
            let answer = match &mock.body {
                Some((first, first_body)) if negotiated => {
                    let offered = std::iter::once((first, first_body))
                        .chain(mock.others.iter().map(|(content_type, body)| (content_type, body)))
                        .map(|(content_type, body)| {
                            let body = body.text();
                            quote!((#content_type, #body))
                        });
                    quote!(#rt::mock_negotiated(#status, &[#(#offered),*], accept_for_mock_.as_ref(), &[#(#headers),*]))
                }
                _ => quote!(#rt::mock_response(#status, #content_type, #body, &[#(#headers),*])),
            };
            quote!(#rt::or_mock(#call, shared.mock, || #answer))
        }
        None => quote! {
            let output = #call?;
            Ok(axum::response::IntoResponse::into_response(output))
        },
    };
    let answer = quote! {
        async move {
            #(#steps)*
            #context
            #output
        }
    };
    let answer = match errors {
        [] => answer,
        errors => {
            let objects = errors.iter().map(|(status, object)| {
                let status = match status {
                    model::Status::Code(code) => quote!(#rt::ErrorStatus::Code(#code)),
                    model::Status::Range(class) => quote!(#rt::ErrorStatus::Class(#class)),
                    model::Status::Default => quote!(#rt::ErrorStatus::Default),
                };
                let object = super::error_object(object, rt);
                quote!((#status, #object))
            });
            quote!(#rt::written_in(&[#(#objects),*], #answer))
        }
    };
    let answer = match refusals {
        Some((invalid, ids_not_found)) => quote!(#rt::refused_as(#invalid, #ids_not_found, #answer)),
        None => answer,
    };
    quote! {
        #[doc = #doc]
        // Not an `async fn`: the request is split before the future is made, which keeps only
        // what the steps use. An `async fn` keeps its arguments for as long as it runs, and made
        // the future (which axum boxes) over 1 KiB: an allocation glibc's malloc answers slowly.
        fn #name<P: Send + 'static, A: Api<P>>(
            #(#extractors),*
        ) -> impl Future<Output = Result<Response, ApiError>> + Send {
            #split
            #answer
        }
    }
}

/// Reads the body: one JSON media type as ours are (its content type checked, parsed,
/// validated), anything else by the media type the request's `Content-Type` names.
pub(super) fn body_step(op: &Op, body: &model::Body, rt: &syn::Path) -> TokenStream {
    let ty = body_type(op);
    if let [model::Media { kind: MediaKind::Multipart { ty, fields, .. }, .. }] = body.media.as_slice() {
        let validator = body_validator(op, 0);
        let multipart = quote!(#rt::multipart);
        let leaf = |leaf: &crate::read::wire::Leaf| {
            let leaf = format_ident!("{}", format!("{leaf:?}"));
            quote!(#rt::wire::Leaf::#leaf)
        };
        let kinds = fields.iter().map(|f| {
            let name = &f.name;
            let kind = match &f.kind {
                model::PartKind::File { accepted } | model::PartKind::Files { accepted } => {
                    quote!(#multipart::Kind::File(&[#(#accepted),*]))
                }
                model::PartKind::Value { read: model::PartRead::Text(l), .. } => {
                    let l = leaf(l);
                    quote!(#multipart::Kind::Text(#l))
                }
                model::PartKind::Value { read: model::PartRead::Texts(l), .. } => {
                    let l = leaf(l);
                    quote!(#multipart::Kind::Texts(#l))
                }
                model::PartKind::Value { read: model::PartRead::Json, .. } => quote!(#multipart::Kind::Json),
            };
            quote!((#name, #kind))
        });
        let inits = fields.iter().map(|f| {
            let (ident, name) = (&f.ident, &f.name);
            let value = match (&f.kind, f.required) {
                (model::PartKind::File { .. }, true) => quote!(received.file(#name)?),
                (model::PartKind::File { .. }, false) => quote!(received.optional_file(#name)?),
                (model::PartKind::Files { .. }, _) => quote!(received.files(#name)),
                (model::PartKind::Value { .. }, true) => quote!(received.required(#name)?),
                (model::PartKind::Value { .. }, false) => quote!(received.optional(#name)?),
            };
            quote!(#ident: #value,)
        });
        let read = quote! {{
            let mut received = #multipart::read(&headers, request_body, &[#(#kinds),*]).await?;
            received.validate(&shared.validators.#validator)?;
            #ty { #(#inits)* }
        }};
        return if body.required {
            quote! { let body: #ty = #read; }
        } else {
            quote! {
                let body: Option<#ty> = if headers.contains_key(axum::http::header::CONTENT_TYPE) { Some(#read) } else { None };
            }
        };
    }
    if let [model::Media { kind: MediaKind::Json { .. }, .. }] = body.media.as_slice() {
        let validator = body_validator(op, 0);
        return if body.required {
            quote! { let body: #ty = #rt::json_body(&headers, bytes, &shared.validators.#validator)?; }
        } else {
            quote! { let body: Option<#ty> = #rt::optional_json_body(&headers, bytes, &shared.validators.#validator)?; }
        };
    }
    let accepted = body.media.iter().map(|m| m.media_type.as_str());
    let parse = |i: usize, kind: &MediaKind| {
        let validator = body_validator(op, i);
        match kind {
            MediaKind::Json { .. } => quote!(#rt::json_value(&bytes, &shared.validators.#validator)?),
            MediaKind::Form { .. } => quote!(#rt::form(&bytes, &shared.validators.#validator)?),
            MediaKind::Text => quote!(#rt::text(&bytes)?),
            MediaKind::Bytes => quote!(bytes.clone()),
            MediaKind::Multipart { .. } => unreachable!("a multipart body is its operation's only media type"),
        }
    };
    let read = if let [only] = body.media.as_slice() {
        // One media type: the request's checked against it, then read as it.
        let value = parse(0, &only.kind);
        quote! {{
            #rt::media_type(&headers, &[#(#accepted),*])?;
            #value
        }}
    } else {
        let arms = body.media.iter().enumerate().map(|(i, m)| {
            let (variant, value) = (&m.variant, parse(i, &m.kind));
            if i + 1 == body.media.len() {
                quote!(_ => #ty::#variant(#value),)
            } else {
                quote!(#i => #ty::#variant(#value),)
            }
        });
        quote! {
            match #rt::media_type(&headers, &[#(#accepted),*])? {
                #(#arms)*
            }
        }
    };
    if body.required {
        quote! {
            #rt::required_body(&headers, &bytes)?;
            let body: #ty = #read;
        }
    } else {
        quote! {
            let body: Option<#ty> = if bytes.is_empty() && !headers.contains_key(axum::http::header::CONTENT_TYPE) {
                None
            } else {
                Some(#read)
            };
        }
    }
}
