//! The server generator (progenitor has none): one trait with a method per operation, and an
//! axum router that does the HTTP work around it — authentication, path, header, query and body
//! parsing, validation against the document's schemas, status codes and uniform error bodies.
//!
//! It reads the normalised document (`normalise`), where every schema that is a type of its own
//! is a `$ref` to a model of the types crate. `model` turns each operation into parameters, body
//! media types and replies with their Rust types; `responses` writes each operation's response
//! enum; this module writes the trait, the query structs, the handlers and the router.

pub mod responses;

use crate::model::operation as model;
use crate::model::security;

use std::collections::BTreeSet;

use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, format_ident, quote};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::read::Spec;
use crate::read::wire::Place;
use crate::write::Config;
use model::{MediaKind, Op};

/// What a generated trait serves: the document's paths, or its webhooks (the receiver).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    Api,
    Receiver,
}

pub fn generate(spec: &Spec, type_names: &BTreeSet<String>, config: &Config, surface: Surface) -> Result<TokenStream> {
    let schemes = security::schemes(&spec.openapi)?;
    let ops = model::operations(spec, type_names, &schemes)?;
    let types_path: syn::Path = syn::parse_str(&config.types_path)
        .map_err(|e| Error::unparsable(format!("types path {:?}", config.types_path), e))?;
    let rt: syn::Path = syn::parse_str(&config.server_runtime_path)
        .map_err(|e| Error::unparsable(format!("runtime path {:?}", config.server_runtime_path), e))?;

    let trait_methods = ops.iter().map(|op| trait_method(op, &rt));
    let response_enums = ops.iter().map(|op| responses::response_enum(op, &rt));
    let body_enums = ops.iter().filter_map(body_enum);
    let parts_structs = ops.iter().filter_map(|op| parts_struct(op, &rt));
    let query_structs = ops.iter().filter_map(query_struct);
    let handlers = ops.iter().map(|op| handler(op, &schemes, &rt));
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
    let mut routes = routes(&ops, &rt);
    let one_url = (surface == Surface::Receiver).then(|| one_url(&ops, &schemes, &rt)).flatten();
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
            let authenticated = authentication(requirement, &schemes, &rt);
            quote! { let _caller: P = #authenticated; }
        }
        None => quote! { let _ = (&shared, &headers); },
    };
    let credential = credential_enum(&schemes, &ops, unknown_path_requirement.as_ref(), &rt);
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
            ) -> impl ::std::future::Future<Output = Result<P, ApiError>> + Send {
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
    Ok(quote! {
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

        #(#response_enums)*

        #(#body_enums)*

        #(#parts_structs)*

        #(#query_structs)*

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
            let router = axum::Router::new()
                #(#routes)*
                .fallback(unknown_path::<P, A>)
                .with_state(shared);
            #rt::finish_router(router)
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

        #(#handlers)*

        #one_url_handler
    })
}

fn trait_method(op: &Op, rt: &syn::Path) -> TokenStream {
    let doc = doc_lines(&op.doc);
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
            context: #rt::RequestContext<#caller>,
            #(#param_args)*
            #query_arg
            #body_arg
        ) -> impl ::std::future::Future<Output = Result<#output, ApiError>> + Send {
            let _ = (#(#unused,)*);
            async { Err(#rt::not_implemented(#operation_id)) }
        }
    }
}

/// The type of the operation's body argument: the one media type's, or the enum of them.
fn body_type(op: &Op) -> TokenStream {
    match op.body.as_ref().map(|b| b.media.as_slice()) {
        Some([only]) => only.kind.ty(),
        _ => op.ident("Body").into_token_stream(),
    }
}

