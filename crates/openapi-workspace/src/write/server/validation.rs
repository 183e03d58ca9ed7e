//! What the router checks against the document's schemas before the trait sees a request: the
//! validators each operation needs (parameters with bounds, each body media type's schema).

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use serde_json::{Value, json};

use crate::model::operation::{self as model, MediaKind, Op};

pub(super) fn literal(value: &Value) -> TokenStream {
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
pub(super) fn validator_names(op: &Op) -> Vec<(Ident, Value)> {
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
                out.push((body_validator(op, i), crate::model::json_schema::to_validated_schema(schema)))
            }
            _ => {}
        }
    }
    out
}

/// The path, header and cookie parameters whose schemas say more than their Rust types hold (a
/// bound, a length, a pattern), which the handler checks once it has read them (the query's are
/// checked with the query).
pub(super) fn checked_params(op: &Op) -> Vec<&model::Param> {
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
pub(super) fn body_validator(op: &Op, i: usize) -> Ident {
    if i == 0 { format_ident!("{}_body", op.fn_name) } else { format_ident!("{}_body_{}", op.fn_name, i + 1) }
}
