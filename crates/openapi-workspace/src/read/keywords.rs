//! Repairs (see `repair.rs`) of schema keywords: a value of another kind than the keyword takes,
//! a `format` that names the type a schema does not give, a `format` that cannot apply, a
//! keyword for another type, 3.1's numeric exclusive bounds in a 3.0 document.

use serde_json::{Map, Value};

use crate::read::Note;
use crate::read::document::escape;
use crate::read::document::with_article;

/// A schema keyword whose value is not of the kind the keyword takes (`pattern: 0`,
/// `minLength: "5"`, `required: true` on a schema) is dropped; a number or boolean written as
/// text (`"5"`, `"true"`) is read as what it says.
pub(super) fn keywords_of_another_kind(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    const TEXT: &[&str] = &["pattern", "format", "title", "description"];
    const NUMBER: &[&str] = &["minimum", "maximum", "multipleOf"];
    const COUNT: &[&str] = &["minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"];
    const FLAG: &[&str] = &["nullable", "readOnly", "writeOnly", "deprecated", "uniqueItems"];
    const LIST: &[&str] = &["required", "enum", "allOf", "anyOf", "oneOf"];
    const MAP: &[&str] = &["properties"];
    let keys: Vec<String> = schema.keys().cloned().collect();
    for key in keys {
        let value = &schema[&key];
        let fits = match key.as_str() {
            k if TEXT.contains(&k) => value.is_string(),
            k if NUMBER.contains(&k) => value.is_number(),
            k if COUNT.contains(&k) => value.is_u64(),
            k if FLAG.contains(&k) => value.is_boolean(),
            // A parameter's or header's `required` is a boolean, and not this keyword.
            "required" => value.is_array() || value.is_boolean(),
            k if LIST.contains(&k) => value.is_array(),
            k if MAP.contains(&k) => value.is_object(),
            "type" => value.is_string() || value.is_array(),
            _ => true,
        };
        if fits {
            continue;
        }
        let read = value.as_str().and_then(|text| match key.as_str() {
            k if NUMBER.contains(&k) => {
                text.trim().parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number)
            }
            k if COUNT.contains(&k) => text.trim().parse::<u64>().ok().map(Value::from),
            k if FLAG.contains(&k) => text.trim().parse::<bool>().ok().map(Value::Bool),
            _ => None,
        });
        let pointer = format!("{at}/{}", escape(&key));
        let message = match &read {
            Some(read) => format!("{key}: {value} is text: read as {read}"),
            None => format!("{key}: {value} is not what the keyword takes: dropped"),
        };
        notes.push(Note { pointer, message });
        match read {
            Some(read) => schema.insert(key, read),
            None => schema.remove(&key),
        };
    }
}

/// The integer formats: on a `number` they say the author meant an integer.
const INTEGER_FORMATS: [&str; 8] = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"];

/// The formats that name a type: a schema with one of them and no `type` (loket.nl's
/// `{format: int32, example: 2}`) is read as of that type, which typify cannot decide alone.
const NUMBER_FORMATS: [&str; 3] = ["float", "double", "decimal"];
const STRING_FORMATS: [&str; 12] =
    ["date", "date-time", "time", "duration", "uuid", "email", "uri", "hostname", "ipv4", "ipv6", "byte", "binary"];

/// A schema with no `type` (nor anything else that gives it one: a `$ref`, a composition,
/// properties, items, an enum) whose `format` names a type is read as of that type: an integer
/// format as an `integer` where every value it gives is one (else a `number`), a number format
/// as a `number`, a string format as a `string`. The keywords of other types then go
/// (`foreign_keywords`).
pub(super) fn typed_by_format(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    const TYPING: [&str; 10] =
        ["type", "$ref", "allOf", "anyOf", "oneOf", "not", "properties", "items", "additionalProperties", "enum"];
    if TYPING.iter().any(|keyword| schema.contains_key(*keyword)) {
        return;
    }
    let Some(format) = schema.get("format").and_then(Value::as_str) else { return };
    let kind = match format {
        f if INTEGER_FORMATS.contains(&f) => match integral_values(schema) {
            true => "integer",
            false => "number",
        },
        f if NUMBER_FORMATS.contains(&f) => "number",
        f if STRING_FORMATS.contains(&f) => "string",
        _ => return,
    };
    notes.push(Note {
        pointer: at.to_owned(),
        message: format!("a schema with no type and format {format:?}: read as {}", with_article(kind)),
    });
    schema.insert("type".into(), kind.into());
}

