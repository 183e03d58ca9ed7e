//! The client's half of parameter styles. progenitor writes each parameter it cannot write as a
//! query parameter, a *carrier*, and the generated request hook calls [`restyle`] to move it into
//! its place and style. The server's runtime (`styles`) reads what this writes.

use crate::wire::{Place, Shape, Style, Wire};

/// A parameter progenitor writes as query parameter `key` (an object: as its properties, or,
/// `keyed`, as [`Keyed`] writes it).
#[derive(Clone, Copy, Debug)]
pub struct Carrier {
    pub key: &'static str,
    /// A path parameter's placeholder in the path progenitor is given.
    pub placeholder: Option<&'static str>,
    pub wire: Wire,
    /// Whether the carrier is a [`Keyed`] value.
    pub keyed: bool,
}

/// An object (or a scalar-or-object) that progenitor writes under its carrier's own key, one
/// `property=value` text per property (a scalar: `=value`), rather than each property under its
/// own name: what the generator gives a parameter whose properties share names with another's
/// (Stripe's `created` and `arrival_date` range filters, both `gt`, `lte`, …), which would
/// otherwise be written as one, and a nested value, which progenitor cannot write at all (a
/// property nested as a form writes it, `address[city]=Paris`; an array's items by their index,
/// `0[amount]=5`). A value converts into it, so the builder's setter takes the model itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Keyed<T>(pub T);

impl<T> From<T> for Keyed<T> {
    fn from(value: T) -> Self {
        Self(value)
    }
}

impl<T: serde::Serialize> serde::Serialize for Keyed<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde_json::Value;
        let value = serde_json::to_value(&self.0).map_err(serde::ser::Error::custom)?;
        let pieces: Vec<String> = match &value {
            Value::Null => return serializer.serialize_none(),
            Value::Object(_) => crate::forms::pairs(&value).into_iter().map(|(k, v)| format!("{k}={v}")).collect(),
            Value::Array(items) => {
                let numbered = items.iter().enumerate().map(|(index, item)| (index.to_string(), item.clone()));
                let pairs = crate::forms::pairs(&Value::Object(numbered.collect()));
                pairs.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
            }
            scalar => vec![format!("={}", crate::forms::text(scalar))],
        };
        // progenitor writes each item of a sequence under the parameter's name.
        serde::Serialize::serialize(&pieces, serializer)
    }
}

