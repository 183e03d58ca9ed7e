//! The shell samples: the CLI's command line (flags, or `--json-body` for a body they cannot
//! carry) and curl's, each parameter written in its place and style as the wire carries it.

use std::fmt::Write;

use heck::ToKebabCase;
use serde_json::Value;

use super::{Bound, Call, Credential, Flavour, Place, plain};

impl Call {
    pub(super) fn cli(&self, binary: &str, operation_id: &str, flags: &[String]) -> String {
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

    pub(super) fn curl(&self, method: &str, path: &str, flavour: &Flavour) -> String {
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

/// The flags of the CLI's command for operation `function` (`cli_{function}`).
pub(super) fn flags(cli: &str, function: &str) -> Vec<String> {
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
