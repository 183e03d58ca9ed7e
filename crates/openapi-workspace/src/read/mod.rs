//! The first stage: the document's text read into one view of it, [`Spec`], and what reading it
//! repaired or approximated ([`Note`]s). A 3.2 document is read through its 3.1 view
//! (`openapi32`), a 3.1 one through its 3.0 view (`openapi31`); `repair` mends what authors
//! commonly get wrong, and `normalise` gives every operation an id and every inline shape that
//! becomes a type a name. The view is both the raw JSON (for extensions and the JSON Schema
//! conversion) and the `openapiv3` model of the same normalised document.

pub(crate) mod bodies;
pub(crate) mod defaults;
pub(crate) mod document;
pub(crate) mod files;
pub(crate) mod inheritance;
pub(crate) mod keywords;
pub(crate) mod marks;
pub(crate) mod normalise;
pub(crate) mod nullable;
pub(crate) mod openapi31;
pub(crate) mod openapi32;
pub(crate) mod parameters;
pub(crate) mod references;
pub(crate) mod repair;
pub(crate) mod text;
pub(crate) mod wire;

use std::sync::OnceLock;

use crate::error::{Error, Result, bail};

/// Something the 3.0 view had to leave out or approximate, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub pointer: String,
    pub message: String,
}

pub struct Spec {
    /// The document as written (a 3.1 one in its 3.0 view): what the documentation (the 3.1
    /// rendition, `docs/api.md`) shows. Kept as compact JSON text and read back by
    /// [`Spec::original`]: only the writers that run last need it, and as a `Value` it is many
    /// times its text, held through the client's generation, where the largest documents peak.
    original: String,
    /// The normalised document, as JSON.
    pub raw: serde_json::Value,
    /// The model the server generator reads, with nullable references in the form progenitor
    /// understands (so both resolve a schema to the same model): the document but its paths,
    /// which [`Spec::path_items`] reads one at a time. They are most of a large document, and
    /// their model, held whole, is several times their JSON, beside the client's own view.
    pub openapi: openapiv3::OpenAPI,
    /// What reading the document left out or approximated (a 3.1 document's keywords 3.0 has no
    /// word for), with its JSON pointer.
    pub notes: Vec<Note>,
    /// The document's webhooks (3.1 `webhooks`, 3.0 `x-webhooks`) as a document of their own whose
    /// paths are `/{webhook name}`: what the receiver is generated from. Their inline payload
    /// schemas are named and moved into the components the models come from, like the paths'.
    /// Read as far as the document is at [`Spec::read`] (so its errors are the document's), kept
    /// as text and built again when first asked for ([`Spec::webhooks`]): on the largest
    /// documents it is a second copy of the components and their model.
    webhooks: Option<Webhooks>,
    /// Where the 3.1 view of a 3.2 document moved what (`openapi32::to_31`): the view's
    /// pointer, the document's.
    moved: Vec<(String, String)>,
}

/// The webhooks' document as compact JSON text, and its `Spec` once built from it.
struct Webhooks {
    text: String,
    spec: OnceLock<Box<Spec>>,
}

impl Webhooks {
    /// The webhooks' document, read (as [`webhooks`] did) from the text it wrote.
    fn spec(&self) -> &Spec {
        self.spec.get_or_init(|| {
            let raw: serde_json::Value = serde_json::from_str(&self.text).expect("JSON that serde_json wrote");
            let openapi = frame(&raw).expect("the document read once already, as it is (`webhooks`)");
            Box::new(Spec {
                openapi,
                original: self.text.clone(),
                raw,
                notes: Vec::new(),
                webhooks: None,
                moved: Vec::new(),
            })
        })
    }
}

/// `message` with its pointers into the view (`moved`'s) turned into the document's.
fn locate(moved: &[(String, String)], message: String) -> String {
    moved.iter().fold(message, |message, (view, document)| message.replace(view.as_str(), document))
}

