//! Parameters in every style OpenAPI gives them (`style` and `explode`, as the specification's
//! style tables write them), read into the JSON value their schema describes and from there into
//! their model: the query as one object, and each path, header or cookie parameter alone.
//!
//! Operations whose parameters are all in the default styles, with scalar or array values, are
//! read by the runtime's faster serde paths instead; the generator sends here only what needs it.
//!
//! One rule for every delimited style: the text is percent-decoded, then split at the style's
//! delimiter, so a value cannot hold its style's delimiter (`,` for `form` with `explode: false`,
//! ` ` for `spaceDelimited`, `|` for `pipeDelimited`, `.` for exploded `label`, `;` for `matrix`).
//! The generated client refuses to send one that does.

use std::fmt;

use std::borrow::Cow;

use axum::extract::RawPathParams;
use axum::http::{HeaderMap, Uri, header};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{ApiError, Validator};
use crate::wire::{Leaf, Shape, Style, Wire};

/// The query string read by `wires` (every query parameter of the operation), validated as one
/// object and converted into the operation's query model. The pairs named in `credentials` (api
/// keys the router has read) are not the operation's.
pub fn query<T: DeserializeOwned>(
    uri: &Uri,
    validator: &Validator,
    wires: &[Wire],
    credentials: &[&str],
) -> Result<T, ApiError> {
    let field = "query parameter ";
    let pairs: Vec<(Cow<str>, Cow<str>)> = form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
        .filter(|(key, _)| !credentials.contains(&key.as_ref()))
        .collect();
    let mut claimed = vec![false; pairs.len()];
    let mut object = Map::new();
    for wire in wires {
        let mut named = |test: &dyn Fn(&str) -> bool| -> Vec<usize> {
            let found: Vec<usize> = (0..pairs.len()).filter(|&i| test(&pairs[i].0)).collect();
            found.iter().for_each(|&i| claimed[i] = true);
            found
        };
        let once = |found: &[usize]| -> Result<Option<&str>, ApiError> {
            match found {
                [] => Ok(None),
                [i] => Ok(Some(pairs[*i].1.as_ref())),
                _ => {
                    Err(ApiError::bad_request(format!("{field}`{}` is given more than once: give it once", wire.name)))
                }
            }
        };
        let bad = |e: String| ApiError::bad_request(format!("{field}`{}`: {e}", wire.name));
        // deepObject's `name[key]=value` pairs among `found`, as (key, value).
        let deep = |found: Vec<usize>| -> Vec<(&str, &str)> {
            found.iter().filter_map(|&i| Some((bracketed(&pairs[i].0, wire.name)?, pairs[i].1.as_ref()))).collect()
        };
        let delimiter = match wire.style {
            Style::SpaceDelimited => ' ',
            Style::PipeDelimited => '|',
            _ => ',',
        };
        let value = match wire.shape {
            Shape::Scalar(leaf) => once(&named(&|key| key == wire.name))?.map(|text| read(leaf, text)),
            Shape::Opaque => once(&named(&|key| key == wire.name))?.map(|text| read(Leaf::String, text)),
            // Stripe's arrays in deepObject: `expand[]=a&expand[]=b`, or `expand[0]=a&expand[1]=b`.
            Shape::Array(leaf) if wire.style == Style::DeepObject => {
                let indexed = |key: &str| {
                    bracketed(key, wire.name).is_some_and(|index| index.is_empty() || index.parse::<usize>().is_ok())
                };
                let mut items: Vec<(usize, &str)> = deep(named(&indexed))
                    .into_iter()
                    .enumerate()
                    .map(|(order, (index, value))| (index.parse().unwrap_or(order), value))
                    .collect();
                items.sort_by_key(|&(index, _)| index);
                (!items.is_empty()).then(|| Value::Array(items.iter().map(|&(_, value)| read(leaf, value)).collect()))
            }
            Shape::Array(leaf) if wire.explode => {
                let found = named(&|key| key == wire.name);
                (!found.is_empty()).then(|| Value::Array(found.iter().map(|&i| read(leaf, &pairs[i].1)).collect()))
            }
            Shape::Array(leaf) => {
                once(&named(&|key| key == wire.name))?.map(|text| array(leaf, split(text, delimiter)))
            }
            Shape::Object(fields) if wire.style == Style::DeepObject => {
                let entries = deep(named(&|key| bracketed(key, wire.name).is_some()));
                (!entries.is_empty())
                    .then(|| properties(fields, entries))
                    .transpose()
                    .map_err(|e| bad(e.to_string()))?
            }
            // Either form, never both: `created=5` or `created[gte]=5&created[lt]=9`.
            Shape::ScalarOrObject(leaf, fields) => {
                let scalar = once(&named(&|key| key == wire.name))?;
                let entries = deep(named(&|key| bracketed(key, wire.name).is_some()));
                match (scalar, entries.is_empty()) {
                    (Some(_), false) => {
                        return Err(bad("is given both as a value and as an object: give one of them".to_owned()));
                    }
                    (Some(text), true) => Some(read(leaf, text)),
                    (None, false) => Some(properties(fields, entries).map_err(|e| bad(e.to_string()))?),
                    (None, true) => None,
                }
            }
            // `lines[0][amount]=5&customer[address][city]=Paris`: one tree, typed by the
            // parameter's schema as a form body is.
            Shape::Nested => {
                // Every key that starts so is the parameter's: `tree` refuses one malformed.
                let found =
                    named(&|key| key.strip_prefix(wire.name).is_some_and(|r| r.is_empty() || r.starts_with('[')));
                let tree = crate::forms::tree(found.iter().map(|&i| (&pairs[i].0, &pairs[i].1)));
                let value = tree.map_err(|e| bad(e.to_string()))?.get_mut(wire.name).map(Value::take);
                let schema = validator.schema.get("properties").and_then(|p| p.get(wire.name));
                match (value, schema) {
                    (Some(value), Some(schema)) => Some(crate::forms::typed(value, schema, &validator.components)),
                    (value, _) => value,
                }
            }
            Shape::Object(fields) if wire.explode => {
                let found = named(&|key| fields.iter().any(|(name, _)| *name == key));
                let entries: Vec<(&str, &str)> =
                    found.iter().map(|&i| (pairs[i].0.as_ref(), pairs[i].1.as_ref())).collect();
                (!entries.is_empty())
                    .then(|| properties(fields, entries))
                    .transpose()
                    .map_err(|e| bad(e.to_string()))?
            }
            Shape::Object(fields) => match once(&named(&|key| key == wire.name))? {
                Some(text) => Some(
                    properties(fields, alternating(split(text, delimiter)).map_err(|e| bad(e.to_string()))?)
                        .map_err(|e| bad(e.to_string()))?,
                ),
                None => None,
            },
        };
        if let Some(value) = value {
            object.insert(wire.name.to_owned(), value);
        }
    }
    if let Some(i) = claimed.iter().position(|claimed| !claimed) {
        return Err(ApiError::bad_request(format!("{field}`{}` is not one this operation takes", pairs[i].0)));
    }
    let value = Value::Object(object);
    validator.check(&value, field)?;
    serde_json::from_value(value).map_err(|e| ApiError::bad_request(format!("query: {e}")))
}

