//! The server generator (progenitor has none): one trait with a method per operation, and an
//! axum router that does the HTTP work around it — authentication, path, header, query and body
//! parsing, validation against the document's schemas, status codes and uniform error bodies.
//!
//! It reads the model (`crate::model`: each operation's parameters, body media types and replies
//! with their Rust types, every schema that is a type of its own a model of the types crate).
//! `api_trait` writes the trait and the types its methods take, `responses` each operation's
//! response enum, `handlers` the handlers and the authentication functions, `validation` and
//! `routes` what the router checks and serves; this module puts the router together.

mod api_trait;
mod handlers;
pub(crate) mod responses;
mod routes;
mod validation;

use api_trait::{body_enum, parts_struct, query_struct, trait_method};
use handlers::{authentication, authenticator, authenticator_name, credential_enum, handler, reads};
use routes::{one_url, routes};
use validation::validator_names;

use crate::model::operation as model;
use crate::model::security;

use std::collections::BTreeSet;

use proc_macro2::{Ident, TokenStream};
use quote::quote;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::error_object::{ErrorObject, Part};
use crate::read::Spec;
use crate::write::Config;
use model::Op;

/// The model of `spec`'s operations (a document's webhooks, for the receiver, answered in
/// `error_object`, its parent's).
pub(crate) fn operations(spec: &Spec, type_names: &BTreeSet<String>, error_object: &ErrorObject) -> Result<Vec<Op>> {
    crate::model::operations(spec, type_names, &security::schemes(&spec.openapi)?, error_object)
}

/// What a generated trait serves: the document's paths, or its webhooks (the receiver).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Surface {
    Api,
    Receiver,
}