/// The webhooks of `raw` as a document whose paths are `/{name}`, normalised as paths are (so
/// each operation has an id and each inline payload a model); the models it named join `raw`'s
/// components. The document's own `security` is the API's, not its webhooks': a webhook asks
/// for credentials only with its own `security`.
fn webhooks(
    raw: &mut serde_json::Value,
    written_as: &str,
    notes: &mut Vec<Note>,
    serving: Serving,
) -> Result<Option<Webhooks>> {
    let Some(hooks) = raw.get("x-webhooks").and_then(|w| w.as_object()).filter(|w| !w.is_empty()) else {
        return Ok(None);
    };
    let mut renames: Vec<(String, String)> = hooks
        .keys()
        .map(|name| (document::pointer(&["paths", &format!("/{name}")]), document::pointer(&[written_as, name])))
        .collect();
    // What the shape check cannot place more precisely than the whole map.
    renames.push(("#/paths".into(), format!("#/{written_as}")));
    let paths: serde_json::Map<String, serde_json::Value> =
        hooks.iter().map(|(name, item)| (format!("/{name}"), item.clone())).collect();
    let mut doc = raw.clone();
    let object = doc.as_object_mut().expect("checked by well_formed");
    object.remove("x-webhooks");
    object.remove("security");
    object.insert("paths".into(), serde_json::Value::Object(paths));
    // Pointers say where the document has the webhook, not where this view put it.
    let located = |error: Error| {
        error.relocated(|text| renames.iter().fold(text, |text, (from, to)| text.replace(from.as_str(), to)))
    };
    // An extension is not checked with the document: its shape is, here, as paths are. The
    // components are the document's, checked with it (those named here join them): only the
    // paths are read, before and after normalising.
    let paths_well_formed = |doc: &serde_json::Value| {
        let only_paths = serde_json::json!({"openapi": doc["openapi"], "info": doc["info"], "paths": doc["paths"]});
        well_formed(&only_paths).map_err(located)
    };
    paths_well_formed(&doc)?;
    // Served whole, but for the diff, which reads them as written.
    let serving = if serving == Serving::AsWritten { serving } else { Serving::Whole };
    normalise::normalise(&mut doc, notes, serving).map_err(located)?;
    if let Some(schemas) = doc.pointer("/components/schemas").cloned() {
        raw["components"]["schemas"] = schemas;
    }
    paths_well_formed(&doc)?;
    Ok(Some(Webhooks { text: doc.to_string(), spec: OnceLock::new() }))
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
pub(crate) fn openapi_model(mut document: serde_json::Value) -> Result<openapiv3::OpenAPI> {
    // progenitor reads nullable references only as `allOf` + `nullable` (see `nullable`).
    nullable::for_progenitor(&mut document);
    tolerant_readers(&mut document);
    typed(&document)
}

/// The `openapiv3` model of `document` but its paths (`Spec::openapi`).
fn frame(document: &serde_json::Value) -> Result<openapiv3::OpenAPI> {
    let mut frame = serde_json::Map::new();
    for (key, value) in document.as_object().into_iter().flatten() {
        let value = if key == "paths" { serde_json::json!({}) } else { value.clone() };
        frame.insert(key.clone(), value);
    }
    openapi_model(serde_json::Value::Object(frame))
}

/// Refuses, with the JSON pointer of what is wrong, a document that is not an OpenAPI 3.0
/// document in shape (a response that is a number, an operation that is a list), before the
/// normaliser walks it expecting objects where the specification says objects are.
fn well_formed(document: &serde_json::Value) -> Result<()> {
    typed(document).map(drop)
}

/// The document in openapiv3's types, read in one pass; where it is not one, the JSON pointer.
fn typed(document: &serde_json::Value) -> Result<openapiv3::OpenAPI> {
    typed_or_where(document).map_err(|(pointer, why)| not_openapi(&pointer, &why))
}

/// The refusal of a document that is not OpenAPI at `pointer`, for `why`.
fn not_openapi(pointer: &str, why: &str) -> Error {
    Error::at(format!("#{pointer}"), format!("the document is not a valid OpenAPI 3.0 document here: {why}"))
}

/// How many times a value that is not of its OpenAPI type is mended before the document is
/// refused: past this, the text is not meant as OpenAPI.
const MENDED_AT_MOST: usize = 64;

/// Mends what keeps `document` from being an OpenAPI document in shape, as far as it can be
/// served without it (the tool's reading; our own document is refused instead, `Serving::Whole`):
/// a response without its `description` gets an empty one; any other value that is not of its
/// type there (`pattern: 0`, a parameter without a `name`) is dropped, each with a note.
fn mended(document: &mut serde_json::Value, notes: &mut Vec<Note>, serving: Serving) -> Result<()> {
    for _ in 0..MENDED_AT_MOST {
        let Err((pointer, why)) = typed_or_where::<openapiv3::OpenAPI>(document) else { return Ok(()) };
        // What is not a value inside the document's parts (`paths` itself, a component's map)
        // is not dropped: such a text is not the document it should be.
        if serving == Serving::Whole || pointer.split('/').count() < 4 {
            return Err(not_openapi(&pointer, &why));
        }
        let missing_description = why.starts_with("missing field `description`");
        let note = if missing_description {
            let Some(object) = document.pointer_mut(&pointer).and_then(|v| v.as_object_mut()) else {
                return Err(not_openapi(&pointer, &why));
            };
            object.insert("description".into(), "".into());
            format!("{why}: an empty one is read")
        } else {
            // A schema that does not read (the reader cannot say which keyword) is any value.
            if let Some(schema) = document.pointer_mut(&pointer).filter(|_| is_schema_place(&pointer))
                && schema.is_object()
            {
                *schema = serde_json::json!({});
                notes.push(Note { pointer, message: format!("not a valid schema ({why}): read as any value") });
                continue;
            }
            let (parent, key) = pointer.rsplit_once('/').expect("not empty, so it has a segment");
            let key = document::unescape(key);
            let removed = match document.pointer_mut(parent) {
                Some(serde_json::Value::Object(map)) => map.remove(&key).is_some(),
                Some(serde_json::Value::Array(items)) => match key.parse::<usize>() {
                    Ok(index) if index < items.len() => {
                        items.remove(index);
                        true
                    }
                    _ => false,
                },
                _ => false,
            };
            if !removed {
                return Err(not_openapi(&pointer, &why));
            }
            format!("not valid OpenAPI here ({why}): dropped")
        };
        notes.push(Note { pointer, message: note });
    }
    typed(document).map(drop)
}

/// Whether `pointer` names a schema: a component schema, a `schema`, or one inside another.
fn is_schema_place(pointer: &str) -> bool {
    let segments: Vec<&str> = pointer.split('/').collect();
    let n = segments.len();
    (n == 4 && segments[1] == "components" && segments[2] == "schemas")
        || segments.last() == Some(&"schema")
        || (n >= 2 && ["properties", "items", "additionalProperties", "not"].contains(&segments[n - 2]))
        || (n >= 2 && ["items", "additionalProperties", "not"].contains(&segments[n - 1]))
        || (n >= 2 && ["allOf", "anyOf", "oneOf"].contains(&segments[n - 2]))
}

/// The document (or a part of it: a path item) in openapiv3's types; where it is not one, the
/// JSON pointer (from the part) and why.
fn typed_or_where<T: serde::de::DeserializeOwned>(
    document: &serde_json::Value,
) -> std::result::Result<T, (String, String)> {
    let error = match serde_path_to_error::deserialize::<_, T>(document) {
        Ok(typed) => return Ok(typed),
        Err(error) => error,
    };
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
    Err((pointer, error.inner().to_string()))
}

/// Whether an operation the read stage cannot serve refuses the document (`Whole`: our own
/// document, the library's callers), is left out of it with a note (`WhatItCan`: the tool), or
/// is kept as written with a note (`AsWritten`: the diff, which judges every operation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Serving {
    Whole,
    WhatItCan,
    AsWritten,
}

