//! How to call each operation, written from the document: the generated Rust client's builder
//! chain, the generated CLI's command line and curl, each with the document's example values
//! (a parameter's or body's `example`, else a value built from its schema, as the mock builds
//! one). They are shown beside each operation in the references (`x-codeSamples` and the
//! description in the 3.1 rendition, `docs/api.md`), and the Rust ones are written into a test
//! file too, so they are compiled, and run against a live sandbox, by `cargo test`.
//!
//! The Rust sample's types are the generated client's own: each parameter's is read from the
//! builder progenitor wrote for its operation, so a literal is written that the builder's
//! `TryInto` takes. The CLI's flags are read from the generated CLI the same way: a body whose
//! fields all have a flag is given by flags, any other by `--json-body`.

use std::collections::BTreeMap;
use std::fmt::Write;

use heck::ToSnakeCase;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::mock::{media_example, value_for};
use crate::model::security::{self, Scheme};
use crate::read::Spec;
use crate::read::document::{self, resolve, resolve_schema};
use crate::read::wire::Wire;

mod guide;
mod rust;
mod shell;
mod test_file;

pub use guide::{GettingStarted, Guide, Step, guide};
pub use rust::Builders;
pub(crate) use rust::connect;
use shell::{double_quoted, flags_by_function};
pub use test_file::test_file;

/// Where the samples call: the client crate's name and how a client is made, the CLI's binary
/// (none for a document without one), and the environment variables holding the base URL and
/// the credential.
#[derive(Debug, Clone)]
pub struct Flavour {
    /// The client's Rust path (`payments_client`), with its `Client`.
    pub client_crate: String,
    /// The models' Rust path (`payments_client::types`).
    pub types: String,
    /// An expression making a client from `base_url` and `token` (both `String`s in scope):
    /// `payments_client::with_token(&base_url, &token)`. Without one, the generated client's
    /// own `Client::new` with the `Credentials` the operation takes.
    pub connect: Option<String>,
    /// A statement each Rust sample starts with, when the client needs one before it is made
    /// (`api_client::install_crypto_provider();`).
    pub prelude: Option<String>,
    /// The CLI binary's name, when there is one.
    pub cli: Option<String>,
    /// The environment variable holding the base URL (`PAYMENTS_BASE_URL`).
    pub base_url_variable: String,
    /// The environment variable holding the token (`PAYMENTS_TOKEN`).
    pub token_variable: String,
    /// How the document's webhooks are received, when there is a kit for it: each webhook then
    /// has samples too.
    pub webhooks: Option<WebhookKit>,
}

/// Receiving the document's webhooks: a kit that checks a notification's signature and reads it
/// (`payments_client::webhooks`), and how a signature is made in a shell, for a delivery sent
/// to a receiver by hand.
#[derive(Debug, Clone)]
pub struct WebhookKit {
    /// The kit's Rust path, with `sign(secret, body)` and `verify_and_parse(secrets, body,
    /// signature)`.
    pub module: String,
    /// The header carrying the signature (`X-Service-Signature`).
    pub signature_header: String,
    /// A shell command printing the signature of `"$BODY"` with the secret's variable.
    pub sign_shell: String,
    /// The environment variable holding the endpoint's secret.
    pub secret_variable: String,
    /// The environment variable holding the receiver's URL.
    pub receiver_variable: String,
}

/// One operation's samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    pub operation_id: String,
    /// The Rust name of its client method (`create_balance`).
    pub function: String,
    /// Upper case: `POST`.
    pub method: String,
    /// The operation's path; a webhook's name.
    pub path: String,
    /// Whether this is a webhook's: how it is received, not an operation called.
    pub webhook: bool,
    /// The success status the document gives (its first).
    pub status: u16,
    /// The Rust sample as shown: statements of an async function returning a `Result` whose
    /// error is a `Box<dyn std::error::Error>`.
    pub rust: String,
    /// [`Sample::rust`] with, after each value's binding, a line the test uses to put its own
    /// value in (`let id = values.swap("id", id)?;`), and the answer returned.
    pub rust_checked: String,
    pub cli: Option<String>,
    pub curl: String,
    /// Each value the samples bind, with its example as the shell samples write it: the test
    /// replaces that text with its own value.
    pub values: Vec<(String, String)>,
}

