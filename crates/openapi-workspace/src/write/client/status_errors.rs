//! Errors typed per status. progenitor gives an operation one error type; where the document
//! gives its error statuses different bodies (GitHub: `basic-error` on 404, `validation-error` on
//! 422), the operation's error is an enum with a variant per documented status, named as the
//! server names its responses (`NotFound`, `UnprocessableEntity`, `ClientError` for `4XX`,
//! `Default`), each holding that status's body — its model, its text, or nothing — and, without
//! a `default`, `Unexpected` for a status the document does not list. One body for every status
//! stays that one type.
//!
//! progenitor is shown one stand-in error schema per such operation ([`plan`]), which it is told
//! to replace with the enum (so typify writes nothing for it); the enum is written among the
//! models ([`definitions`]) and each error arm of the operation's `send` decodes its status's body
//! into its variant ([`decode_by_status`]) through the runtime's `client::errors`.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote};
use serde_json::{Map, Value, json};

use crate::model::operation::{Status, variant};
use crate::read::document::{Names, is_json, rust_name};

/// An operation's error enum.
pub(crate) struct ErrorEnum {
    /// Its name among the models (`GetRepoError`).
    name: String,
    operation: String,
    variants: Vec<Variant>,
}

struct Variant {
    status: Status,
    ident: String,
    description: String,
    payload: Payload,
}

/// What a variant holds.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Payload {
    /// A JSON body, as the model of this name.
    Json(String),
    /// A body in another media type, as text.
    Text,
    Empty,
}

/// How a sample matches one of an operation's errors: the enum's name, and each variant's name
/// and whether it holds a value (`NotFound(body)`, `Gone`, `Unexpected { status, body }`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Matched {
    pub name: String,
    pub variants: Vec<(String, Holds)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holds {
    Body,
    Nothing,
    StatusAndBody,
}

const UNEXPECTED: &str = "Unexpected";

/// A status key's status and whether it is an error's (`404`, `4XX`; `default` is asked apart).
fn error_status(key: &str) -> Option<Status> {
    match key.as_bytes() {
        [class @ (b'4' | b'5'), b'X' | b'x', b'X' | b'x'] => Some(Status::Range(u16::from(class - b'0'))),
        _ => key.parse::<u16>().ok().filter(|code| (400..=599).contains(code)).map(Status::Code),
    }
}

/// What a (resolved) response's body is, for the enum: a JSON schema, text, or nothing.
fn shape(response: &Value) -> Result<Value, Payload> {
    let content = response.get("content").and_then(Value::as_object).filter(|c| !c.is_empty());
    let Some(content) = content else { return Err(Payload::Empty) };
    match content.iter().find(|(media, _)| is_json(media)) {
        Some((_, media)) => Ok(media.get("schema").cloned().unwrap_or_else(|| json!({}))),
        None => Err(Payload::Text),
    }
}

