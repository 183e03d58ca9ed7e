//! Each operation of the read view turned into the model's [`Op`]: its route, parameters with
//! their wire form, body media kinds (multipart parts read field by field), replies and security
//! requirement.

use std::collections::BTreeSet;

use openapiv3::{
    OpenAPI, Operation, Parameter, ParameterSchemaOrContent, ReferenceOr, RequestBody, Response, Schema, SchemaKind,
    StatusCode, Type, VariantOrUnknownOrEmpty,
};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use crate::error::{Error, Result, bail};
use crate::model::error_object::ErrorObject;
use crate::model::json_schema::to_json_schema;
use crate::model::names::{field_ident, operation_type_name, rust_type};
use crate::model::operation::*;
use crate::read::Spec;
use crate::read::document::{essence, pointer, rust_name};

/// `error_object`: the document's (`error_object::find`; a webhooks' document is answered in its
/// parent's), whose responses an implementation answers with `ApiError`.
pub(crate) fn operations(
    spec: &Spec,
    type_names: &BTreeSet<String>,
    schemes: &[super::security::Scheme],
    error_object: &ErrorObject,
) -> Result<Vec<Op>> {
    let openapi = &spec.openapi;
    let components = spec.raw.get("components").unwrap_or(&Value::Null);
    let mut ops = Vec::new();
    // Every operation that cannot be modelled, each with its error, so the tool leaves them all
    // out in one pass (`write::leave_out`).
    let mut failing = Vec::new();
    for read in spec.path_items() {
        let (path, item) = read?;
        let ReferenceOr::Item(item) = item else {
            bail!(pointer(&["paths", path]), "path items may not be $refs");
        };
        for (method, operation) in item.iter() {
            let op = operation
                .parameters
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    resolve(openapi, p, "parameters", |c, n| c.parameters.get(n)).map_err(|e| {
                        Error::at(format!("{}/parameters/{i}", pointer(&["paths", path, method])), e.to_string())
                    })
                })
                .collect::<Result<Vec<_>>>()
                .and_then(|params| {
                    operation_model(
                        (openapi, components, error_object),
                        type_names,
                        schemes,
                        path,
                        method,
                        operation,
                        &params,
                    )
                });
            match op {
                Ok(mut op) => {
                    op.mock = spec.raw.pointer(&op.raw).and_then(|raw| super::mock::mock(raw, components));
                    ops.push(op);
                }
                Err(error) => failing.push(crate::error::Failing {
                    path: path.clone(),
                    method: method.to_owned(),
                    error: Box::new(error),
                }),
            }
        }
    }
    match failing.len() {
        0 => Ok(ops),
        1 => Err(*failing.remove(0).error),
        _ => Err(Error::Operations(failing)),
    }
}

