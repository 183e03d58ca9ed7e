//! The document's text as JSON. A document that starts as a JSON object is read as JSON (YAML
//! 1.2 is a superset in principle, but its parsers refuse escapes JSON allows, such as `\/`), and
//! anything else as YAML. A number too large for 64 bits (OpenAI's `minimum: -9223372036854776000`,
//! a `maximum` of 2^64) is kept as the nearest double — the value a JSON parser in JavaScript,
//! which wrote most of them, reads — rather than refusing the document.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use crate::error::{Error, Result};

pub(crate) fn document_text(text: &str) -> Result<Value> {
    if text.trim_start().starts_with('{') {
        match serde_json::from_str::<Json>(text) {
            Ok(Json(value)) => return Ok(value),
            // A YAML flow mapping starts with `{` too; when YAML cannot read it either, the JSON
            // error (with its line and column) is the one that helps.
            Err(json) => {
                return serde_norway::from_str::<Json>(text)
                    .map(|Json(value)| value)
                    .map_err(|_| Error::library("the document is not valid JSON", json));
            }
        }
    }
    serde_norway::from_str::<Json>(text)
        .map(|Json(value)| value)
        .map_err(|e| Error::library("the document is not valid YAML", e))
}

/// A JSON value whose integers may be of any size (see the module's documentation).
struct Json(Value);

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        deserializer.deserialize_any(JsonVisitor).map(Json)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_i128<E>(self, v: i128) -> std::result::Result<Value, E> {
        Ok(i64::try_from(v).map(|v| Value::Number(v.into())).unwrap_or_else(|_| double(v as f64)))
    }
    fn visit_u128<E>(self, v: u128) -> std::result::Result<Value, E> {
        Ok(u64::try_from(v).map(|v| Value::Number(v.into())).unwrap_or_else(|_| double(v as f64)))
    }
    fn visit_f64<E>(self, v: f64) -> std::result::Result<Value, E> {
        Ok(double(v))
    }
    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_none<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> std::result::Result<Value, D::Error> {
        Json::deserialize(deserializer).map(|Json(value)| value)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Json(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some((key, Json(value))) = map.next_entry::<String, Json>()? {
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// A double as a JSON number (`null` for one JSON has no word for: NaN, the infinities).
fn double(v: f64) -> Value {
    Number::from_f64(v).map_or(Value::Null, Value::Number)
}

#[cfg(test)]
mod tests {
    use super::document_text;

    #[test]
    fn a_json_document_is_read_as_json() {
        // `\/` is an escape JSON allows and YAML's parsers refuse.
        let read = document_text(r#"{"openapi": "3.0.3", "info": {"title": "a\/b", "version": "1"}}"#).unwrap();
        assert_eq!(read["info"]["title"], "a/b");
        // A YAML flow mapping is still YAML.
        assert_eq!(document_text("{openapi: 3.0.3}").unwrap()["openapi"], "3.0.3");
        // What neither reads is reported as JSON, with where.
        let error = document_text("{\"openapi\": [}").unwrap_err().to_string();
        assert!(error.contains("not valid JSON"), "{error}");
    }

    #[test]
    fn numbers_beyond_64_bits_are_read_in_yaml_and_json() {
        let yaml = document_text("minimum: -9223372036854776000\nmaximum: 18446744073709552000\nsmall: 3").unwrap();
        assert_eq!(yaml["minimum"].as_f64(), Some(-9.223372036854776e18));
        assert_eq!(yaml["maximum"].as_f64(), Some(1.8446744073709552e19));
        assert_eq!(yaml["small"].as_i64(), Some(3));
        let json = document_text(r#"{"minimum": -9223372036854776000, "n": 18446744073709551615}"#).unwrap();
        assert_eq!(json["minimum"].as_f64(), Some(-9.223372036854776e18));
        assert_eq!(json["n"].as_u64(), Some(u64::MAX));
    }
}
