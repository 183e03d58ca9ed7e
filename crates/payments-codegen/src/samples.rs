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

use heck::{ToKebabCase, ToSnakeCase, ToUpperCamelCase};
use serde_json::Value;

use crate::normalise::{self, resolve, resolve_schema};
use crate::spec::Spec;
use crate::{Error, Result};

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

/// The samples of every operation of `spec`, by path. `client` and `cli` are the
/// generated client's and CLI's source (formatted).
pub fn samples(spec: &Spec, client: &str, cli: Option<&str>, flavour: &Flavour) -> Result<Vec<Sample>> {
    let builders = builders(client)?;
    let components = spec.raw.get("components").cloned().unwrap_or_default();
    let mut samples = Vec::new();
    for (path, item) in spec.raw.get("paths").and_then(Value::as_object).into_iter().flatten() {
        for method in normalise::METHODS {
            let Some(operation) = item.get(method) else { continue };
            let Some(operation_id) = operation.get("operationId").and_then(Value::as_str) else { continue };
            // An operation of a method 3.0 lacks (`QUERY`) is kept in the view at `{path}~METHOD`.
            let marked = operation.get(crate::methods::EXTENSION).and_then(Value::as_str);
            let (method, path) = crate::methods::route(path, method, marked);
            let (method, path) = (crate::methods::on_the_wire(method), path.to_owned());
            let Some(mock) = crate::server::mock::mock(operation, &components) else { continue };
            // What cannot be written (a body in another media type than JSON, a parameter the
            // builder does not take as the document names it) has no sample, and is left out.
            let Some(fields) = builders.get(&operation_id.to_upper_camel_case()) else { continue };
            let cli_flags = cli.map(|cli| flags(cli, &operation_id.to_snake_case()));
            let Ok(call) = Call::read(spec, operation, &components) else { continue };
            let connect = match &flavour.connect {
                Some(connect) => connect.clone(),
                None => connect(spec, operation, &components, &flavour.client_crate),
            };
            // A body the client reads as bytes (an event stream, a file) is shown by its status only.
            let response = crate::server::mock::response(operation, &components, mock.status);
            let content = response.and_then(|r| r.get("content")).and_then(Value::as_object);
            let bytes = content.is_some_and(|content| {
                !content.iter().any(|(media, m)| normalise::is_json(media) && m.get("schema").is_some())
            });
            let written = call.write(
                operation_id,
                method,
                path,
                (mock.status, bytes),
                fields,
                cli_flags.as_deref(),
                flavour,
                &connect,
            );
            if let Ok(sample) = written {
                samples.push(sample);
            }
        }
    }
    if let (Some(kit), Some(webhooks)) = (&flavour.webhooks, &spec.webhooks) {
        let components = webhooks.raw.get("components").cloned().unwrap_or_default();
        for (path, item) in webhooks.raw.get("paths").and_then(Value::as_object).into_iter().flatten() {
            let Some(operation) = item.get("post") else { continue };
            let name = path.trim_start_matches('/');
            if let Ok(sample) = webhook(name, operation, &components, kit) {
                samples.push(sample);
            }
        }
    }
    Ok(samples)
}

