//! Parameter styles: how each parameter is written on the wire (the document's `in`, `style` and
//! `explode`, read as the specification's style tables write them) and the shape of its value.
//!
//! The server reads every style (the runtime's `styles` module, handed a [`Wire`] per
//! parameter). progenitor's client writes only the default styles of scalars and arrays, and no
//! cookie: each parameter it cannot write is given to it as a query parameter of the same
//! schema, a *carrier*, and the client's request hook (`client_styles.rs`, copied into the
//! client) moves each carrier into its place and style before the request leaves.

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::{Value, json};

use crate::normalise::{pointer, resolve};
use crate::{Result, bail};

/// The extension `openapi32` marks a 3.2 `style: cookie` parameter with (3.0's model has no such
/// style, so the parameter reads as `form`).
pub const COOKIE_STYLE: &str = "x-openapi-style-cookie";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Path,
    Query,
    Header,
    Cookie,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    Form,
    SpaceDelimited,
    PipeDelimited,
    DeepObject,
    Simple,
    Label,
    Matrix,
    /// OpenAPI 3.2's cookie style: as `form`, but values are not percent-encoded.
    Cookie,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leaf {
    String,
    Integer,
    Number,
    Boolean,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    Scalar(Leaf),
    Array(Leaf),
    /// An object of scalar properties.
    Object(Vec<(String, Leaf)>),
    /// Anything else (a `oneOf`, an array of objects): read as today's default styles read it,
    /// one text, and refused in any other style.
    Opaque,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wire {
    pub place: Place,
    pub name: String,
    pub style: Style,
    pub explode: bool,
    pub shape: Shape,
}

/// Why a parameter cannot be written as the document asks.
#[derive(Debug, thiserror::Error)]
pub enum Unwritable {
    #[error("parameter {name} is `in: {place}`, not a place OpenAPI has")]
    Place { name: String, place: String },
    #[error("parameter {name} has style {style:?}, which OpenAPI does not define")]
    Style { name: String, style: String },
    #[error("{place} parameter {name} has style {style:?}, which that place does not take")]
    StyleHere { place: String, name: String, style: String },
    #[error("parameter {name} is {style:?} but not an array or an object of scalars")]
    NotDelimitable { name: String, style: Style },
    #[error("parameter {name} is deepObject but not an object of scalars or an array")]
    NotDeepObject { name: String },
    #[error(
        "parameter {name}: in this place and style only a scalar, an array of scalars or an object of scalar \
         properties can be written"
    )]
    NotPlain { name: String },
    #[error("parameter {name} is an object without properties to write")]
    NoProperties { name: String },
}

impl Wire {
    /// The parameter `parameter` (resolved) of the document whose components are `components`;
    /// an error says what the generators cannot serve.
    pub fn of(parameter: &Value, components: &Value) -> std::result::Result<Wire, Unwritable> {
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
        let shape = parameter.get("schema").map(|schema| shape(schema, components)).unwrap_or(Shape::Opaque);
        let wire = Wire { place, name, style, explode, shape };
        wire.check()?;
        Ok(wire)
    }

    fn check(&self) -> std::result::Result<(), Unwritable> {
        let name = self.name.clone();
        match (&self.style, &self.shape) {
            (Style::SpaceDelimited | Style::PipeDelimited, Shape::Array(_) | Shape::Object(_)) => {}
            (Style::SpaceDelimited | Style::PipeDelimited, _) => {
                return Err(Unwritable::NotDelimitable { name, style: self.style });
            }
            // An array in deepObject is Stripe's `expand[]=a&expand[]=b` (or `expand[0]=a`).
            (Style::DeepObject, Shape::Object(_) | Shape::Array(_)) => {}
            (Style::DeepObject, _) => {
                return Err(Unwritable::NotDeepObject { name });
            }
            _ => {}
        }
        if self.shape == Shape::Opaque && !self.plain() {
            return Err(Unwritable::NotPlain { name });
        }
        if let Shape::Object(fields) = &self.shape
            && fields.is_empty()
        {
            return Err(Unwritable::NoProperties { name });
        }
        Ok(())
    }

