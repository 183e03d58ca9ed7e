//! The Rust names the model gives what the document names: a schema's type, a field, an
//! operation's own types.

use std::collections::BTreeSet;

use heck::{ToSnakeCase, ToUpperCamelCase};
use openapiv3::{ReferenceOr, Schema, SchemaKind, Type, VariantOrUnknownOrEmpty};
use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};
use serde_json::Value;

use crate::error::{Error, Result, bail};
use crate::read::document::rust_name;

/// What a Rust type [`rust_type`] names is, where a writer decides by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TypeKind {
    /// `String`: a string default is the value itself.
    Text,
    /// `uuid::Uuid`.
    Uuid,
    /// Anything else; a string default of it is parsed (a date-time, a model's enum).
    Other,
}

/// The kind of the type [`rust_type`] gives `schema`.
pub(crate) fn type_kind(schema: &ReferenceOr<Schema>) -> TypeKind {
    let ReferenceOr::Item(Schema { schema_kind: SchemaKind::Type(Type::String(s)), .. }) = schema else {
        return TypeKind::Other;
    };
    match &s.format {
        _ if !s.enumeration.is_empty() => TypeKind::Other,
        VariantOrUnknownOrEmpty::Unknown(f) if f == "uuid" => TypeKind::Uuid,
        VariantOrUnknownOrEmpty::Item(openapiv3::StringFormat::DateTime) => TypeKind::Other,
        _ => TypeKind::Text,
    }
}

/// The Rust type of a parameter, body or response schema, as seen from the generated module.
pub(crate) fn rust_type(
    type_names: &BTreeSet<String>,
    context: &str,
    schema: &ReferenceOr<Schema>,
) -> Result<TokenStream> {
    let schema = match schema {
        ReferenceOr::Reference { reference } => {
            let Some(name) = reference.strip_prefix("#/components/schemas/") else {
                bail!(context, "unsupported reference {reference}");
            };
            let rust_name = name.to_upper_camel_case();
            if !type_names.contains(&rust_name) {
                bail!(context, "no model named {rust_name} was generated for {reference}");
            }
            let ident = format_ident!("{}", rust_name);
            return Ok(quote!(types::#ident));
        }
        ReferenceOr::Item(schema) => schema,
    };
    let unsupported = || {
        Error::at(
            context,
            "an inline schema of this shape is not supported here; \
             move it to components/schemas and $ref it"
                .to_string(),
        )
    };
    Ok(match &schema.schema_kind {
        SchemaKind::Type(Type::String(s)) => {
            if s.enumeration.iter().all(Option::is_none) && !s.enumeration.is_empty() {
                return Ok(quote!(()));
            }
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
                return Ok(quote!(::std::vec::Vec<::serde_json::Value>));
            };
            let items = rust_type(type_names, context, &items.clone().unbox())?;
            quote!(::std::vec::Vec<#items>)
        }
        SchemaKind::Any(any) if any.enumeration.iter().all(Value::is_null) && !any.enumeration.is_empty() => quote!(()),
        SchemaKind::Any(any) if any.typ.is_none() && any.properties.is_empty() && any.enumeration.is_empty() => {
            quote!(::serde_json::Value)
        }
        _ => return Err(unsupported()),
    })
}

/// The Rust name progenitor gives a parameter's builder method (and the builder's field).
pub(crate) fn builder_field(name: &str) -> String {
    let name = name.to_snake_case();
    match name.as_str() {
        "type" | "ref" | "self" | "match" | "fn" | "mod" | "use" | "where" | "move" | "async" | "await" => {
            format!("{name}_")
        }
        _ => name,
    }
}

pub(crate) fn field_ident(name: &str) -> Ident {
    // Characters no identifier has (`ids[]`, `filter.name`) are word breaks.
    let cleaned: String = name.chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '-' }).collect();
    let snake = cleaned.to_snake_case();
    let snake = if snake.is_empty() { "x".to_string() } else { snake };
    let snake = if snake.starts_with(|c: char| c.is_ascii_digit()) { format!("_{snake}") } else { snake };
    match syn::parse_str::<Ident>(&snake) {
        Ok(ident) => ident,
        // `crate`, `self`, `super` and `Self` cannot be raw identifiers.
        Err(_) if ["crate", "self", "super", "Self"].contains(&snake.as_str()) => format_ident!("{snake}_"),
        Err(_) => Ident::new_raw(&snake, Span::call_site()),
    }
}

/// The operation's type name from a body context (`{operationId} at …`).
pub(crate) fn operation_type_name(context: &str) -> String {
    rust_name(context.split(' ').next().unwrap_or_default(), true)
}
