//! The shell samples: the CLI's command line (flags, or `--json-body` for a body they cannot
//! carry) and curl's, each parameter written in its place and style as the wire carries it.

use std::collections::HashMap;
use std::fmt::Write;

use heck::ToKebabCase;
use serde_json::Value;

use super::{Call, Flavour, Parameter, plain};
use crate::model::security::{self, Kind};
use crate::read::wire::{Place, Style};

impl Call {
    pub(super) fn cli(&self, binary: &str, operation_id: &str, flags: &[String]) -> String {
        let mut words = vec![format!("{binary} {}", operation_id.to_kebab_case())];
        for parameter in &self.parameters {
            words.push(format!("--{} {}", parameter.wire.name.to_kebab_case(), shell_word(&plain(&parameter.example))));
        }
        let mut heredoc = None;
        if let Some(body) = &self.body {
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

    pub(super) fn curl(&self, method: &str, path: &str, flavour: &Flavour) -> String {
        let mut target = path.to_owned();
        let mut query = Vec::new();
        let mut headers = Vec::new();
        let mut cookies = Vec::new();
        for parameter in &self.parameters {
            let styled = Styled::of(parameter);
            let name = &parameter.wire.name;
            match parameter.wire.place {
                Place::Path => target = target.replace(&format!("{{{name}}}"), &styled.path()),
                Place::Query => query.extend(styled.query()),
                Place::Header => headers.push(double_quoted(&format!("{name}: {}", styled.simple()))),
                Place::Cookie => cookies.extend(styled.query()),
            }
        }
        let token = format!("${}", flavour.token_variable);
        let mut basic = false;
        for scheme in &self.credentials {
            match &scheme.kind {
                Kind::Bearer => headers.insert(0, format!("Authorization: Bearer {token}")),
                Kind::Basic => basic = true,
                Kind::ApiKey(security::Place::Query(name)) => query.push(format!("{}={token}", encode(name))),
                Kind::ApiKey(security::Place::Cookie(name)) => cookies.push(format!("{name}={token}")),
                Kind::ApiKey(security::Place::Header(name)) => {
                    headers.insert(0, format!("{}: {token}", double_quoted(name)));
                }
                // Never asked for: the server generator refuses an operation that needs it.
                Kind::Unsupported(_) => {}
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
        if let Some(body) = &self.body {
            lines.push(format!("-H \"Content-Type: {}\"", body.media_type));
            let json = serde_json::to_string(&body.example).expect("JSON");
            lines.push(format!("-d '{}'", json.replace('\'', r"'\''")));
        }
        lines.join(" \\\n  ")
    }
}

/// A parameter's value as the wire carries it in its place and style (the document's table of
/// `style` and `explode`, as `read::wire::Wire` reads it): percent-encoded where it goes into a URL,
/// as it is in a header and in a 3.2 `cookie`-style cookie.
struct Styled<'a> {
    name: &'a str,
    style: Style,
    explode: bool,
    encoded: bool,
    value: &'a Value,
}

impl<'a> Styled<'a> {
    fn of(parameter: &'a Parameter) -> Self {
        let wire = &parameter.wire;
        let encoded = wire.place != Place::Header && wire.style != Style::Cookie;
        Styled { name: &wire.name, style: wire.style, explode: wire.explode, encoded, value: &parameter.example }
    }

    fn encode(&self, text: &str) -> String {
        if self.encoded { encode(text) } else { text.to_owned() }
    }

    /// The value's parts: items of an array, `key, value` pairs of an object.
    fn parts(&self) -> Vec<(Option<String>, String)> {
        match self.value {
            Value::Array(items) => items.iter().map(|item| (None, self.encode(&plain(item)))).collect(),
            Value::Object(fields) => {
                fields.iter().map(|(k, v)| (Some(self.encode(k)), self.encode(&plain(v)))).collect()
            }
            other => vec![(None, self.encode(&plain(other)))],
        }
    }

    /// `simple`: `a,b`; `k,v,k2,v2` or, exploded, `k=v,k2=v2`.
    fn simple(&self) -> String {
        self.joined(",", ",", "=")
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
            Style::Label if self.explode => format!(".{}", self.joined(".", ",", "=")),
            Style::Label => format!(".{}", self.joined(",", ",", "=")),
            Style::Matrix if scalar => format!(";{}={}", self.name, self.simple()),
            Style::Matrix if self.explode && self.value.is_object() => format!(";{}", self.joined(";", ",", "=")),
            Style::Matrix if self.explode => {
                self.parts().into_iter().map(|(_, v)| format!(";{}={v}", self.name)).collect::<String>()
            }
            Style::Matrix => format!(";{}={}", self.name, self.joined(",", ",", "=")),
            _ => self.simple(),
        }
    }

    /// The `name=value` pairs of a query string (or a cookie).
    fn query(&self) -> Vec<String> {
        let name = self.encode(self.name);
        let delimiter = match self.style {
            Style::SpaceDelimited => "%20",
            Style::PipeDelimited => "|",
            _ => ",",
        };
        match (self.style, self.value) {
            // As the runtime's `forms` writes it: `name[k]=v`, `name[0]=v`, `name[a][b]=v`.
            (Style::DeepObject, Value::Object(_) | Value::Array(_)) => {
                let whole = Value::Object([(self.name.to_owned(), self.value.clone())].into_iter().collect());
                let pairs = openapi_workspace_runtime::forms::pairs(&whole);
                pairs.iter().map(|(k, v)| format!("{}={}", self.encode(k), self.encode(v))).collect()
            }
            (_, Value::Array(_)) if self.explode => {
                self.parts().into_iter().map(|(_, v)| format!("{name}={v}")).collect()
            }
            (_, Value::Object(_)) if self.explode => {
                self.parts().into_iter().map(|(k, v)| format!("{}={v}", k.unwrap_or_default())).collect()
            }
            (_, Value::Array(_) | Value::Object(_)) => vec![format!("{name}={}", self.joined(delimiter, ",", "="))],
            _ => vec![format!("{name}={}", self.simple())],
        }
    }
}

/// The flags of each of the CLI's commands, by operation function (`cli_{function}`): read in one
/// pass over the CLI's source, as a search per operation made a large document's samples
/// quadratic in its size.
pub(super) fn flags_by_function(cli: &str) -> HashMap<&str, Vec<String>> {
    cli.split("pub fn cli_")
        .skip(1)
        .filter_map(|command| {
            let (function, body) = command.split_once("()")?;
            let flags = body.split("Arg::new(\"").skip(1).filter_map(|after| after.split_once('"'));
            Some((function, flags.map(|(name, _)| name.to_owned()).collect()))
        })
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
pub(super) fn double_quoted(text: &str) -> String {
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