/// A webhook's samples: receiving it with the kit (Rust), and a delivery of the document's
/// example sent to a receiver by hand, signed as the service signs it (curl). The CLI calls the
/// API and receives nothing: a webhook has no CLI sample.
fn webhook(name: &str, operation: &Value, components: &Value, kit: &WebhookKit) -> Result<Sample> {
    let operation_id = operation.get("operationId").and_then(Value::as_str).unwrap_or(name).to_owned();
    let status = crate::server::mock::mock(operation, components).map_or(200, |mock| mock.status);
    let schema = operation
        .pointer("/requestBody/content/application~1json/schema")
        .ok_or_else(|| Error(format!("samples: webhook {name} has no JSON body")))?;
    let mut body = crate::server::mock::value_for(schema, components);
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
        let schema = parameter.get("schema").cloned().unwrap_or_default();
        let value =
            own_example(parameter, components).unwrap_or_else(|| crate::server::mock::value_for(&schema, components));
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

/// A parameter or the body, with its example.
struct Bound {
    name: String,
    place: Place,
    example: Value,
    /// The parameter's `style` and `explode`, as the document gives them.
    style: Option<String>,
    explode: Option<bool>,
}

#[derive(Clone, Copy, PartialEq)]
enum Place {
    Path,
    Query,
    Header,
    Cookie,
    Body,
}

/// What a sample sends: the required parameters (and those with an example of their own), the
/// body, and the credential.
struct Call {
    values: Vec<Bound>,
    /// The body's media type, when it has one.
    media_type: Option<String>,
    /// The schemes of the operation's first security requirement, all sent.
    credentials: Vec<Credential>,
}

/// How the operation's credential is sent.
enum Credential {
    Bearer,
    Basic,
    ApiKey { place: Place, name: String },
}

impl Call {
    fn read(spec: &Spec, operation: &Value, components: &Value) -> Result<Self> {
        let mut values = Vec::new();
        for parameter in operation.get("parameters").and_then(Value::as_array).into_iter().flatten() {
            let Some(parameter) = resolve(parameter, components, "parameters") else { continue };
            let name = parameter.get("name").and_then(Value::as_str).unwrap_or_default().to_owned();
            let place = match parameter.get("in").and_then(Value::as_str) {
                Some("path") => Place::Path,
                Some("query") => Place::Query,
                Some("header") => Place::Header,
                Some("cookie") => Place::Cookie,
                _ => continue,
            };
            // The required ones, and those the document gives an example of their own (an
            // optional filter's schema example, such as a currency code's, is no reason to show it).
            let required = parameter.get("required") == Some(&Value::Bool(true));
            if !required && parameter.get("example").is_none() && parameter.get("examples").is_none() {
                continue;
            }
            let own = own_example(parameter, components);
            let schema = parameter.get("schema").cloned().unwrap_or_default();
            let example = own.unwrap_or_else(|| crate::server::mock::value_for(&schema, components));
            let style = parameter.get("style").and_then(Value::as_str).map(str::to_owned);
            let explode = parameter.get("explode").and_then(Value::as_bool);
            values.push(Bound { name, place, example, style, explode });
        }
        let body = operation.get("requestBody").and_then(|body| resolve(body, components, "requestBodies"));
        let mut media_type = None;
        if let Some((media, content)) =
            body.and_then(|b| b.get("content")?.as_object()?.iter().find(|(media, _)| normalise::is_json(media)))
        {
            let schema = content.get("schema").cloned().unwrap_or_default();
            let example = own_example(content, components)
                .or_else(|| resolve_schema(&schema, components).and_then(|s| s.get("example")).cloned())
                .unwrap_or_else(|| crate::server::mock::value_for(&schema, components));
            values.push(Bound { name: "body".into(), place: Place::Body, example, style: None, explode: None });
            media_type = Some(media.clone());
        } else if body.is_some() {
            return Err(Error("samples are written for JSON bodies only".into()));
        }
        Ok(Self { values, media_type, credentials: credentials(spec, operation, components) })
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &self,
        operation_id: &str,
        method: String,
        path: String,
        (status, bytes): (u16, bool),
        fields: &BTreeMap<String, String>,
        cli_flags: Option<&[String]>,
        flavour: &Flavour,
        connect: &str,
    ) -> Result<Sample> {
        let function = operation_id.to_snake_case();
        let (rust, rust_checked) = self.rust(&function, fields, flavour, connect, bytes)?;
        let cli = match (cli_flags, &flavour.cli) {
            (Some(flags), Some(binary)) => Some(self.cli(binary, operation_id, flags)),
            _ => None,
        };
        let values = self
            .values
            .iter()
            .filter(|v| v.place != Place::Body)
            .map(|v| (v.name.clone(), plain(&v.example)))
            .chain(self.values.iter().filter(|v| v.place == Place::Body).flat_map(|v| {
                v.example.as_object().into_iter().flatten().map(|(key, value)| (format!("body.{key}"), plain(value)))
            }))
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

    /// The Rust sample, and the same with the test's lines.
    fn rust(
        &self,
        function: &str,
        fields: &BTreeMap<String, String>,
        flavour: &Flavour,
        connect: &str,
        bytes: bool,
    ) -> Result<(String, String)> {
        let types = &flavour.types;
        let mut shown = String::new();
        let mut checked = String::new();
        let mut line = |text: &str, test: Option<String>| {
            shown.push_str(text);
            shown.push('\n');
            checked.push_str(text);
            checked.push('\n');
            if let Some(test) = test {
                checked.push_str(&test);
                checked.push('\n');
            }
        };
        let environment = if connect.contains("token") {
            format!(
                "let (base_url, token) = (std::env::var(\"{}\")?, std::env::var(\"{}\")?);",
                flavour.base_url_variable, flavour.token_variable
            )
        } else {
            format!("let base_url = std::env::var(\"{}\")?;", flavour.base_url_variable)
        };
        line(&environment, None);
        line(&format!("let client = {connect};"), None);
        let mut chain = format!("let answer = client.{function}()");
        for value in &self.values {
            // progenitor tells apart parameters of one name in two places by the place's name.
            let place = match value.place {
                Place::Path => "path",
                Place::Query => "query",
                Place::Header => "header",
                Place::Cookie => "cookie",
                Place::Body => "body",
            };
            let placed = format!("{}_{place}", rust_name(&value.name));
            let field = if fields.contains_key(&placed) { placed } else { rust_name(&value.name) };
            let ty = fields.get(&field).ok_or_else(|| {
                Error(format!("samples: the client's builder for {function} has no `{field}` (of {})", value.name))
            })?;
            let (binding, literal) = if value.place == Place::Body {
                let model = ty.replace("types::builder::", &format!("{types}::"));
                let json = indented(&value.example);
                ("body".to_owned(), format!("serde_json::from_value::<{model}>(serde_json::json!({json}))?"))
            } else {
                (field.clone(), literal(ty, &value.example, types))
            };
            // A string literal is a `&str`, which the test's value (owned) cannot be: it gets a
            // `String`, which the builders take as well.
            let test = if literal.starts_with('"') && literal.ends_with('"') {
                format!("let {binding} = values.text({:?}, {binding});", value.name)
            } else {
                format!("let {binding} = values.swap({:?}, {binding})?;", value.name)
            };
            line(&format!("let {binding} = {literal};"), Some(test));
            let _ = write!(chain, ".{field}({binding})");
        }
        chain.push_str(".send().await?;");
        line(&chain, None);
        if bytes {
            line("println!(\"{}\", answer.status());", None);
            checked.push_str("Ok((answer.status().as_u16(), serde_json::Value::Null))\n");
        } else {
            line("println!(\"{} {:#?}\", answer.status(), *answer);", None);
            checked.push_str("Ok((answer.status().as_u16(), serde_json::to_value(answer.into_inner())?))\n");
        }
        Ok((shown, checked))
    }

    fn cli(&self, binary: &str, operation_id: &str, flags: &[String]) -> String {
        let mut words = vec![format!("{binary} {}", operation_id.to_kebab_case())];
        for value in self.values.iter().filter(|v| v.place != Place::Body) {
            words.push(format!("--{} {}", value.name.to_kebab_case(), shell_word(&plain(&value.example))));
        }
        let mut heredoc = None;
        if let Some(body) = self.values.iter().find(|v| v.place == Place::Body) {
            let fields = body.example.as_object();
            // By flags when every field is a scalar with a flag of its own; by a JSON body otherwise.
            let by_flags = fields.is_some_and(|fields| {
                fields.iter().all(|(key, value)| {
                    !matches!(value, Value::Object(_) | Value::Array(_) | Value::Null)
                        && flags.iter().any(|flag| *flag == key.to_kebab_case())
                })
            });
            match fields {
                Some(fields) if by_flags => {
                    for (key, value) in fields {
                        words.push(format!("--{} {}", key.to_kebab_case(), shell_word(&plain(value))));
                    }
                }
                _ => {
                    words.push("--json-body /dev/stdin <<'JSON'".to_owned());
                    heredoc = Some(serde_json::to_string_pretty(&body.example).expect("JSON"));
                }
            }
        }
        // A flag a line once the command is longer than a line.
        let one_line = words.join(" ");
        let mut out = if one_line.len() <= 80 { one_line } else { words.join(" \\\n  ") };
        if let Some(json) = heredoc {
            let _ = write!(out, "\n{json}\nJSON");
        }
        out
    }

    fn curl(&self, method: &str, path: &str, flavour: &Flavour) -> String {
        let mut target = path.to_owned();
        let mut query = Vec::new();
        let mut headers = Vec::new();
        let mut cookies = Vec::new();
        for value in &self.values {
            let styled = Styled::of(value);
            match value.place {
                Place::Path => target = target.replace(&format!("{{{}}}", value.name), &styled.path()),
                Place::Query => query.extend(styled.query()),
                Place::Header => headers.push(double_quoted(&format!("{}: {}", value.name, styled.simple(false)))),
                Place::Cookie => cookies.extend(styled.query()),
                Place::Body => {}
            }
        }
        let token = format!("${}", flavour.token_variable);
        let mut basic = false;
        for credential in &self.credentials {
            match credential {
                Credential::Bearer => headers.insert(0, format!("Authorization: Bearer {token}")),
                Credential::Basic => basic = true,
                Credential::ApiKey { place: Place::Query, name } => query.push(format!("{}={token}", encode(name))),
                Credential::ApiKey { place: Place::Cookie, name } => cookies.push(format!("{name}={token}")),
                Credential::ApiKey { name, .. } => headers.insert(0, format!("{}: {token}", double_quoted(name))),
            }
        }
        if !query.is_empty() {
            target = format!("{target}?{}", query.join("&"));
        }
        let mut lines = vec![match method {
            "GET" => format!("curl \"${}{target}\"", flavour.base_url_variable),
            _ => format!("curl -X {method} \"${}{target}\"", flavour.base_url_variable),
        }];
        if basic {
            lines.push(format!("-u \"{token}\""));
        }
        for header in headers {
            lines.push(format!("-H \"{header}\""));
        }
        if !cookies.is_empty() {
            lines.push(format!("-b \"{}\"", cookies.join("; ")));
        }
        if let Some(body) = self.values.iter().find(|v| v.place == Place::Body) {
            lines.push(format!("-H \"Content-Type: {}\"", self.media_type.as_deref().unwrap_or("application/json")));
            let json = serde_json::to_string(&body.example).expect("JSON");
            lines.push(format!("-d '{}'", json.replace('\'', r"'\''")));
        }
        lines.join(" \\\n  ")
    }
}

/// A parameter's value as the wire carries it in its place and style (the document's table of
/// `style` and `explode`), percent-encoded where it goes into a URL.
struct Styled<'a> {
    name: &'a str,
    style: &'a str,
    explode: bool,
    value: &'a Value,
}

impl<'a> Styled<'a> {
    fn of(bound: &'a Bound) -> Self {
        let default = match bound.place {
            Place::Path | Place::Header => "simple",
            _ => "form",
        };
        let style = bound.style.as_deref().unwrap_or(default);
        Styled { name: &bound.name, style, explode: bound.explode.unwrap_or(style == "form"), value: &bound.example }
    }

    /// The value's parts: items of an array, `key, value` pairs of an object (encoded).
    fn parts(&self) -> Vec<(Option<String>, String)> {
        match self.value {
            Value::Array(items) => items.iter().map(|item| (None, encode(&plain(item)))).collect(),
            Value::Object(fields) => fields.iter().map(|(k, v)| (Some(encode(k)), encode(&plain(v)))).collect(),
            other => vec![(None, encode(&plain(other)))],
        }
    }

    /// `simple` (a path segment or, unencoded, a header): `a,b`; `k,v,k2,v2` or, exploded, `k=v,k2=v2`.
    fn simple(&self, encoded: bool) -> String {
        let joined = self.joined(",", ",", "=");
        if encoded { joined } else { percent_decoded(&joined) }
    }

    fn joined(&self, between: &str, pair: &str, exploded_pair: &str) -> String {
        self.parts()
            .into_iter()
            .map(|(key, value)| match key {
                Some(key) if self.explode => format!("{key}{exploded_pair}{value}"),
                Some(key) => format!("{key}{pair}{value}"),
                None => value,
            })
            .collect::<Vec<_>>()
            .join(between)
    }

    fn path(&self) -> String {
        let scalar = !matches!(self.value, Value::Array(_) | Value::Object(_));
        match self.style {
            "label" if self.explode => format!(".{}", self.joined(".", ",", "=")),
            "label" => format!(".{}", self.joined(",", ",", "=")),
            "matrix" if scalar => format!(";{}={}", self.name, self.simple(true)),
            "matrix" if self.explode && self.value.is_object() => format!(";{}", self.joined(";", ",", "=")),
            "matrix" if self.explode => {
                self.parts().into_iter().map(|(_, v)| format!(";{}={v}", self.name)).collect::<String>()
            }
            "matrix" => format!(";{}={}", self.name, self.joined(",", ",", "=")),
            _ => self.simple(true),
        }
    }

    /// The `name=value` pairs of a query string (or a cookie).
    fn query(&self) -> Vec<String> {
        let name = encode(self.name);
        let delimiter = match self.style {
            "spaceDelimited" => "%20",
            "pipeDelimited" => "|",
            _ => ",",
        };
        match (self.style, self.value) {
            ("deepObject", Value::Object(_)) => {
                self.parts().into_iter().map(|(k, v)| format!("{name}%5B{}%5D={v}", k.unwrap_or_default())).collect()
            }
            (_, Value::Array(_)) if self.explode => {
                self.parts().into_iter().map(|(_, v)| format!("{name}={v}")).collect()
            }
            (_, Value::Object(_)) if self.explode => {
                self.parts().into_iter().map(|(k, v)| format!("{}={v}", k.unwrap_or_default())).collect()
            }
            (_, Value::Array(_) | Value::Object(_)) => vec![format!("{name}={}", self.joined(delimiter, ",", "="))],
            _ => vec![format!("{name}={}", self.simple(true))],
        }
    }
}

/// `text` with its percent-encoding undone (a header carries the value as it is).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `value` as JSON indented by four spaces, as Rust is.
fn indented(value: &Value) -> String {
    use serde::Serialize;
    let mut out = Vec::new();
    let mut serializer =
        serde_json::Serializer::with_formatter(&mut out, serde_json::ser::PrettyFormatter::with_indent(b"    "));
    value.serialize(&mut serializer).expect("JSON");
    String::from_utf8(out).expect("JSON is UTF-8")
}

/// A parameter's or media type's own example: `example`, the first of `examples`, or its
/// schema's `example`.
fn own_example(item: &Value, components: &Value) -> Option<Value> {
    if let Some(example) = item.get("example") {
        return Some(example.clone());
    }
    if let Some(first) = item.get("examples").and_then(Value::as_object).and_then(|e| e.values().next()) {
        return resolve(first, components, "examples")?.get("value").cloned();
    }
    let schema = resolve_schema(item.get("schema")?, components)?;
    schema.get("example").cloned()
}

/// How a sample makes the generated client: `Client::new`, with the `Credentials` the
/// operation's first security requirement names when the client takes credentials (the setter
/// is the scheme's name in snake case, as `credentials.rs` writes it).
fn connect(spec: &Spec, operation: &Value, components: &Value, krate: &str) -> String {
    if crate::credentials::client(spec).ok().flatten().is_none() {
        return format!("{krate}::Client::new(&base_url)");
    }
    let requirements = operation.get("security").or_else(|| spec.raw.get("security")).and_then(Value::as_array);
    let names = requirements.into_iter().flatten().find_map(|r| r.as_object().filter(|r| !r.is_empty()));
    let mut setters = String::new();
    let mut basic = false;
    for name in names.into_iter().flat_map(|names| names.keys()) {
        let setter = crate::server::field_ident(name);
        let is_basic = components
            .pointer(&format!("/securitySchemes/{}/scheme", normalise::escape(name)))
            .and_then(Value::as_str)
            .is_some_and(|s| s.eq_ignore_ascii_case("basic"));
        basic |= is_basic;
        // A basic credential's token is `username:password`, as curl's `-u` takes it.
        let _ = write!(setters, ".{setter}({})", if is_basic { "user, password" } else { "&token" });
    }
    let made = format!("{krate}::Client::new(&base_url, {krate}::Credentials::new(){setters})");
    if basic {
        format!("{{ let (user, password) = token.split_once(':').unwrap_or((&token, \"\")); {made} }}")
    } else {
        made
    }
}

/// The schemes of the first security requirement that names any, as each is sent.
fn credentials(spec: &Spec, operation: &Value, components: &Value) -> Vec<Credential> {
    let requirements = operation.get("security").or_else(|| spec.raw.get("security")).and_then(Value::as_array);
    let names = requirements.into_iter().flatten().find_map(|r| r.as_object().filter(|r| !r.is_empty()));
    names.into_iter().flat_map(|names| names.keys()).filter_map(|name| credential(name, components)).collect()
}

fn credential(name: &str, components: &Value) -> Option<Credential> {
    let scheme = components.get("securitySchemes")?.get(name)?;
    match (scheme.get("type")?.as_str()?, scheme.get("scheme").and_then(Value::as_str)) {
        ("http", Some(s)) if s.eq_ignore_ascii_case("basic") => Some(Credential::Basic),
        ("http", _) | ("oauth2", _) | ("openIdConnect", _) => Some(Credential::Bearer),
        ("apiKey", _) => {
            let place = match scheme.get("in")?.as_str()? {
                "query" => Place::Query,
                "cookie" => Place::Cookie,
                _ => Place::Header,
            };
            Some(Credential::ApiKey { place, name: scheme.get("name")?.as_str()?.to_owned() })
        }
        _ => None,
    }
}

/// A value as it is written in a URL, a flag or a header: a string as it is, anything else as
/// JSON.
fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The Rust name progenitor gives a parameter's builder method.
fn rust_name(name: &str) -> String {
    let name = name.to_snake_case();
    match name.as_str() {
        "type" | "ref" | "self" | "match" | "fn" | "mod" | "use" | "where" | "move" | "async" | "await" => {
            format!("{name}_")
        }
        _ => name,
    }
}

/// A Rust expression of type `ty` (the builder's, as written in the client) for `value`, one the
/// builder's `TryInto` takes.
fn literal(ty: &str, value: &Value, types: &str) -> String {
    let text = plain(value);
    let bare = ty.trim_start_matches("::");
    let json = || {
        let model = match bare.strip_prefix("types::") {
            Some(model) => format!("{types}::{model}"),
            None => ty.to_owned(),
        };
        format!("serde_json::from_value::<{model}>(serde_json::json!({value}))?")
    };
    match (bare, value) {
        ("uuid::Uuid", Value::String(_)) => format!("uuid::uuid!({text:?})"),
        (t, Value::String(_)) if t.starts_with("chrono::DateTime") => {
            format!("{text:?}.parse::<chrono::DateTime<chrono::Utc>>()?")
        }
        ("chrono::NaiveDate", Value::String(_)) => format!("{text:?}.parse::<chrono::NaiveDate>()?"),
        ("std::string::String" | "String", Value::String(_)) => format!("{text:?}"),
        (t, Value::String(_)) if t.starts_with("types::") => format!("{text:?}"),
        (t, Value::Number(_)) if t.starts_with("std::num::NonZero") => {
            let primitive = t.trim_start_matches("std::num::NonZero").to_ascii_lowercase();
            format!("{text}{primitive}")
        }
        ("i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" | "f32" | "f64", Value::Number(_)) => {
            format!("{text}{bare}")
        }
        ("bool", Value::Bool(_)) => text,
        _ => json(),
    }
}

/// Every operation builder's fields (`pub mod builder { pub struct CreateBalance<'a> { … } }`)
/// with their value types, without the `Result<_, String>` and `Option<_>` around them.
fn builders(client: &str) -> Result<BTreeMap<String, BTreeMap<String, String>>> {
    let file = syn::parse_file(client).map_err(|e| Error(format!("samples: the client does not parse: {e}")))?;
    let mut builders = BTreeMap::new();
    for item in &file.items {
        let syn::Item::Mod(module) = item else { continue };
        if module.ident != "builder" {
            continue;
        }
        for item in module.content.iter().flat_map(|(_, items)| items) {
            let syn::Item::Struct(builder) = item else { continue };
            let mut fields = BTreeMap::new();
            for field in &builder.fields {
                let Some(name) = &field.ident else { continue };
                fields.insert(name.to_string().trim_start_matches("r#").to_owned(), inner(&field.ty));
            }
            builders.insert(builder.ident.to_string(), fields);
        }
    }
    Ok(builders)
}

/// `ty` without the `Result<_, String>` and `Option<_>` a builder keeps it in, as text.
fn inner(ty: &syn::Type) -> String {
    if let syn::Type::Path(path) = ty
        && let Some(last) = path.path.segments.last()
        && (last.ident == "Result" || last.ident == "Option")
        && let syn::PathArguments::AngleBracketed(arguments) = &last.arguments
        && let Some(syn::GenericArgument::Type(first)) = arguments.args.first()
    {
        return inner(first);
    }
    quote::quote!(#ty).to_string().replace(' ', "")
}

/// The flags of the CLI's command for operation `function` (`cli_{function}`).
fn flags(cli: &str, function: &str) -> Vec<String> {
    let start = format!("pub fn cli_{function}()");
    let Some(at) = cli.find(&start) else { return Vec::new() };
    let rest = &cli[at + start.len()..];
    let end = rest.find("pub fn cli_").unwrap_or(rest.len());
    rest[..end]
        .split("Arg::new(\"")
        .skip(1)
        .filter_map(|after| after.split_once('"').map(|(name, _)| name.to_owned()))
        .collect()
}

/// `text` as one shell word: as it is when it holds nothing the shell reads, else single-quoted.
fn shell_word(text: &str) -> String {
    let safe = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':' | '@' | '+' | ',' | '='));
    if safe { text.to_owned() } else { format!("'{}'", text.replace('\'', r"'\''")) }
}

