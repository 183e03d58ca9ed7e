//! Repairs (see `repair.rs`) of the references and names a reader after this stage could not
//! follow: a `$ref` into the document's body rather than to a whole component, and a component
//! schema whose name no Rust type can bear.

use serde_json::{Value, json};

use crate::read::Note;
use crate::read::document::{Names, escape, holds_values, nameable, named_schema, rust_name};

/// How many times a `$ref` into the document's body is followed through further such `$ref`s.
const POINTER_DEPTH: usize = 8;

/// A `$ref` to a JSON pointer of the document other than a whole component — the readers after
/// this stage resolve only `#/components/{kind}/{name}` — is mended (a pointer written
/// percent-encoded, as in a URI, `#/paths/~1%7Bid%7D/get`, is read decoded):
///
/// - to a schema inside another (`#/components/schemas/A/properties/b`, as bundlers write a
///   shared part): the schema is moved to a component of its own (`AB`), and its place and every
///   reference to it refer to that; nothing is copied, so a recursive schema stays one type;
/// - to anything else (another operation's response or parameter, a callback): a copy of it.
pub(super) fn pointer_references(doc: &mut Value, notes: &mut Vec<Note>) {
    let mut found = Vec::new();
    references_into_body(doc, "", &mut found);
    if found.is_empty() {
        return;
    }
    // Schemas first, the deepest first: moving one leaves the pointers to those around it valid.
    let mut targets: Vec<String> = found
        .iter()
        .filter_map(|(_, reference)| reference.strip_prefix('#').map(percent_decoded))
        .filter(|pointer| schema_pointer(pointer))
        .collect();
    targets.sort_by(|a, b| b.matches('/').count().cmp(&a.matches('/').count()).then(a.cmp(b)));
    targets.dedup();
    let empty = serde_json::Map::new();
    let schemas = doc.pointer("/components/schemas").and_then(Value::as_object).unwrap_or(&empty);
    let mut names = Names::new(schemas);
    let mut moved: Vec<(String, String)> = Vec::new();
    for target in targets {
        let Some(schema) = doc.pointer(&target).cloned() else { continue };
        // A reference to a reference: the one it names.
        let reference = match schema.get("$ref").and_then(Value::as_str) {
            Some(reference) if schema.as_object().is_some_and(|m| m.len() == 1) => reference.to_owned(),
            _ => {
                let name = names.claim(&moved_name(&target));
                let reference = format!("#/components/schemas/{name}");
                if let Some(place) = doc.pointer_mut(&target) {
                    *place = json!({ "$ref": reference });
                }
                doc["components"]["schemas"][name.as_str()] = schema;
                reference
            }
        };
        moved.push((target, reference));
    }
    for (at, written) in &found {
        let pointer = written.strip_prefix('#').map(percent_decoded).unwrap_or_default();
        let Some((_, reference)) = moved.iter().find(|(target, _)| *target == pointer) else { continue };
        if let Some(here) = doc.pointer_mut(&format!("{at}/$ref")) {
            *here = Value::String(reference.clone());
            notes.push(Note {
                pointer: at.clone(),
                message: format!(
                    "a $ref to {written}, a schema inside another: read as {reference}, the schema moved there"
                ),
            });
        }
    }
    // What is left points at other parts: copied, through such references inside them too.
    for _ in 0..POINTER_DEPTH {
        let mut found = Vec::new();
        references_into_body(doc, "", &mut found);
        let mut replaced = 0;
        for (at, reference) in found {
            let pointer = reference.strip_prefix('#').map(percent_decoded).unwrap_or_default();
            if schema_pointer(&pointer) || at.starts_with(&pointer) {
                continue;
            }
            let Some(target) = doc.pointer(&pointer).cloned() else { continue };
            let Some(here) = doc.pointer_mut(&at) else { continue };
            *here = target;
            replaced += 1;
            notes.push(Note {
                pointer: at,
                message: format!("a $ref to {reference}, which is not a component: read as a copy of it"),
            });
        }
        if replaced == 0 {
            return;
        }
    }
}

/// Whether `pointer` (decoded, from the root) names a schema: one inside a component schema, or
/// inside a parameter's, header's or media type's `schema`.
fn schema_pointer(pointer: &str) -> bool {
    let segments: Vec<&str> = pointer.split('/').skip(1).collect();
    (segments.len() > 3 && segments[0] == "components" && segments[1] == "schemas") || segments.contains(&"schema")
}

/// A component's name for the schema at `pointer`: its path's names, keywords left out
/// (`/components/schemas/Gateway/properties/rewriteRuleSet` → `GatewayRewriteRuleSet`).
fn moved_name(pointer: &str) -> String {
    const KEYWORDS: &[&str] = &[
        "components",
        "schemas",
        "properties",
        "schema",
        "content",
        "paths",
        "responses",
        "parameters",
        "requestBodies",
        "allOf",
        "anyOf",
        "oneOf",
        "items",
        "additionalProperties",
        "not",
    ];
    let words: Vec<String> = pointer
        .split('/')
        .skip(1)
        .filter(|segment| !KEYWORDS.contains(segment) && !segment.contains('/'))
        .map(|segment| rust_name(&crate::read::document::unescape(segment), true))
        .map(|word| word.trim_start_matches('_').to_owned())
        .collect();
    let name = words.concat();
    if nameable(&name) { name } else { named_schema(&name) }
}

