//! Loading the document: YAML or JSON text to the `openapiv3` model, keeping the raw JSON too
//! (for extensions such as `x-webhooks` and for the JSON Schema conversion).

use crate::{Error, Result, bail};

pub struct Spec {
    pub raw: serde_json::Value,
    pub openapi: openapiv3::OpenAPI,
}

impl Spec {
    pub fn parse(text: &str) -> Result<Self> {
        let raw: serde_json::Value =
            serde_norway::from_str(text).map_err(|e| Error(format!("the document is not valid YAML: {e}")))?;
        let version = raw.get("openapi").and_then(|v| v.as_str()).unwrap_or_default();
        if !version.starts_with("3.0.") {
            bail!("the document must be OpenAPI 3.0.x (progenitor reads no other), found {version:?}");
        }
        let openapi = serde_json::from_value(raw.clone())
            .map_err(|e| Error(format!("the document is not a valid OpenAPI 3.0 document: {e}")))?;
        Ok(Self { raw, openapi })
    }

    /// The named component schemas, in document order.
    pub fn component_schemas(&self) -> impl Iterator<Item = (&String, &serde_json::Value)> {
        self.raw.pointer("/components/schemas").and_then(|v| v.as_object()).into_iter().flat_map(|m| m.iter())
    }
}