/// `text` to be put inside double quotes: `\`, `"`, `$` and `` ` `` escaped.
fn double_quoted(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '\\' | '"' | '$' | '`' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// `text` percent-encoded for a URL's path segment or query value: all but unreserved characters.
fn encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            let _ = write!(out, "%{byte:02X}");
        }
    }
    out
}

/// What a test file's samples run with: the shell samples' table, and the test's own values,
/// which the Rust samples take through `values.swap` and `values.text` and the shell ones
/// through [`Values::put_in`].
const TEST_SUPPORT: &str = r#"
/// An operation's shell samples, with each value they bind and its example as written in them.
pub struct Shell {
    pub operation_id: &'static str,
    pub method: &'static str,
    pub path: &'static str,
    pub webhook: bool,
    pub status: u16,
    pub cli: Option<&'static str>,
    pub curl: &'static str,
    pub values: &'static [(&'static str, &'static str)],
}

/// The test's own values for a sample's bindings: by binding (`id`), or by a field of the body
/// (`body.balance_id`).
#[derive(Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Values(std::collections::BTreeMap<String, serde_json::Value>);

impl Values {
    /// These values and `name`'s.
    pub fn with(mut self, name: &str, value: &serde_json::Value) -> Self {
        self.0.insert(name.to_owned(), value.clone());
        self
    }

