//! The server generator (progenitor has none): one trait with a method per operation, and an
//! axum router that does the HTTP work around it — authentication, path, query and body
//! parsing, validation against the document's schemas, status codes and uniform error bodies.
//!
//! Shapes it accepts, so the generated signatures stay plain: request bodies are `$ref`s to
//! component schemas; responses are a `$ref`, an array of `$ref`s, or empty; parameters are a
//! `$ref` or a primitive (string, uuid, date-time, integer, number, boolean). Anything else is
//! refused with a message saying what to change in the document.

use std::collections::BTreeSet;

use heck::{ToSnakeCase, ToUpperCamelCase};
use openapiv3::{
    OpenAPI, Operation, Parameter, ParameterSchemaOrContent, ReferenceOr, RequestBody, Response, Schema, SchemaKind,
    StatusCode, Type, VariantOrUnknownOrEmpty,
};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
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
    status: u16,
    response: Option<TokenStream>,
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

    let trait_methods = ops.iter().map(trait_method);
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
        quote! { shared.api.authenticate(#rt::bearer_token(&headers)?).await?; }
    } else {
        quote! { let _ = (&shared, &headers); }
    };
    let title = spec.openapi.info.title.clone();
    let trait_doc = doc_lines(&format!(
        "The operations of {title}, one method per operation. Implement it and serve it with\n[`router`], which authenticates every request with [`Api::authenticate`], parses and\nvalidates path, query and body against the document, and turns every failure into the\nerror object."
    ));

    Ok(quote! {
        use std::sync::Arc;

        use #types_path as types;
        use axum::extract::{RawPathParams, State};
        use axum::http::{HeaderMap, StatusCode, Uri};
        use axum::response::Response;
        use #rt::ApiError;

        #(#trait_doc)*
        pub trait Api: Send + Sync + 'static {
            /// Who is calling, as [`Api::authenticate`] found out from the bearer token.
            type Principal: Send + 'static;

            /// Maps a bearer token to the caller. Return [`ApiError::unauthorized`] for a token
            /// that is not valid; the router answers `401` without calling any operation.
            fn authenticate(
                &self,
                token: &str,
            ) -> impl Future<Output = Result<Self::Principal, ApiError>> + Send;

            #(#trait_methods)*
        }

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
        pub fn router<A: Api>(api: Arc<A>) -> axum::Router {
            let shared = Arc::new(Shared { api, validators: Validators::new() });
            let router = axum::Router::new()
                #(#routes)*
                .fallback(unknown_path::<A>)
                .with_state(shared);
            #rt::finish_router(router)
        }

        /// A path the document does not have.
        async fn unknown_path<A: Api>(
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
        bail!("{method} {path}: every operation needs an operationId");
    };
    let context = format!("{operation_id} ({} {path})", method.to_uppercase());
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

    let mut success =
        operation.responses.responses.iter().filter(|(code, _)| matches!(code, StatusCode::Code(200..=299)));
    let (status, response) = match (success.next(), success.next()) {
        (Some((StatusCode::Code(code), response)), None) => {
            let response = resolve(openapi, response, "responses", |c, n| c.responses.get(n))?;
            (*code, response_type(type_names, &context, response)?)
        }
        _ => bail!("{context}: needs exactly one 2xx response"),
    };
    if operation.responses.default.is_some() {
        bail!("{context}: use explicit error codes, not `default` (progenitor panics on it beside 2xx)");
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
        status,
        response,
    })
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

fn response_type(type_names: &BTreeSet<String>, context: &str, response: &Response) -> Result<Option<TokenStream>> {
    if response.content.is_empty() {
        return Ok(None);
    }
    let Some(media) = response.content.get("application/json") else {
        bail!("{context}: the success response must be application/json or empty");
    };
    let Some(schema) = &media.schema else {
        bail!("{context}: the success response needs a schema");
    };
    let ok = match schema {
        ReferenceOr::Reference { .. } => true,
        ReferenceOr::Item(s) => matches!(
            &s.schema_kind,
            SchemaKind::Type(Type::Array(a)) if matches!(a.items, Some(ReferenceOr::Reference { .. }))
        ),
    };
    if !ok {
        bail!("{context}: the success response must be a $ref or an array of $refs");
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

fn trait_method(op: &Op) -> TokenStream {
    let doc = doc_lines(&op.doc);
    let name = &op.fn_name;
    let principal = op.secured.then(|| quote!(principal: Self::Principal,));
    let path_args = op.path_params.iter().map(|p| {
        let (ident, ty) = (&p.ident, &p.ty);
        quote!(#ident: #ty,)
    });
    let query_arg = (!op.query_params.is_empty()).then(|| {
        let ty = query_struct_ident(op);
        quote!(query: #ty,)
    });
    let body_arg = op.body.as_ref().map(|b| {
        let ty = &b.ty;
        if b.required { quote!(body: #ty,) } else { quote!(body: Option<#ty>,) }
    });
    let output = op.response.clone().unwrap_or(quote!(()));
    quote! {
        #(#doc)*
        fn #name(
            &self,
            #principal
            #(#path_args)*
            #query_arg
            #body_arg
        ) -> impl Future<Output = Result<#output, ApiError>> + Send;
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
            let rest = methods.map(|(method, handler)| quote!(.#method(#handler::<A>)));
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
                    axum::routing::#first_method(#first_handler::<A>) #(#rest)*
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
    let mut args = Vec::new();

    if op.secured {
        steps.push(quote! {
            let principal = shared.api.authenticate(#rt::bearer_token(&headers)?).await?;
        });
        args.push(quote!(principal));
    } else {
        steps.push(quote!(let _ = &headers;));
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
    let status = match op.status {
        200 => quote!(StatusCode::OK),
        201 => quote!(StatusCode::CREATED),
        202 => quote!(StatusCode::ACCEPTED),
        204 => quote!(StatusCode::NO_CONTENT),
        code => quote!(StatusCode::from_u16(#code).expect("a valid status")),
    };
    let respond = if op.response.is_some() {
        quote!(Ok(#rt::json_response(#status, &output)))
    } else {
        quote! {
            let () = output;
            Ok(#rt::empty_response(#status))
        }
    };
    quote! {
        #[doc = #doc]
        async fn #name<A: Api>(#(#extractors),*) -> Result<Response, ApiError> {
            #(#steps)*
            let output = shared.api.#name(#(#args),*).await?;
            #respond
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
