//! openapi-workspace, the generator: an OpenAPI 3.0, 3.1 or 3.2 document in, the source of a
//! workspace's types, client and server crates out (with its CLI, mock, samples and docs);
//! `cargo xtask codegen` runs it on our own document. Three stages, data flowing one way:
//! `read` (the document to one view), `model` (what the writers read), `write` (the files);
//! beside `write`, `diff` compares two versions of a document for what they do to clients.
//!
//! Everything here is a pure function of the document's text, so the output is deterministic:
//! maps are walked in document order or sorted, and formatting is `prettyplease` (with doc
//! comments as `///` lines), kept as printed: rustfmt skips the generated modules.

mod diff;
mod error;
mod model;
mod read;
mod timings;
mod write;

#[cfg(feature = "oracle")]
pub use diff::oracle::Proof;
pub use diff::{Change, Diff, Format, Level, Rule, Verdict};
pub use error::{Error, Result};
pub use read::nullable::is_null_only;
pub use read::{Note, Spec};
pub use write::docs::rendition::openapi_31;
pub use write::samples::{
    Builders, Flavour, GettingStarted, Guide, Sample, Step, WebhookKit, guide, test_file as samples_test_file,
    unsampled,
};
pub use write::workspace::files::{Checked, Options, Written, check_workspace, write_workspace};
pub use write::workspace::rustfmt::rustfmt;
pub use write::workspace::standalone::{File, STANDALONE_EDITION, Standalone, standalone};
pub use write::workspace::xtask::VERSION;
pub use write::{Config, Generated, header};

/// The changes from the document at `base` to the one at `head` (each YAML or JSON, whole or
/// split across files), each read as the generator reads one: what it cannot serve is left out
/// of both alike.
pub fn diff_files(base: &std::path::Path, head: &std::path::Path) -> Result<Diff> {
    let read = |path: &std::path::Path| -> Result<Spec> {
        let text =
            read::files::bundle(path).map_err(|e| Error::InFile { path: path.to_owned(), source: Box::new(e) })?;
        as_written(&text).map_err(|e| Error::InFile { path: path.to_owned(), source: Box::new(e) })
    };
    Ok(diff::diff(&read(base)?, &read(head)?))
}

/// A document as the diff reads it: every operation, served or not.
fn as_written(text: &str) -> Result<Spec> {
    Spec::parse_serving(text, read::Serving::AsWritten)
}

/// The changes from the document `base` to `head` (their texts).
pub fn diff_texts(base: &str, head: &str) -> Result<Diff> {
    let (base, head) = (as_written(base)?, as_written(head)?);
    Ok(diff::diff(&base, &head))
}

/// The oracle's judgement of the engine on two documents' texts: every pair of schemas the
/// diff compares, checked with values (`diff/oracle.rs`).
#[cfg(feature = "oracle")]
pub fn prove_texts(base: &str, head: &str) -> Result<Proof> {
    let (base, head) = (as_written(base)?, as_written(head)?);
    Ok(diff::oracle::prove(&base, &head))
}

/// Generates all three crates' sources from the document's YAML (or JSON) text.
pub fn generate(spec_text: &str, config: &Config) -> Result<Generated> {
    let spec = Spec::parse(spec_text)?;
    write::generate(&spec, config).map_err(|error| spec.locate(error))
}

/// progenitor's clap CLI (`Cli`, `CliCommand`, `CliConfig`) for the document, driving the
/// client crate `client_crate` (a Rust path, `payments_client`) whose `builders` the document
/// generated (`Generated::builders`).
pub fn cli(spec_text: &str, client_crate: &str, builders: &Builders, config: &Config) -> Result<String> {
    let spec = Spec::parse(spec_text)?;
    write::client::cli::cli(&spec, client_crate, builders, config).map_err(|error| spec.locate(error))
}

/// The Markdown reference (`docs/api.md`) of the document; `source` is its path from the
/// workspace root, for the header and links. Each operation shows its `samples`; the `guide`
/// ("Getting started") follows the overview.
pub fn markdown_reference(spec: &Spec, source: &str, samples: &[Sample], guide: Option<&Guide>) -> Result<String> {
    Ok(write::docs::markdown::reference(spec, source, samples, guide))
}

/// How to call each operation of the document, in Rust, with the CLI and with curl
/// ([`Sample`]), written with the generated client's `builders` (`Generated::builders`) and the
/// generated `cli` (its source) as `flavour` says.
pub fn samples(spec: &Spec, builders: &Builders, cli: Option<&str>, flavour: &Flavour) -> Result<Vec<Sample>> {
    write::samples::samples(spec, builders, cli, flavour).map_err(|error| spec.locate(error))
}

/// The mock engine's plan of the document at `path` (YAML or JSON, whole or split across files),
/// read as the generator reads it — what it cannot serve left out, each with a note — for
/// `openapi_workspace_runtime::mock::router` to serve without generating anything.
pub fn mock_plan(path: &std::path::Path) -> Result<(openapi_workspace_runtime::mock::Plan, Vec<Note>)> {
    let in_file = |e: Error| Error::InFile { path: path.to_owned(), source: Box::new(e) };
    let text = read::files::bundle(path).map_err(in_file)?;
    let (spec, (mut plan, unserved), left_out) =
        write::leave_out::leaving_out(&text, "the mock", write::mock_plan::plan).map_err(in_file)?;
    let schemas = model::json_schema::schema_document(&spec).map_err(in_file)?;
    plan.schemas = serde_json::from_str(&schemas).expect("the schema document is JSON");
    let notes = spec.notes.iter().cloned().chain(left_out).chain(unserved).collect();
    Ok((plan, notes))
}

/// What an operation answers in the generated `mock_router` until it is implemented.
#[derive(Debug, Clone, PartialEq)]
pub struct MockAnswer {
    pub operation_id: String,
    pub status: u16,
    /// A JSON body, with the JSON Schema (2020-12, the document's components beside it) it meets.
    pub json: Option<(serde_json::Value, serde_json::Value)>,
}

/// Each operation's mock answer (see `model::mock`), for checking it against the document.
pub fn mock_answers(spec_text: &str) -> Result<Vec<MockAnswer>> {
    let spec = Spec::parse(spec_text)?;
    let components = spec.raw.get("components").unwrap_or(&serde_json::Value::Null);
    let schemas: serde_json::Value =
        serde_json::from_str(&model::json_schema::schema_document(&spec)?).expect("generated JSON");
    let mut answers = Vec::new();
    for (path, item) in spec.raw.get("paths").and_then(|p| p.as_object()).into_iter().flatten() {
        for method in read::document::METHODS {
            let Some(operation) = item.get(method) else { continue };
            let Some(mock) = model::mock::mock(operation, components) else { continue };
            let json = match &mock.body {
                Some((media_type, model::mock::Body::Json(value))) => {
                    let response = model::mock::response(operation, components, mock.status);
                    let schema = response
                        .and_then(|r| r.pointer(&format!("/content/{}/schema", read::document::escape(media_type))))
                        .cloned()
                        .unwrap_or_else(|| serde_json::json!({}));
                    let mut schema = model::json_schema::to_validated_schema(&schema);
                    if let Some(object) = schema.as_object_mut() {
                        object.insert("components".into(), schemas["components"].clone());
                    }
                    Some((value.clone(), schema))
                }
                _ => None,
            };
            let operation_id = operation["operationId"].as_str().unwrap_or(path).to_string();
            answers.push(MockAnswer { operation_id, status: mock.status, json });
        }
    }
    Ok(answers)
}