/// The samples of every operation of `spec`, by path: `builders` are the generated client's
/// (`Generated::builders`), `cli` the generated CLI's source (formatted).
pub(crate) fn samples(spec: &Spec, builders: &Builders, cli: Option<&str>, flavour: &Flavour) -> Result<Vec<Sample>> {
    let components = spec.raw.get("components").unwrap_or(&Value::Null);
    // A document whose schemes the router cannot read has no operation it serves, nor samples.
    let schemes = security::schemes(&spec.openapi).unwrap_or_default();
    let cli = cli.map(flags_by_function);
    let mut samples = Vec::new();
    for (path, item) in spec.raw.get("paths").and_then(Value::as_object).into_iter().flatten() {
        for method in document::METHODS {
            let Some(operation) = item.get(method) else { continue };
            let Some(operation_id) = operation.get("operationId").and_then(Value::as_str) else { continue };
            // An operation of a method 3.0 lacks (`QUERY`) is kept in the view at `{path}~METHOD`.
            let marked = operation.get(crate::read::marks::METHOD).and_then(Value::as_str);
            let (method, path) = crate::model::methods::route(path, method, marked);
            let (method, path) = (crate::model::methods::on_the_wire(method), path.to_owned());
            let Some(mock) = crate::model::mock::mock(operation, components) else { continue };
            // What cannot be written (a body in another media type than JSON, a parameter the
            // builder does not take as the document names it) has no sample, and is left out.
            let builder = crate::model::operation::builder_name(operation_id);
            let Some(fields) = builders.fields.get(&builder) else { continue };
            // A command the CLI lacks has no flags: its sample gives the body as JSON.
            let cli_flags = cli.as_ref().map(|cli| {
                cli.get(crate::model::operation::method_name(operation_id).as_str()).cloned().unwrap_or_default()
            });
            let Ok(call) = Call::read(operation, components, credentials(spec, operation, &schemes)) else { continue };
            let connect = match &flavour.connect {
                Some(connect) => connect.clone(),
                None => connect(builders.takes_credentials, &call.credentials, &flavour.client_crate),
            };
            // A body the client reads as bytes (an event stream, a file) is shown by its status only.
            let response = crate::model::mock::response(operation, components, mock.status);
            let content = response.and_then(|r| r.get("content")).and_then(Value::as_object);
            let bytes = content.is_some_and(|content| {
                !content.iter().any(|(media, m)| document::is_json(media) && m.get("schema").is_some())
            });
            let written = call.write(
                operation_id,
                method,
                path,
                (mock.status, bytes),
                (fields, builders.errors.get(&builder)),
                cli_flags.as_deref(),
                flavour,
                &connect,
            );
            if let Ok(sample) = written {
                samples.push(sample);
            }
        }
    }
    if let (Some(kit), Some(webhooks)) = (&flavour.webhooks, spec.webhooks()) {
        let components = webhooks.raw.get("components").unwrap_or(&Value::Null);
        for (path, item) in webhooks.raw.get("paths").and_then(Value::as_object).into_iter().flatten() {
            let Some(operation) = item.get("post") else { continue };
            let name = path.trim_start_matches('/');
            if let Ok(sample) = webhook(name, operation, components, kit) {
                samples.push(sample);
            }
        }
    }
    Ok(samples)
}

/// The operations of `spec` (and its webhooks, when `flavour` receives them) that have no sample
/// among `samples`: what [`samples`] could not write.
pub fn unsampled(spec: &Spec, samples: &[Sample], flavour: &Flavour) -> Vec<String> {
    let operations = |document: &Value| -> Vec<String> {
        let items = document.get("paths").and_then(Value::as_object).into_iter().flat_map(|p| p.values());
        let operations = items.filter_map(Value::as_object).flat_map(|item| item.values());
        operations.filter_map(|o| o.get("operationId")?.as_str().map(str::to_owned)).collect()
    };
    let mut every = operations(&spec.raw);
    if flavour.webhooks.is_some() {
        every.extend(spec.webhooks().into_iter().flat_map(|webhooks| operations(&webhooks.raw)));
    }
    let sampled: std::collections::HashSet<&str> = samples.iter().map(|s| s.operation_id.as_str()).collect();
    every.retain(|id| !sampled.contains(id.as_str()));
    every
}

