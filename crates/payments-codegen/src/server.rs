//! The server generator (progenitor has none): one trait with a method per operation, and an
//! axum router that does the HTTP work around it — authentication, path, query and body
//! parsing, validation against the document's schemas, status codes and uniform error bodies.
//!
//! Shapes it accepts, so the generated signatures stay plain: request bodies are `$ref`s to
//! component schemas; responses are a `$ref`, an array of `$ref`s, or empty; parameters are a
//! `$ref` or a primitive (string, uuid, date-time, integer, number, boolean). Anything else is
//! refused with a message saying what to change in the document.

use std::collections::BTreeSet;

use heck::{ToShoutySnakeCase, ToSnakeCase, ToUpperCamelCase};
use openapiv3::{
    OpenAPI, Operation, Parameter, ParameterSchemaOrContent, ReferenceOr, RequestBody, Response, Schema, SchemaKind,
    StatusCode, Type, VariantOrUnknownOrEmpty,
};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{ToTokens, format_ident, quote};
use serde_json::{Value, json};

use crate::{Config, Error, Result, bail, json_schema::to_json_schema, spec::Spec};

struct Op {
    method: String,
    path: String,
    operation_id: String,
    doc: String,
    fn_name: Ident,
    secured: bool,
    path_params: Vec<Param>,
    query_params: Vec<Param>,
    body: Option<Body>,
    replies: Vec<Reply>,
}

/// A documented response: one variant of the operation's response enum.
struct Reply {
    status: u16,
    variant: Ident,
    doc: String,
    body: Option<TokenStream>,
    headers: Vec<ReplyHeader>,
}

/// A response header the document declares, as a field of its variant.
struct ReplyHeader {
    name: String,
    ident: Ident,
    ty: TokenStream,
    required: bool,
    doc: Option<String>,
}

struct Param {
    name: String,
    ident: Ident,
    ty: TokenStream,
    required: bool,
    default: Option<Value>,
    doc: Option<String>,
    schema: Value,
}

struct Body {
    ty: TokenStream,
    required: bool,
    schema: Value,
}