impl Spec {
    pub fn parse(text: &str) -> Result<Self> {
        Self::parse_serving(text, Serving::Whole)
    }

    pub(crate) fn parse_serving(text: &str, serving: Serving) -> Result<Self> {
        let mut raw = crate::timings::timed("read/text", || text::document_text(text))?;
        let version = raw.get("openapi").and_then(|v| v.as_str()).unwrap_or_default().to_owned();
        let mut notes = Vec::new();
        let moved = match openapi32::is_32(&version) {
            true => openapi32::to_31(&mut raw, &mut notes)?,
            false => Vec::new(),
        };
        let mut spec =
            Self::read(raw, &version, notes, serving).map_err(|error| error.relocated(|text| locate(&moved, text)))?;
        for note in &mut spec.notes {
            note.pointer = locate(&moved, std::mem::take(&mut note.pointer));
        }
        spec.moved = moved;
        Ok(spec)
    }

    /// Says where in the document a message's pointers into the view (`openapi32`'s moves) are.
    pub fn locate(&self, error: Error) -> Error {
        error.relocated(|text| locate(&self.moved, text))
    }

    /// The document (a 3.2 one in its 3.1 view) read.
    fn read(mut raw: serde_json::Value, version: &str, mut notes: Vec<Note>, serving: Serving) -> Result<Self> {
        // A 3.2 document is in its 3.1 view already.
        if openapi32::is_32(version) || openapi31::is_31(version) {
            openapi31::to_30(&mut raw, &mut notes)?;
        } else if !version.starts_with("3.0.") {
            bail!("/openapi: the document must be OpenAPI 3.0.x, 3.1.x or 3.2.x, found {version:?}");
        }
        crate::timings::timed("read/repair", || {
            repair::repair(&mut raw, version.starts_with("3.0."), serving == Serving::AsWritten, &mut notes)
        });
        crate::timings::timed("read/mended", || mended(&mut raw, &mut notes, serving))?;
        // What the documentation is made from: the document as written, in its 3.0 view. Kept as
        // text from here: as a second `Value` beside the one normalised it doubled the read's
        // memory, the whole of a large document's paths twice.
        let mut original = raw.to_string();
        // The diff judges the document as written; the split is how its models read it.
        if serving != Serving::AsWritten {
            crate::timings::timed("read/split", || inheritance::split_parents(&mut raw));
        }
        // Pointers into the webhooks name them where the document has them.
        let written_as = if version.starts_with("3.0.") { "x-webhooks" } else { "webhooks" };
        let webhooks = webhooks(&mut raw, written_as, &mut notes, serving)?;
        let left_out = crate::timings::timed("read/normalise", || normalise::normalise(&mut raw, &mut notes, serving))?;
        if !left_out.is_empty() {
            // The documentation shows what the workspace serves.
            let mut shown: serde_json::Value = serde_json::from_str(&original).expect("JSON that serde_json wrote");
            for (path, method) in left_out {
                shown
                    .get_mut("paths")
                    .and_then(|paths| paths.get_mut(&path))
                    .and_then(|item| item.as_object_mut()?.remove(&method));
            }
            original = shown.to_string();
        }
        Ok(Self {
            openapi: crate::timings::timed("read/openapiv3", || frame(&raw))?,
            raw,
            original,
            notes,
            webhooks,
            moved: Vec::new(),
        })
    }

