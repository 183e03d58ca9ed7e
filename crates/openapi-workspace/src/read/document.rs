//! The document's vocabulary, shared by every stage: JSON pointers into it, `$ref`s resolved
//! through its components, its methods and media types, and the Rust names its ids become.

use heck::{ToSnakeCase, ToUpperCamelCase};
use std::collections::BTreeSet;

use serde_json::{Map, Value};

pub(crate) const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

/// The JSON pointer of `segments` under the document's root: `#/paths/~1items/get`.
pub(crate) fn pointer(segments: &[&str]) -> String {
    let mut out = String::from("#");
    for segment in segments {
        push_segment(&mut out, segment);
    }
    out
}

/// One segment of a JSON pointer: `~` and `/` escaped.
pub(crate) fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// `pointer` one segment deeper, written in place (a walk over every node keeps one buffer).
pub(crate) fn push_segment(pointer: &mut String, segment: &str) {
    pointer.push('/');
    match segment.contains(['~', '/']) {
        true => pointer.push_str(&escape(segment)),
        false => pointer.push_str(segment),
    }
}

/// Whether `value` can hold a schema, a reference or a parameter's content: an object, or an
/// array (of objects). A walk looking for those need not enter anything else.
pub(crate) fn holds_values(value: &Value) -> bool {
    value.is_object() || value.is_array()
}

/// A JSON pointer segment, unescaped ([`escape`]'s inverse).
pub(crate) fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// Whether a Rust type can be named after `name` as it is: typify spells a name that begins with
/// anything but a letter (`400Error`, `_401`, `-`) with a prefix of its own, which every stage
/// after this one would have to know.
pub(crate) fn nameable(name: &str) -> bool {
    let pascal = rust_name(name, true);
    // `Self` is the one keyword a type's name can be spelt as (`Self_` to typify).
    pascal.starts_with(|c: char| c.is_alphabetic()) && pascal != "Self_"
}

/// A name for a schema that begins with a letter: `Schema` before what it was.
pub(crate) fn named_schema(name: &str) -> String {
    format!("Schema{}", rust_name(name, true).trim_matches('_'))
}

/// The property names a schema object's own `required` lists (not through `$ref`s or `allOf`s).
pub(crate) fn required_names(schema: &Map<String, Value>) -> BTreeSet<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Names taken in `components/schemas`, compared as the Rust types they become.
pub(crate) struct Names(BTreeSet<String>);

impl Names {
    pub(crate) fn new(schemas: &Map<String, Value>) -> Self {
        Self(schemas.keys().map(|k| rust_name(k, true)).collect())
    }

    /// Takes `name` as it is: false when a schema already has it.
    pub(crate) fn take(&mut self, name: String) -> bool {
        self.0.insert(name)
    }

    /// `wanted`, or `wanted2`, `wanted3`… when a schema already has that name; one that no Rust
    /// type can be named after as it is (a response `400Error`'s schema) is `Schema…`
    /// ([`nameable`]).
    pub(crate) fn claim(&mut self, wanted: &str) -> String {
        let wanted = match nameable(wanted) {
            true => wanted.to_owned(),
            false => named_schema(wanted),
        };
        let wanted = wanted.as_str();
        let mut name = wanted.to_string();
        let mut n = 1;
        while !self.0.insert(name.clone()) {
            n += 1;
            name = format!("{wanted}{n}");
        }
        name
    }
}

/// An operation id, a parameter or a type name as a Rust identifier the way progenitor spells it
/// (so the server's names and the client's agree): characters that cannot be in an identifier
/// become word breaks, a leading digit gets `_`, a keyword gets a trailing `_`.
pub(crate) fn rust_name(input: &str, pascal: bool) -> String {
    let cleaned: String =
        input.replace('\'', "").chars().map(|c| if c.is_alphanumeric() || c == '_' { c } else { '-' }).collect();
    let cased = if pascal { cleaned.to_upper_camel_case() } else { cleaned.to_snake_case() };
    let cased = match cased.chars().next() {
        None => {
            if pascal {
                "X".to_string()
            } else {
                "x".to_string()
            }
        }
        Some(c) if c.is_alphabetic() || c == '_' => cased,
        Some(_) => format!("_{cased}"),
    };
    if syn::parse_str::<syn::Ident>(&cased).is_ok() { cased } else { format!("{cased}_") }
}

/// A discriminator's target as a reference: its `mapping` values and 3.2's `defaultMapping` are
/// a reference or a component schema's name.
pub(crate) fn mapped_schema(written: &str) -> String {
    match written.starts_with('#') {
        true => written.to_owned(),
        false => format!("#/components/schemas/{written}"),
    }
}

/// `schema` through its chain of `$ref`s to `components/schemas`; `None` for one that leads
/// nowhere (or round in a circle).
pub(crate) fn resolve_schema<'a>(schema: &'a Value, components: &'a Value) -> Option<&'a Value> {
    let mut schema = schema;
    for _ in 0..16 {
        if schema.get("$ref").is_none() {
            return Some(schema);
        }
        schema = resolve(schema, components, "schemas")?;
    }
    None
}

/// Whether a schema's `type` (`ty`) is `wanted`, or a list of types (3.1's) holding it.
pub(crate) fn type_is(ty: Option<&Value>, wanted: &str) -> bool {
    match ty {
        Some(Value::String(ty)) => ty == wanted,
        Some(Value::Array(types)) => types.iter().any(|ty| ty == wanted),
        _ => false,
    }
}

/// Whether `response` (a response object) documents the header `name`, in any case.
pub(crate) fn documents_header(response: &Value, name: &str) -> bool {
    let headers = response.get("headers").and_then(Value::as_object);
    headers.is_some_and(|headers| headers.keys().any(|header| header.eq_ignore_ascii_case(name)))
}

/// `item`, or the component its `#/components/<kind>/<name>` reference names.
pub(crate) fn resolve<'a>(item: &'a Value, components: &'a Value, kind: &str) -> Option<&'a Value> {
    match item.get("$ref").and_then(Value::as_str) {
        None => Some(item),
        Some(reference) => {
            let name = reference.strip_prefix(&format!("#/components/{kind}/"))?;
            components.get(kind)?.get(name)
        }
    }
}

/// The essence of a media type (`application/json; charset=utf-8` → `application/json`).
pub(crate) fn essence(media: &str) -> String {
    media.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// Whether a media type carries JSON (`application/json`, `application/*+json`).
pub(crate) fn is_json(media: &str) -> bool {
    let essence = essence(media);
    essence == "application/json" || (essence.starts_with("application/") && essence.ends_with("+json"))
}

/// The names a path's template places (`/a/{id}/b/{key}`: `id`, `key`), in order.
pub(crate) fn template_names(path: &str) -> impl Iterator<Item = &str> {
    path.split('{').skip(1).filter_map(|s| s.split_once('}')).map(|(name, _)| name)
}

/// `/pets/{id}` → `/pets/{}`: the same path whatever its parameters are called.
pub(crate) fn template(path: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in path.chars() {
        match c {
            '{' => {
                inside = true;
                out.push_str("{}");
            }
            '}' => inside = false,
            _ if inside => {}
            _ => out.push(c),
        }
    }
    out
}

/// `kind` with its article: `an integer`, `a string`.
pub(crate) fn with_article(kind: &str) -> String {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) { format!("an {kind}") } else { format!("a {kind}") }
}