/// A webhook's samples: receiving it with the kit (Rust), and a delivery of the document's
/// example sent to a receiver by hand, signed as the service signs it (curl). The CLI calls the
/// API and receives nothing: a webhook has no CLI sample.
fn webhook(name: &str, operation: &Value, components: &Value, kit: &WebhookKit) -> Result<Sample> {
    let operation_id = operation.get("operationId").and_then(Value::as_str).unwrap_or(name).to_owned();
    let status = crate::model::mock::mock(operation, components).map_or(200, |mock| mock.status);
    let schema = operation
        .pointer("/requestBody/content/application~1json/schema")
        .ok_or_else(|| Error::Document(format!("samples: webhook {name} has no JSON body")))?;
    let mut body = value_for(schema, components);
    // The field that says which event this is says this one (a payload shared by several
    // webhooks lists them all).
    if let (Some(fields), Some(properties)) =
        (body.as_object_mut(), resolve_schema(schema, components).and_then(|s| s.get("properties")))
    {
        for (key, property) in properties.as_object().into_iter().flatten() {
            let listed = resolve_schema(property, components)
                .and_then(|p| p.get("enum"))
                .and_then(Value::as_array)
                .is_some_and(|values| values.iter().any(|v| v == name));
            if listed {
                fields.insert(key.clone(), Value::String(name.to_owned()));
            }
        }
    }
    let json = serde_json::to_string_pretty(&body).expect("JSON");
    let hashes = "#".repeat((1..).find(|n| !json.contains(&format!("\"{}", "#".repeat(*n)))).unwrap_or(1));
    let module = &kit.module;
    let rust = format!(
        "let secret = std::env::var(\"{secret}\")?;\n\
         // The raw body as received, and its {header} (made here as the service makes it).\n\
         let body = r{hashes}\"{json}\"{hashes}.as_bytes();\n\
         let signature = {module}::sign(&secret, body);\n\
         let notification = {module}::verify_and_parse(&[&secret], body, &signature)?;\n\
         println!(\"{{}} {{:#?}}\", notification.event_name, notification.event);\n",
        secret = kit.secret_variable,
        header = kit.signature_header,
    );
    // A webhook's Rust sample answers no status: what the test checks is the event it read.
    let rust_checked = format!("{rust}Ok((0, serde_json::Value::String(notification.event_name)))\n");
    let mut lines = vec![
        format!("BODY='{}'", json.replace('\'', r"'\''")),
        format!("curl -X POST \"${}\"", kit.receiver_variable),
        "-H \"Content-Type: application/json\"".to_owned(),
        format!("-H \"{}: $({})\"", kit.signature_header, kit.sign_shell),
    ];
    for parameter in operation.get("parameters").and_then(Value::as_array).into_iter().flatten() {
        let Some(parameter) = resolve(parameter, components, "parameters") else { continue };
        let header = parameter.get("name").and_then(Value::as_str).unwrap_or_default();
        if parameter.get("in").and_then(Value::as_str) != Some("header")
            || header.eq_ignore_ascii_case(&kit.signature_header)
        {
            continue;
        }
        let value = example(parameter, components);
        lines.push(format!("-H \"{}\"", double_quoted(&format!("{header}: {}", plain(&value)))));
    }
    lines.push("-d \"$BODY\"".to_owned());
    let curl = format!("{}\n{}", lines[0], lines[1..].join(" \\\n  "));
    Ok(Sample {
        function: operation_id.to_snake_case(),
        operation_id,
        method: "POST".into(),
        path: name.to_owned(),
        webhook: true,
        status,
        rust,
        rust_checked,
        cli: None,
        curl,
        values: Vec::new(),
    })
}

/// A parameter as the generators read it (its place, style and explode), with its example.
struct Parameter {
    wire: Wire,
    example: Value,
}

/// The JSON body and its example.
struct Body {
    media_type: String,
    example: Value,
}

/// What a sample sends: the required parameters (and those with an example of their own), the
/// body, and the credentials: the schemes of the operation's first security requirement.
struct Call {
    parameters: Vec<Parameter>,
    body: Option<Body>,
    credentials: Vec<Scheme>,
}