/// The server of `spec`'s operations, `ops` (the model the client's writer built; the receiver's
/// are its webhooks', [`operations`]), its refusals written in `error_object`. Its items are
/// handed to `emit` a few at a time (a handler, a response enum, …), in the order of the file:
/// the whole server's tokens, held at once, were many times its text on the largest documents.
pub(crate) fn generate(
    spec: &Spec,
    ops: &[Op],
    config: &Config,
    surface: Surface,
    error_object: &ErrorObject,
    emit: &mut dyn FnMut(TokenStream) -> Result<()>,
) -> Result<()> {
    let schemes = security::schemes(&spec.openapi)?;
    let challenge = security::document_challenge(&spec.openapi, &schemes);
    let types_path: syn::Path = syn::parse_str(&config.types_path)
        .map_err(|e| Error::unparsable(format!("types path {:?}", config.types_path), e))?;
    let rt: syn::Path = syn::parse_str(&config.server_runtime_path)
        .map_err(|e| Error::unparsable(format!("runtime path {:?}", config.server_runtime_path), e))?;

    let trait_methods = ops.iter().map(|op| trait_method(op, &rt));
    let response_enums = ops.iter().map(|op| responses::response_enum(op, &rt));
    let body_enums = ops.iter().filter_map(body_enum);
    let parts_structs = ops.iter().filter_map(|op| parts_struct(op, &rt));
    let query_structs = ops.iter().filter_map(query_struct);
    let components = spec.raw.get("components").unwrap_or(&Value::Null);
    let handlers = ops.iter().map(|op| {
        let raw = spec.raw.pointer(&op.raw).unwrap_or(&Value::Null);
        let own = crate::model::error_object::of_operation(raw, components, error_object);
        handler(op, &schemes, &rt, &own, crate::model::error_object::refusals(op, raw))
    });
    let validators: Vec<(Ident, Value)> = ops.iter().flat_map(validator_names).collect();
    let validator_fields = validators.iter().map(|(name, _)| {
        quote! { #name: #rt::Validator, }
    });
    let validator_inits = validators.iter().map(|(name, schema)| {
        let schema = schema.to_string();
        quote! { #name: schemas.validator(#schema), }
    });
    let load_schemas = (!validators.is_empty()).then(|| {
        quote! { let schemas = #rt::SchemaSet::parse(include_str!("schemas.json")); }
    });
    let error_object = error_object_const(error_object, &rt);
    let mut routes = routes(ops, &rt);
    let one_url = (surface == Surface::Receiver).then(|| one_url(ops, &schemes, &rt)).flatten();
    if let Some((route, _)) = &one_url {
        routes.push(route.clone());
    }
    let one_url_handler = one_url.map(|(_, handler)| handler);
    // Without a valid credential, an unknown path answers 401 like a known one: paths cannot be
    // probed without one. What it asks for is the document's own requirement (or, if it has
    // none, the first secured operation's); a document with no secured operation answers 404.
    let unknown_path_requirement = security::requirement(&spec.openapi, None, &schemes, "#/security")?
        .or_else(|| ops.iter().find_map(|op| op.requirement.clone()));
    let unknown_path_auth = match &unknown_path_requirement {
        Some(requirement) => {
            let authenticated = authentication(requirement, &schemes);
            // An api key in the query alone reads no header.
            let unread = (!reads(requirement, &schemes).1).then(|| quote!(let _ = &headers;));
            quote! { #unread let _caller: P = #authenticated; }
        }
        None => quote! { let _ = (&shared, &headers); },
    };
    let credential = credential_enum(&schemes, ops, unknown_path_requirement.as_ref(), &rt);
    // One function per requirement the document has, which each handler of it calls.
    let requirements: std::collections::BTreeMap<String, &security::Requirement> = ops
        .iter()
        .filter_map(|op| op.requirement.as_ref())
        .chain(&unknown_path_requirement)
        .map(|requirement| (authenticator_name(requirement, &schemes).to_string(), requirement))
        .collect();
    let authenticators = requirements.values().map(|requirement| authenticator(requirement, &schemes, &rt));
    let authenticate = (ops.iter().any(Op::secured) || unknown_path_requirement.is_some()).then(|| {
        quote! {
            /// Finds the caller from the credentials a request presented: those of the first of
            /// the operation's requirements the request meets (the schemes it names together,
            /// one [`Credential`] each, in the order of the schemes' names). Return
            /// [`ApiError::unauthorized`] for credentials that are not valid: the router then
            /// tries the operation's next requirement, and answers `401` when none is met,
            /// without calling any operation. The default refuses every credential.
            fn authenticate(
                &self,
                credentials: &[Credential<'_>],
            ) -> impl Future<Output = Result<P, ApiError>> + Send {
                let _ = credentials;
                async { Err(ApiError::unauthorized()) }
            }
        }
    });
    let accept_any = authenticate.is_some().then(|| {
        quote! {
            async fn authenticate(&self, credentials: &[Credential<'_>]) -> Result<(), ApiError> {
                let _ = credentials;
                Ok(())
            }
        }
    });
    let raw_path_params = ops.iter().any(|op| op.path_params.iter().any(|p| !p.wire.plain())).then(|| {
        quote!(
            use axum::extract::RawPathParams;
        )
    });
    // A document with no operation (only webhooks, or only components) reads nothing of the
    // state, and one with no body or query to validate no validator.
    let unread_state = (ops.is_empty() || validators.is_empty()).then(|| quote!(#[allow(dead_code)]));
    let title = spec.openapi.info.title.clone();
    let trait_doc = doc_lines(&if surface == Surface::Receiver {
        format!(
            "The webhooks of {title}, one method per webhook operation: the receiver. Implement what\nyou receive and serve it with [`router`] at the URL the sender delivers to: a notification\nposted to `/` goes to the webhook whose body schema it meets (the one whose name a field of\nthe body states, when several do), one posted to `/{{its name}}` to that webhook. Headers\nand body are parsed and validated against the document before a method is called, failures\nanswered with the error object. Every method has a default that answers `501`. A webhook\nasks for credentials only with its own `security`."
        )
    } else {
        format!(
            "The operations of {title}, one method per operation. Implement what you serve and serve it\nwith [`router`], which authenticates every request of a secured operation with\n[`Api::authenticate`], parses and validates path, query and body against the document, and\nturns every failure into the error object.\n\nEvery method has a default: an operation not implemented answers `501`, and until\n[`Api::authenticate`] is written every secured operation answers `401`, so `impl Api for\nMine {{}}` compiles and serves. `P` is the caller, as [`Api::authenticate`] finds it from the\ncredential; each operation receives it in its [`RequestContext`]({rt}::RequestContext),\nwith the request's headers and id.",
            rt = quote!(#rt).to_string().replace(' ', "")
        )
    });

    let router_doc = doc_lines(match surface {
        Surface::Api => {
            "The axum router serving `api`: every operation of the document at its path and method,\nwith `401`, `404`, `405`, `413` and `415` answered in the error object too."
        }
        Surface::Receiver => {
            "The axum router serving `api`: each webhook at `/{its name}`, and every one at `/`, where\na notification goes to the webhook whose schema its body meets (the one whose name a field\nof the body states, when several do); `401`, `404`, `405`, `413` and `415` answered in the\nerror object too."
        }
    });
    emit(quote! {
        // Unused by a document with no operation, as `RequestContext` below.
        #[allow(unused_imports)]
        use std::future::Future;
        use std::sync::Arc;

        // Unused by a document whose operations take and answer no model.
        #[allow(unused_imports)]
        use #types_path as types;
        use axum::extract::State;
        #raw_path_params
        // Unused by a document with no operation.
        #[allow(unused_imports)]
        use axum::http::StatusCode;
        use axum::response::Response;
        use #rt::ApiError;
        #[allow(unused_imports)]
        use #rt::RequestContext;
        // How parameters are written, for those read by their style: unused by most documents.
        #[allow(unused_imports)]
        use #rt::wire::{Leaf, Shape, Style, Wire};

        #(#trait_doc)*
        pub trait Api<P: Send + 'static = ()>: Send + Sync + 'static {
            #authenticate

            #(#trait_methods)*
        }

        /// Implements no operation and lets every caller in (any credential of a kind the
        /// operation takes): served by [`mock_router`], every operation answers its mock.
        pub struct MockApi;

        impl Api for MockApi {
            #accept_any
        }

        #credential
    })?;
    for item in response_enums.chain(body_enums).chain(parts_structs).chain(query_structs) {
        emit(item)?;
    }
    emit(quote! {
        /// Request validators, compiled once from the document's schemas when the router is built.
        struct Validators {
            #(#validator_fields)*
        }

        impl Validators {
            fn new() -> Self {
                #load_schemas
                Self { #(#validator_inits)* }
            }
        }

        #unread_state
        struct Shared<A> {
            api: Arc<A>,
            validators: Validators,
            /// Whether what `api` does not implement answers its mock.
            mock: bool,
        }

        #error_object

        #(#router_doc)*
        pub fn router<P: Send + 'static, A: Api<P>>(api: Arc<A>) -> axum::Router {
            build_router(api, false)
        }

        /// [`router`], but an operation `api` does not implement answers, instead of `501`, its
        /// first success status with the document's example of that response (or a value built
        /// from its schema): a mock of the API until each operation is written. Requests are
        /// authenticated and validated as [`router`] does.
        pub fn mock_router<P: Send + 'static, A: Api<P>>(api: Arc<A>) -> axum::Router {
            build_router(api, true)
        }

        fn build_router<P: Send + 'static, A: Api<P>>(api: Arc<A>, mock: bool) -> axum::Router {
            let shared = Arc::new(Shared { api, validators: Validators::new(), mock });
            // A statement per path rather than one chain: rustfmt's time on a chain grows faster
            // than its length (a thousand paths took it most of a generation).
            let router = axum::Router::new();
            #(let router = router #routes;)*
            let router = router.fallback(unknown_path::<P, A>).with_state(shared);
            #rt::finish_router(router, #challenge, &ERROR_OBJECT)
        }

        /// A path the document does not have.
        async fn unknown_path<P: Send + 'static, A: Api<P>>(
            State(shared): State<Arc<Shared<A>>>,
            request: axum::extract::Request,
        ) -> Result<Response, ApiError> {
            let (parts, _) = request.into_parts();
            let (headers, uri) = (parts.headers, parts.uri);
            #unknown_path_auth
            Err(#rt::unknown_path(&uri))
        }
    })?;
    for item in authenticators.chain(handlers).chain(one_url_handler) {
        emit(item)?;
    }
    Ok(())
}

/// `ERROR_OBJECT`: the document's error object, which the router writes its refusals in.
fn error_object_const(object: &ErrorObject, rt: &syn::Path) -> TokenStream {
    let which = match &object.schema {
        Some(schema) => format!(" `{}`", schema.trim_start_matches("#/components/schemas/")),
        None => ": it has none, so RFC 9457 problem details".to_owned(),
    };
    let doc = doc_lines(&format!(
        "The document's error object{which}.\n\
         Every refusal of the router's own (a request that breaks the document, a missing\n\
         credential, an unknown path) and every `ApiError` of an implementation is written in it,\n\
         the message and status in their places (where an operation's response gives its error\n\
         status another schema, in that one)."
    ));
    let object = error_object(object, rt);
    quote! {
        #(#doc)*
        pub const ERROR_OBJECT: #rt::ErrorObject = #object;
    }
}

/// An error object as the runtime's `ErrorObject`, a constant expression.
pub(super) fn error_object(object: &ErrorObject, rt: &syn::Path) -> TokenStream {
    let media = &object.media;
    let parts = object.parts.iter().map(|part| match part {
        Part::Text(text) => quote!(#rt::ErrorPart::Text(#text)),
        Part::Message(None) => quote!(#rt::ErrorPart::Message),
        Part::Message(Some(longest)) => {
            let longest = *longest as usize;
            quote!(#rt::ErrorPart::MessageUpTo(#longest))
        }
        Part::Status => quote!(#rt::ErrorPart::Status),
        Part::StatusText => quote!(#rt::ErrorPart::StatusText),
        Part::Reason => quote!(#rt::ErrorPart::Reason),
    });
    quote!(#rt::ErrorObject { media: #media, parts: &[#(#parts),*] })
}

pub(crate) fn doc_lines(text: &str) -> Vec<TokenStream> {
    text.lines()
        .map(|line| {
            let line = if line.is_empty() { String::new() } else { format!(" {line}") };
            quote!(#[doc = #line])
        })
        .collect()
}
