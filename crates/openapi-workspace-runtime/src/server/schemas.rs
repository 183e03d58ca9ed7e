//! The document's schemas as validators: [`SchemaSet`] compiled once, a [`Validator`] per
//! schema, and the messages a refusal gives.

use axum::http::StatusCode;
use serde_json::Value;

use super::json_tape::{Instance, RequestJson};
use super::{ApiError, json_tape};

/// The document's schemas (JSON Schema 2020-12), from which validators are compiled.
pub struct SchemaSet {
    components: std::sync::Arc<Value>,
    /// The document refuses text holding a control character (`x-refuse-control-characters`).
    refuse_controls: bool,
}

impl SchemaSet {
    /// Parses the generated `schemas.json`. It is generated, so failing here is a bug.
    pub fn parse(document: &str) -> Self {
        let document: Value = serde_json::from_str(document).expect("schemas.json is valid JSON");
        Self::of(&document)
    }

    /// The schemas of a `schemas.json` document already read (the mock engine's plan holds one).
    pub fn of(document: &Value) -> Self {
        Self {
            components: std::sync::Arc::new(document["components"].clone()),
            refuse_controls: document["x-refuse-control-characters"] == Value::Bool(true),
        }
    }

    /// Compiles a validator for `schema` (JSON text), whose `$ref`s point into the document.
    pub fn validator(&self, schema: &str) -> Validator {
        self.validator_of(serde_json::from_str(schema).expect("a generated schema is valid JSON"))
    }

    /// [`SchemaSet::validator`] of a schema already read (the mock engine's plan holds them so).
    pub fn validator_of(&self, mut root: Value) -> Validator {
        // A body that is one named schema is validated against that schema itself, not through a
        // `$ref` to it: jsonschema keeps an evaluation path through the reference for every error,
        // much of what a refused body costs (BENCHMARKS.md, "The generated handlers").
        if let Some(target) = self.referenced(&root) {
            root = target.clone();
        }
        let schema = root.clone();
        root["components"] = (*self.components).clone();
        let inner = jsonschema::options_for::<RequestJson>()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&root)
            .unwrap_or_else(|e| panic!("a generated schema compiles: {e}"));
        Validator { inner, schema, components: self.components.clone(), refuse_controls: self.refuse_controls }
    }

    /// The component schema `root` is nothing but a reference to (`{"$ref":
    /// "#/components/schemas/Name"}`), when it can stand in its place: an object with no `$id`
    /// (which would move the base its own references resolve against) and no `components`.
    fn referenced(&self, root: &Value) -> Option<&Value> {
        let fields = root.as_object().filter(|fields| fields.len() == 1)?;
        let name = fields.get("$ref")?.as_str()?.strip_prefix("#/components/schemas/")?;
        // A name with `~` or `/` escaped, or percent-encoded, is left to the reference.
        if name.contains(['~', '/', '%']) {
            return None;
        }
        let target = self.components.get("schemas")?.get(name)?;
        let target_fields = target.as_object()?;
        (!target_fields.contains_key("$id") && !target_fields.contains_key("components")).then_some(target)
    }
}

/// Checks request values against one schema.
pub struct Validator {
    pub(crate) inner: jsonschema::Validator<RequestJson>,
    /// The schema itself and the document's components: what types a form's texts (`forms`).
    pub(crate) schema: Value,
    pub(crate) components: std::sync::Arc<Value>,
    refuse_controls: bool,
}

impl Validator {
    /// `Ok` when `value` is valid; otherwise a `400` naming up to three problems, each prefixed
    /// with the field it concerns.
    pub fn check(&self, value: &Value, prefix: &str) -> Result<(), ApiError> {
        self.check_instance(Instance::Value(value), prefix)
    }

    /// [`Validator::check`] of a JSON body, read in place.
    pub fn check_body(&self, body: &json_tape::Tape<'_>) -> Result<(), ApiError> {
        self.check_instance(body.root(), "")
    }

    fn check_instance(&self, value: Instance<'_>, prefix: &str) -> Result<(), ApiError> {
        // Where the document says so (ours), no text may hold a control character (U+0000–U+001F,
        // U+007F–U+009F): JSON allows them, but no name, reference, URL or id needs one, a
        // database (PostgreSQL's text) cannot keep U+0000, and the others end up in logs, bank
        // files and pay pages. Another document's multi-line text keeps its line breaks.
        if let Some((path, found)) = self.refuse_controls.then(|| control_at(value)).flatten() {
            let path = if path.is_empty() { String::new() } else { format!("{prefix}{path}: ") };
            return Err(ApiError::bad_request(format!(
                "{path}text may not contain control characters (found U+{:04X})",
                u32::from(found)
            )));
        }
        // The common case answered without collecting errors (which allocates their paths).
        if self.inner.is_valid(value) {
            return Ok(());
        }
        // Written into the message as found, not collected and joined: a refusal is answered
        // as often as a success can be, and must not cost much more.
        use std::fmt::Write;
        const HEAD: &str = "Invalid request: ";
        let mut message = String::with_capacity(128);
        message.push_str(HEAD);
        for error in self.inner.iter_errors(value).take(3) {
            if message.len() > HEAD.len() {
                message.push_str("; ");
            }
            let path = error.instance_path().as_str().trim_start_matches('/');
            if !path.is_empty() {
                message.push_str(prefix);
                for (i, segment) in path.split('/').enumerate() {
                    message.push_str(if i == 0 { "" } else { "." });
                    message.push_str(segment);
                }
                message.push_str(": ");
            }
            let _ = write!(message, "{error}");
        }
        if message.len() == HEAD.len() { Ok(()) } else { Err(ApiError::new(StatusCode::BAD_REQUEST, message)) }
    }
}

/// Where in `value` a string (or a key) holds a control character, as a dotted path (empty at
/// the root), and the character.
fn control_at(value: Instance<'_>) -> Option<(String, char)> {
    use jsonschema::json::{Array, Node, Object};
    let control = |text: &str| text.chars().find(|c| c.is_control());
    if let Some(text) = value.as_string() {
        return control(&text).map(|found| (String::new(), found));
    }
    if let Some(items) = value.as_array() {
        return items.elements().enumerate().find_map(|(i, item)| {
            let (path, found) = control_at(item)?;
            Some((join(&i.to_string(), path), found))
        });
    }
    value.as_object()?.members().find_map(|(key, item)| match control(key) {
        Some(found) => Some((key.escape_default().to_string(), found)),
        None => {
            let (path, found) = control_at(item)?;
            Some((join(key, path), found))
        }
    })
}

fn join(head: &str, tail: String) -> String {
    if tail.is_empty() { head.to_owned() } else { format!("{head}.{tail}") }
}
