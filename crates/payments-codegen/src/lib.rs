//! The generator behind `cargo xtask codegen`: one OpenAPI 3.0.3 document in, the source of the
//! types, client and server crates out.
//!
//! Everything here is a pure function of the document's text, so the output is deterministic:
//! maps are walked in document order or sorted, and formatting is `prettyplease` (with doc
//! comments as `///` lines; `xtask` then applies the workspace's rustfmt style).

mod client;
mod credentials;
mod doc_lines;
mod events;
mod items;
mod json_schema;
mod markdown;
mod methods;
mod multipart;
mod normalise;
mod nullable;
mod openapi31;
mod openapi32;
mod rendition;
mod repair;
mod samples;
mod server;
mod spec;
mod standalone;
mod styles;
mod write;

pub use nullable::is_null_only;
pub use openapi31::Note;
pub use rendition::openapi_31;
pub use samples::{
    Flavour, GettingStarted, Guide, Sample, Step, WebhookKit, guide, test_file as samples_test_file, unsampled,
};
pub use spec::Spec;
pub use standalone::{File, STANDALONE_EDITION, Standalone, standalone};
pub use write::{Written, rustfmt, write_workspace};

/// Where the generated code finds its neighbours. The real crates and the snapshot samples
/// differ only here.
#[derive(Debug, Clone)]
pub struct Config {
    /// Rust path of the generated models, as seen from the client and server code
    /// (`payments_types` for the real crates).
    pub types_path: String,
    /// Rust path of the hand-written server runtime, as seen from the server code.
    pub server_runtime_path: String,
    /// How the header names the document the code came from.
    pub source: String,
}

impl Config {
    /// For this workspace's crates: client and server use the `payments-types` crate, and the
    /// server's hand-written runtime is its own `runtime` module.
    pub fn workspace(source: &str) -> Self {
        Self {
            types_path: "payments_types".into(),
            server_runtime_path: "crate::runtime".into(),
            source: source.into(),
        }
    }

    /// For a self-contained module tree where `types`, `client` and `server` are sibling modules
    /// (the snapshot samples): the server's runtime comes from the `payments-server` crate.
    pub fn sibling_modules(source: &str) -> Self {
        Self {
            types_path: "super::types".into(),
            server_runtime_path: "payments_server::runtime".into(),
            source: source.into(),
        }
    }
}

/// The generated files' contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub types: String,
    pub client: String,
    pub server: String,
    /// The document's schemas as JSON Schema (2020-12), which the server validates requests
    /// against; `server` includes it as `schemas.json`.
    pub server_schemas: String,
    /// Crates the client's code uses beyond progenitor's runtime (see `client::Models::uses`).
    pub client_uses: Vec<&'static str>,
    /// What reading the document left out or approximated, with its JSON pointer.
    pub notes: Vec<Note>,
}

