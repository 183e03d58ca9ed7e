//! `cargo xtask breaking --base <git-ref> [--head FILE]`: the breaking-change gate.
//!
//! Compares `openapi/payments.yaml` at the ref with the working tree (or `--head`) with the
//! generator's own engine (`openapi-workspace diff`: direction-aware, held to an oracle), prints
//! every change with its level and rule, and fails when a change breaks existing clients unless
//! `info.version`'s major number went up. One rule is our document's own: a parameter removed is
//! breaking, since our servers refuse parameters they do not know (the engine, for any document,
//! calls it a warning). The versioning policy it enforces is in the README ("Versions").

use anyhow::{Context, bail};
use std::path::Path;
use std::process::Command;

use openapi_workspace::{Format, Level, Rule};
use serde_json::Value;

use crate::SPEC;

/// Exit status of the gate: pass, or breaking changes under the same major version.
pub(crate) enum Verdict {
    Pass,
    Breaking,
}

pub(crate) fn run(root: &Path, base: &str, head: Option<&Path>) -> anyhow::Result<Verdict> {
    let base_text = git_show(root, base)?;
    let head_file = match head {
        Some(file) => std::path::absolute(file).with_context(|| file.display().to_string())?,
        None => root.join(SPEC),
    };
    let head_text = std::fs::read_to_string(&head_file).with_context(|| head_file.display().to_string())?;
    let (from, to) = (version(&parse(&base_text)?)?, version(&parse(&head_text)?)?);
    let mut diff = openapi_workspace::diff_texts(&base_text, &head_text).context("reading the two documents")?;
    diff.escalate(Rule::ParameterRemoved, OUR_RULE);
    print!("{}", diff.write(Format::Text));
    let breaking = diff.changes.iter().filter(|change| change.level == Level::Breaking).count();
    println!("\n== breaking-change gate: {SPEC} at {base} (version {from}) -> {} (version {to})", head_file.display());
    println!("   breaking changes: {breaking}");
    // The engine held to its oracle on this pair: a break a value shows that the engine did not
    // report is a bug in the engine, and the gate cannot be trusted until it is fixed.
    let proof = openapi_workspace::prove_texts(&base_text, &head_text).context("the oracle")?;
    println!(
        "   the oracle: {} pairs of schemas judged with values, {} breaks the engine missed",
        proof.judged,
        proof.misses.len()
    );
    if !proof.misses.is_empty() {
        bail!("the diff engine missed breaks the oracle shows:\n{}", proof.misses.join("\n"));
    }
    let major_raised = major(&to)? > major(&from)?;
    Ok(match (breaking, major_raised) {
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

/// Our document's own rule: a parameter removed breaks, since our servers refuse parameters they
/// do not know ("Unknown query parameters and body fields are refused").
const OUR_RULE: &str = "our servers refuse a parameter they do not know";

/// Our document's text at a git ref.
pub(crate) fn git_show(root: &Path, base: &str) -> anyhow::Result<String> {
    let output =
        Command::new("git").args(["show", &format!("{base}:{SPEC}")]).current_dir(root).output().context("git")?;
    if !output.status.success() {
        bail!("{SPEC} at {base}: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    String::from_utf8(output.stdout).with_context(|| format!("{SPEC} at {base}"))
}

pub(crate) fn parse(text: &str) -> anyhow::Result<Value> {
    serde_norway::from_str(text).context("the document is not valid YAML")
}

/// `info.version` of a document.
pub(crate) fn version(document: &Value) -> anyhow::Result<String> {
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

#[cfg(test)]
mod tests;