/// The key inside `name[…]`, when `key` is written so (deepObject).
fn bracketed<'k>(key: &'k str, name: &str) -> Option<&'k str> {
    key.strip_prefix(name)?.strip_prefix('[')?.strip_suffix(']')
}

/// A path parameter in its style (the route's segment, percent-decoded).
pub fn path<T: DeserializeOwned>(path: &RawPathParams, wire: &Wire) -> Result<T, ApiError> {
    let text = super::path::text(path, wire.name)?;
    let bad = |e: &dyn fmt::Display| ApiError::bad_request(format!("path parameter `{}`: {text:?} {e}", wire.name));
    let value = match wire.style {
        Style::Label => {
            let rest = text.strip_prefix('.').ok_or_else(|| bad(&Malformed::Unprefixed("`.` (label style)")))?;
            delimited(wire, rest, if wire.explode { '.' } else { ',' })
        }
        Style::Matrix => matrix(wire, text),
        _ => delimited(wire, text, ','),
    }
    .map_err(|e| bad(&e))?;
    serde_json::from_value(value).map_err(|e| bad(&e))
}

/// A header parameter (`simple`: `a,b,c`, objects `k,v` or, exploded, `k=v`); `None` when absent.
pub fn header_param<T: DeserializeOwned>(headers: &HeaderMap, wire: &Wire) -> Result<Option<T>, ApiError> {
    let Some(value) = headers.get(wire.name) else { return Ok(None) };
    let bad = |e: String| ApiError::bad_request(format!("header `{}`: {e}", wire.name));
    let text = value.to_str().map_err(|_| bad("not visible ASCII text".to_owned()))?;
    // HTTP lists may have spaces after their commas (`1, 2`).
    let text = text.split(',').map(str::trim).collect::<Vec<_>>().join(",");
    let value = delimited(wire, &text, ',').map_err(|e| bad(format!("{text:?} {e}")))?;
    serde_json::from_value(value).map(Some).map_err(|e| bad(format!("{text:?} {e}")))
}

