//! `cargo xtask breaking --base <git-ref> [--head FILE]`: the breaking-change gate.
//!
//! Compares `openapi/payments.yaml` at the ref with the working tree (or `--head`), prints every
//! change with its class, and fails when a change breaks existing clients unless `info.version`'s
//! major number went up. The classification is Optic's (`@useoptic/optic`, its standard
//! breaking-change rules: removed operations, responses and response properties; new required
//! request properties and parameters; narrowed types and enums on the request side; …),
//! installed from npm into `target/tools/optic` on first use and run offline after that. Three
//! rules of our own ([`own_rules`]) cover what Optic misses: a request parameter removed (our
//! servers refuse unknown parameters), a response value that becomes nullable through `oneOf`,
//! and a request bound narrowed (`maxLength`, `minimum`, `pattern`, …). The versioning policy it
//! enforces is in the README ("Versions").

use anyhow::{Context, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::SPEC;

/// The Optic release, and the ajv it needs: ajv 8.18+ generates code ajv-errors 3 cannot read.
const PACKAGE_JSON: &str = r#"{
  "name": "payments-optic",
  "private": true,
  "dependencies": { "@useoptic/optic": "1.0.9" },
  "overrides": { "ajv": "8.17.1" }
}
"#;

/// Exit status of the gate: pass, or breaking changes under the same major version.
pub(crate) enum Verdict {
    Pass,
    Breaking,
}

pub(crate) fn run(root: &Path, base: &str, head: Option<&Path>) -> anyhow::Result<Verdict> {
    let optic = install(root)?;
    let scratch = root.join("target/breaking");
    std::fs::create_dir_all(&scratch).with_context(|| scratch.display().to_string())?;
    let base_text = git_show(root, base)?;
    let base_file = scratch.join("base.yaml");
    std::fs::write(&base_file, &base_text).with_context(|| base_file.display().to_string())?;
    let head_file = match head {
        Some(file) => std::path::absolute(file).with_context(|| file.display().to_string())?,
        None => root.join(SPEC),
    };
    let head_text = std::fs::read_to_string(&head_file).with_context(|| head_file.display().to_string())?;
    let (base_doc, head_doc) = (parse(&base_text)?, parse(&head_text)?);

    let output = Command::new(&optic)
        .args(["diff", "--check", "--severity", "error"])
        .arg(&base_file)
        .arg(&head_file)
        .env("OPTIC_TELEMETRY_LEVEL", "off")
        .env("NO_COLOR", "1")
        .current_dir(&scratch)
        .output()
        .with_context(|| format!("running {}", optic.display()))?;
    let report = String::from_utf8_lossy(&output.stdout);
    let report = report.replace(&format!("{}", base_file.display()), &format!("{SPEC}@{base}"));
    print!("{report}");
    let mut summary = Summary::read(&report).with_context(|| {
        format!("optic did not report (exit {:?}):\n{}", output.status.code(), String::from_utf8_lossy(&output.stderr))
    })?;
    // Optic's exit status must agree with what it printed, or something else went wrong.
    let optic_breaking = summary.breaking + summary.allowed;
    if (output.status.code() == Some(1)) != (optic_breaking > 0) || !matches!(output.status.code(), Some(0 | 1)) {
        bail!(
            "optic exited {:?} after reporting {} breaking change(s):\n{}",
            output.status.code(),
            summary.breaking,
            String::from_utf8_lossy(&output.stderr)
        );
    }

    let own = own_rules(&base_doc, &head_doc);
    if !own.is_empty() {
        println!("\nOur own rules:");
    }
    for finding in &own {
        println!(
            "x [{}] {} {}: {}. This is a breaking change.",
            finding.rule, finding.operation, finding.at, finding.what
        );
        summary.count(finding.rule);
    }

    let (from, to) = (version(&base_doc)?, version(&head_doc)?);
    println!("\n== breaking-change gate: {SPEC} at {base} (version {from}) -> {} (version {to})", head_file.display());
    println!("   {}", summary.operations);
    println!("   breaking changes: {}", summary.breaking);
    if summary.allowed > 0 {
        println!(
            "   values added to response enums: {} (additive under this policy: clients take values they do not know)",
            summary.allowed
        );
    }
    for (rule, count) in &summary.rules {
        println!("     {count} x [{rule}]");
    }
    let major_raised = major(&to)? > major(&from)?;
    Ok(match (summary.breaking, major_raised) {
        (0, _) => {
            println!("   no breaking change: passes");
            Verdict::Pass
        }
        (_, true) => {
            println!("   the major version went up ({from} -> {to}): breaking changes are allowed");
            Verdict::Pass
        }
        (_, false) => {
            println!(
                "   FAILS: these changes break existing clients. Undo them, or raise info.version's major \
                 number ({from} -> {}.0.0) and say what breaks in the description.",
                major(&from)? + 1
            );
            Verdict::Breaking
        }
    })
}