/// The enum for the operation `id`'s error answers (its `responses`, each resolved already), when
/// they differ; `None` when one type serves them all. `default` is an error's only where a
/// success is listed (`success_listed`): else it is the success too. The responses are left as progenitor is to
/// read them: every error status answering the stand-in schema, `default` gone (its arm is
/// progenitor's catch-all, which [`decode_by_status`] rewrites). Each JSON body that is not a
/// model's reference becomes a model of its own in `schemas`; the stand-in is in `schemas` too,
/// replaced by the enum (`replacements`).
pub(super) fn plan(
    id: &str,
    responses: &mut Map<String, Value>,
    success_listed: bool,
    schemas: &mut Map<String, Value>,
    names: &mut Names,
    replacements: &mut Vec<(String, String)>,
) -> Option<ErrorEnum> {
    let mut entries: Vec<(String, Status)> =
        responses.keys().filter_map(|key| Some((key.clone(), error_status(key)?))).collect();
    if success_listed && responses.contains_key("default") {
        entries.push(("default".into(), Status::Default));
    }
    let shapes: Vec<Result<Value, Payload>> = entries.iter().map(|(key, _)| shape(&responses[key])).collect();
    let mut distinct = shapes.clone();
    distinct.sort_by_key(|shape| shape.as_ref().map(Value::to_string).map_err(Clone::clone));
    distinct.dedup();
    if distinct.len() < 2 {
        return None;
    }
    let name = names.claim(&rust_name(&format!("{id}-error"), true));
    let mut inline: Vec<(Value, String)> = Vec::new();
    let mut variants = Vec::new();
    for ((key, status), shape) in entries.iter().zip(shapes) {
        let ident = variant(*status).to_string();
        let payload = match shape {
            Err(payload) => payload,
            Ok(schema) => match schema.get("$ref").and_then(Value::as_str) {
                Some(model) if schema.as_object().is_some_and(|s| s.len() == 1) => match model.strip_prefix(MODELS) {
                    // As `components::ALL` names each (and holds typify to it).
                    Some(model) => Payload::Json(heck::ToUpperCamelCase::to_upper_camel_case(model)),
                    None => return None,
                },
                _ => match inline.iter().find(|(known, _)| *known == schema) {
                    Some((_, model)) => Payload::Json(model.clone()),
                    None => {
                        let model = names.claim(&rust_name(&format!("{id}-{ident}"), true));
                        schemas.insert(model.clone(), schema.clone());
                        inline.push((schema, model.clone()));
                        Payload::Json(model)
                    }
                },
            },
        };
        let description = responses[key].get("description").and_then(Value::as_str).unwrap_or_default();
        variants.push(Variant { status: *status, ident, description: first_line(description), payload });
    }
    let order = |status: &Status| match status {
        Status::Code(code) => (0, *code),
        Status::Range(class) => (1, *class),
        Status::Default => (2, 0),
    };
    variants.sort_by_key(|v| order(&v.status));
    let reference = json!({ "$ref": format!("{MODELS}{name}") });
    for (key, _) in &entries {
        let description = responses[key].get("description").cloned().unwrap_or_else(|| json!(""));
        responses[key] = json!({ "description": description, "content": {"application/json": {"schema": reference}} });
    }
    responses.remove("default");
    schemas.insert(name.clone(), json!({}));
    replacements.push((name.clone(), format!("types::{name}")));
    Some(ErrorEnum { name, operation: id.to_owned(), variants })
}

const MODELS: &str = "#/components/schemas/";

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().trim().to_owned()
}

impl ErrorEnum {
    fn defaults(&self) -> bool {
        self.variants.iter().any(|v| v.status == Status::Default)
    }

    /// The models the enum holds, which must be among those written.
    pub(super) fn models(&self) -> impl Iterator<Item = &str> {
        self.variants.iter().filter_map(|v| match &v.payload {
            Payload::Json(model) => Some(model.as_str()),
            _ => None,
        })
    }

    /// How a sample matches it.
    fn matched(&self) -> Matched {
        let mut variants: Vec<(String, Holds)> = self
            .variants
            .iter()
            .map(|v| (v.ident.clone(), if v.payload == Payload::Empty { Holds::Nothing } else { Holds::Body }))
            .collect();
        if !self.defaults() {
            variants.push((UNEXPECTED.into(), Holds::StatusAndBody));
        }
        Matched { name: self.name.clone(), variants }
    }
}