/// The struct of a multipart body: a field per part, files as the runtime's `multipart::File`.
fn parts_struct(op: &Op, rt: &syn::Path) -> Option<TokenStream> {
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
fn body_enum(op: &Op) -> Option<TokenStream> {
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

fn query_struct(op: &Op) -> Option<TokenStream> {
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
                let fn_ident = format_ident!("{}_{}_default", op.fn_name, field.to_string().trim_start_matches("r#"));
                let fn_path = fn_ident.to_string();
                let value = match default {
                    // A string default of a type that is not a `String` (a date-time, a UUID, an
                    // enum) is parsed; `repair` has checked it reads as its format.
                    Value::String(text) if !ty.to_string().contains("String") => {
                        quote!(#text.parse().expect("the document's default parses as its type"))
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
    Some(quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize)]
        #[serde(deny_unknown_fields)]
        pub struct #ident {
            #(#fields)*
        }

        #(#defaults)*
    })
}

fn literal(value: &Value) -> TokenStream {
    match value {
        Value::Bool(b) => quote!(#b),
        Value::Number(n) if n.is_i64() => {
            let n = proc_macro2::Literal::i64_unsuffixed(n.as_i64().unwrap());
            quote!(#n)
        }
        Value::Number(n) => {
            let n = proc_macro2::Literal::f64_unsuffixed(n.as_f64().unwrap_or_default());
            quote!(#n)
        }
        Value::String(s) => quote!(#s.to_string()),
        _ => quote!(Default::default()),
    }
}

/// The validators an operation needs: its query (as one object) and each JSON or form body.
fn validator_names(op: &Op) -> Vec<(Ident, Value)> {
    let mut out = Vec::new();
    let checked = checked_params(op);
    if !checked.is_empty() {
        let properties: serde_json::Map<String, Value> =
            checked.iter().map(|p| (p.name.clone(), p.schema.clone())).collect();
        out.push((format_ident!("{}_params", op.fn_name), json!({"type": "object", "properties": properties})));
    }
    if !op.query_params.is_empty() {
        let properties: serde_json::Map<String, Value> =
            op.query_params.iter().map(|p| (p.name.clone(), p.schema.clone())).collect();
        let required: Vec<&str> = op.query_params.iter().filter(|p| p.required).map(|p| p.name.as_str()).collect();
        out.push((
            format_ident!("{}_query", op.fn_name),
            json!({"type": "object", "properties": properties, "required": required}),
        ));
    }
    for (i, media) in op.body.iter().flat_map(|b| &b.media).enumerate() {
        match &media.kind {
            MediaKind::Json { schema, .. } | MediaKind::Form { schema, .. } => {
                out.push((body_validator(op, i), schema.clone()))
            }
            MediaKind::Multipart { schema, .. } => {
                out.push((body_validator(op, i), crate::model::json_schema::to_json_schema(schema)))
            }
            _ => {}
        }
    }
    out
}

/// The path, header and cookie parameters whose schemas say more than their Rust types hold (a
/// bound, a length, a pattern), which the handler checks once it has read them (the query's are
/// checked with the query).
fn checked_params(op: &Op) -> Vec<&model::Param> {
    fn constrained(schema: &Value) -> bool {
        const WORDS: [&str; 16] = [
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
            "minLength",
            "maxLength",
            "pattern",
            "minItems",
            "maxItems",
            "uniqueItems",
            "minProperties",
            "maxProperties",
            "const",
            "enum",
            "$ref",
        ];
        match schema {
            Value::Object(map) => WORDS.iter().any(|w| map.contains_key(*w)) || map.values().any(constrained),
            Value::Array(items) => items.iter().any(constrained),
            _ => false,
        }
    }
    op.path_params.iter().chain(&op.header_params).chain(&op.cookie_params).filter(|p| constrained(&p.schema)).collect()
}

/// The validator of the body's `i`th media type (`_body` for the first, as ours have one).
fn body_validator(op: &Op, i: usize) -> Ident {
    if i == 0 { format_ident!("{}_body", op.fn_name) } else { format_ident!("{}_body_{}", op.fn_name, i + 1) }
}

/// The receiver's own URL (`/`): senders post every notification to one URL, so there a
/// notification goes to the webhook whose body schema it meets, the one whose name the body
/// states when several do (`runtime::which_body`), among the webhooks that take a JSON body and
/// nothing from the path or the query. `None` when no webhook can be told apart so, or one is
/// named so that it is served at `/` already.
fn one_url(ops: &[Op], schemes: &[security::Scheme], rt: &syn::Path) -> Option<(TokenStream, TokenStream)> {
    let candidates: Vec<&Op> = ops
        .iter()
        .filter(|op| {
            op.method == "post"
                && op.path_params.is_empty()
                && op.query_params.is_empty()
                && !needs_uri(op, schemes)
                && op
                    .body
                    .as_ref()
                    .is_some_and(|b| b.media.len() == 1 && matches!(b.media[0].kind, MediaKind::Json { .. }))
        })
        .collect();
    if candidates.is_empty() || ops.iter().any(|op| op.path == "/") {
        return None;
    }
    let validators = candidates.iter().map(|op| {
        let (name, validator) = (op.path.trim_start_matches('/'), body_validator(op, 0));
        quote!((#name, &shared.validators.#validator))
    });
    let arms = candidates.iter().enumerate().map(|(i, op)| {
        let handler = &op.fn_name;
        quote! { #i => #handler::<P, A>(State(shared), axum::extract::Request::from_parts(parts, bytes.into())).await, }
    });
    let route = quote! {
        .route("/", axum::routing::post(any_webhook::<P, A>).fallback(|| async { #rt::method_not_allowed("POST") }))
    };
    let handler = quote! {
        /// `POST /`: a notification posted to the receiver's own URL, handed to the webhook whose
        /// body schema it meets (the one whose name the body states, when several do).
        async fn any_webhook<P: Send + 'static, A: Api<P>>(
            State(shared): State<Arc<Shared<A>>>,
            request: axum::extract::Request,
        ) -> Result<Response, ApiError> {
            let (parts, request_body) = request.into_parts();
            let bytes = #rt::read_body(request_body).await?;
            let which = #rt::which_body(&bytes, &[#(#validators),*])?;
            match which {
                #(#arms)*
                _ => unreachable!("which_body answers the index of one of the validators"),
            }
        }
    };
    Some((route, handler))
}

/// Whether one of the operation's requirements reads the URI (an api key in the query).
fn needs_uri(op: &Op, schemes: &[security::Scheme]) -> bool {
    op.requirement.as_ref().is_some_and(|r| r.alternatives.iter().flatten().any(|i| schemes[*i].needs_uri()))
}

fn routes(ops: &[Op], rt: &syn::Path) -> Vec<TokenStream> {
    let mut paths: Vec<&str> = Vec::new();
    for op in ops {
        if !paths.contains(&op.path.as_str()) {
            paths.push(&op.path);
        }
    }
    paths
        .into_iter()
        .map(|path| {
            let here: Vec<&Op> = ops.iter().filter(|op| op.path == path).collect();
            // Another method answers 405 naming these, in the message and in `Allow` (axum
            // answers HEAD wherever GET is served).
            let mut allowed: Vec<String> = here.iter().map(|op| op.http_method()).collect();
            if allowed.iter().any(|method| method == "GET") {
                allowed.push("HEAD".into());
            }
            allowed.sort();
            let allowed = allowed.join(", ");
            if here.iter().all(|op| crate::read::document::METHODS.contains(&op.method.as_str())) {
                let mut methods = here.iter().map(|op| (format_ident!("{}", op.method), &op.fn_name));
                let (first, first_handler) = methods.next().expect("a path has an operation");
                let rest = methods.map(|(method, handler)| quote!(.#method(#handler::<P, A>)));
                return quote! {
                    .route(
                        #path,
                        axum::routing::#first(#first_handler::<P, A>) #(#rest)*
                            .fallback(|| async { #rt::method_not_allowed(#allowed) }),
                    )
                };
            }
            // axum's method router knows 3.0's methods only, and would add its `Allow` to every
            // answer of its fallback: a path with others (OpenAPI 3.2's QUERY and
            // `additionalOperations`) tells every method apart itself. HEAD is GET's, whose
            // body hyper does not send.
            let arms = here.iter().map(|op| {
                let handler = &op.fn_name;
                let method = op.http_method();
                let method = match method.as_str() {
                    "GET" => quote!("GET" | "HEAD"),
                    _ => quote!(#method),
                };
                quote!(#method => axum::handler::Handler::call(#handler::<P, A>, request, shared).await,)
            });
            quote! {
                .route(
                    #path,
                    axum::routing::any(|State(shared): State<Arc<Shared<A>>>, request: axum::extract::Request| async move {
                        match request.method().as_str() {
                            #(#arms)*
                            _ => #rt::method_not_allowed(#allowed),
                        }
                    }),
                )
            }
        })
        .collect()
}

/// The `Credential` enum: a variant per scheme some operation (or an unknown path) asks for.
fn credential_enum(
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

/// An expression that authenticates the request (`headers`, and `uri` when an api key is in the
/// query) against `requirement`: the caller, or an early return of the `401`.
fn authentication(requirement: &security::Requirement, schemes: &[security::Scheme], rt: &syn::Path) -> TokenStream {
    let (challenge, hint) = (&requirement.challenge, &requirement.hint);
    let attempts = requirement.alternatives.iter().map(|together| {
        let found: Vec<Ident> = (0..together.len()).map(|k| format_ident!("found_{}", k)).collect();
        let extract = together.iter().map(|&i| schemes[i].extract(rt));
        let credentials = together.iter().zip(&found).map(|(&i, f)| schemes[i].credential(f));
        quote! {
            if let (#(Some(#found),)*) = (#(#extract,)*) {
                match <A as Api<P>>::authenticate(&shared.api, &[#(#credentials),*]).await {
                    Ok(caller) => break 'authenticated Some(caller),
                    Err(error) if error.status() == StatusCode::UNAUTHORIZED => refused = Some(error),
                    Err(error) => return Err(error),
                }
            }
        }
    });
    quote! {{
        let mut refused: Option<ApiError> = None;
        let caller: Option<P> = 'authenticated: {
            #(#attempts)*
            None
        };
        match caller {
            Some(caller) => caller,
            None => {
                let refused = refused.unwrap_or_else(|| ApiError::unauthorized_for(#challenge, #hint));
                return Err(refused.with_challenge(#challenge));
            }
        }
    }}
}

fn handler(op: &Op, schemes: &[security::Scheme], rt: &syn::Path) -> TokenStream {
    let name = &op.fn_name;
    let doc = format!(" `{} {}`", op.http_method(), op.path);
    // The request is taken whole and split, not read through axum's `HeaderMap`, `Uri` and
    // `Extensions` extractors, each of which clones what it reads.
    let mut extractors = vec![quote!(State(shared): State<Arc<Shared<A>>>)];
    let mut steps = Vec::new();
    let mut args = vec![quote!(context)];

    let needs_uri = needs_uri(op, schemes);
    let styles = quote!(#rt::styles);
    let is_uuid = |p: &model::Param| p.ty.to_string() == quote!(::uuid::Uuid).to_string();
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
            let authenticated = authentication(requirement, schemes, rt);
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
                let wire = crate::write::wire::tokens(&p.wire, &styles);
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
        let wire = crate::write::wire::tokens(&p.wire, &styles);
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
                    Value::String(text) if !ty.to_string().contains("String") => {
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
            let wires = op.query_params.iter().map(|p| crate::write::wire::tokens(&p.wire, &styles));
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
            let mut context = #rt::RequestContext::new(caller, headers);
            context.extensions = extensions;
        }
    } else {
        quote! { let context = #rt::RequestContext::new(caller, headers); }
    };
    extractors.push(quote!(request: axum::extract::Request));
    let body_part = if op.body.is_some() { quote!(request_body) } else { quote!(_) };
    let uri = (!op.query_params.is_empty() || needs_uri).then(|| quote!(let uri = parts.uri;));
    let extensions = upgrade.then(|| quote!(let extensions = parts.extensions;));
    let split = quote! {
        let (parts, #body_part) = request.into_parts();
        let headers = parts.headers;
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
            quote! {
                let output = match #call {
                    Err(error) if shared.mock && error.is_not_implemented() => {
                        return Ok(#rt::mock_response(#status, #content_type, #body, &[#(#headers),*]));
                    }
                    output => output?,
                };
            }
        }
        None => quote!(let output = #call?;),
    };
    quote! {
        #[doc = #doc]
        // Not an `async fn`: the request is split before the future is made, which keeps only
        // what the steps use. An `async fn` keeps its arguments for as long as it runs, and made
        // the future (which axum boxes) over 1 KiB: an allocation glibc's malloc answers slowly.
        fn #name<P: Send + 'static, A: Api<P>>(
            #(#extractors),*
        ) -> impl std::future::Future<Output = Result<Response, ApiError>> + Send {
            #split
            async move {
                #(#steps)*
                #context
                #output
                Ok(axum::response::IntoResponse::into_response(output))
            }
        }
    }
}

/// Reads the body: one JSON media type as ours are (its content type checked, parsed,
/// validated), anything else by the media type the request's `Content-Type` names.
fn body_step(op: &Op, body: &model::Body, rt: &syn::Path) -> TokenStream {
    let ty = body_type(op);
    if let [model::Media { kind: MediaKind::Multipart { ty, fields, .. }, .. }] = body.media.as_slice() {
        let validator = body_validator(op, 0);
        let multipart = quote!(#rt::multipart);
        let leaf = |leaf: &crate::read::wire::Leaf| {
            let leaf = format_ident!("{}", format!("{leaf:?}"));
            quote!(#rt::styles::Leaf::#leaf)
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
        quote! { let body: #ty = #read; }
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

pub(crate) fn doc_lines(text: &str) -> Vec<TokenStream> {
    text.lines()
        .map(|line| {
            let line = if line.is_empty() { String::new() } else { format!(" {line}") };
            quote!(#[doc = #line])
        })
        .collect()
}