/// `target/tools/optic/node_modules/.bin/optic`, installed with npm if missing or out of date.
fn install(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = root.join("target/tools/optic");
    let bin = dir.join("node_modules/.bin/optic");
    let manifest = dir.join("package.json");
    if bin.exists() && std::fs::read_to_string(&manifest).is_ok_and(|m| m == PACKAGE_JSON) {
        return Ok(bin);
    }
    std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
    std::fs::write(&manifest, PACKAGE_JSON).with_context(|| manifest.display().to_string())?;
    eprintln!("== installing @useoptic/optic into {}", dir.display());
    // No install scripts: the only ones are telemetry.
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--no-package-lock", "--ignore-scripts", "--loglevel=error"])
        .current_dir(&dir)
        .status()
        .context("npm (Node.js) is needed to install optic")?;
    if !status.success() || !bin.exists() {
        bail!("npm install in {} failed ({status})", dir.display());
    }
    Ok(bin)
}

fn git_show(root: &Path, base: &str) -> anyhow::Result<String> {
    let output =
        Command::new("git").args(["show", &format!("{base}:{SPEC}")]).current_dir(root).output().context("git")?;
    if !output.status.success() {
        bail!("{SPEC} at {base}: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    String::from_utf8(output.stdout).with_context(|| format!("{SPEC} at {base}"))
}

fn parse(text: &str) -> anyhow::Result<Value> {
    serde_norway::from_str(text).context("the document is not valid YAML")
}

/// `info.version` of a document.
fn version(document: &Value) -> anyhow::Result<String> {
    document
        .pointer("/info/version")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .context("the document has no info.version")
}

/// The major number of a `MAJOR.MINOR.PATCH` version.
fn major(version: &str) -> anyhow::Result<u64> {
    version
        .split('.')
        .next()
        .and_then(|major| major.parse().ok())
        .filter(|_| version.split('.').count() == 3)
        .with_context(|| format!("info.version {version:?} is not MAJOR.MINOR.PATCH"))
}

/// What the report says, counted.
#[derive(Debug, PartialEq)]
struct Summary {
    /// Optic's "Operations: …" line.
    operations: String,
    breaking: usize,
    /// Each broken rule and how many changes broke it, in the order first seen.
    rules: Vec<(String, usize)>,
    /// What Optic calls breaking and our policy does not: a value added to an enum a response
    /// carries (see [`ENUM_VALUE_ADDED`]).
    allowed: usize,
}

/// Optic's finding for a value added to an enum (its rule for request and response enums only
/// finds additions on the response side). Our policy ("Versions" in the document) makes it
/// additive: clients must take a value they do not know, and the generated ones do (it reads as
/// the enum's `Unknown`), so a minor version may add response enum values and event names.
const ENUM_VALUE_ADDED: (&str, &str) = ("request and response property enums", "cannot add enum option");

impl Summary {
    fn read(report: &str) -> Option<Summary> {
        let operations = report.lines().map(str::trim).find(|l| l.starts_with("Operations:"))?.to_owned();
        let mut summary = Summary { operations, breaking: 0, rules: Vec::new(), allowed: 0 };
        for line in report.lines().map(str::trim) {
            let Some(rest) = line.strip_prefix("x [") else { continue };
            let Some((rule, message)) = rest.split_once("] ") else { continue };
            if !message.contains("This is a breaking change") {
                continue;
            }
            if rule == ENUM_VALUE_ADDED.0 && message.starts_with(ENUM_VALUE_ADDED.1) {
                summary.allowed += 1;
            } else {
                summary.count(rule);
            }
        }
        Some(summary)
    }

    fn count(&mut self, rule: &str) {
        self.breaking += 1;
        match self.rules.iter_mut().find(|(r, _)| r == rule) {
            Some((_, count)) => *count += 1,
            None => self.rules.push((rule.to_owned(), 1)),
        }
    }
}

/// A breaking change one of our rules found.
#[derive(Debug, PartialEq)]
struct Finding {
    rule: &'static str,
    /// `GET /transactions`.
    operation: String,
    /// Where in the operation: `parameter status`, `request body /reference`, `200 /amount`.
    at: String,
    what: String,
}

const PARAMETER_REMOVED: &str = "request parameter removed";
const BECOMES_NULLABLE: &str = "response value becomes nullable";
const BOUND_NARROWED: &str = "request bound narrowed";

/// The changes Optic does not classify, on the operations both documents have.
fn own_rules(base: &Value, head: &Value) -> Vec<Finding> {
    let mut findings = Vec::new();
    let methods = ["get", "put", "post", "delete", "patch", "head", "options"];
    let paths = base.get("paths").and_then(Value::as_object).into_iter().flatten();
    for (path, base_item) in paths {
        let Some(head_item) = head.pointer(&format!("/paths/{}", escape(path))) else { continue };
        for method in methods {
            let (Some(base_op), Some(head_op)) = (base_item.get(method), head_item.get(method)) else { continue };
            let operation = format!("{} {path}", method.to_uppercase());
            let mut found = |rule, at: String, what: String| {
                findings.push(Finding { rule, operation: operation.clone(), at, what });
            };
            let base_params = parameters(base, base_item, base_op);
            let head_params = parameters(head, head_item, head_op);
            for ((name, location), base_schema) in &base_params {
                match head_params.iter().find(|((n, l), _)| n == name && l == location) {
                    None => found(
                        PARAMETER_REMOVED,
                        format!("{location} parameter {name}"),
                        "removed; a client sending it is refused as for an unknown parameter".into(),
                    ),
                    Some((_, head_schema)) => narrowed(base, head, base_schema, head_schema, "", 0, &mut |at, what| {
                        found(BOUND_NARROWED, format!("{location} parameter {name}{at}"), what)
                    }),
                }
            }
            let body = "/requestBody/content/application~1json/schema";
            if let (Some(b), Some(h)) = (resolve(base, base_op).pointer(body), resolve(head, head_op).pointer(body)) {
                narrowed(base, head, b, h, "", 0, &mut |at, what| {
                    found(BOUND_NARROWED, format!("request body {at}"), what)
                });
            }
            let responses = base_op.get("responses").and_then(Value::as_object).into_iter().flatten();
            for (status, base_response) in responses {
                let schema = "/content/application~1json/schema";
                let Some(head_response) = head_op.pointer(&format!("/responses/{status}")) else { continue };
                let (b, h) =
                    (resolve(base, base_response).pointer(schema), resolve(head, head_response).pointer(schema));
                if let (Some(b), Some(h)) = (b, h) {
                    becomes_nullable(base, head, b, h, "", 0, &mut |at| {
                        found(
                            BECOMES_NULLABLE,
                            format!("{status} {}", if at.is_empty() { "/" } else { &at }),
                            "may now be null".into(),
                        )
                    });
                }
            }
        }
    }
    findings
}

fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// `value`, or what its `$ref` points to (local references only).
fn resolve<'a>(document: &'a Value, value: &'a Value) -> &'a Value {
    let mut value = value;
    for _ in 0..8 {
        match value.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix('#')) {
            Some(pointer) => value = document.pointer(pointer).unwrap_or(value),
            None => break,
        }
    }
    value
}

/// An operation's parameters (the path item's and its own) by name and location, with schemas.
fn parameters<'a>(document: &'a Value, item: &'a Value, operation: &'a Value) -> Vec<((String, String), &'a Value)> {
    let listed = [item, operation].into_iter().filter_map(|v| v.get("parameters")?.as_array()).flatten();
    listed
        .map(|p| resolve(document, p))
        .filter_map(|p| {
            let name = p.get("name")?.as_str()?.to_owned();
            let location = p.get("in")?.as_str()?.to_owned();
            Some(((name, location), p.get("schema").unwrap_or(&Value::Null)))
        })
        .collect()
}