    /// Whether the defaults serve it (as they did before styles): a query parameter in `form`,
    /// exploded, a scalar or an array; a path or header parameter, `simple`, a scalar.
    pub fn plain(&self) -> bool {
        let scalar = matches!(self.shape, Shape::Scalar(_) | Shape::Opaque);
        match self.place {
            Place::Query => self.style == Style::Form && self.explode && !matches!(self.shape, Shape::Object(_)),
            Place::Path => self.style == Style::Simple && scalar,
            Place::Header => scalar,
            Place::Cookie => false,
        }
    }

    /// Whether progenitor's client writes it as the document says: what [`Wire::plain`] is, and
    /// a query object in `form` style, exploded (each property its own pair, as serde writes a
    /// struct into a query).
    pub fn client_writes(&self) -> bool {
        self.plain()
            || (self.place == Place::Query
                && self.style == Style::Form
                && self.explode
                && matches!(self.shape, Shape::Object(_)))
    }

    /// The names the default query serialisation (progenitor's) writes it under: an object's
    /// properties, anything else its own name.
    pub fn query_keys(&self, name: &str) -> Vec<String> {
        match &self.shape {
            Shape::Object(fields) => fields.iter().map(|(field, _)| field.clone()).collect(),
            _ => vec![name.to_string()],
        }
    }