/// Each `$ref` of `value` (at `at`) that points into the document but not at a whole component.
fn references_into_body(value: &Value, at: &str, found: &mut Vec<(String, String)>) {
    match value {
        Value::Object(map) => {
            if let Some(reference) = map.get("$ref").and_then(Value::as_str)
                && let Some(pointer) = reference.strip_prefix("#/")
            {
                let segments: Vec<&str> = pointer.split('/').collect();
                // A callback is read only as written (the reader takes no reference to one).
                let component = segments.len() == 3 && segments[0] == "components" && segments[1] != "callbacks";
                if !component {
                    found.push((at.to_owned(), reference.to_owned()));
                }
                return;
            }
            // Values (an example, a schema's default) hold no references; a map of names
            // (responses: `default` is a status there) holds only things that may.
            let names = at.ends_with("/responses") || at.ends_with("/properties");
            for (key, child) in map {
                if holds_values(child)
                    && (names || !matches!(key.as_str(), "example" | "examples" | "default" | "enum" | "const"))
                {
                    references_into_body(child, &format!("{at}/{}", escape(key)), found);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                references_into_body(item, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

/// `text` with its `%XX` escapes decoded (as a URI fragment's JSON pointer is written).
fn percent_decoded(text: &str) -> String {
    if !text.contains('%') {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(high), Some(low)) =
                (bytes.get(i + 1).copied().and_then(hex), bytes.get(i + 2).copied().and_then(hex))
        {
            out.push((high * 16 + low) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_owned())
}

/// `x-` keys in `x-webhooks` (an extension's own extensions, as in a 3.0 paths object) are not
/// webhooks.
pub(super) fn extensions_among_webhooks(doc: &mut Value) {
    if let Some(webhooks) = doc.get_mut("x-webhooks").and_then(Value::as_object_mut) {
        webhooks.retain(|name, item| !name.starts_with("x-") || item.get("post").is_some());
    }
}

/// Component schemas named so that no Rust type can bear the name (see [`nameable`]), or the
/// same Rust type as an earlier one (`string` beside `String`), or `String` (typify writes
/// Rust's `String` unqualified in the models' impls, which a model of that name would stand
/// for), are given one that can, and every `$ref` to them (and discriminator mapping naming
/// them) follows.
pub(super) fn unnameable_schemas(doc: &mut Value, notes: &mut Vec<Note>) {
    let Some(schemas) = doc.pointer("/components/schemas").and_then(Value::as_object) else { return };
    let mut seen = std::collections::BTreeMap::new();
    let mut renamed: Vec<(String, String)> = Vec::new();
    let mut names = Names::new(schemas);
    for name in schemas.keys() {
        let rust = rust_name(name, true);
        let (why, wanted) = match nameable(name) {
            false => {
                (format!("a Rust type cannot be named after {name:?} (it begins with no letter)"), named_schema(name))
            }
            true if rust == "String" => (
                format!("{name:?} would be a model named String, which the models' own code reads as Rust's String"),
                "StringValue".to_owned(),
            ),
            true => match seen.insert(rust.clone(), name) {
                Some(earlier) => (format!("{name:?} is the Rust type {rust} as {earlier:?} is"), rust),
                None => continue,
            },
        };
        let new = names.claim(&wanted);
        notes.push(Note {
            pointer: format!("/components/schemas/{}", escape(name)),
            message: format!("{why}: named {new}"),
        });
        renamed.push((name.clone(), new));
    }
    if renamed.is_empty() {
        return;
    }
    let schemas = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut).expect("found above");
    *schemas = std::mem::take(schemas)
        .into_iter()
        .map(|(name, schema)| match renamed.iter().find(|(old, _)| *old == name) {
            Some((_, new)) => (new.clone(), schema),
            None => (name, schema),
        })
        .collect();
    let references: Vec<(String, String)> = renamed
        .iter()
        .map(|(old, new)| (format!("#/components/schemas/{}", escape(old)), format!("#/components/schemas/{new}")))
        .collect();
    follow_renames(doc, &references, &renamed);
}

/// Every `$ref` of `references` (old, new) in `value` rewritten, and every discriminator mapping
/// value naming a schema of `names` (old, new).
fn follow_renames(value: &mut Value, references: &[(String, String)], names: &[(String, String)]) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(reference)) = map.get_mut("$ref")
                && let Some((_, new)) = references.iter().find(|(old, _)| old == reference)
            {
                *reference = new.clone();
            }
            if let Some(mapping) =
                map.get_mut("discriminator").and_then(|d| d.get_mut("mapping")).and_then(Value::as_object_mut)
            {
                for target in mapping.values_mut() {
                    let Value::String(text) = target else { continue };
                    if let Some((_, new)) = references.iter().find(|(old, _)| old == text) {
                        *text = new.clone();
                    } else if let Some((_, new)) = names.iter().find(|(old, _)| old == text) {
                        *text = new.clone();
                    }
                }
            }
            map.values_mut().for_each(|child| follow_renames(child, references, names));
        }
        Value::Array(items) => items.iter_mut().for_each(|child| follow_renames(child, references, names)),
        _ => {}
    }
}