/// `null` is a value of `schema` (resolved): `nullable`, or a `oneOf`/`anyOf` member that is.
fn nullable(document: &Value, schema: &Value) -> bool {
    let schema = resolve(document, schema);
    schema.get("nullable") == Some(&Value::Bool(true))
        || ["oneOf", "anyOf"].iter().any(|key| {
            schema
                .get(*key)
                .and_then(Value::as_array)
                .is_some_and(|members| members.iter().any(|m| openapi_workspace::is_null_only(resolve(document, m))))
        })
}

/// The non-null member of a nullable reference, or the schema itself.
fn unwrapped<'a>(document: &'a Value, schema: &'a Value) -> &'a Value {
    let schema = resolve(document, schema);
    let members = ["oneOf", "anyOf", "allOf"].iter().find_map(|key| schema.get(*key)?.as_array());
    match members.map(Vec::as_slice) {
        Some([only]) => resolve(document, only),
        Some([a, b]) if nullable(document, b) && !nullable(document, a) => resolve(document, a),
        Some([a, b]) if nullable(document, a) && !nullable(document, b) => resolve(document, b),
        _ => schema,
    }
}

/// Walks two response schemas side by side and reports each value that could not be null and
/// now can.
fn becomes_nullable(
    base_doc: &Value,
    head_doc: &Value,
    base: &Value,
    head: &Value,
    at: &str,
    depth: usize,
    found: &mut dyn FnMut(String),
) {
    if depth > 12 {
        return;
    }
    if nullable(head_doc, head) && !nullable(base_doc, base) {
        found(at.to_owned());
    }
    let (base, head) = (unwrapped(base_doc, base), unwrapped(head_doc, head));
    for_each_shared(base, head, |key, b, h| {
        becomes_nullable(base_doc, head_doc, b, h, &format!("{at}/{key}"), depth + 1, found)
    });
}

