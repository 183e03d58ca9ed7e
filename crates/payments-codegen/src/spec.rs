//! Loading the document: YAML or JSON text to the `openapiv3` model, keeping the raw JSON too
//! (for extensions such as `x-webhooks` and for the JSON Schema conversion).

use crate::{Error, Result, bail};

pub struct Spec {
    pub raw: serde_json::Value,
    /// The model progenitor reads, with nullable references in the form it understands.
    pub openapi: openapiv3::OpenAPI,
}

/// Drops `additionalProperties: false` from what progenitor reads, so the models (and with them
/// the client) ignore properties they don't know: a response property added in a minor version
/// must not break a client generated before it. Requests stay strict where it matters, in the
/// server, which validates every body against the document's own schemas (`schemas.json`) before
/// a model sees it.
fn tolerant_readers(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            if map.get("additionalProperties") == Some(&serde_json::Value::Bool(false)) {
                map.remove("additionalProperties");
            }
            map.values_mut().for_each(tolerant_readers);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(tolerant_readers),
        _ => {}
    }
}

impl Spec {
    pub fn parse(text: &str) -> Result<Self> {
        let raw: serde_json::Value =
            serde_norway::from_str(text).map_err(|e| Error(format!("the document is not valid YAML: {e}")))?;
        let version = raw.get("openapi").and_then(|v| v.as_str()).unwrap_or_default();
        if !version.starts_with("3.0.") {
            bail!("the document must be OpenAPI 3.0.x (progenitor reads no other), found {version:?}");
        }
        // progenitor reads nullable references only as `allOf` + `nullable` (see `nullable`).
        let mut for_progenitor = raw.clone();
        crate::nullable::for_progenitor(&mut for_progenitor);
        tolerant_readers(&mut for_progenitor);
        let openapi = serde_json::from_value(for_progenitor)
            .map_err(|e| Error(format!("the document is not a valid OpenAPI 3.0 document: {e}")))?;
        Ok(Self { raw, openapi })
    }

    /// The named component schemas, in document order.
    pub fn component_schemas(&self) -> impl Iterator<Item = (&String, &serde_json::Value)> {
        self.raw.pointer("/components/schemas").and_then(|v| v.as_object()).into_iter().flat_map(|m| m.iter())
    }
}
