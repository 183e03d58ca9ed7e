//! `multipart/form-data` bodies, written: the parts encoded as a body that streams, files
//! included, with a boundary of its own.

use futures::StreamExt;

type Chunks = std::pin::Pin<Box<dyn futures::Stream<Item = Result<Vec<u8>, std::io::Error>> + Send>>;

/// A file to upload: its contents (in memory or streamed), name and content type.
pub struct Upload {
    file_name: Option<String>,
    content_type: Option<String>,
    contents: Chunks,
}

impl Upload {
    /// A file of these bytes.
    pub fn bytes(bytes: impl Into<Vec<u8>>) -> Self {
        let bytes = bytes.into();
        Self::stream(futures::stream::once(async move { Ok(bytes) }))
    }

    /// A file read as it is sent: a large one never needs to be in memory whole.
    pub fn stream(chunks: impl futures::Stream<Item = Result<Vec<u8>, std::io::Error>> + Send + 'static) -> Self {
        Self { file_name: None, content_type: None, contents: Box::pin(chunks) }
    }

    /// The file's name, sent as the part's `filename`.
    pub fn file_name(mut self, name: impl Into<String>) -> Self {
        self.file_name = Some(name.into());
        self
    }

    /// The file's content type (`application/octet-stream` when none is given).
    pub fn content_type(mut self, content_type: impl Into<String>) -> Self {
        self.content_type = Some(content_type.into());
        self
    }
}

impl std::fmt::Debug for Upload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upload").field("file_name", &self.file_name).field("content_type", &self.content_type).finish()
    }
}

/// One part of a body.
pub struct Part {
    name: &'static str,
    file_name: Option<String>,
    content_type: Option<String>,
    contents: Chunks,
}

impl Part {
    /// A field written as text: a string as it is, anything else as its JSON.
    pub fn text<T: serde::Serialize>(name: &'static str, value: &T) -> Self {
        let text = match serde_json::to_value(value) {
            Ok(serde_json::Value::String(text)) => text,
            Ok(value) => value.to_string(),
            Err(_) => String::new(),
        };
        Self::of(name, None, text.into_bytes())
    }

    /// A field written as JSON.
    pub fn json<T: serde::Serialize>(name: &'static str, value: &T) -> Self {
        let json = serde_json::to_vec(value).unwrap_or_default();
        Self::of(name, Some("application/json".to_owned()), json)
    }

    /// A file.
    pub fn file(name: &'static str, upload: Upload) -> Self {
        let content_type = upload.content_type.or_else(|| Some("application/octet-stream".to_owned()));
        Self { name, file_name: Some(upload.file_name.unwrap_or_default()), content_type, contents: upload.contents }
    }

    fn of(name: &'static str, content_type: Option<String>, bytes: Vec<u8>) -> Self {
        Self {
            name,
            file_name: None,
            content_type,
            contents: Box::pin(futures::stream::once(async move { Ok(bytes) })),
        }
    }
}

/// The body of `parts`, and its content type (with the boundary).
pub fn encode(parts: Vec<Part>) -> (String, reqwest::Body) {
    let boundary = boundary();
    let piece = |bytes: Vec<u8>| -> Chunks { Box::pin(futures::stream::once(async move { Ok(bytes) })) };
    let mut pieces: Vec<Chunks> = Vec::new();
    for part in parts {
        let mut head = format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{}\"", quoted(part.name));
        if let Some(file_name) = &part.file_name {
            head.push_str(&format!("; filename=\"{}\"", quoted(file_name)));
        }
        head.push_str("\r\n");
        if let Some(content_type) = &part.content_type {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        head.push_str("\r\n");
        pieces.push(piece(head.into_bytes()));
        pieces.push(part.contents);
        pieces.push(piece(b"\r\n".to_vec()));
    }
    pieces.push(piece(format!("--{boundary}--\r\n").into_bytes()));
    let body = reqwest::Body::wrap_stream(futures::stream::iter(pieces).flatten());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

/// A name in quotes, as the HTML standard writes it: `"`, CR and LF percent-encoded.
fn quoted(name: &str) -> String {
    name.replace('"', "%22").replace('\r', "%0D").replace('\n', "%0A")
}

/// A boundary no body is likely to hold: 128 bits from the standard library's randomly keyed
/// hasher, fed the time and a count.
fn boundary() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let count = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    let half = |salt: u64| {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(nanos);
        hasher.write_u64(count);
        hasher.write_u64(salt);
        hasher.finish()
    };
    format!("openapi-workspace-{:016x}{:016x}", half(1), half(2))
}