/// Walks two request schemas side by side and reports each bound that accepts less than before.
fn narrowed(
    base_doc: &Value,
    head_doc: &Value,
    base: &Value,
    head: &Value,
    at: &str,
    depth: usize,
    found: &mut dyn FnMut(String, String),
) {
    if depth > 12 {
        return;
    }
    let (base, head) = (unwrapped(base_doc, base), unwrapped(head_doc, head));
    let number = |schema: &Value, key: &str| schema.get(key).and_then(Value::as_f64);
    for (key, upper) in [
        ("maxLength", true),
        ("maximum", true),
        ("maxItems", true),
        ("minLength", false),
        ("minimum", false),
        ("minItems", false),
    ] {
        let narrower = match (number(base, key), number(head, key)) {
            (Some(b), Some(h)) => {
                if upper {
                    h < b
                } else {
                    h > b
                }
            }
            (None, Some(h)) => upper || h > 0.0,
            _ => false,
        };
        if narrower {
            let was = base.get(key).map_or("none".to_owned(), Value::to_string);
            found(at.to_owned(), format!("{key} {was} -> {}", head[key]));
        }
    }
    if let Some(pattern) = head.get("pattern")
        && base.get("pattern") != Some(pattern)
    {
        found(at.to_owned(), format!("pattern {} -> {pattern}", base.get("pattern").unwrap_or(&Value::Null)));
    }
    for_each_shared(base, head, |key, b, h| {
        narrowed(base_doc, head_doc, b, h, &format!("{at}/{key}"), depth + 1, found)
    });
}

/// The properties (and `items`) both schemas have.
fn for_each_shared(base: &Value, head: &Value, mut each: impl FnMut(&str, &Value, &Value)) {
    if let (Some(b), Some(h)) = (base.get("properties").and_then(Value::as_object), head.get("properties")) {
        for (key, base_property) in b {
            if let Some(head_property) = h.get(key) {
                each(key, base_property, head_property);
            }
        }
    }
    if let (Some(b), Some(h)) = (base.get("items"), head.get("items")) {
        each("items", b, h);
    }
}

#[cfg(test)]
mod tests;