/// A cookie parameter (`form`: values percent-encoded; 3.2's `cookie` style: as they are; arrays and objects `name=a,b` or, exploded,
/// a cookie per value, `name=a; name=b`, or per property, `k=v; k2=v2`); `None` when absent.
pub fn cookie_param<T: DeserializeOwned>(headers: &HeaderMap, wire: &Wire) -> Result<Option<T>, ApiError> {
    let bad = |e: String| ApiError::bad_request(format!("cookie `{}`: {e}", wire.name));
    let cookies: Vec<(&str, String)> = headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|line| line.to_str().ok())
        .flat_map(|line| line.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .map(|(key, value)| {
            let value = value.trim_matches('"');
            (key, if wire.style == Style::Cookie { value.to_owned() } else { decode(value) })
        })
        .collect();
    let named: Vec<&str> = cookies.iter().filter(|(key, _)| *key == wire.name).map(|(_, v)| v.as_str()).collect();
    let value = match wire.shape {
        Shape::Object(fields) if wire.explode => {
            let entries: Vec<(&str, &str)> = cookies
                .iter()
                .filter(|(key, _)| fields.iter().any(|(name, _)| name == key))
                .map(|(key, value)| (*key, value.as_str()))
                .collect();
            (!entries.is_empty()).then(|| properties(fields, entries)).transpose().map_err(|e| bad(e.to_string()))?
        }
        Shape::Array(leaf) if wire.explode => {
            (!named.is_empty()).then(|| Value::Array(named.iter().map(|text| read(leaf, text)).collect()))
        }
        _ => match named.as_slice() {
            [] => None,
            [text] => Some(delimited(wire, text, ',').map_err(|e| bad(format!("{text:?} {e}")))?),
            _ => return Err(bad("is given more than once: give it once".to_owned())),
        },
    };
    value.map(|value| serde_json::from_value(value).map_err(|e| bad(e.to_string()))).transpose()
}

/// `text` (one parameter's) split at `delimiter` and read as `wire`'s shape: a scalar whole, an
/// array's items, an object's `k,v,…` or, exploded, `k=v,…`.
fn delimited(wire: &Wire, text: &str, delimiter: char) -> Result<Value, Malformed> {
    match wire.shape {
        // A scalar-or-object is a deepObject query parameter (the generator writes it nowhere
        // else): one text here is its scalar.
        Shape::Scalar(leaf) | Shape::ScalarOrObject(leaf, _) => Ok(read(leaf, text)),
        // One text, whatever its schema: the model's deserialiser reads it (a nested value is
        // a deepObject query parameter, which this never reads).
        Shape::Opaque | Shape::Nested => Ok(read(Leaf::String, text)),
        Shape::Array(leaf) => Ok(array(leaf, split(text, delimiter))),
        Shape::Object(fields) if wire.explode => properties(fields, assigned(split(text, delimiter))?),
        Shape::Object(fields) => properties(fields, alternating(split(text, delimiter))?),
    }
}