/// Whether every value `schema` gives (default, bounds, enum, example) is an integer.
fn integral_values(schema: &Map<String, Value>) -> bool {
    let integral = |value: &Value| value.is_i64() || value.is_u64();
    let values = ["default", "minimum", "maximum", "example", "multipleOf"]
        .iter()
        .filter_map(|key| schema.get(*key))
        .chain(schema.get("enum").and_then(Value::as_array).into_iter().flatten());
    values.filter(|v| !v.is_null()).all(integral)
}

/// A `format` on a type it cannot describe (an array's, an object's, a boolean's) is ignored;
/// a `number` whose format is an integer's is an `integer` where every value it gives (default,
/// bounds, enum, example) is one, and loses the format otherwise.
pub(super) fn misplaced_format(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    let Some(format) = schema.get("format").and_then(Value::as_str).map(str::to_owned) else { return };
    let kind = schema.get("type").and_then(Value::as_str).unwrap_or_default().to_owned();
    let pointer = format!("{at}/format");
    match kind.as_str() {
        "array" | "object" | "boolean" | "null" => {
            notes.push(Note {
                pointer,
                message: format!("format {format:?} does not apply to {}: ignored", with_article(&kind)),
            });
            schema.remove("format");
        }
        "number" if INTEGER_FORMATS.contains(&format.as_str()) => {
            if integral_values(schema) {
                notes.push(Note { pointer, message: format!("a number of format {format}: read as an integer") });
                schema.insert("type".into(), "integer".into());
            } else {
                notes.push(Note {
                    pointer,
                    message: format!(
                        "a number of format {format} with a value that is not an integer: the format is ignored"
                    ),
                });
                schema.remove("format");
            }
        }
        _ => {}
    }
}

/// Drops the keywords that say nothing of the schema's values: those for other types than its
/// one `type`, and a lower bound of zero on a length or a count (every value meets it, and
/// typify's check of it, `len < 0usize`, is a warning where the crate is built).
pub(super) fn foreign_keywords(schema: &mut Map<String, Value>) {
    for keyword in ["minLength", "minItems", "minProperties"] {
        if schema.get(keyword).and_then(Value::as_u64) == Some(0) {
            schema.remove(keyword);
        }
    }
    const ARRAY: &[&str] = &["items", "prefixItems", "uniqueItems", "minItems", "maxItems", "contains"];
    const OBJECT: &[&str] = &[
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "propertyNames",
        "minProperties",
        "maxProperties",
    ];
    const STRING: &[&str] = &["minLength", "maxLength", "pattern"];
    const NUMBER: &[&str] = &["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"];
    let Some(kind) = schema.get("type").and_then(Value::as_str) else { return };
    let own: &[&str] = match kind {
        "array" => ARRAY,
        "object" => OBJECT,
        "string" => STRING,
        "integer" | "number" => NUMBER,
        "boolean" | "null" => &[],
        _ => return,
    };
    for keyword in [ARRAY, OBJECT, STRING, NUMBER].concat() {
        // A parameter's or header's `required` is a boolean, and not this keyword.
        let a_parameters = keyword == "required" && schema.get(keyword).is_some_and(Value::is_boolean);
        if !own.contains(&keyword) && !a_parameters {
            schema.remove(keyword);
        }
    }
}

/// `exclusiveMinimum: 5` in a 3.0 document: the 3.1 spelling of `minimum: 5, exclusiveMinimum: true`.
pub(super) fn exclusive_bounds(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    for (exclusive, inclusive) in [("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")] {
        let Some(bound) = schema.get(exclusive).filter(|b| b.is_number()).cloned() else { continue };
        notes.push(Note {
            pointer: format!("{at}/{exclusive}"),
            message: format!(
                "a number here is OpenAPI 3.1's spelling; read as 3.0's `{inclusive}: {bound}, {exclusive}: true`"
            ),
        });
        schema.insert(inclusive.into(), bound);
        schema.insert(exclusive.into(), Value::Bool(true));
    }
}

/// Properties of one object that are one Rust field (Trello's `prefs/background` beside
/// `prefs_background`): typify would write the field twice. The first required one (else the
/// first) keeps it; another that is optional is dropped, with a note; when two are required the
/// object is any value, with a note.
pub(super) fn properties_of_one_field(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return };
    let required = crate::read::document::required_names(schema);
    let mut fields: std::collections::BTreeMap<String, Vec<&String>> = std::collections::BTreeMap::new();
    for name in properties.keys() {
        fields.entry(crate::read::document::rust_name(name, false)).or_default().push(name);
    }
    let mut dropped = Vec::new();
    for (field, names) in fields.iter().filter(|(_, names)| names.len() > 1) {
        let keeper = names.iter().find(|name| required.contains(name.as_str())).unwrap_or(&names[0]);
        for name in names.iter().filter(|name| *name != keeper) {
            let pointer = format!("{at}/properties/{}", escape(name));
            if required.contains(name.as_str()) {
                notes.push(Note {
                    pointer: at.to_owned(),
                    message: format!(
                        "required properties {keeper:?} and {name:?} are both the Rust field `{field}`: the object is \
                         read as any value"
                    ),
                });
                schema.clear();
                return;
            }
            notes.push(Note {
                pointer,
                message: format!(
                    "property {name:?} is the Rust field `{field}`, as {keeper:?} is: left out (it is optional)"
                ),
            });
            dropped.push((*name).clone());
        }
    }
    let properties = schema.get_mut("properties").and_then(Value::as_object_mut).expect("read above");
    for name in dropped {
        properties.remove(&name);
    }
}