/// What a path or cookie value is percent-encoded with: all but the unreserved characters.
const ENCODED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Moves each of `carriers` from where progenitor wrote it into its place and style. Its
/// error is text: the request hook hands it to progenitor's `Error::InvalidRequest(String)`.
pub fn restyle(request: &mut reqwest::Request, carriers: &[Carrier]) -> Result<(), String> {
    if carriers.is_empty() {
        return Ok(());
    }
    let pairs: Vec<(String, String)> =
        request.url().query_pairs().map(|(key, value)| (key.into_owned(), value.into_owned())).collect();
    let mut taken = vec![false; pairs.len()];
    let mut query = Vec::new();
    let mut cookies = Vec::new();
    let mut path = request.url().path().to_owned();
    for carrier in carriers {
        let wire = &carrier.wire;
        let written: Vec<usize> = (0..pairs.len())
            .filter(|&i| match wire.shape {
                _ if carrier.keyed => pairs[i].0 == carrier.key,
                Shape::Object(fields) => fields.iter().any(|(field, _)| *field == pairs[i].0),
                // progenitor writes the scalar under the carrier's key, the object as its
                // properties.
                Shape::ScalarOrObject(_, fields) => {
                    pairs[i].0 == carrier.key || fields.iter().any(|(field, _)| *field == pairs[i].0)
                }
                _ => pairs[i].0 == carrier.key,
            })
            .collect();
        written.iter().for_each(|&i| taken[i] = true);
        let entries: Vec<(&str, &str)> = written
            .iter()
            .map(|&i| match carrier.keyed {
                // `Keyed`'s `property=value`; a scalar's property is empty: under the key.
                true => match pairs[i].1.split_once('=') {
                    Some(("", value)) if !matches!(wire.shape, Shape::Nested) => (carrier.key, value),
                    Some(entry) => entry,
                    None => (carrier.key, pairs[i].1.as_str()),
                },
                false => (pairs[i].0.as_str(), pairs[i].1.as_str()),
            })
            .collect();
        if entries.is_empty() {
            continue;
        }
        check(carrier, &entries)?;
        let values = || entries.iter().map(|(_, value)| *value);
        let joined = match wire.place {
            Place::Query => match wire.style {
                Style::SpaceDelimited => " ",
                Style::PipeDelimited => "|",
                _ => ",",
            },
            Place::Path if wire.style == Style::Label && wire.explode => ".",
            _ => ",",
        };
        match wire.place {
            Place::Query => match wire.shape {
                Shape::Scalar(_) | Shape::Opaque => query.push((wire.name.to_owned(), entries[0].1.to_owned())),
                Shape::Array(_) if wire.style == Style::DeepObject => {
                    query.extend(values().map(|v| (format!("{}[]", wire.name), v.to_owned())))
                }
                Shape::Array(_) if wire.explode => query.extend(values().map(|v| (wire.name.to_owned(), v.to_owned()))),
                Shape::Array(_) => query.push((wire.name.to_owned(), values().collect::<Vec<_>>().join(joined))),
                Shape::Object(_) if wire.style == Style::DeepObject => {
                    query.extend(entries.iter().map(|(k, v)| (format!("{}[{k}]", wire.name), (*v).to_owned())))
                }
                Shape::ScalarOrObject(..) => query.extend(entries.iter().map(|(k, v)| match *k == carrier.key {
                    true => (wire.name.to_owned(), (*v).to_owned()),
                    false => (format!("{}[{k}]", wire.name), (*v).to_owned()),
                })),
                Shape::Object(_) if wire.explode => {
                    query.extend(entries.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())))
                }
                // `Keyed`'s `address[city]`, `0[amount]` or (a scalar) nothing, under the name.
                Shape::Nested => query.extend(entries.iter().map(|(path, v)| {
                    let key = match path.split_once('[') {
                        _ if path.is_empty() => wire.name.to_owned(),
                        Some((head, rest)) => format!("{}[{head}][{rest}", wire.name),
                        None => format!("{}[{path}]", wire.name),
                    };
                    (key, (*v).to_owned())
                })),
                Shape::Object(_) => {
                    query.push((wire.name.to_owned(), alternating(&entries, |t| t.to_owned()).join(joined)))
                }
            },
            Place::Path => {
                let placeholder = carrier.placeholder.ok_or("a path parameter without its placeholder")?;
                let encode = |text: &str| percent_encoding::utf8_percent_encode(text, ENCODED).to_string();
                let items = || values().map(encode).collect::<Vec<_>>();
                let text = match (wire.style, wire.shape) {
                    (Style::Matrix, Shape::Scalar(_) | Shape::Opaque) => {
                        format!(";{}={}", wire.name, encode(entries[0].1))
                    }
                    (Style::Matrix, Shape::Array(_)) if wire.explode => {
                        items().iter().map(|item| format!(";{}={item}", wire.name)).collect()
                    }
                    (Style::Matrix, Shape::Object(_)) if wire.explode => {
                        entries.iter().map(|(k, v)| format!(";{}={}", encode(k), encode(v))).collect()
                    }
                    (Style::Matrix, _) => format!(";{}={}", wire.name, listed(wire, &entries, joined, &encode)),
                    (Style::Label, _) => format!(".{}", listed(wire, &entries, joined, &encode)),
                    _ => listed(wire, &entries, joined, &encode),
                };
                path = path.replace(placeholder, &text);
            }
            Place::Header => {
                let text = listed(wire, &entries, ",", &|t: &str| t.to_owned());
                let value = reqwest::header::HeaderValue::from_str(&text)
                    .map_err(|_| format!("header {}: {text:?} is not a header value", wire.name))?;
                request.headers_mut().insert(wire.name, value);
            }
            Place::Cookie => {
                // `form` percent-encodes a cookie's values; 3.2's `cookie` style sends them as
                // they are (and a value that is no cookie text is refused by `check`).
                let encode = |text: &str| match wire.style {
                    Style::Cookie => text.to_owned(),
                    _ => percent_encoding::utf8_percent_encode(text, ENCODED).to_string(),
                };
                match wire.shape {
                    Shape::Array(_) if wire.explode => {
                        cookies.extend(values().map(|v| format!("{}={}", wire.name, encode(v))))
                    }
                    Shape::Object(_) if wire.explode => {
                        cookies.extend(entries.iter().map(|(k, v)| format!("{k}={}", encode(v))))
                    }
                    _ => cookies.push(format!("{}={}", wire.name, listed(wire, &entries, ",", &encode))),
                }
            }
        }
    }
    let url = request.url_mut();
    url.set_path(&path);
    let kept: Vec<(String, String)> =
        pairs.into_iter().zip(taken).filter(|(_, taken)| !taken).map(|(pair, _)| pair).chain(query).collect();
    if kept.is_empty() {
        url.set_query(None);
    } else {
        url.query_pairs_mut().clear().extend_pairs(kept);
    }
    if !cookies.is_empty() {
        let line = match request.headers().get(reqwest::header::COOKIE).and_then(|v| v.to_str().ok()) {
            Some(before) => format!("{before}; {}", cookies.join("; ")),
            None => cookies.join("; "),
        };
        let value = reqwest::header::HeaderValue::from_str(&line).map_err(|_| "a cookie is not a header value")?;
        request.headers_mut().insert(reqwest::header::COOKIE, value);
    }
    Ok(())
}