    /// `value` (bound as `name` in a Rust sample), with the test's own put in.
    pub fn swap<T>(&self, name: &str, value: T) -> Result<T, Box<dyn std::error::Error>>
    where
        T: serde::Serialize + serde::de::DeserializeOwned,
    {
        if let Some(own) = self.0.get(name) {
            return Ok(serde_json::from_value(own.clone())?);
        }
        if name != "body" {
            return Ok(value);
        }
        let mut body = serde_json::to_value(value)?;
        for (key, own) in &self.0 {
            if let (Some(field), Some(fields)) = (key.strip_prefix("body."), body.as_object_mut()) {
                fields.insert(field.to_owned(), own.clone());
            }
        }
        Ok(serde_json::from_value(body)?)
    }

    /// A string bound as `name` in a Rust sample, or the test's own.
    pub fn text(&self, name: &str, value: &str) -> String {
        match self.0.get(name) {
            Some(serde_json::Value::String(own)) => own.clone(),
            Some(other) => other.to_string(),
            None => value.to_owned(),
        }
    }

    /// A shell sample's text with the test's values in place of the examples it was written with.
    pub fn put_in(&self, text: &str, sample: &Shell) -> String {
        let mut text = text.to_owned();
        for (name, example) in sample.values {
            if let Some(own) = self.0.get(*name) {
                let own = own.as_str().map_or_else(|| own.to_string(), str::to_owned);
                text = text.replace(example, &own);
            }
        }
        text
    }
}

