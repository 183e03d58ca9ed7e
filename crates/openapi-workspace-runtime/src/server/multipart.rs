//! `multipart/form-data` bodies, read as they stream in (with `multer`): each field part parsed as
//! its schema's type and, with the others, validated as one object; each file part written to a
//! temporary file as it arrives, so an upload of any size holds only a chunk in memory, and
//! handed to the operation as a [`File`] to read back as a stream.
//!
//! Limits, each answered `413` with the error object: [`MAX_PARTS`] parts, [`MAX_FIELD`] bytes in
//! a field part, [`MAX_UPLOAD`] bytes in all. A part the operation does not take, a file whose
//! content type the document's `encoding` does not list, or a field that is not of its type is
//! `400`.

use std::io::SeekFrom;

use axum::body::Body;
use axum::http::{HeaderMap, header};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::io::{AsyncReadExt, AsyncSeekExt, AsyncWriteExt};

use super::{ApiError, Validator};
use crate::wire::Leaf;

/// The most parts a body may have.
pub const MAX_PARTS: usize = 128;
/// The most bytes a field part (not a file) may have.
pub const MAX_FIELD: usize = 64 * 1024;
/// The most bytes a whole multipart body may have: 2 GiB.
pub const MAX_UPLOAD: u64 = 2 << 30;

/// What an operation takes in a part of its body.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A file; its content type one of these, when the document's `encoding` lists any.
    File(&'static [&'static str]),
    /// Text read as this type; several parts of the name make an array.
    Text(Leaf),
    /// Several parts of the name, each read as this type, make an array.
    Texts(Leaf),
    /// JSON (an object or array, or a field whose `encoding` says `application/json`).
    Json,
}

/// An uploaded file, in a temporary file of its own (deleted when this is dropped).
#[derive(Debug)]
pub struct File {
    /// The name the client gave it (`filename`), if any.
    pub file_name: Option<String>,
    /// Its content type, if the client gave one.
    pub content_type: Option<String>,
    /// Its size in bytes.
    pub size: u64,
    contents: tokio::fs::File,
}

impl File {
    /// Its contents, read from the start.
    pub fn into_reader(self) -> tokio::fs::File {
        self.contents
    }

    /// Its contents in memory: for small files.
    pub async fn bytes(mut self) -> std::io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(self.size as usize);
        self.contents.read_to_end(&mut bytes).await?;
        Ok(bytes)
    }
}

/// What a multipart body held: its fields as one JSON object, and its files.
#[derive(Debug, Default)]
pub struct Received {
    values: Map<String, Value>,
    files: Vec<(String, File)>,
}

impl Received {
    /// Checks the fields against the document's schema for them (the files aside).
    pub fn validate(&self, validator: &Validator) -> Result<(), ApiError> {
        validator.check(&Value::Object(self.values.clone()), "part ")
    }

    /// The field `name`, which the body must have.
    pub fn required<T: DeserializeOwned>(&mut self, name: &str) -> Result<T, ApiError> {
        self.optional(name)?.ok_or_else(|| ApiError::bad_request(format!("part `{name}` is required")))
    }

    /// The field `name`, if the body has it.
    pub fn optional<T: DeserializeOwned>(&mut self, name: &str) -> Result<Option<T>, ApiError> {
        let Some(value) = self.values.remove(name) else { return Ok(None) };
        serde_json::from_value(value).map(Some).map_err(|e| ApiError::bad_request(format!("part `{name}`: {e}")))
    }

    /// The file `name`, which the body must have (once).
    pub fn file(&mut self, name: &str) -> Result<File, ApiError> {
        self.optional_file(name)?.ok_or_else(|| ApiError::bad_request(format!("part `{name}` (a file) is required")))
    }

    /// The file `name`, if the body has it (once).
    pub fn optional_file(&mut self, name: &str) -> Result<Option<File>, ApiError> {
        let mut files = self.files(name);
        if files.len() > 1 {
            return Err(ApiError::bad_request(format!("part `{name}` is given more than once: give it once")));
        }
        Ok(files.pop())
    }

    /// Every file `name`, in the order they came.
    pub fn files(&mut self, name: &str) -> Vec<File> {
        let (taken, kept) = std::mem::take(&mut self.files).into_iter().partition(|(n, _)| n == name);
        self.files = kept;
        taken.into_iter().map(|(_, file)| file).collect()
    }
}

