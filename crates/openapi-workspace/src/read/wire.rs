//! Parameter styles: how each parameter is written on the wire (the document's `in`, `style` and
//! `explode`, read as the specification's style tables write them) and the shape of its value.
//!
//! The server reads every style (the runtime's `styles` module, handed a [`Wire`] per
//! parameter); the client writes what progenitor cannot through carriers (`write::client::styles`).

use openapi_workspace_runtime::wire;
use serde_json::Value;

use super::document::resolve;
use super::marks::COOKIE_STYLE;

pub(crate) use openapi_workspace_runtime::wire::{Leaf, Place, Style};

/// A parameter's value, read from the document (the runtime's [`Shape`](wire::Shape), owning its
/// properties' names).
pub(crate) type Shape = wire::Shape<Vec<(String, Leaf)>>;

/// A parameter as the document writes it (the runtime's [`Wire`](wire::Wire), owning its text).
pub(crate) type Wire = wire::Wire<String, Vec<(String, Leaf)>>;

/// Why a parameter cannot be written as the document asks.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unwritable {
    #[error("parameter {name} is `in: {place}`, not a place OpenAPI has")]
    Place { name: String, place: String },
    #[error("parameter {name} has style {style:?}, which OpenAPI does not define")]
    Style { name: String, style: String },
    #[error("{place} parameter {name} has style {style:?}, which that place does not take")]
    StyleHere { place: String, name: String, style: String },
    #[error("parameter {name} is {style:?} but not an array or an object of scalars")]
    NotDelimitable { name: String, style: Style },
    #[error(
        "parameter {name}: in this place and style only a scalar, an array of scalars or an object of scalar \
         properties can be written"
    )]
    NotPlain { name: String },
    #[error("parameter {name} is an object without properties to write")]
    NoProperties { name: String },
}

/// The parameter `parameter` (resolved) of the document whose components are `components`;
/// an error says what the generators cannot serve.
pub(crate) fn of(parameter: &Value, components: &Value) -> Result<Wire, Unwritable> {
    let name = parameter.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
    let place = match parameter.get("in").and_then(Value::as_str) {
        Some("path") => Place::Path,
        Some("query") => Place::Query,
        Some("header") => Place::Header,
        Some("cookie") => Place::Cookie,
        other => return Err(Unwritable::Place { name, place: other.unwrap_or_default().to_owned() }),
    };
    let written = parameter.get("style").and_then(Value::as_str);
    let style = match written {
        None => match place {
            Place::Query | Place::Cookie => Style::Form,
            Place::Path | Place::Header => Style::Simple,
        },
        Some("form") => Style::Form,
        Some("spaceDelimited") => Style::SpaceDelimited,
        Some("pipeDelimited") => Style::PipeDelimited,
        Some("deepObject") => Style::DeepObject,
        Some("simple") => Style::Simple,
        Some("label") => Style::Label,
        Some("matrix") => Style::Matrix,
        Some("cookie") => Style::Cookie,
        Some(other) => {
            return Err(Unwritable::Style { name, style: other.to_owned() });
        }
    };
    let style = match parameter.get(COOKIE_STYLE) {
        Some(Value::Bool(true)) if style == Style::Form => Style::Cookie,
        _ => style,
    };
    let allowed: &[Style] = match place {
        Place::Path => &[Style::Simple, Style::Label, Style::Matrix],
        Place::Query => &[Style::Form, Style::SpaceDelimited, Style::PipeDelimited, Style::DeepObject],
        Place::Header => &[Style::Simple],
        Place::Cookie => &[Style::Form, Style::Cookie],
    };
    if !allowed.contains(&style) {
        let place = format!("{place:?}").to_lowercase();
        return Err(Unwritable::StyleHere { place, name, style: written.unwrap_or_default().to_owned() });
    }
    let explode =
        parameter.get("explode").and_then(Value::as_bool).unwrap_or(matches!(style, Style::Form | Style::Cookie));
    let shape = match parameter.get("schema") {
        // Stripe's range filters, `created=5` or `created[gte]=5`, and its nested filters,
        // `lines[0][amount]=5`: in any other style such a value is one text, as before.
        Some(schema) if style == Style::DeepObject => match shape(schema, components) {
            Shape::Opaque => scalar_or_object(schema, components)
                .or_else(|| structured(schema, components, 0).then_some(Shape::Nested))
                .unwrap_or(Shape::Opaque),
            shape => shape,
        },
        Some(schema) => shape(schema, components),
        None => Shape::Opaque,
    };
    // deepObject writes objects; a scalar in it (Stripe's `subscription_billing_cycle_anchor`,
    // `now` or a timestamp) is written as it would be anywhere in a query, `name=value`.
    let (style, explode) = match shape {
        Shape::Scalar(_) | Shape::Opaque if style == Style::DeepObject => (Style::Form, true),
        _ => (style, explode),
    };
    let wire = Wire { place, name, style, explode, shape };
    check(&wire)?;
    Ok(wire)
}