/// Why the generator cannot write a document's code. Printed with its sources (the library's
/// or the system's error) as `anyhow`'s alternate form does.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// What the document has at `at` (a JSON pointer, or the document's name and one) that the
    /// generator cannot read or write, and why.
    #[error("{at}: {why}")]
    At { at: String, why: String },
    /// The document as a whole (not YAML, not an object, not an OpenAPI version the generator
    /// reads, or nothing to take a sample of).
    #[error("{0}")]
    Document(String),
    /// A library the generator builds on refused the document (progenitor, typify, utoipa).
    #[error("{what}")]
    Library {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Code the generator made, or was given to build on, that does not parse: the generator's
    /// fault, not the document's.
    #[error("{what} does not parse")]
    Unparsable {
        what: String,
        #[source]
        source: syn::Error,
    },
    /// A file that cannot be read or written, or a program (rustfmt) that cannot be run.
    #[error("{}", path.display())]
    Io {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// What the document in the file `path` has wrong.
    #[error("{}", path.display())]
    InFile {
        path: std::path::PathBuf,
        #[source]
        source: Box<Error>,
    },
    /// rustfmt refused generated code: what it said.
    #[error("rustfmt refused generated code:\n{0}")]
    Rustfmt(String),
}

impl Error {
    /// The error and each source under it, `: `-separated: what a person reads of it.
    pub fn chain(&self) -> String {
        let mut text = self.to_string();
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            text.push_str(": ");
            text.push_str(&cause.to_string());
            source = cause.source();
        }
        text
    }

    pub(crate) fn at(at: impl std::fmt::Display, why: impl Into<String>) -> Self {
        Self::At { at: at.to_string(), why: why.into() }
    }

    pub(crate) fn library(
        what: impl Into<String>,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::Library { what: what.into(), source: source.into() }
    }

    pub(crate) fn unparsable(what: impl Into<String>, source: syn::Error) -> Self {
        Self::Unparsable { what: what.into(), source }
    }

    pub(crate) fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> Self {
        Self::Io { path: path.into(), source }
    }

    /// The error with `rewrite` applied to the pointers it names (where they are in the document
    /// as written, not in the generator's view of it).
    pub(crate) fn relocated(self, rewrite: impl Fn(String) -> String) -> Self {
        match self {
            Self::At { at, why } => Self::At { at: rewrite(at), why: rewrite(why) },
            Self::Document(why) => Self::Document(rewrite(why)),
            other => other,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Returns an [`Error`]: `bail!("…", args)` one of the whole document, `bail!(at, "…", args)`
/// one at the pointer `at`.
macro_rules! bail {
    ($why:literal $(, $arg:expr)* $(,)?) => { return Err($crate::Error::Document(format!($why $(, $arg)*))) };
    ($at:expr, $why:literal $(, $arg:expr)* $(,)?) => { return Err($crate::Error::at($at, format!($why $(, $arg)*))) };
}
pub(crate) use bail;

/// Generates all three crates' sources from the document's YAML (or JSON) text.
pub fn generate(spec_text: &str, config: &Config) -> Result<Generated> {
    let spec = Spec::parse(spec_text)?;
    generate_from(&spec, config).map_err(|error| spec.locate(error))
}

pub(crate) fn generate_from(spec: &Spec, config: &Config) -> Result<Generated> {
    let models = client::generate(spec, config)?;
    let mut server = server::generate(spec, &models.type_names, config, server::Surface::Api)?;
    if let Some(webhooks) = &spec.webhooks {
        // One module deeper: a path relative to the server's module gains a `super`.
        let types_path = match config.types_path.strip_prefix("super::") {
            Some(_) => format!("super::{}", config.types_path),
            None => config.types_path.clone(),
        };
        let receiver = server::generate(
            webhooks,
            &models.type_names,
            &Config { types_path, ..config.clone() },
            server::Surface::Receiver,
        )?;
        server.extend(quote::quote! {
            /// The receiver of the document's webhooks: [`receiver::Api`] and [`receiver::router`].
            pub mod receiver {
                #receiver
            }
        });
    }
    Ok(Generated {
        types: format_file(config, models.types)?,
        // progenitor's usage examples are `ignore` doctests; as `text` they read the same and
        // don't show up as ignored tests in every run.
        client: crate::methods::client_docs(spec, &format_file(config, models.client)?.replace("```ignore", "```text")),
        server: format_file(config, server)?,
        server_schemas: json_schema::schema_document(spec)?,
        client_uses: models.uses,
        notes: spec.notes.clone(),
    })
}

/// progenitor's clap CLI (`Cli`, `CliCommand`, `CliConfig`) for the document, driving the
/// client crate `client_crate` (a Rust path, `payments_client`).
pub fn cli(spec_text: &str, client_crate: &str, config: &Config) -> Result<String> {
    let spec = Spec::parse(spec_text)?;
    format_file(config, client::cli(&spec, client_crate).map_err(|error| spec.locate(error))?)
}

/// The Markdown reference (`docs/api.md`) of the document; `source` is its path from the
/// workspace root, for the header and links. Each operation shows its `samples`; the `guide`
/// ("Getting started") follows the overview.
pub fn markdown_reference(spec: &Spec, source: &str, samples: &[Sample], guide: Option<&Guide>) -> Result<String> {
    Ok(markdown::reference(spec, source, samples, guide))
}

/// How to call each operation of the document, in Rust, with the CLI and with curl
/// ([`Sample`]), written with the generated `client` and `cli` (their source) as `flavour` says.
pub fn samples(spec: &Spec, client: &str, cli: Option<&str>, flavour: &Flavour) -> Result<Vec<Sample>> {
    samples::samples(spec, client, cli, flavour).map_err(|error| spec.locate(error))
}

/// What an operation answers in the generated `mock_router` until it is implemented.
#[derive(Debug, Clone, PartialEq)]
pub struct MockAnswer {
    pub operation_id: String,
    pub status: u16,
    /// A JSON body, with the JSON Schema (2020-12, the document's components beside it) it meets.
    pub json: Option<(serde_json::Value, serde_json::Value)>,
}

/// Each operation's mock answer (see `server::mock`), for checking it against the document.
pub fn mock_answers(spec_text: &str) -> Result<Vec<MockAnswer>> {
    let spec = Spec::parse(spec_text)?;
    let components = spec.raw.get("components").cloned().unwrap_or_default();
    let schemas: serde_json::Value =
        serde_json::from_str(&json_schema::schema_document(&spec)?).expect("generated JSON");
    let mut answers = Vec::new();
    for (path, item) in spec.raw.get("paths").and_then(|p| p.as_object()).into_iter().flatten() {
        for method in normalise::METHODS {
            let Some(operation) = item.get(method) else { continue };
            let Some(mock) = server::mock::mock(operation, &components) else { continue };
            let json = match &mock.body {
                Some((media_type, server::mock::Body::Json(value))) => {
                    let response = server::mock::response(operation, &components, mock.status);
                    let schema = response
                        .and_then(|r| r.pointer(&format!("/content/{}/schema", normalise::escape(media_type))))
                        .cloned()
                        .unwrap_or_else(|| serde_json::json!({}));
                    let mut schema = json_schema::to_json_schema(&schema);
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

/// The header every generated Rust file starts with.
pub fn header(config: &Config) -> String {
    format!(
        "// @generated by `cargo xtask codegen` from {}.\n// Do not edit by hand: change the document and run `cargo xtask codegen`.\n\n",
        config.source
    )
}

fn format_file(config: &Config, tokens: proc_macro2::TokenStream) -> Result<String> {
    let mut file: syn::File = syn::parse2(tokens).map_err(|e| Error::unparsable("generated code", e))?;
    doc_lines::split_doc_lines(&mut file);
    Ok(format!("{}{}", header(config), prettyplease::unparse(&file)))
}