    /// The document as written (a 3.1 one in its 3.0 view), read back from its text.
    pub fn original(&self) -> serde_json::Value {
        serde_json::from_str(&self.original).expect("JSON that serde_json wrote")
    }

    /// The document's webhooks as a document of their own (the field's description).
    pub fn webhooks(&self) -> Option<&Spec> {
        self.webhooks.as_ref().map(Webhooks::spec)
    }

    /// Each path item in openapiv3's types (as [`openapi_model`] reads the whole document), read
    /// when the iterator reaches it: see [`Spec::openapi`].
    pub(crate) fn path_items(
        &self,
    ) -> impl Iterator<Item = Result<(&String, openapiv3::ReferenceOr<openapiv3::PathItem>)>> {
        let paths = self.raw.get("paths").and_then(serde_json::Value::as_object);
        // Only keys beginning with `/` are paths there, as openapiv3 reads them (not `x-`).
        paths.into_iter().flatten().filter(|(path, _)| path.starts_with('/')).map(|(path, item)| {
            let mut item = item.clone();
            nullable::for_progenitor(&mut item);
            tolerant_readers(&mut item);
            typed_or_where(&item).map(|typed| (path, typed)).map_err(|(inside, why)| {
                let mut at = "/paths".to_owned();
                document::push_segment(&mut at, path);
                not_openapi(&format!("{at}{inside}"), &why)
            })
        })
    }

    /// The named component schemas, in document order.
    pub fn component_schemas(&self) -> impl Iterator<Item = (&String, &serde_json::Value)> {
        self.raw.pointer("/components/schemas").and_then(|v| v.as_object()).into_iter().flat_map(|m| m.iter())
    }
}
