//! Loading the document: YAML or JSON text to the `openapiv3` model, keeping the raw JSON too
//! (for extensions such as `x-webhooks` and for the JSON Schema conversion). Both views are of the
//! normalised document (`normalise`): the server generator reads `openapi`, progenitor `client`.

use crate::{Error, Result, bail, normalise, openapi31, repair};

pub struct Spec {
    /// The document as written (a 3.1 one in its 3.0 view): what the documentation (the 3.1
    /// rendition, `docs/api.md`) shows.
    pub original: serde_json::Value,
    /// The normalised document, as JSON.
    pub raw: serde_json::Value,
    /// The model the server generator reads, with nullable references in the form progenitor
    /// understands (so both resolve a schema to the same model).
    pub openapi: openapiv3::OpenAPI,
    /// The model progenitor reads: `openapi` adapted to what its client supports
    /// (`normalise::for_client`).
    pub client: openapiv3::OpenAPI,
    /// What reading the document left out or approximated (a 3.1 document's keywords 3.0 has no
    /// word for), with its JSON pointer.
    pub notes: Vec<crate::Note>,
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

/// The `openapiv3` model of `document` as progenitor should see it.
fn model(mut document: serde_json::Value) -> Result<openapiv3::OpenAPI> {
    // progenitor reads nullable references only as `allOf` + `nullable` (see `nullable`).
    crate::nullable::for_progenitor(&mut document);
    tolerant_readers(&mut document);
    well_formed(&document)?;
    serde_json::from_value(document)
        .map_err(|e| Error(format!("the document is not a valid OpenAPI 3.0 document: {e}")))
}

/// Refuses, with the JSON pointer of what is wrong, a document that is not an OpenAPI 3.0
/// document in shape (a response that is a number, an operation that is a list), before the
/// normaliser walks it expecting objects where the specification says objects are.
fn well_formed(document: &serde_json::Value) -> Result<()> {
    let Err(error) = serde_path_to_error::deserialize::<_, openapiv3::OpenAPI>(document) else { return Ok(()) };
    let mut pointer = String::new();
    for segment in error.path().iter() {
        match segment {
            serde_path_to_error::Segment::Map { key } => {
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            serde_path_to_error::Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            _ => {}
        }
    }
    bail!("#{pointer}: the document is not a valid OpenAPI 3.0 document here: {}", error.inner())
}

impl Spec {
    pub fn parse(text: &str) -> Result<Self> {
        let mut raw: serde_json::Value =
            serde_norway::from_str(text).map_err(|e| Error(format!("the document is not valid YAML: {e}")))?;
        let version = raw.get("openapi").and_then(|v| v.as_str()).unwrap_or_default().to_owned();
        let mut notes = Vec::new();
        if openapi31::is_31(&version) {
            openapi31::to_30(&mut raw, &mut notes)?;
        } else if !version.starts_with("3.0.") {
            bail!("/openapi: the document must be OpenAPI 3.0.x or 3.1.x, found {version:?}");
        }
        repair::repair(&mut raw, !openapi31::is_31(&version), &mut notes);
        well_formed(&raw)?;
        // What the documentation is made from: the document as written, in its 3.0 view.
        let original = raw.clone();
        normalise::normalise(&mut raw, &mut notes)?;
        let mut client = raw.clone();
        normalise::for_client(&mut client)?;
        Ok(Self { openapi: model(raw.clone())?, client: model(client)?, raw, original, notes })
    }

    /// The named component schemas, in document order.
    pub fn component_schemas(&self) -> impl Iterator<Item = (&String, &serde_json::Value)> {
        self.raw.pointer("/components/schemas").and_then(|v| v.as_object()).into_iter().flat_map(|m| m.iter())
    }
}