/// `matrix`: `;name=v`; arrays `;name=a,b` or, exploded, `;name=a;name=b`; objects `;name=k,v`
/// or, exploded, `;k=v;k2=v2`.
fn matrix(wire: &Wire, text: &str) -> Result<Value, Malformed> {
    let rest = text.strip_prefix(';').ok_or(Malformed::Unprefixed("`;` (matrix style)"))?;
    let prefixed = |part: &str| -> Result<String, Malformed> {
        match part.split_once('=') {
            Some((key, value)) if key == wire.name => Ok(value.to_owned()),
            // An empty value may be written without `=` (`;name`).
            None if part == wire.name => Ok(String::new()),
            _ => Err(Malformed::NotNamed { part: part.to_owned(), name: wire.name }),
        }
    };
    match wire.shape {
        Shape::Array(leaf) if wire.explode => {
            let items = rest.split(';').map(prefixed).collect::<Result<Vec<_>, _>>()?;
            Ok(Value::Array(items.iter().map(|item| read(leaf, item)).collect()))
        }
        Shape::Object(fields) if wire.explode => properties(fields, assigned(rest.split(';').collect())?),
        _ => delimited(wire, &prefixed(rest)?, ','),
    }
}

/// The pieces of `text` between `delimiter`s; an empty text is no piece (an empty array).
fn split(text: &str, delimiter: char) -> Vec<&str> {
    if text.is_empty() { Vec::new() } else { text.split(delimiter).collect() }
}

fn array(leaf: Leaf, items: Vec<&str>) -> Value {
    Value::Array(items.into_iter().map(|item| read(leaf, item)).collect())
}

/// `k=v` pieces as entries.
fn assigned(pieces: Vec<&str>) -> Result<Vec<(&str, &str)>, Malformed> {
    pieces
        .into_iter()
        .map(|piece| piece.split_once('=').ok_or_else(|| Malformed::Unassigned(piece.to_owned())))
        .collect()
}

/// `k,v,k2,v2` pieces as entries.
fn alternating(pieces: Vec<&str>) -> Result<Vec<(&str, &str)>, Malformed> {
    if pieces.len() % 2 == 1 {
        return Err(Malformed::KeyWithoutValue);
    }
    Ok(pieces.chunks(2).map(|pair| (pair[0], pair[1])).collect())
}

/// An object of `fields` from `entries`, each read as its field's type; a key that is not a field,
/// or one given twice, is refused.
fn properties(fields: &[(&str, Leaf)], entries: Vec<(&str, &str)>) -> Result<Value, Malformed> {
    let mut object = Map::new();
    for (key, text) in entries {
        let Some((_, leaf)) = fields.iter().find(|(name, _)| *name == key) else {
            let known: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
            return Err(Malformed::NotAField { key: key.to_owned(), known: known.join(", ") });
        };
        if object.insert(key.to_owned(), read(*leaf, text)).is_some() {
            return Err(Malformed::Repeated(key.to_owned()));
        }
    }
    Ok(Value::Object(object))
}

/// Why a parameter's text is not written in its style: said after the text, in a `400`.
#[derive(Debug)]
enum Malformed {
    /// It does not start as its style does (with what it should).
    Unprefixed(&'static str),
    /// A matrix part that names something else than the parameter.
    NotNamed {
        part: String,
        name: &'static str,
    },
    /// A piece that is not `key=value`.
    Unassigned(String),
    /// An object's `key,value,…` with a key left over.
    KeyWithoutValue,
    NotAField {
        key: String,
        known: String,
    },
    Repeated(String),
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unprefixed(with) => write!(f, "does not start with {with}"),
            Self::NotNamed { part, name } => write!(f, "names {part:?} where `;{name}=` belongs (matrix style)"),
            Self::Unassigned(piece) => write!(f, "has {piece:?} where `key=value` belongs"),
            Self::KeyWithoutValue => {
                f.write_str("has a key without its value (an object is written key,value,key,value)")
            }
            Self::NotAField { key, known } => write!(f, "`{key}` is not one of its fields ({known})"),
            Self::Repeated(key) => write!(f, "`{key}` is given more than once"),
        }
    }
}

/// Text as the JSON value its type reads it as; text that is not one stays text, for the
/// validator to name.
pub(crate) fn read(leaf: Leaf, text: &str) -> Value {
    let parsed = match leaf {
        Leaf::String => None,
        Leaf::Integer => {
            text.parse::<i64>().ok().map(Value::from).or_else(|| text.parse::<u64>().ok().map(Value::from))
        }
        Leaf::Number => text.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number),
        Leaf::Boolean => text.parse::<bool>().ok().map(Value::Bool),
    };
    parsed.unwrap_or_else(|| Value::String(text.to_owned()))
}

/// A cookie value, percent-decoded (`form` style encodes it).
fn decode(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned()
}
