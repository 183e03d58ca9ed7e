//! The Rust samples: the generated client's builder chain, each value a literal of the type the
//! builder takes (read from the client progenitor wrote), the client made as the flavour or the
//! document's security says.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde_json::Value;

use super::{Call, Flavour, plain};
use crate::error::{Error, Result};
use crate::model::security::{Kind, Scheme};
use crate::write::client::status_errors::{Holds, Matched};

impl Call {
    /// The Rust sample, and the same with the test's lines.
    pub(super) fn rust(
        &self,
        function: &str,
        fields: &BTreeMap<String, String>,
        flavour: &Flavour,
        connect: &str,
        bytes: bool,
        errors: Option<&Matched>,
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
        if let Some(prelude) = &flavour.prelude {
            line(prelude, None);
        }
        line(&environment, None);
        line(&format!("let client = {connect};"), None);
        let mut chain = format!("let answer = client.{function}()");
        let field_type = |field: &str| {
            fields.get(field).ok_or_else(|| {
                Error::Document(format!("samples: the client's builder for {function} has no `{field}`"))
            })
        };
        for parameter in &self.parameters {
            // progenitor tells apart parameters of one name in two places by the place's name.
            let name = crate::model::names::builder_field(&parameter.wire.name);
            let placed = format!("{name}_{}", format!("{:?}", parameter.wire.place).to_lowercase());
            let field = if fields.contains_key(&placed) { placed } else { name };
            let literal = literal(field_type(&field)?, &parameter.example, types);
            // A string literal is a `&str`, which the test's value (owned) cannot be: it gets a
            // `String`, which the builders take as well.
            let test = if literal.starts_with('"') && literal.ends_with('"') {
                format!("let {field} = values.text({:?}, {field});", parameter.wire.name)
            } else {
                format!("let {field} = values.swap({:?}, {field})?;", parameter.wire.name)
            };
            line(&format!("let {field} = {literal};"), Some(test));
            let _ = write!(chain, ".{field}({field})");
        }
        if let Some(body) = &self.body {
            let model = field_type("body")?.replace("types::builder::", &format!("{types}::"));
            let json = indented(&body.example);
            line(
                &format!("let body = serde_json::from_value::<{model}>(serde_json::json!({json}))?;"),
                Some("let body = values.swap(\"body\", body)?;".to_owned()),
            );
            chain.push_str(".body(body)");
        }
        match errors {
            None => {
                chain.push_str(".send().await?;");
                line(&chain, None);
            }
            Some(errors) => line(&matched(&chain, errors, &flavour.client_crate, types), None),
        }
        if bytes {
            line("println!(\"{}\", answer.status());", None);
            checked.push_str("Ok((answer.status().as_u16(), serde_json::Value::Null))\n");
        } else {
            line("println!(\"{} {:#?}\", answer.status(), *answer);", None);
            checked.push_str("Ok((answer.status().as_u16(), serde_json::to_value(answer.into_inner())?))\n");
        }
        Ok((shown, checked))
    }
}