/// Reads a `multipart/form-data` body whose parts are `parts` (name and kind).
pub async fn read(headers: &HeaderMap, body: Body, parts: &[(&str, Kind)]) -> Result<Received, ApiError> {
    let content_type = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let boundary = multer::parse_boundary(content_type).map_err(|_| {
        ApiError::new(
            axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Content-Type must be multipart/form-data with a boundary",
        )
    })?;
    let limits = multer::Constraints::new().size_limit(multer::SizeLimit::new().whole_stream(MAX_UPLOAD));
    let mut multipart = multer::Multipart::with_constraints(body.into_data_stream(), boundary, limits);
    let mut received = Received::default();
    let mut count = 0;
    while let Some(mut part) = multipart.next_field().await.map_err(refused)? {
        count += 1;
        if count > MAX_PARTS {
            return Err(super::too_large_because(format!("a body may have at most {MAX_PARTS} parts")));
        }
        let name = part.name().unwrap_or_default().to_owned();
        let Some((_, kind)) = parts.iter().find(|(known, _)| *known == name) else {
            return Err(ApiError::bad_request(format!("part `{name}` is not one this operation takes")));
        };
        match kind {
            Kind::File(accepted) => {
                let content_type = part.content_type().map(|m| m.essence_str().to_owned());
                if !accepted.is_empty() && !content_type.as_deref().is_some_and(|c| accepted.contains(&c)) {
                    return Err(ApiError::bad_request(format!(
                        "part `{name}`: a file of type {} is not taken here; send {}",
                        content_type.as_deref().unwrap_or("(none)"),
                        accepted.join(" or ")
                    )));
                }
                let file_name = part.file_name().map(str::to_owned);
                let mut contents = tokio::fs::File::from_std(tempfile::tempfile().map_err(stored)?);
                let mut size = 0;
                while let Some(chunk) = part.chunk().await.map_err(refused)? {
                    size += chunk.len() as u64;
                    contents.write_all(&chunk).await.map_err(stored)?;
                }
                contents.flush().await.map_err(stored)?;
                contents.seek(SeekFrom::Start(0)).await.map_err(stored)?;
                received.files.push((name, File { file_name, content_type, size, contents }));
            }
            kind => {
                let mut text = Vec::new();
                while let Some(chunk) = part.chunk().await.map_err(refused)? {
                    if text.len() + chunk.len() > MAX_FIELD {
                        return Err(super::too_large_because(format!(
                            "part `{name}` is over {MAX_FIELD} bytes (only files may be larger)"
                        )));
                    }
                    text.extend_from_slice(&chunk);
                }
                let text = String::from_utf8(text)
                    .map_err(|_| ApiError::bad_request(format!("part `{name}`: not UTF-8 text")))?;
                let value = match kind {
                    Kind::Json => serde_json::from_str(&text)
                        .map_err(|e| ApiError::bad_request(format!("part `{name}`: not JSON ({e})")))?,
                    Kind::Text(leaf) | Kind::Texts(leaf) => super::styles::read(*leaf, &text),
                    Kind::File(_) => unreachable!("matched above"),
                };
                match (kind, received.values.get_mut(&name)) {
                    (Kind::Texts(_), Some(Value::Array(items))) => items.push(value),
                    (Kind::Texts(_), None) => {
                        received.values.insert(name, Value::Array(vec![value]));
                    }
                    (_, Some(_)) => {
                        return Err(ApiError::bad_request(format!(
                            "part `{name}` is given more than once: give it once"
                        )));
                    }
                    (_, None) => {
                        received.values.insert(name, value);
                    }
                }
            }
        }
    }
    Ok(received)
}

/// What multer refused: the size limit is `413`, anything else a malformed body.
fn refused(error: multer::Error) -> ApiError {
    match error {
        multer::Error::StreamSizeExceeded { .. } | multer::Error::FieldSizeExceeded { .. } => {
            super::too_large_because(format!("a multipart body may have at most {MAX_UPLOAD} bytes"))
        }
        error => ApiError::bad_request(format!("the multipart body is malformed: {error}")),
    }
}

/// A temporary file could not be written: the server's fault.
fn stored(_: std::io::Error) -> ApiError {
    ApiError::internal()
}