    /// The wire as a constant of the runtime module at `module` (the server's
    /// `runtime::styles`, the client's `styles`).
    pub fn tokens(&self, module: &TokenStream) -> TokenStream {
        let name = &self.name;
        let explode = self.explode;
        let style = quote::format_ident!("{}", format!("{:?}", self.style));
        let leaf = |leaf: &Leaf| {
            let leaf = quote::format_ident!("{}", format!("{leaf:?}"));
            quote!(#module::Leaf::#leaf)
        };
        let shape = match &self.shape {
            Shape::Scalar(l) => {
                let l = leaf(l);
                quote!(#module::Shape::Scalar(#l))
            }
            Shape::Array(l) => {
                let l = leaf(l);
                quote!(#module::Shape::Array(#l))
            }
            Shape::Object(fields) => {
                let fields = fields.iter().map(|(field, l)| {
                    let l = leaf(l);
                    quote!((#field, #l))
                });
                quote!(#module::Shape::Object(&[#(#fields),*]))
            }
            // Text, as the default styles read it.
            Shape::Opaque => quote!(#module::Shape::Scalar(#module::Leaf::String)),
        };
        quote!(#module::Wire { name: #name, style: #module::Style::#style, explode: #explode, shape: #shape })
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
        Some("object") => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Shape::Opaque };
            let fields: Option<Vec<(String, Leaf)>> =
                properties.iter().map(|(name, property)| Some((name.clone(), leaf(property, components)?))).collect();
            fields.map(Shape::Object).unwrap_or(Shape::Opaque)
        }
        _ => leaf(schema, components).map(Shape::Scalar).unwrap_or(Shape::Opaque),
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

/// Gives progenitor, in the client's view of the document, a query parameter (a carrier) for
/// every parameter it cannot write (see the module's documentation), and moves an operation with
/// a carried path parameter to a path whose template has a placeholder in its place.
///
/// progenitor cannot take a parameter whose model has a builder (an object: it panics, as it
/// takes only a body so); such a parameter refers instead to a copy of its schema that progenitor is told to
/// replace with the model itself. Answers those replacements: the copy's type name, the model's
/// path.
pub fn for_client(doc: &mut Value) -> Result<Vec<(String, String)>> {
    let components = doc.get("components").cloned().unwrap_or_else(|| json!({}));
    let mut replacements = Vec::new();
    let mut copies = serde_json::Map::new();
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else { return Ok(replacements) };
    let mut moves = Vec::new();
    for (path, item) in paths.iter_mut() {
        for method in crate::normalise::METHODS {
            let Some(operation) = item.get_mut(method) else { continue };
            let at = ["paths", path.as_str(), method];
            let moved = carry(operation, path, &components, &at)?;
            optional_objects(operation, &components, &mut copies, &mut replacements);
            if moved != *path {
                moves.push((path.clone(), method, moved));
            }
        }
    }
    for (from, method, to) in moves {
        if paths.contains_key(&to) && paths[&to].get(method).is_some() {
            bail!(pointer(&["paths", &from, method]), "the client's placeholder path {to} is taken");
        }
        let operation = paths[&from].as_object_mut().and_then(|item| item.remove(method)).expect("found above");
        paths.entry(to).or_insert_with(|| json!({}))[method] = operation;
        if paths[&from].as_object().is_some_and(|item| !crate::normalise::METHODS.iter().any(|m| item.contains_key(*m)))
        {
            paths.remove(&from);
        }
    }
    for (name, schema) in copies {
        doc["components"]["schemas"][name] = schema;
    }
    Ok(replacements)
}

/// Points each query parameter of `operation` (carriers included) whose model is an object at a
/// copy of its schema, `{name}.optional`, which progenitor replaces with the model.
fn optional_objects(
    operation: &mut Value,
    components: &Value,
    copies: &mut serde_json::Map<String, Value>,
    replacements: &mut Vec<(String, String)>,
) {
    for parameter in operation.get_mut("parameters").and_then(Value::as_array_mut).into_iter().flatten() {
        let resolved = resolve(parameter, components, "parameters").cloned().unwrap_or_else(|| parameter.clone());
        let Ok(wire) = Wire::of(&resolved, components) else { continue };
        let reference = resolved.pointer("/schema/$ref").and_then(Value::as_str);
        let Some(name) = reference.and_then(|r| r.strip_prefix("#/components/schemas/")) else { continue };
        if wire.place != Place::Query || !matches!(wire.shape, Shape::Object(_)) {
            continue;
        }
        let copy = format!("{name}.optional");
        if !copies.contains_key(&copy) {
            copies.insert(copy.clone(), components["schemas"][name].clone());
            let model = heck::ToUpperCamelCase::to_upper_camel_case(name);
            // typify keys a replacement by the name it would give the type.
            let key = heck::ToUpperCamelCase::to_upper_camel_case(copy.as_str());
            replacements.push((key, format!("types::{model}")));
        }
        let mut parameter_now = resolved;
        parameter_now["schema"] = json!({ "$ref": format!("#/components/schemas/{copy}") });
        *parameter = parameter_now;
    }
}

/// The placeholder a carried path parameter has in the client's path template.
pub fn placeholder(index: usize) -> String {
    format!("~style{index}~")
}

/// The parameters of `operation` progenitor cannot write: each one's index among the
/// operation's parameters, its wire, and the name of the query parameter that carries it (its
/// own, unless a query parameter has that name: then `{name}-{place}`).
fn carried(operation: &Value, components: &Value) -> Vec<(usize, Wire, String)> {
    let parameters = operation.get("parameters").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let wires: Vec<Wire> = parameters
        .iter()
        .map(|p| Wire::of(resolve(p, components, "parameters").unwrap_or(p), components).expect("checked by normalise"))
        .collect();
    let mut taken: Vec<String> =
        wires.iter().filter(|w| w.place == Place::Query && w.client_writes()).map(|w| w.name.clone()).collect();
    let mut out = Vec::new();
    for (i, wire) in wires.into_iter().enumerate().filter(|(_, w)| !w.client_writes()) {
        let mut key = wire.name.clone();
        if wire.place != Place::Query && taken.contains(&key) {
            key = format!("{}-{}", wire.name, format!("{:?}", wire.place).to_lowercase());
        }
        taken.push(key.clone());
        out.push((i, wire, key));
    }
    out
}

/// Turns `operation`'s parameters that progenitor cannot write into carriers; answers the path
/// its template becomes.
fn carry(operation: &mut Value, path: &str, components: &Value, at: &[&str]) -> Result<String> {
    let mut path = path.to_string();
    let carried = carried(operation, components);
    let Some(parameters) = operation.get_mut("parameters").and_then(Value::as_array_mut) else { return Ok(path) };
    // Every name progenitor will write in the query, with the parameter it writes it for.
    let mut keys: Vec<(String, usize)> = Vec::new();
    for (i, parameter) in parameters.iter().enumerate() {
        let resolved = resolve(parameter, components, "parameters").unwrap_or(parameter);
        let wire = Wire::of(resolved, components).expect("checked by normalise");
        if wire.place == Place::Query && wire.client_writes() {
            keys.extend(wire.query_keys(&wire.name).into_iter().map(|k| (k, i)));
        }
    }
    for (i, wire, key) in carried {
        let resolved = resolve(&parameters[i], components, "parameters").cloned().expect("checked by normalise");
        keys.extend(wire.query_keys(&key).into_iter().map(|k| (k, i)));
        if wire.place == Place::Path {
            path = path.replace(&format!("{{{}}}", wire.name), &placeholder(i));
        }
        let mut carrier = json!({
            "name": key,
            "in": "query",
            "required": resolved.get("required").and_then(Value::as_bool).unwrap_or(false),
            "schema": resolved.get("schema").cloned().unwrap_or_else(|| json!({})),
        });
        if let Some(description) = resolved.get("description") {
            carrier["description"] = description.clone();
        }
        parameters[i] = carrier;
    }
    keys.sort();
    if let Some(pair) = keys.windows(2).find(|pair| pair[0].0 == pair[1].0) {
        bail!(
            format!("{}/parameters/{}", pointer(at), pair[1].1),
            "the client would write query parameter {:?} for two parameters (an object in `form` style writes \
             each property under its own name)",
            pair[0].0
        );
    }
    Ok(path)
}

/// The client's part: the runtime module (`runtime/client_styles.rs`) and `carriers`, the
/// carried parameters of each operation, by the name progenitor's hook gives it; `None` when
/// progenitor writes every parameter itself.
pub fn client(spec: &crate::spec::Spec) -> Result<Option<TokenStream>> {
    let components = spec.raw.get("components").cloned().unwrap_or_else(|| json!({}));
    let module = quote!(styles);
    let mut arms = Vec::new();
    for (_, item) in spec.raw.get("paths").and_then(Value::as_object).into_iter().flatten() {
        for method in crate::normalise::METHODS {
            let Some(operation) = item.get(method) else { continue };
            let carried = carried(operation, &components);
            if carried.is_empty() {
                continue;
            }
            let id = operation["operationId"].as_str().expect("normalise gives every operation an id");
            // progenitor names the operation in its hook by its method's name; a negotiated
            // operation's twin (`events`) carries the same parameters.
            let twin = crate::events::negotiated(operation, &components)
                .then(|| crate::normalise::rust_name(&crate::events::twin_id(id), false))
                .map(|twin| quote!(| #twin));
            let id = crate::normalise::rust_name(id, false);
            let carriers = carried.iter().map(|(i, wire, key)| {
                let place = match wire.place {
                    Place::Path => {
                        let placeholder = placeholder(*i);
                        quote!(styles::Place::Path(#placeholder))
                    }
                    Place::Query => quote!(styles::Place::Query),
                    Place::Header => quote!(styles::Place::Header),
                    Place::Cookie => quote!(styles::Place::Cookie),
                };
                let mut wire = wire.clone();
                if wire.place == Place::Header {
                    wire.name = wire.name.to_ascii_lowercase();
                }
                let wire = wire.tokens(&module);
                quote!(styles::Carrier { key: #key, place: #place, wire: #wire })
            });
            arms.push(quote!(#id #twin => &[#(#carriers),*],));
        }
    }
    if arms.is_empty() {
        return Ok(None);
    }
    let runtime: TokenStream = include_str!("../runtime/client_styles.rs").parse().expect("the client's styles parse");
    Ok(Some(quote! {
        #runtime

        /// The parameters of `operation_id` that progenitor writes as query parameters and
        /// [`styles::restyle`] moves into their place and style.
        fn carriers(operation_id: &str) -> &'static [styles::Carrier] {
            match operation_id {
                #(#arms)*
                _ => &[],
            }
        }
    }))
}