impl Call {
    fn read(operation: &Value, components: &Value, credentials: Vec<Scheme>) -> Result<Self> {
        let mut parameters = Vec::new();
        for parameter in operation.get("parameters").and_then(Value::as_array).into_iter().flatten() {
            let Some(parameter) = resolve(parameter, components, "parameters") else { continue };
            // The required ones, and those the document gives an example of their own (an
            // optional filter's schema example, such as a currency code's, is no reason to show it).
            let required = parameter.get("required") == Some(&Value::Bool(true));
            if !required && parameter.get("example").is_none() && parameter.get("examples").is_none() {
                continue;
            }
            let wire = crate::read::wire::of(parameter, components).map_err(|why| Error::Document(why.to_string()))?;
            parameters.push(Parameter { example: example(parameter, components), wire });
        }
        let body = operation.get("requestBody").and_then(|body| resolve(body, components, "requestBodies"));
        let json = body.and_then(|b| b.get("content")?.as_object()?.iter().find(|(media, _)| document::is_json(media)));
        let body = match json {
            Some((media, content)) => Some(Body { media_type: media.clone(), example: example(content, components) }),
            None if body.is_some() => return Err(Error::Document("samples are written for JSON bodies only".into())),
            None => None,
        };
        Ok(Self { parameters, body, credentials })
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        operation_id: &str,
        method: String,
        path: String,
        (status, bytes): (u16, bool),
        (fields, errors): (&BTreeMap<String, String>, Option<&crate::write::client::status_errors::Matched>),
        cli_flags: Option<&[String]>,
        flavour: &Flavour,
        connect: &str,
    ) -> Result<Sample> {
        let function = crate::model::operation::method_name(operation_id);
        let (rust, rust_checked) = self.rust(&function, fields, flavour, connect, bytes, errors)?;
        let cli = match (cli_flags, &flavour.cli) {
            (Some(flags), Some(binary)) => Some(self.cli(binary, operation_id, flags)),
            _ => None,
        };
        let body = self.body.iter().flat_map(|body| body.example.as_object().into_iter().flatten());
        let values = self
            .parameters
            .iter()
            .map(|p| (p.wire.name.clone(), plain(&p.example)))
            .chain(body.map(|(key, value)| (format!("body.{key}"), plain(value))))
            .collect();
        Ok(Sample {
            operation_id: operation_id.to_owned(),
            function,
            curl: self.curl(&method, &path, flavour),
            method,
            path,
            webhook: false,
            status,
            rust,
            rust_checked,
            cli,
            values,
        })
    }
}

/// A parameter's or media type's example: its own (`example`, the first of `examples`), else
/// a value of its schema as the mock builds one (the schema's `example` first).
fn example(item: &Value, components: &Value) -> Value {
    let schema = item.get("schema").cloned().unwrap_or_default();
    media_example(item, components).unwrap_or_else(|| value_for(&schema, components))
}

/// The schemes of the operation's first security requirement that names any (the operation's
/// own `security`, or the document's), as the router reads them.
fn credentials(spec: &Spec, operation: &Value, schemes: &[Scheme]) -> Vec<Scheme> {
    let requirements = operation.get("security").or_else(|| spec.raw.get("security")).and_then(Value::as_array);
    let names = requirements.into_iter().flatten().find_map(|r| r.as_object().filter(|r| !r.is_empty()));
    let named = names.into_iter().flat_map(|names| names.keys());
    let mut found: Vec<Scheme> =
        named.filter_map(|name| schemes.iter().find(|scheme| scheme.name == *name).cloned()).collect();
    // The router matches a header's name lowercased; a sample writes it as the document does.
    for scheme in &mut found {
        let written = spec.raw.pointer(&format!("/components/securitySchemes/{}/name", document::escape(&scheme.name)));
        if let (security::Kind::ApiKey(security::Place::Header(name)), Some(Value::String(written))) =
            (&mut scheme.kind, written)
        {
            name.clone_from(written);
        }
    }
    found
}

/// A value as it is written in a URL, a flag or a header: a string as it is, anything else as
/// JSON.
fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The samples as Markdown: each labelled, in a fenced block (the references' descriptions and
/// `docs/api.md`).
pub(crate) fn markdown(sample: &Sample) -> String {
    let mut out = format!("**Rust**\n\n```rust\n{}```\n\n", sample.rust);
    if let Some(cli) = &sample.cli {
        let _ = write!(out, "**CLI**\n\n```sh\n{cli}\n```\n\n");
    }
    let _ = write!(out, "**curl**\n\n```sh\n{}\n```\n", sample.curl);
    out
}

/// The samples as an operation's `x-codeSamples` (read by Redoc, Scalar and others).
pub(crate) fn code_samples(sample: &Sample) -> Value {
    let mut samples = vec![serde_json::json!({ "lang": "Rust", "label": "Rust", "source": sample.rust })];
    if let Some(cli) = &sample.cli {
        samples.push(serde_json::json!({ "lang": "Shell", "label": "CLI", "source": cli }));
    }
    samples.push(serde_json::json!({ "lang": "Shell", "label": "curl", "source": sample.curl }));
    Value::Array(samples)
}