/// The enums, as models.
pub(super) fn definitions(enums: &[ErrorEnum]) -> TokenStream {
    let definitions = enums.iter().map(|errors| {
        let name = format_ident!("{}", errors.name);
        let doc = format!(
            " The error answers of `{}`, one variant per status the document gives a body of its own.",
            errors.operation
        );
        let variants = errors.variants.iter().map(|v| {
            let ident = format_ident!("{}", v.ident);
            let status = match v.status {
                Status::Code(code) => code.to_string(),
                Status::Range(class) => format!("{class}XX"),
                Status::Default => "Any other status (`default`)".into(),
            };
            let doc = match v.description.is_empty() {
                true => format!(" {status}."),
                false => format!(" {status}: {}", v.description),
            };
            match &v.payload {
                Payload::Json(model) => {
                    let model = format_ident!("{}", model);
                    quote! { #[doc = #doc] #ident(#model), }
                }
                Payload::Text => quote! { #[doc = #doc] #ident(::std::string::String), },
                Payload::Empty => quote! { #[doc = #doc] #ident, },
            }
        });
        let unexpected = (!errors.defaults()).then(|| {
            let ident = format_ident!("{}", UNEXPECTED);
            quote! {
                /// A status the document does not list for the operation, and its body as text.
                #ident { status: u16, body: ::std::string::String },
            }
        });
        quote! {
            #[doc = #doc]
            #[derive(::serde::Serialize, Clone, Debug, PartialEq, ::schemars::JsonSchema)]
            #[serde(untagged)]
            pub enum #name {
                #(#variants)*
                #unexpected
            }
        }
    });
    quote! { #(#definitions)* }
}

/// Rewrites the error arms of the `send` in `member` (a member of the client's builder module)
/// whose error type is one of `enums`: each documented status's arm decodes its own body into its
/// variant, and the catch-all the `default`'s (or makes the status `Unexpected`). Answers the
/// builder's name and how its errors are matched, when it was one.
pub(super) fn decode_by_status(member: &mut syn::Item, enums: &[ErrorEnum]) -> Option<(String, Matched)> {
    let syn::Item::Impl(implementation) = member else { return None };
    let builder = match &*implementation.self_ty {
        syn::Type::Path(path) => path.path.segments.last()?.ident.to_string(),
        _ => return None,
    };
    let send = implementation.items.iter_mut().find_map(|item| match item {
        syn::ImplItem::Fn(function) if function.sig.ident == "send" => Some(function),
        _ => None,
    })?;
    let path = error_type(&send.sig.output)?;
    let last = path.segments.last()?.ident.to_string();
    let errors = enums.iter().find(|errors| errors.name == last)?;
    let mut arms = Arms { errors, path };
    syn::visit_mut::VisitMut::visit_block_mut(&mut arms, &mut send.block);
    Some((builder, errors.matched()))
}

/// `E` of `-> Result<_, Error<E>>`, when it is a path.
fn error_type(output: &syn::ReturnType) -> Option<syn::Path> {
    let syn::ReturnType::Type(_, ty) = output else { return None };
    let argument = |ty: &syn::Type, index: usize| -> Option<syn::Type> {
        let syn::Type::Path(path) = ty else { return None };
        let syn::PathArguments::AngleBracketed(arguments) = &path.path.segments.last()?.arguments else { return None };
        match arguments.args.iter().nth(index)? {
            syn::GenericArgument::Type(ty) => Some(ty.clone()),
            _ => None,
        }
    };
    match argument(&argument(ty, 1)?, 0)? {
        syn::Type::Path(path) => Some(path.path),
        _ => None,
    }
}

struct Arms<'a> {
    errors: &'a ErrorEnum,
    path: syn::Path,
}

impl syn::visit_mut::VisitMut for Arms<'_> {
    fn visit_arm_mut(&mut self, arm: &mut syn::Arm) {
        let body = arm.body.to_token_stream().to_string();
        if !body.contains("ErrorResponse") && !body.contains("UnexpectedResponse") {
            return;
        }
        let status = match &arm.pat {
            syn::Pat::Wild(_) => Status::Default,
            pattern => {
                let Some((low, high)) = super::dead_arms::statuses(pattern) else { return };
                let Ok(code) = u16::try_from(low) else { return };
                if low == high { Status::Code(code) } else { Status::Range(code / 100) }
            }
        };
        let path = &self.path;
        let found = self.errors.variants.iter().find(|v| v.status == status);
        let decoded = match found {
            Some(v) => {
                let variant = format_ident!("{}", v.ident);
                match v.payload {
                    Payload::Json(_) => quote! { super::errors::json(response, #path::#variant).await? },
                    Payload::Text => quote! { super::errors::text(response, #path::#variant).await? },
                    Payload::Empty => quote! { super::errors::empty(response, #path::#variant) },
                }
            }
            None if status == Status::Default => {
                let variant = format_ident!("{}", UNEXPECTED);
                quote! { super::errors::unexpected(response, |status, body| #path::#variant { status, body }).await? }
            }
            // An arm of a status the enum does not hold is progenitor's, as it wrote it.
            None => return,
        };
        *arm.body = syn::parse_quote! { Err(Error::ErrorResponse(#decoded)) };
    }
}

/// The runtime's decoders, as the client's arms name them.
pub(super) fn client() -> TokenStream {
    quote! {
        /// The decoders of the errors typed per status (`Error::ErrorResponse` of each of their
        /// variants).
        pub use openapi_workspace_runtime::client::errors;
    }
}