"#;

/// The test file of `samples` (`source`: the document's path, for its header): what they run
/// with ([`TEST_SUPPORT`]), each Rust sample as a function taking the test's values,
/// a `run` calling one by its operation's id, the shell samples (`SHELL`, of the parent's
/// `Shell`) with the values they bind, and the guide's script (`GETTING_STARTED`).
pub fn test_file(samples: &[Sample], source: &str, guide: Option<&Guide>) -> String {
    let mut out = format!(
        "// @generated by `cargo xtask codegen` from {source}. Do not edit by hand.\n\n\
         //! Every operation's samples as the references show them; the Rust ones with the lines by which the \
         test puts its own values in.\n\n\
         /// What a Rust sample answered: its status and body, or why it failed.\n\
         pub type Answer = Result<(u16, serde_json::Value), Box<dyn std::error::Error>>;\n\n"
    );
    out.push_str(TEST_SUPPORT);
    for sample in samples {
        let values = if sample.rust_checked.contains("values.") { "values" } else { "_values" };
        let _ = write!(
            out,
            "/// `{} {}` ({}).\npub async fn {}({values}: &Values) -> Answer {{\n{}}}\n\n",
            sample.method, sample.path, sample.operation_id, sample.function, sample.rust_checked
        );
    }
    let values = if samples.is_empty() { "_values" } else { "values" };
    let _ = write!(
        out,
        "/// The Rust sample of the operation `operation_id`.\npub async fn run(operation_id: &str, {values}: &Values) -> Answer {{\n"
    );
    if samples.is_empty() {
        out.push_str("    Err(format!(\"no sample of {operation_id}\").into())\n}\n\n");
    } else {
        out.push_str("    match operation_id {\n");
        for sample in samples {
            let _ = writeln!(out, "        {:?} => {}(values).await,", sample.operation_id, sample.function);
        }
        out.push_str("        other => Err(format!(\"no sample of {other}\").into()),\n    }\n}\n\n");
    }
    out.push_str("/// Every operation's shell samples, by path.\npub const SHELL: &[Shell] = &[\n");
    for sample in samples {
        let values: Vec<String> = sample.values.iter().map(|(name, value)| format!("({name:?}, {value:?})")).collect();
        let _ = writeln!(
            out,
            "    Shell {{ operation_id: {:?}, method: {:?}, path: {:?}, webhook: {}, status: {}, cli: {:?}, curl: {:?}, values: &[{}] }},",
            sample.operation_id,
            sample.method,
            sample.path,
            sample.webhook,
            sample.status,
            sample.cli,
            sample.curl,
            values.join(", ")
        );
    }
    out.push_str("];\n");
    if let Some(guide) = guide {
        let _ = write!(
            out,
            "\n/// \"Getting started\": its commands, as one script.\npub const GETTING_STARTED: &str = {:?};\n",
            guide.script
        );
    }
    out
}