/// `chain` sent, its errors typed per status matched a variant at a time (`status_errors`):
/// what a caller writes to tell a 404 from a 422.
fn matched(chain: &str, errors: &Matched, krate: &str, types: &str) -> String {
    let chain = chain.strip_prefix("let answer = ").unwrap_or(chain);
    let mut arms = String::new();
    for (variant, holds) in &errors.variants {
        let name = &errors.name;
        let _ = match holds {
            Holds::Body => writeln!(
                arms,
                "        {types}::{name}::{variant}(body) => return Err(format!(\"{variant}: {{body:?}}\").into()),"
            ),
            Holds::Nothing => writeln!(arms, "        {types}::{name}::{variant} => return Err(\"{variant}\".into()),"),
            Holds::StatusAndBody => writeln!(
                arms,
                "        {types}::{name}::{variant} {{ status, body }} => return Err(format!(\"{{status}}: {{body}}\").into()),"
            ),
        };
    }
    format!(
        "let answer = match {chain}.send().await {{\n    Ok(answer) => answer,\n    \
         Err({krate}::Error::ErrorResponse(error)) => match error.into_inner() {{\n{arms}    }},\n    \
         Err(error) => return Err(error.into()),\n}};"
    )
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

/// How a sample makes the generated client: `Client::new` with its `Config` (default retries),
/// from `Credentials` for the operation's `credentials` when the client takes any (`Builders::takes_credentials`; each setter the
/// scheme's name in snake case, as `credentials.rs` writes it).
pub(crate) fn connect(takes_credentials: bool, credentials: &[Scheme], krate: &str) -> String {
    if !takes_credentials {
        return format!("{krate}::Client::new(&base_url, {krate}::Config::new())");
    }
    let mut setters = String::new();
    for scheme in credentials {
        let setter = crate::model::names::field_ident(&scheme.name);
        // A basic credential's token is `username:password`, as curl's `-u` takes it.
        let _ = write!(setters, ".{setter}({})", if scheme.kind == Kind::Basic { "user, password" } else { "&token" });
    }
    let made = format!("{krate}::Client::new(&base_url, {krate}::Credentials::new(){setters}.into())");
    if credentials.iter().any(|scheme| scheme.kind == Kind::Basic) {
        format!("{{ let (user, password) = token.split_once(':').unwrap_or((&token, \"\")); {made} }}")
    } else {
        made
    }
}

/// A Rust expression of type `ty` (the builder's, as written in the client) for `value`, one the
/// builder's `TryInto` takes.
fn literal(ty: &str, value: &Value, types: &str) -> String {
    let text = plain(value);
    let bare = ty.trim_start_matches("::");
    // A keyed carrier's setter takes its value as it is (`Keyed<T>` is `From<T>`).
    if let Some(inner) = bare.strip_prefix("openapi_workspace_runtime::client::styles::Keyed<") {
        let inner = inner.strip_suffix('>').unwrap_or(inner);
        return literal(inner.trim_end_matches(','), value, types);
    }
    let json = || {
        // The client's `types::X`, wherever it stands (`Vec<types::X>`), is the reader's `{types}::X`.
        let model = match bare.contains("types::") {
            true => bare.split("types::").collect::<Vec<_>>().join(&format!("{types}::")),
            false => ty.to_owned(),
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

/// What the samples need of the generated client, read from its syntax tree once it is written
/// (`Generated::builders`), so nothing parses the printed client again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Builders {
    /// Every operation builder's fields (`pub mod builder { pub struct CreateBalance<'a> { … } }`)
    /// with their value types, without the `Result<_, String>` and `Option<_>` around them.
    pub(crate) fields: BTreeMap<String, BTreeMap<String, String>>,
    /// Whether the client holds `Credentials` (some operation asks for one).
    pub(crate) takes_credentials: bool,
    /// The operation builders whose errors are typed per status, and how a caller matches them.
    pub(crate) errors: BTreeMap<String, Matched>,
    /// The enums whose `""` variant the models call `Empty` where typify says `X`.
    pub(crate) empty_variants: std::collections::BTreeSet<String>,
}

impl Builders {
    /// Reads one of the client's top-level items: whether it is `Credentials`.
    pub(crate) fn read_item(&mut self, item: &syn::Item) {
        self.takes_credentials |= matches!(item, syn::Item::Struct(s) if s.ident == "Credentials");
    }

    /// Reads one member of the client's `builder` module (read a member at a time:
    /// `client::by_member`): a builder struct's fields.
    pub(crate) fn read_member(&mut self, member: &syn::Item) {
        let syn::Item::Struct(builder) = member else { return };
        let mut fields = BTreeMap::new();
        for field in &builder.fields {
            let Some(name) = &field.ident else { continue };
            fields.insert(name.to_string().trim_start_matches("r#").to_owned(), inner(&field.ty));
        }
        self.fields.insert(builder.ident.to_string(), fields);
    }
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