fn check(wire: &Wire) -> Result<(), Unwritable> {
    let name = wire.name.clone();
    // (Every shape of a deepObject parameter is written: an array is Stripe's
    // `expand[]=a&expand[]=b` or `expand[0]=a`, a scalar or an object its range filters'
    // `created=5` or `created[gte]=5`, anything deeper its `lines[0][amount]=5`.)
    if matches!(wire.style, Style::SpaceDelimited | Style::PipeDelimited)
        && !matches!(wire.shape, Shape::Array(_) | Shape::Object(_))
    {
        return Err(Unwritable::NotDelimitable { name, style: wire.style });
    }
    if wire.shape == Shape::Opaque && !wire.plain() {
        return Err(Unwritable::NotPlain { name });
    }
    if let Shape::Object(fields) | Shape::ScalarOrObject(_, fields) = &wire.shape
        && fields.is_empty()
    {
        return Err(Unwritable::NoProperties { name });
    }
    Ok(())
}

/// The names the default query serialisation (progenitor's) writes it under: an object's
/// properties, anything else its own name.
pub(crate) fn query_keys(wire: &Wire, name: &str) -> Vec<String> {
    match &wire.shape {
        Shape::Object(fields) => fields.iter().map(|(field, _)| field.clone()).collect(),
        Shape::ScalarOrObject(_, fields) => {
            std::iter::once(name.to_string()).chain(fields.iter().map(|(field, _)| field.clone())).collect()
        }
        _ => vec![name.to_string()],
    }
}

/// What `schema` (a `$ref` resolved through `components`) is, as far as a parameter style cares.
pub(crate) fn shape(schema: &Value, components: &Value) -> Shape {
    let schema = unwrap(schema, components);
    match schema.get("type").and_then(Value::as_str) {
        Some("array") => match schema.get("items").map(|items| leaf(items, components)) {
            Some(Some(item)) => Shape::Array(item),
            _ => Shape::Opaque,
        },
        Some("object") => scalar_fields(schema, components).map(Shape::Object).unwrap_or(Shape::Opaque),
        _ => leaf(schema, components).map(Shape::Scalar).unwrap_or(Shape::Opaque),
    }
}

/// An object schema's properties, each a scalar; `None` when it has none or one is not.
fn scalar_fields(schema: &Value, components: &Value) -> Option<Vec<(String, Leaf)>> {
    let properties = schema.get("properties").and_then(Value::as_object)?;
    properties.iter().map(|(name, property)| Some((name.clone(), leaf(property, components)?))).collect()
}

/// Whether a value of `schema` may be an object or an array (through `$ref`s and the arms of
/// `allOf`, `anyOf` and `oneOf`).
fn structured(schema: &Value, components: &Value, depth: usize) -> bool {
    let schema = unwrap(schema, components);
    match schema.get("type").and_then(Value::as_str) {
        Some(kind) => kind == "object" || kind == "array",
        None if schema.get("properties").is_some() => true,
        // A schema that refers to itself through its arms ends here.
        None if depth == 16 => false,
        None => ["allOf", "anyOf", "oneOf"]
            .iter()
            .filter_map(|k| schema.get(*k).and_then(Value::as_array))
            .any(|arms| arms.iter().any(|arm| structured(arm, components, depth + 1))),
    }
}