/// The samples as Markdown: each labelled, in a fenced block (the references' descriptions and
/// `docs/api.md`).
pub fn markdown(sample: &Sample) -> String {
    let mut out = format!("**Rust**\n\n```rust\n{}```\n\n", sample.rust);
    if let Some(cli) = &sample.cli {
        let _ = write!(out, "**CLI**\n\n```sh\n{cli}\n```\n\n");
    }
    let _ = write!(out, "**curl**\n\n```sh\n{}\n```\n", sample.curl);
    out
}

/// The samples as an operation's `x-codeSamples` (read by Redoc, Scalar and others).
pub fn code_samples(sample: &Sample) -> Value {
    let mut samples = vec![serde_json::json!({ "lang": "Rust", "label": "Rust", "source": sample.rust })];
    if let Some(cli) = &sample.cli {
        samples.push(serde_json::json!({ "lang": "Shell", "label": "CLI", "source": cli }));
    }
    samples.push(serde_json::json!({ "lang": "Shell", "label": "curl", "source": sample.curl }));
    Value::Array(samples)
}

/// A walk-through of the API made of operations' curl samples ("Getting started"), each step's
/// values carried from the answers of the steps before in shell variables.
#[derive(Debug, Clone)]
pub struct GettingStarted {
    /// What comes before the steps (Markdown): how to start the service and set the variables.
    pub intro: String,
    pub steps: Vec<Step>,
}