pub fn generate(spec: &Spec, type_names: &BTreeSet<String>, config: &Config) -> Result<TokenStream> {
    let ops = operations(spec, type_names)?;
    let types_path: syn::Path =
        syn::parse_str(&config.types_path).map_err(|e| Error(format!("types path {:?}: {e}", config.types_path)))?;
    let rt: syn::Path = syn::parse_str(&config.server_runtime_path)
        .map_err(|e| Error(format!("runtime path {:?}: {e}", config.server_runtime_path)))?;

    let trait_methods = ops.iter().map(|op| trait_method(op, &rt));
    let response_enums = ops.iter().map(|op| response_enum(op, &rt));
    let query_structs = ops.iter().filter_map(query_struct);
    let handlers = ops.iter().map(|op| handler(op, &rt));
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
    let routes = routes(&ops, &rt);
    // Without a valid token, an unknown path answers 401 like a known one: paths cannot be
    // probed without a credential. Documents with no secured operation answer 404 at once.
    let unknown_path_auth = if ops.iter().any(|op| op.secured) {
        quote! { <A as Api<P>>::authenticate(&shared.api, #rt::bearer_token(&headers)?).await?; }
    } else {
        quote! { let _ = (&shared, &headers); }
    };
    let title = spec.openapi.info.title.clone();
    let trait_doc = doc_lines(&format!(
        "The operations of {title}, one method per operation. Implement what you serve and serve it\nwith [`router`], which authenticates every request of a secured operation with\n[`Api::authenticate`], parses and validates path, query and body against the document, and\nturns every failure into the error object.\n\nEvery method has a default: an operation not implemented answers `501`, and until\n[`Api::authenticate`] is written every secured operation answers `401`, so `impl Api for\nMine {{}}` compiles and serves. `P` is the caller, as [`Api::authenticate`] finds it from the\ncredential; each operation receives it in its [`RequestContext`]({rt}::RequestContext),\nwith the request's headers and id.",
        rt = quote!(#rt).to_string().replace(' ', "")
    ));

    Ok(quote! {
        use std::sync::Arc;

        use #types_path as types;
        use axum::extract::{RawPathParams, State};
        use axum::http::{HeaderMap, StatusCode, Uri};
        use axum::response::Response;
        use #rt::ApiError;

        #(#trait_doc)*
        pub trait Api<P: Send + 'static = ()>: Send + Sync + 'static {
            /// Maps a bearer token to the caller. Return [`ApiError::unauthorized`] for a token
            /// that is not valid; the router answers `401` without calling any operation. The
            /// default refuses every token.
            fn authenticate(
                &self,
                token: &str,
            ) -> impl Future<Output = Result<P, ApiError>> + Send {
                let _ = token;
                async { Err(ApiError::unauthorized()) }
            }

            #(#trait_methods)*
        }

        #(#response_enums)*

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

        struct Shared<A> {
            api: Arc<A>,
            validators: Validators,
        }

        /// The axum router serving `api`: every operation of the document at its path and method,
        /// with `401`, `404`, `405`, `413` and `415` answered in the error object too.
        pub fn router<P: Send + 'static, A: Api<P>>(api: Arc<A>) -> axum::Router {
            let shared = Arc::new(Shared { api, validators: Validators::new() });
            let router = axum::Router::new()
                #(#routes)*
                .fallback(unknown_path::<P, A>)
                .with_state(shared);
            #rt::finish_router(router)
        }

        /// A path the document does not have.
        async fn unknown_path<P: Send + 'static, A: Api<P>>(
            State(shared): State<Arc<Shared<A>>>,
            headers: HeaderMap,
            uri: Uri,
        ) -> Result<Response, ApiError> {
            #unknown_path_auth
            Err(#rt::unknown_path(&uri))
        }

        #(#handlers)*
    })
}

fn operations(spec: &Spec, type_names: &BTreeSet<String>) -> Result<Vec<Op>> {
    let openapi = &spec.openapi;
    let mut ops = Vec::new();
    for (path, item) in openapi.paths.iter() {
        let ReferenceOr::Item(item) = item else {
            bail!("path {path}: path items may not be $refs");
        };
        for (method, operation) in item.iter() {
            let params = item
                .parameters
                .iter()
                .chain(operation.parameters.iter())
                .map(|p| resolve(openapi, p, "parameters", |c, n| c.parameters.get(n)))
                .collect::<Result<Vec<_>>>()?;
            // An operation's parameter overrides the path item's one of the same name and place.
            let params: Vec<&Parameter> = params
                .iter()
                .enumerate()
                .filter(|(i, p)| {
                    !params[i + 1..].iter().any(|later| {
                        later.parameter_data_ref().name == p.parameter_data_ref().name
                            && std::mem::discriminant(*later) == std::mem::discriminant(**p)
                    })
                })
                .map(|(_, p)| *p)
                .collect();
            ops.push(operation_model(openapi, type_names, path, method, operation, &params)?);
        }
    }
    Ok(ops)
}

fn operation_model(
    openapi: &OpenAPI,
    type_names: &BTreeSet<String>,
    path: &str,
    method: &str,
    operation: &Operation,
    params: &[&Parameter],
) -> Result<Op> {
    let Some(operation_id) = operation.operation_id.clone() else {
        bail!("{}: every operation needs an operationId", pointer(path, method));
    };
    // Messages name the operation and where it is, as a JSON pointer into the document.
    let at = pointer(path, method);
    let context = format!("{operation_id} ({} {path}) at {at}", method.to_uppercase());
    let mut path_params = Vec::new();
    let mut query_params = Vec::new();
    for parameter in params {
        match parameter {
            Parameter::Path { parameter_data, .. } => {
                path_params.push(param_model(type_names, &context, parameter_data)?)
            }
            Parameter::Query { parameter_data, .. } => {
                query_params.push(param_model(type_names, &context, parameter_data)?)
            }
            Parameter::Header { .. } | Parameter::Cookie { .. } => {
                bail!("{context}: only path and query parameters are supported")
            }
        }
    }

    let body = match &operation.request_body {
        None => None,
        Some(body) => Some(body_model(openapi, type_names, &context, body)?),
    };

    let mut replies = Vec::new();
    for (code, response) in &operation.responses.responses {
        let context = format!("{operation_id} at {at}/responses/{code}");
        let StatusCode::Code(status) = code else {
            bail!("{context}: status ranges (`4XX`) are not supported; list the codes");
        };
        if !(100..=599).contains(status) {
            bail!("{context}: {status} is not an HTTP status");
        }
        let response = resolve(openapi, response, "responses", |c, n| c.responses.get(n))?;
        replies.push(reply(openapi, type_names, &context, *status, response)?);
    }
    if !replies.iter().any(|r| (200..=299).contains(&r.status)) {
        bail!("{context}: needs a 2xx response");
    }
    if operation.responses.default.is_some() {
        bail!(
            "{operation_id} at {at}/responses/default: use explicit error codes, not `default` (progenitor panics on it beside 2xx)"
        );
    }

    let secured = match &operation.security {
        Some(requirements) => !requirements.is_empty(),
        None => openapi.security.as_ref().is_some_and(|s| !s.is_empty()),
    };

    let mut doc = operation.summary.clone().unwrap_or_default();
    if let Some(description) = &operation.description {
        doc.push_str("\n\n");
        doc.push_str(description.trim_end());
    }
    doc.push_str(&format!("\n\n`{} {path}` ({operation_id})", method.to_uppercase()));

    Ok(Op {
        method: method.to_string(),
        path: path.to_string(),
        fn_name: format_ident!("{}", operation_id.to_snake_case()),
        operation_id,
        doc,
        secured,
        path_params,
        query_params,
        body,
        replies,
    })
}

/// The JSON pointer of an operation: `#/paths/~1items~1{id}/get`.
fn pointer(path: &str, method: &str) -> String {
    format!("#/paths/{}/{method}", path.replace('~', "~0").replace('/', "~1"))
}

/// An item, or the component a `#/components/<kind>/<name>` reference names.
fn resolve<'a, T>(
    openapi: &'a OpenAPI,
    item: &'a ReferenceOr<T>,
    kind: &str,
    lookup: impl Fn(&'a openapiv3::Components, &str) -> Option<&'a ReferenceOr<T>>,
) -> Result<&'a T> {
    match item {
        ReferenceOr::Item(item) => Ok(item),
        ReferenceOr::Reference { reference } => {
            let found = reference
                .strip_prefix(&format!("#/components/{kind}/"))
                .and_then(|name| lookup(openapi.components.as_ref()?, name));
            match found {
                Some(ReferenceOr::Item(item)) => Ok(item),
                _ => bail!("reference {reference} does not resolve to one of components/{kind}"),
            }
        }
    }
}

fn param_model(type_names: &BTreeSet<String>, context: &str, data: &openapiv3::ParameterData) -> Result<Param> {
    let ParameterSchemaOrContent::Schema(schema) = &data.format else {
        bail!("{context}: parameter {} must have a schema", data.name);
    };
    let context = format!("{context}, parameter {}", data.name);
    let raw = serde_json::to_value(schema).expect("schemas serialise");
    let default = match schema {
        ReferenceOr::Item(s) => s.schema_data.default.clone(),
        ReferenceOr::Reference { .. } => None,
    };
    Ok(Param {
        name: data.name.clone(),
        ident: field_ident(&data.name),
        ty: rust_type(type_names, &context, schema)?,
        required: data.required,
        default,
        doc: data.description.clone(),
        schema: to_json_schema(&raw),
    })
}

fn body_model(
    openapi: &OpenAPI,
    type_names: &BTreeSet<String>,
    context: &str,
    body: &ReferenceOr<RequestBody>,
) -> Result<Body> {
    let body = resolve(openapi, body, "requestBodies", |c, n| c.request_bodies.get(n))?;
    let Some(media) = body.content.get("application/json") else {
        bail!("{context}: the request body must be application/json");
    };
    let Some(schema @ ReferenceOr::Reference { .. }) = &media.schema else {
        bail!("{context}: the request body schema must be a $ref to a component schema");
    };
    let raw = serde_json::to_value(schema).expect("schemas serialise");
    Ok(Body { ty: rust_type(type_names, context, schema)?, required: body.required, schema: raw })
}

fn reply(
    openapi: &OpenAPI,
    type_names: &BTreeSet<String>,
    context: &str,
    status: u16,
    response: &Response,
) -> Result<Reply> {
    let body = response_type(type_names, context, response)?;
    let headers = response
        .headers
        .iter()
        .map(|(name, header)| {
            let header = resolve(openapi, header, "headers", |c, n| c.headers.get(n))?;
            let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
            if name.is_empty() || !name.bytes().all(token) {
                bail!("{context}: {name:?} is not a header name");
            }
            let ParameterSchemaOrContent::Schema(schema) = &header.format else {
                bail!("{context}: header {name} must have a schema");
            };
            let ty = rust_type(type_names, &format!("{context}, header {name}"), schema)?;
            Ok(ReplyHeader {
                name: name.to_ascii_lowercase(),
                ident: field_ident(name),
                ty,
                required: header.required,
                doc: header.description.clone(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    if headers.iter().any(|h| h.ident == "body") {
        bail!("{context}: a header named `body` would clash with the variant's body field");
    }
    Ok(Reply { status, variant: status_variant(status), doc: response.description.clone(), body, headers })
}

/// A status code's variant name: its reason phrase (`NotFound`), or `Status<code>`.
fn status_variant(status: u16) -> Ident {
    match status_name(status) {
        Some(name) => format_ident!("{}", name),
        None => format_ident!("Status{}", status),
    }
}

/// The status as a constant of `http::StatusCode` where it has one.
fn status_tokens(status: u16) -> TokenStream {
    match status_name(status) {
        Some(name) => {
            let constant = format_ident!("{}", name.to_shouty_snake_case());
            quote!(StatusCode::#constant)
        }
        None => quote!(StatusCode::from_u16(#status).expect("a valid status")),
    }
}

/// The reason phrases of the statuses `http::StatusCode` names, in camel case.
fn status_name(status: u16) -> Option<&'static str> {
    Some(match status {
        100 => "Continue",
        101 => "SwitchingProtocols",
        200 => "Ok",
        201 => "Created",
        202 => "Accepted",
        203 => "NonAuthoritativeInformation",
        204 => "NoContent",
        205 => "ResetContent",
        206 => "PartialContent",
        300 => "MultipleChoices",
        301 => "MovedPermanently",
        302 => "Found",
        303 => "SeeOther",
        304 => "NotModified",
        307 => "TemporaryRedirect",
        308 => "PermanentRedirect",
        400 => "BadRequest",
        401 => "Unauthorized",
        402 => "PaymentRequired",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        408 => "RequestTimeout",
        409 => "Conflict",
        410 => "Gone",
        411 => "LengthRequired",
        412 => "PreconditionFailed",
        413 => "PayloadTooLarge",
        414 => "UriTooLong",
        415 => "UnsupportedMediaType",
        416 => "RangeNotSatisfiable",
        417 => "ExpectationFailed",
        422 => "UnprocessableEntity",
        423 => "Locked",
        425 => "TooEarly",
        428 => "PreconditionRequired",
        429 => "TooManyRequests",
        431 => "RequestHeaderFieldsTooLarge",
        500 => "InternalServerError",
        501 => "NotImplemented",
        502 => "BadGateway",
        503 => "ServiceUnavailable",
        504 => "GatewayTimeout",
        _ => return None,
    })
}

fn response_type(type_names: &BTreeSet<String>, context: &str, response: &Response) -> Result<Option<TokenStream>> {
    if response.content.is_empty() {
        return Ok(None);
    }
    let Some(media) = response.content.get("application/json") else {
        bail!("{context}: the response must be application/json or empty");
    };
    let Some(schema) = &media.schema else {
        bail!("{context}: the response needs a schema");
    };
    let ok = match schema {
        ReferenceOr::Reference { .. } => true,
        ReferenceOr::Item(s) => matches!(
            &s.schema_kind,
            SchemaKind::Type(Type::Array(a)) if matches!(a.items, Some(ReferenceOr::Reference { .. }))
        ),
    };
    if !ok {
        bail!("{context}: the response must be a $ref or an array of $refs");
    }
    rust_type(type_names, context, schema).map(Some)
}

/// The Rust type of a parameter, body or response schema, as seen from the generated module.
fn rust_type(type_names: &BTreeSet<String>, context: &str, schema: &ReferenceOr<Schema>) -> Result<TokenStream> {
    let schema = match schema {
        ReferenceOr::Reference { reference } => {
            let Some(name) = reference.strip_prefix("#/components/schemas/") else {
                bail!("{context}: unsupported reference {reference}");
            };
            let rust_name = name.to_upper_camel_case();
            if !type_names.contains(&rust_name) {
                bail!("{context}: no model named {rust_name} was generated for {reference}");
            }
            let ident = format_ident!("{}", rust_name);
            return Ok(quote!(types::#ident));
        }
        ReferenceOr::Item(schema) => schema,
    };
    let unsupported = || {
        Error(format!(
            "{context}: an inline schema of this shape is not supported here; \
             move it to components/schemas and $ref it"
        ))
    };
    Ok(match &schema.schema_kind {
        SchemaKind::Type(Type::String(s)) => {
            if !s.enumeration.is_empty() {
                return Err(unsupported());
            }
            match &s.format {
                VariantOrUnknownOrEmpty::Unknown(f) if f == "uuid" => quote!(::uuid::Uuid),
                VariantOrUnknownOrEmpty::Item(openapiv3::StringFormat::DateTime) => {
                    quote!(::chrono::DateTime<::chrono::Utc>)
                }
                _ => quote!(::std::string::String),
            }
        }
        SchemaKind::Type(Type::Integer(i)) => match &i.format {
            VariantOrUnknownOrEmpty::Item(openapiv3::IntegerFormat::Int32) => quote!(i32),
            _ => quote!(i64),
        },
        SchemaKind::Type(Type::Number(_)) => quote!(f64),
        SchemaKind::Type(Type::Boolean(_)) => quote!(bool),
        SchemaKind::Type(Type::Array(a)) => {
            let Some(items) = &a.items else {
                return Err(unsupported());
            };
            let items = rust_type(type_names, context, &items.clone().unbox())?;
            quote!(::std::vec::Vec<#items>)
        }
        _ => return Err(unsupported()),
    })
}

fn field_ident(name: &str) -> Ident {
    let snake = name.to_snake_case();
    syn::parse_str::<Ident>(&snake).unwrap_or_else(|_| Ident::new_raw(&snake, Span::call_site()))
}

fn query_struct_ident(op: &Op) -> Ident {
    format_ident!("{}Query", op.operation_id.to_upper_camel_case())
}

fn response_enum_ident(op: &Op) -> Ident {
    format_ident!("{}Response", op.operation_id.to_upper_camel_case())
}

fn trait_method(op: &Op, rt: &syn::Path) -> TokenStream {
    let doc = doc_lines(&op.doc);
    let name = &op.fn_name;
    let operation_id = &op.operation_id;
    let caller = if op.secured { quote!(P) } else { quote!(()) };
    let mut unused = vec![quote!(context)];
    let path_args = op.path_params.iter().map(|p| {
        let (ident, ty) = (&p.ident, &p.ty);
        quote!(#ident: #ty,)
    });
    unused.extend(op.path_params.iter().map(|p| p.ident.to_token_stream()));
    let query_arg = (!op.query_params.is_empty()).then(|| {
        unused.push(quote!(query));
        let ty = query_struct_ident(op);
        quote!(query: #ty,)
    });
    let body_arg = op.body.as_ref().map(|b| {
        unused.push(quote!(body));
        let ty = &b.ty;
        if b.required { quote!(body: #ty,) } else { quote!(body: Option<#ty>,) }
    });
    let output = response_enum_ident(op);
    quote! {
        #(#doc)*
        fn #name(
            &self,
            context: #rt::RequestContext<#caller>,
            #(#path_args)*
            #query_arg
            #body_arg
        ) -> impl Future<Output = Result<#output, ApiError>> + Send {
            let _ = (#(#unused,)*);
            async { Err(#rt::not_implemented(#operation_id)) }
        }
    }
}

/// The operation's answers, one variant per documented status, and how each becomes HTTP.
fn response_enum(op: &Op, rt: &syn::Path) -> TokenStream {
    let ident = response_enum_ident(op);
    let doc = format!(" What [`Api::{}`] answers: one variant per status the document lists.", op.fn_name);
    let variants = op.replies.iter().map(|reply| {
        let variant = &reply.variant;
        let mut doc = format!("`{}`", reply.status);
        if !reply.doc.trim().is_empty() {
            doc.push_str(": ");
            doc.push_str(reply.doc.trim());
        }
        let doc = doc_lines(&doc);
        match (&reply.body, reply.headers.is_empty()) {
            (None, true) => quote! { #(#doc)* #variant, },
            (Some(body), true) => quote! { #(#doc)* #variant(#body), },
            (body, false) => {
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
                quote! { #(#doc)* #variant { #body #(#headers)* }, }
            }
        }
    });
    let arms = op.replies.iter().map(|reply| {
        let variant = &reply.variant;
        let status = status_tokens(reply.status);
        let respond = if reply.body.is_some() {
            quote!(#rt::json_response(#status, &body))
        } else {
            quote!(#rt::empty_response(#status))
        };
        match (&reply.body, reply.headers.is_empty()) {
            (None, true) => quote! { Self::#variant => #respond, },
            (Some(_), true) => quote! { Self::#variant(body) => #respond, },
            (body, false) => {
                let body = body.as_ref().map(|_| quote!(body,));
                let fields = reply.headers.iter().map(|h| &h.ident);
                let sets = reply.headers.iter().map(|h| {
                    let (field, name) = (&h.ident, &h.name);
                    let value = if h.required { quote!(Some(&#field)) } else { quote!(#field.as_ref()) };
                    quote! { #rt::set_header(&mut response, #name, #value); }
                });
                quote! {
                    Self::#variant { #body #(#fields),* } => {
                        let mut response = #respond;
                        #(#sets)*
                        response
                    }
                }
            }
        }
    });
    // `From` for a success that carries only a body of a type no other variant carries, so an
    // implementation can answer `Ok(balance.into())`.
    let body_types: Vec<String> = op.replies.iter().filter_map(|r| r.body.as_ref().map(|b| b.to_string())).collect();
    let successes = op.replies.iter().filter(|r| (200..=299).contains(&r.status) && r.headers.is_empty());
    let froms = successes.filter_map(|reply| {
        let body = reply.body.as_ref()?;
        if body_types.iter().filter(|t| **t == body.to_string()).count() != 1 {
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
    quote! {
        #[doc = #doc]
        #[derive(Debug, Clone, PartialEq)]
        pub enum #ident {
            #(#variants)*
        }

        impl axum::response::IntoResponse for #ident {
            fn into_response(self) -> Response {
                match self {
                    #(#arms)*
                }
            }
        }

        #(#froms)*
    }
}

fn query_struct(op: &Op) -> Option<TokenStream> {
    if op.query_params.is_empty() {
        return None;
    }
    let ident = query_struct_ident(op);
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
                let value = literal(default);
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

/// The validators an operation needs: its query (as one object) and its body.
fn validator_names(op: &Op) -> Vec<(Ident, Value)> {
    let mut out = Vec::new();
    if !op.query_params.is_empty() {
        let properties: serde_json::Map<String, Value> =
            op.query_params.iter().map(|p| (p.name.clone(), p.schema.clone())).collect();
        let required: Vec<&str> = op.query_params.iter().filter(|p| p.required).map(|p| p.name.as_str()).collect();
        out.push((
            format_ident!("{}_query", op.fn_name),
            json!({"type": "object", "properties": properties, "required": required}),
        ));
    }
    if let Some(body) = &op.body {
        out.push((format_ident!("{}_body", op.fn_name), body.schema.clone()));
    }
    out
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
            let mut methods = ops.iter().filter(|op| op.path == path).map(|op| {
                let method = format_ident!("{}", op.method);
                let handler = &op.fn_name;
                (method, handler)
            });
            let (first_method, first_handler) = methods.next().expect("a path has an operation");
            let rest = methods.map(|(method, handler)| quote!(.#method(#handler::<P, A>)));
            // Another method answers 405 naming these, in the message and in `Allow` (axum
            // answers HEAD wherever GET is served).
            let mut allowed: Vec<String> =
                ops.iter().filter(|op| op.path == path).map(|op| op.method.to_uppercase()).collect();
            if allowed.iter().any(|method| method == "GET") {
                allowed.push("HEAD".into());
            }
            allowed.sort();
            let allowed = allowed.join(", ");
            quote! {
                .route(
                    #path,
                    axum::routing::#first_method(#first_handler::<P, A>) #(#rest)*
                        .fallback(|| async { #rt::method_not_allowed(#allowed) }),
                )
            }
        })
        .collect()
}

fn handler(op: &Op, rt: &syn::Path) -> TokenStream {
    let name = &op.fn_name;
    let doc = format!(" `{} {}`", op.method.to_uppercase(), op.path);
    let mut extractors = vec![quote!(State(shared): State<Arc<Shared<A>>>), quote!(headers: HeaderMap)];
    let mut steps = Vec::new();
    let mut args = vec![quote!(context)];

    if op.secured {
        steps.push(quote! {
            let caller = <A as Api<P>>::authenticate(&shared.api, #rt::bearer_token(&headers)?).await?;
        });
    } else {
        steps.push(quote!(let caller = ();));
    }
    if !op.path_params.is_empty() {
        extractors.push(quote!(path: RawPathParams));
        for p in &op.path_params {
            let (ident, ty, pname) = (&p.ident, &p.ty, &p.name);
            let parse = if p.ty.to_string() == quote!(::uuid::Uuid).to_string() {
                quote!(#rt::path_uuid(&path, #pname)?)
            } else {
                quote!(#rt::path_param(&path, #pname)?)
            };
            steps.push(quote! { let #ident: #ty = #parse; });
            args.push(quote!(#ident));
        }
    }
    if !op.query_params.is_empty() {
        extractors.push(quote!(uri: Uri));
        let ty = query_struct_ident(op);
        let validator = format_ident!("{}_query", op.fn_name);
        steps.push(quote! {
            let query: #ty = #rt::query(&uri, &shared.validators.#validator)?;
        });
        args.push(quote!(query));
    }
    if let Some(body) = &op.body {
        extractors.push(quote!(body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>));
        let ty = &body.ty;
        let validator = format_ident!("{}_body", op.fn_name);
        if body.required {
            steps.push(quote! {
                let body: #ty = #rt::json_body(&headers, body, &shared.validators.#validator)?;
            });
        } else {
            steps.push(quote! {
                let body: Option<#ty> = #rt::optional_json_body(&headers, body, &shared.validators.#validator)?;
            });
        }
        args.push(quote!(body));
    }
    quote! {
        #[doc = #doc]
        async fn #name<P: Send + 'static, A: Api<P>>(#(#extractors),*) -> Result<Response, ApiError> {
            #(#steps)*
            let context = #rt::RequestContext::new(caller, headers);
            let output = <A as Api<P>>::#name(&shared.api, #(#args),*).await?;
            Ok(axum::response::IntoResponse::into_response(output))
        }
    }
}

fn doc_lines(text: &str) -> Vec<TokenStream> {
    text.lines()
        .map(|line| {
            let line = if line.is_empty() { String::new() } else { format!(" {line}") };
            quote!(#[doc = #line])
        })
        .collect()
}