/// An integer's `minimum`, `maximum` or `multipleOf` that is no 64-bit integer (Kinto's
/// `maximum: 9223372036854776000`, `i64::MAX` written as a float that rounds past it): a whole
/// number within range is read as that integer, one beyond it dropped (every `i64` meets it).
pub(super) fn integer_bounds(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    if schema.get("type").and_then(Value::as_str) != Some("integer") {
        return;
    }
    for keyword in ["minimum", "maximum", "multipleOf"] {
        let Some(number) = schema.get(keyword).and_then(Value::as_f64) else { continue };
        if schema[keyword].is_i64() {
            continue;
        }
        let pointer = format!("{at}/{keyword}");
        // `i64::MAX as f64` is 2^63, one past it.
        let whole = number.fract() == 0.0 && number >= i64::MIN as f64 && number < i64::MAX as f64;
        if whole {
            schema.insert(keyword.into(), Value::from(number as i64));
            notes.push(Note { pointer, message: format!("{keyword}: {number} read as the integer {}", number as i64) });
        } else {
            schema.remove(keyword);
            notes.push(Note { pointer, message: format!("{keyword}: {number} is no 64-bit integer: dropped") });
        }
    }
}

/// An `enum` whose values are of another kind than its schema's `type` (typify refuses a value
/// its type cannot hold, and the whole document with it), read as the author meant it: an
/// integer's or a number's values written as text (Bungie's `enum: ["0", "1"]`) as the numbers
/// they say, a string's numbers (Zoom's `enum: [1, 2]` on a string) as their text, a boolean's
/// `"true"` as `true`; an array's scalar values (Zoom's `data_center_regions`) as its items'
/// enum. An enum with a value that reads as none of its type is dropped.
pub(super) fn enum_of_another_kind(schema: &mut Map<String, Value>, at: &str, notes: &mut Vec<Note>) {
    let Some(kind) = schema.get("type").and_then(Value::as_str).map(str::to_owned) else { return };
    let Some(values) = schema.get("enum").and_then(Value::as_array) else { return };
    let fits = |value: &Value| match (kind.as_str(), value) {
        (_, Value::Null) => true,
        ("integer", value) => value.is_i64() || value.is_u64(),
        ("number", value) => value.is_number(),
        ("string", value) => value.is_string(),
        ("boolean", value) => value.is_boolean(),
        ("array", value) => value.is_array(),
        ("object", value) => value.is_object(),
        _ => true,
    };
    if values.iter().all(fits) {
        return;
    }
    let pointer = format!("{at}/enum");
    if kind == "array" {
        let items = schema.get("items").and_then(Value::as_object);
        let scalar = values.iter().all(|v| !v.is_array() && !v.is_object());
        if scalar && items.is_some_and(|items| !items.contains_key("enum")) {
            let values = schema.remove("enum").expect("read above");
            schema["items"]["enum"] = values;
            notes.push(Note { pointer, message: "an array's enum of single values: read as its items' enum".into() });
            return;
        }
    }
    let read: Option<Vec<Value>> = values
        .iter()
        .map(|value| match (kind.as_str(), value) {
            (_, value) if fits(value) => Some(value.clone()),
            ("integer", Value::String(text)) => text.trim().parse::<i64>().ok().map(Value::from),
            ("number", Value::String(text)) => {
                text.trim().parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number)
            }
            ("string", Value::Number(number)) => Some(Value::String(number.to_string())),
            ("string", Value::Bool(flag)) => Some(Value::String(flag.to_string())),
            ("boolean", Value::String(text)) => text.trim().parse::<bool>().ok().map(Value::Bool),
            _ => None,
        })
        .collect();
    match read {
        Some(read) => {
            notes.push(Note {
                pointer,
                message: format!("the enum's values are not of type {kind}: read as the {kind} values they say"),
            });
            schema.insert("enum".into(), Value::Array(read));
        }
        None => {
            notes
                .push(Note { pointer, message: format!("the enum holds values that are not of type {kind}: dropped") });
            schema.remove("enum");
        }
    }
}