/// One step of [`GettingStarted`].
#[derive(Debug, Clone)]
pub struct Step {
    /// What the reader does and why (Markdown).
    pub says: String,
    /// The operation whose curl sample the step is.
    pub operation_id: String,
    /// Values from earlier steps: a sample's binding (`id`, `body.endpoint_id`) and the shell
    /// variable holding it.
    pub uses: Vec<(String, String)>,
    /// The shell variable the answer's `id` is kept in, for the steps after.
    pub keeps: Option<String>,
}

/// [`GettingStarted`] written out: as Markdown (`## Getting started`), and its commands as one
/// script, which is what the reader would run.
#[derive(Debug, Clone, PartialEq)]
pub struct Guide {
    pub markdown: String,
    pub script: String,
}

/// The guide of `getting_started`, its steps' commands written from `samples`' curl ones:
/// each fails on an error status (`--fail-with-body`), and one whose answer's `id` is kept
/// shows the answer and assigns the id to its variable with `jq`.
pub fn guide(samples: &[Sample], getting_started: &GettingStarted) -> Result<Guide> {
    let mut markdown = format!("## Getting started\n\n{}\n", getting_started.intro.trim_end());
    let mut script = String::new();
    for (number, step) in getting_started.steps.iter().enumerate() {
        let sample = samples
            .iter()
            .find(|s| s.operation_id == step.operation_id)
            .ok_or_else(|| Error(format!("getting started: no operation {} to take a sample of", step.operation_id)))?;
        let mut command = sample.curl.replacen("curl ", "curl -sS --fail-with-body ", 1);
        for (binding, variable) in &step.uses {
            let (_, example) = sample
                .values
                .iter()
                .find(|(name, _)| name == binding)
                .ok_or_else(|| Error(format!("getting started: {} binds no `{binding}`", step.operation_id)))?;
            // In the single-quoted body the variable is spliced in between quotes.
            command = command
                .lines()
                .map(|line| {
                    let spliced = if line.trim_start().starts_with("-d '") {
                        format!("'\"${variable}\"'")
                    } else {
                        format!("${variable}")
                    };
                    line.replace(example.as_str(), &spliced)
                })
                .collect::<Vec<_>>()
                .join("\n");
        }
        if let Some(variable) = &step.keeps {
            command = format!("ANSWER=$({command})\necho \"$ANSWER\"\n{variable}=$(echo \"$ANSWER\" | jq -r .id)");
        }
        let _ = write!(markdown, "\n{}. {}\n\n   ```sh\n", number + 1, step.says.trim_end().replace('\n', "\n   "));
        for line in command.lines() {
            let _ = writeln!(markdown, "   {line}");
        }
        markdown.push_str("   ```\n");
        script.push_str(&command);
        script.push('\n');
    }
    Ok(Guide { markdown, script })
}