/// The value in `simple` form: a scalar, items joined by `joined`, an object's `k,v,…` or,
/// exploded, `k=v,…`; each piece through `encode`.
fn listed(wire: &Wire, entries: &[(&str, &str)], joined: &str, encode: &dyn Fn(&str) -> String) -> String {
    match wire.shape {
        Shape::Scalar(_) | Shape::Opaque | Shape::ScalarOrObject(..) | Shape::Nested => encode(entries[0].1),
        Shape::Array(_) => entries.iter().map(|(_, v)| encode(v)).collect::<Vec<_>>().join(joined),
        Shape::Object(_) if wire.explode => {
            entries.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect::<Vec<_>>().join(joined)
        }
        Shape::Object(_) => alternating(entries, encode).join(joined),
    }
}

fn alternating(entries: &[(&str, &str)], encode: impl Fn(&str) -> String) -> Vec<String> {
    entries.iter().flat_map(|(k, v)| [encode(k), encode(v)]).collect()
}

/// Refuses a value holding a character its style separates values with: the server, which
/// decodes before it splits, would read two.
fn check(carrier: &Carrier, entries: &[(&str, &str)]) -> Result<(), String> {
    let wire = &carrier.wire;
    let mut reserved = vec![','];
    match (wire.place, wire.style) {
        (Place::Query, Style::SpaceDelimited) => reserved = vec![' '],
        (Place::Query, Style::PipeDelimited) => reserved = vec!['|'],
        (Place::Query, Style::DeepObject) => reserved = vec![']'],
        (Place::Path, Style::Label) if wire.explode => reserved.push('.'),
        (Place::Path, Style::Matrix) => reserved.push(';'),
        // Unencoded, a cookie's value ends at `;`.
        (Place::Cookie, Style::Cookie) if matches!(wire.shape, Shape::Scalar(_) | Shape::Opaque) => {
            reserved = vec![';', ' ', '"', '\\']
        }
        (Place::Cookie, Style::Cookie) => reserved.extend([';', ' ', '"', '\\']),
        _ => {}
    }
    // A scalar is read whole (but an unencoded cookie's), and so is each text of a nested value
    // (its brackets are in its keys); an object's keys are its properties' names.
    if matches!(wire.shape, Shape::Scalar(_) | Shape::Opaque | Shape::Nested) && wire.style != Style::Cookie {
        return Ok(());
    }
    for (_, text) in entries {
        if let Some(found) = text.chars().find(|c| reserved.contains(c)) {
            return Err(format!(
                "parameter {}: {text:?} holds {found:?}, which its style ({:?}) writes between values",
                wire.name, wire.style
            ));
        }
    }
    Ok(())
}