/// `document`: the model, the normalised document's components and its error object.
#[allow(clippy::too_many_arguments)]
fn operation_model(
    (openapi, components, error_object): (&OpenAPI, &Value, &ErrorObject),
    type_names: &BTreeSet<String>,
    schemes: &[super::security::Scheme],
    path: &str,
    method: &str,
    operation: &Operation,
    params: &[&Parameter],
) -> Result<Op> {
    let operation_id = operation.operation_id.clone().expect("normalise gives every operation an id");
    // Messages name the operation and where it is, as a JSON pointer into the document.
    let at = pointer(&["paths", path, method]);
    let view = (path, method);
    let marked = operation.extensions.get(crate::read::marks::METHOD).and_then(Value::as_str);
    let (method, path) = crate::model::methods::route(path, method, marked);
    let context = format!("{operation_id} ({} {path}) at {at}", crate::model::methods::on_the_wire(method));
    let mut path_params = Vec::new();
    let mut header_params = Vec::new();
    let mut cookie_params = Vec::new();
    let mut query_params = Vec::new();
    for parameter in params {
        let raw = serde_json::to_value(parameter).expect("parameters serialise");
        let wire = crate::read::wire::of(&raw, components).map_err(|why| Error::at(&context, format!("{why}")))?;
        match parameter {
            Parameter::Path { parameter_data, .. } => {
                path_params.push(param_model(type_names, &context, parameter_data, wire)?)
            }
            Parameter::Query { parameter_data, .. } => {
                query_params.push(param_model(type_names, &context, parameter_data, wire)?)
            }
            Parameter::Header { parameter_data, .. } => {
                let mut param = param_model(type_names, &context, parameter_data, wire)?;
                param.name = param.name.to_ascii_lowercase();
                param.wire.name = param.name.clone();
                header_params.push(param)
            }
            Parameter::Cookie { parameter_data, .. } => {
                cookie_params.push(param_model(type_names, &context, parameter_data, wire)?)
            }
        }
    }
    // In the order the path names them, as the client's methods take them.
    path_params.sort_by_key(|p| path.find(&format!("{{{}}}", p.name)));
    // A parameter whose argument would be named as another (TomTom's path parameter `query`
    // beside the query's struct) is named after its place too: `query_path`.
    let mut idents: Vec<String> = vec!["context".into(), "query".into(), "body".into()];
    let places = [("path", &mut path_params), ("header", &mut header_params), ("cookie", &mut cookie_params)];
    for (place, params) in places {
        for param in params.iter_mut() {
            let mut ident = param.ident.to_string();
            if idents.contains(&ident) {
                ident = format!("{}_{place}", ident.trim_start_matches("r#"));
                if idents.contains(&ident) {
                    bail!(context, "parameter {} would be a second argument named `{ident}`", param.name);
                }
                param.ident = format_ident!("{ident}");
            }
            idents.push(ident);
        }
    }

    let body = match &operation.request_body {
        None => None,
        Some(body) => Some(body_model(openapi, type_names, &format!("{operation_id} at {at}/requestBody"), body)?),
    };

    let mut replies = Vec::new();
    let mut errors = Vec::new();
    let documented = operation
        .responses
        .responses
        .iter()
        .map(|(code, r)| (Some(code), r))
        .chain(operation.responses.default.iter().map(|r| (None, r)));
    for (code, response) in documented {
        let (status, name) = match code {
            Some(StatusCode::Code(status)) => (Status::Code(*status), status.to_string()),
            Some(StatusCode::Range(class)) => (Status::Range(*class), format!("{class}XX")),
            None => (Status::Default, "default".to_string()),
        };
        let context = format!("{operation_id} at {at}/responses/{name}");
        match status {
            Status::Code(code) if !(100..=599).contains(&code) => bail!(context, "{code} is not an HTTP status"),
            Status::Range(class) if !(1..=5).contains(&class) => bail!(context, "not a status class"),
            _ => {}
        }
        let response = resolve(openapi, response, "responses", |c, n| c.responses.get(n))
            .map_err(|e| Error::at(&context, format!("{e}")))?;
        if answered_as_api_error(error_object, status, response) {
            errors.push(status);
        } else {
            replies.push(reply(openapi, type_names, &context, status, response)?);
        }
    }
    // Every operation has a success response: `normalise` gives one (`2XX`) to those without.
    let requirement = super::security::requirement(openapi, Some(operation), schemes, &context)?;

    let mut doc = operation.summary.clone().unwrap_or_default();
    if let Some(description) = &operation.description {
        doc.push_str("\n\n");
        doc.push_str(description.trim_end());
    }
    doc.push_str(&format!("\n\n`{} {path}` ({operation_id})", crate::model::methods::on_the_wire(method)));

    Ok(Op {
        raw: format!("/paths/{}/{}", crate::read::document::escape(view.0), view.1),
        method: method.to_string(),
        path: path.to_string(),
        fn_name: format_ident!("{}", rust_name(&operation_id, false)),
        type_name: rust_name(&operation_id, true),
        operation_id,
        doc,
        requirement,
        path_params,
        header_params,
        cookie_params,
        query_params,
        body,
        replies,
        errors,
        mock: None,
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

fn param_model(
    type_names: &BTreeSet<String>,
    context: &str,
    data: &openapiv3::ParameterData,
    wire: crate::read::wire::Wire,
) -> Result<Param> {
    let ParameterSchemaOrContent::Schema(schema) = &data.format else {
        bail!(context, "parameter {} must have a schema", data.name);
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
        kind: crate::model::names::type_kind(schema),
        required: data.required,
        default,
        doc: data.description.clone(),
        schema: to_json_schema(&raw),
        wire,
    })
}

fn body_model(
    openapi: &OpenAPI,
    type_names: &BTreeSet<String>,
    context: &str,
    body: &ReferenceOr<RequestBody>,
) -> Result<Body> {
    let body = resolve(openapi, body, "requestBodies", |c, n| c.request_bodies.get(n))
        .map_err(|e| Error::at(context, format!("{e}")))?;
    if body.content.is_empty() {
        bail!(context, "a request body needs at least one media type");
    }
    let mut kinds = Vec::new();
    for (media_type, content) in &body.content {
        let context = format!("{context}/content/{}", media_type.replace('/', "~1"));
        let essence = essence(media_type);
        let schema = content.schema.clone().unwrap_or_else(|| {
            ReferenceOr::Item(Schema {
                schema_data: Default::default(),
                schema_kind: SchemaKind::Any(Default::default()),
            })
        });
        let raw = serde_json::to_value(&schema).expect("schemas serialise");
        let kind = if crate::read::document::is_json(media_type) {
            MediaKind::Json { ty: rust_type(type_names, &context, &schema)?, schema: raw }
        } else if essence == "application/x-www-form-urlencoded" {
            if !matches!(schema, ReferenceOr::Reference { .. }) {
                bail!(context, "a form body must be an object schema");
            }
            MediaKind::Form { ty: rust_type(type_names, &context, &schema)?, schema: raw }
        } else if essence == "multipart/form-data" {
            multipart(openapi, type_names, &context, &operation_type_name(&context), &schema, content)?
        } else if essence.starts_with("multipart/") {
            bail!(context, "{essence} bodies are not supported (multipart/form-data is)");
        } else if essence.starts_with("text/") {
            MediaKind::Text
        } else {
            MediaKind::Bytes
        };
        kinds.push((media_type.clone(), kind));
    }
    // Variants named by kind (`Json`, `Form`, `Text`, `Bytes`) when those differ, else by media type.
    let kind_name = |kind: &MediaKind| match kind {
        MediaKind::Json { .. } => "Json",
        MediaKind::Form { .. } => "Form",
        MediaKind::Multipart { .. } => "Multipart",
        MediaKind::Text => "Text",
        MediaKind::Bytes => "Bytes",
    };
    if kinds.len() > 1 && kinds.iter().any(|(_, kind)| matches!(kind, MediaKind::Multipart { .. })) {
        bail!(context, "a body offered as multipart/form-data and as other media types is not supported");
    }
    let unique = kinds.iter().map(|(_, kind)| kind_name(kind)).collect::<BTreeSet<_>>().len() == kinds.len();
    // A wildcard is a word of the name (`application/*+json` beside `application/json`), and a
    // name two media types still share is numbered.
    let mut taken = BTreeSet::new();
    let media = kinds
        .into_iter()
        .map(|(media_type, kind)| {
            let wanted = match unique {
                true => kind_name(&kind).to_string(),
                false => rust_name(&media_type.replace('*', " any "), true),
            };
            let mut variant = wanted.clone();
            for n in 2.. {
                if taken.insert(variant.clone()) {
                    break;
                }
                variant = format!("{wanted}{n}");
            }
            Media { variant: format_ident!("{}", variant), media_type, kind }
        })
        .collect();
    Ok(Body { required: body.required, media })
}

/// Whether `response`, documented for `status`, is an error `ApiError` writes exactly: a `4xx`
/// or `5xx` (a class of them, or `default`) whose only content is JSON of the document's error
/// object, one `ApiError` fills whole (`ErrorObject::complete`), and whose headers are ones
/// `ApiError` sets (`WWW-Authenticate`, `Retry-After`).
fn answered_as_api_error(error_object: &ErrorObject, status: Status, response: &Response) -> bool {
    let error_status = match status {
        Status::Code(code) => (400..=599).contains(&code),
        Status::Range(class) => class == 4 || class == 5,
        Status::Default => true,
    };
    let headers = response
        .headers
        .keys()
        .all(|name| name.eq_ignore_ascii_case("www-authenticate") || name.eq_ignore_ascii_case("retry-after"));
    let [(media, content)] = response.content.iter().collect::<Vec<_>>()[..] else { return false };
    let Some(written) = error_object.schema.as_deref().filter(|_| error_object.complete) else { return false };
    let same = match &content.schema {
        Some(ReferenceOr::Reference { reference }) => reference == written,
        // An inline schema is the error object's by its JSON (`error_object::candidates`).
        Some(ReferenceOr::Item(schema)) => {
            serde_json::to_value(schema).ok() == serde_json::from_str::<Value>(written).ok()
        }
        None => false,
    };
    error_status && headers && crate::read::document::is_json(media) && same
}

fn reply(
    openapi: &OpenAPI,
    type_names: &BTreeSet<String>,
    context: &str,
    status: Status,
    response: &Response,
) -> Result<Reply> {
    let body = response_body(type_names, context, status, response)?;
    let headers = response
        .headers
        .iter()
        .map(|(name, header)| {
            let header = resolve(openapi, header, "headers", |c, n| c.headers.get(n))
                .map_err(|e| Error::at(context, format!("{e}")))?;
            let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
            if name.is_empty() || !name.bytes().all(token) {
                bail!(context, "{name:?} is not a header name");
            }
            let ParameterSchemaOrContent::Schema(schema) = &header.format else {
                bail!(context, "header {name} must have a schema");
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
    if let Some(clash) = headers.iter().find(|h| h.ident == "body" || h.ident == "status") {
        bail!(context, "a header named `{}` would clash with the variant's field of that name", clash.name);
    }
    Ok(Reply { status, variant: variant(status), doc: response.description.clone(), body, headers })
}

fn response_body(
    type_names: &BTreeSet<String>,
    context: &str,
    status: Status,
    response: &Response,
) -> Result<Option<ReplyBody>> {
    if response.content.is_empty() {
        return Ok(None);
    }
    if status == Status::Code(101) {
        return Ok(Some(ReplyBody::Upgrade));
    }
    let typed = |(media, content): (&String, &openapiv3::MediaType)| -> Result<TokenStream> {
        let context = format!("{context}/content/{}", media.replace('/', "~1"));
        match &content.schema {
            Some(schema) => rust_type(type_names, &context, schema),
            None => Ok(quote!(::serde_json::Value)),
        }
    };
    if let [(media_type, content)] = response.content.iter().collect::<Vec<_>>()[..]
        && content.extensions.contains_key(crate::read::marks::ITEMS)
    {
        return Ok(Some(ReplyBody::Items { item: typed((media_type, content))?, media_type: media_type.clone() }));
    }
    let json = response.content.iter().find(|(media, _)| crate::read::document::is_json(media));
    let events = response.content.iter().find(|(media, _)| essence(media) == "text/event-stream");
    match (json, events) {
        // JSON or events, as the request's `Accept` asks: the implementer chooses.
        (Some(json), Some(events)) if response.content.len() == 2 => {
            Ok(Some(ReplyBody::Negotiated { json: typed(json)?, item: typed(events)? }))
        }
        (Some(json), _) => Ok(Some(ReplyBody::Json(typed(json)?))),
        (None, Some(events)) if response.content.len() == 1 => Ok(Some(ReplyBody::Events(typed(events)?))),
        _ => {
            let media: Vec<&str> = response.content.keys().map(String::as_str).collect();
            let media_type = if media.len() == 1 { media[0].to_string() } else { "*/*".to_string() };
            Ok(Some(ReplyBody::Raw { media_type }))
        }
    }
}

/// A `multipart/form-data` body: its schema (an object, a `$ref` once normalised) read into
/// parts — files (`format: binary`, alone or in an array), fields read as text (scalars, arrays
/// of scalars as repeated parts) or as JSON (objects, or as the `encoding` says).
fn multipart(
    openapi: &OpenAPI,
    type_names: &BTreeSet<String>,
    context: &str,
    operation: &str,
    schema: &ReferenceOr<Schema>,
    content: &openapiv3::MediaType,
) -> Result<MediaKind> {
    let ReferenceOr::Reference { reference } = schema else {
        bail!(context, "a multipart body must be an object schema");
    };
    let name = reference.strip_prefix("#/components/schemas/").unwrap_or_default();
    let object = match openapi.components.as_ref().and_then(|c| c.schemas.get(name)) {
        Some(ReferenceOr::Item(Schema { schema_kind: SchemaKind::Type(Type::Object(object)), .. })) => object,
        _ => bail!(context, "a multipart body must be an object schema (with properties: its parts)"),
    };
    let binary = |schema: &Schema| {
        matches!(&schema.schema_kind, SchemaKind::Type(Type::String(s))
            if s.format == VariantOrUnknownOrEmpty::Item(openapiv3::StringFormat::Binary))
    };
    let components = serde_json::json!({ "schemas": openapi.components.as_ref().map(|c| &c.schemas) });
    let mut fields = Vec::new();
    let mut files = Vec::new();
    for (part, property) in &object.properties {
        let here = format!("{context}, part {part}");
        let accepted: Vec<String> = content
            .encoding
            .get(part)
            .and_then(|e| e.content_type.as_deref())
            .map(|types| {
                types.split(',').map(|t| t.trim().to_string()).filter(|t| !t.is_empty() && !t.contains('*')).collect()
            })
            .unwrap_or_default();
        let json = content
            .encoding
            .get(part)
            .and_then(|e| e.content_type.as_deref())
            .is_some_and(crate::read::document::is_json);
        let property = property.clone().unbox();
        let resolved = match &property {
            ReferenceOr::Item(schema) => Some(schema.clone()),
            ReferenceOr::Reference { reference } => reference
                .strip_prefix("#/components/schemas/")
                .and_then(|n| openapi.components.as_ref()?.schemas.get(n))
                .and_then(|s| s.as_item().cloned()),
        };
        let kind = match resolved.as_ref().map(|s| &s.schema_kind) {
            Some(_) if resolved.as_ref().is_some_and(binary) => {
                files.push(part.clone());
                PartKind::File { accepted }
            }
            Some(SchemaKind::Type(Type::Array(array)))
                if array.items.as_ref().and_then(|i| i.as_item()).is_some_and(|i| binary(i)) =>
            {
                files.push(part.clone());
                PartKind::Files { accepted }
            }
            _ => {
                let ty = rust_type(type_names, &here, &property)?;
                let raw = serde_json::to_value(&property).expect("schemas serialise");
                let read = match crate::read::wire::shape(&raw, &components) {
                    _ if json => PartRead::Json,
                    crate::read::wire::Shape::Scalar(leaf) => PartRead::Text(leaf),
                    crate::read::wire::Shape::Array(leaf) => PartRead::Texts(leaf),
                    crate::read::wire::Shape::Object(_)
                    | crate::read::wire::Shape::ScalarOrObject(..)
                    | crate::read::wire::Shape::Nested => PartRead::Json,
                    // Anything else: JSON when it is a structure, else its text as a string.
                    crate::read::wire::Shape::Opaque => match resolved.as_ref().map(|s| &s.schema_kind) {
                        Some(SchemaKind::Type(Type::Object(_) | Type::Array(_))) => PartRead::Json,
                        _ => PartRead::Text(crate::read::wire::Leaf::String),
                    },
                };
                PartKind::Value { ty, read }
            }
        };
        fields.push(PartField {
            name: part.clone(),
            ident: field_ident(part),
            kind,
            required: object.required.contains(part),
            doc: resolved.and_then(|s| s.schema_data.description),
        });
    }
    // The fields' schema: the body's, without its files.
    let mut schema = serde_json::to_value(Schema {
        schema_data: Default::default(),
        schema_kind: SchemaKind::Type(Type::Object(object.clone())),
    })
    .expect("schemas serialise");
    if let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        properties.retain(|name, _| !files.contains(name));
    }
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|name| !files.iter().any(|f| Some(f.as_str()) == name.as_str()));
    }
    Ok(MediaKind::Multipart { ty: format_ident!("{operation}Parts"), fields, schema })
}