/// A union (`anyOf`/`oneOf`) of two arms, a scalar and an object of scalars, in either order
/// (through `$ref`s).
fn scalar_or_object(schema: &Value, components: &Value) -> Option<Shape> {
    let schema = unwrap(schema, components);
    let arms = schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array)?;
    let [a, b] = arms.as_slice() else { return None };
    match (shape(a, components), shape(b, components)) {
        (Shape::Scalar(leaf), Shape::Object(fields)) | (Shape::Object(fields), Shape::Scalar(leaf)) => {
            Some(Shape::ScalarOrObject(leaf, fields))
        }
        _ => None,
    }
}

fn leaf(schema: &Value, components: &Value) -> Option<Leaf> {
    let schema = unwrap(schema, components);
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => Some(Leaf::String),
        Some("integer") => Some(Leaf::Integer),
        Some("number") => Some(Leaf::Number),
        Some("boolean") => Some(Leaf::Boolean),
        None if schema.get("enum").and_then(Value::as_array).is_some_and(|e| e.iter().all(Value::is_string)) => {
            Some(Leaf::String)
        }
        _ => None,
    }
}

/// `schema` through its `$ref`s and the one-element `allOf`s nullable references become.
fn unwrap<'a>(schema: &'a Value, components: &'a Value) -> &'a Value {
    let mut schema = schema;
    for _ in 0..16 {
        if let Some(next) = schema.get("$ref").and_then(|_| resolve(schema, components, "schemas")) {
            schema = next;
        } else if let Some([only]) = schema.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
            schema = only;
        } else {
            break;
        }
    }
    schema
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Leaf, Shape, Style, of};

    #[test]
    fn a_scalar_or_an_object_is_its_own_shape_only_in_deep_object() {
        let range = json!({"type": "object", "properties": {"gte": {"type": "integer"}, "lt": {"type": "integer"}}});
        let components = json!({"schemas": {"range": range}});
        let schema = json!({"anyOf": [{"$ref": "#/components/schemas/range"}, {"type": "integer"}]});
        let deep = json!({"name": "created", "in": "query", "style": "deepObject", "explode": true, "schema": schema});
        let fields = vec![("gte".to_owned(), Leaf::Integer), ("lt".to_owned(), Leaf::Integer)];
        assert_eq!(of(&deep, &components).unwrap().shape, Shape::ScalarOrObject(Leaf::Integer, fields));
        // In `form`, one text, as the default styles read it (served as before).
        let form = json!({"name": "created", "in": "query", "schema": schema});
        assert_eq!(of(&form, &components).unwrap().shape, Shape::Opaque);
        // A scalar (here a union of two) is written as anywhere in a query: `at=now`.
        let scalars = json!({"name": "at", "in": "query", "style": "deepObject",
                             "schema": {"anyOf": [{"type": "string"}, {"type": "integer"}]}});
        let wire = of(&scalars, &components).unwrap();
        assert_eq!((wire.style, wire.explode, wire.plain()), (Style::Form, true, true));
        // Anything deeper, in deepObject only: Stripe's `lines[0][amount]`, `customer[address][city]`.
        let nested = |schema: serde_json::Value, style: &str| {
            let parameter = json!({"name": "n", "in": "query", "style": style, "explode": true, "schema": schema});
            of(&parameter, &components).map(|wire| wire.shape)
        };
        let lines =
            json!({"type": "array", "items": {"type": "object", "properties": {"amount": {"type": "integer"}}}});
        let customer = json!({"properties": {"address": {"properties": {"city": {"type": "string"}}}}});
        let union = json!({"anyOf": [{"$ref": "#/components/schemas/range"}, {"type": "array", "items": {}}]});
        for schema in [lines.clone(), customer, union] {
            assert_eq!(nested(schema, "deepObject").unwrap(), Shape::Nested);
        }
        assert_eq!(nested(lines, "form").unwrap(), Shape::Opaque);
    }
}
