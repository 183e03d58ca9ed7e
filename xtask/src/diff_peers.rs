//! `cargo xtask diff-peers`: the diff engine beside its peers on the same pairs of documents,
//! written to `DIFF-PEERS.md`. The pairs: drift's 79 cases (with drift's own verdicts, from its
//! golden files), the misses other tools' users reported (`named`, each with the verdict it
//! should get), and every change of our own document in its git history. On each: Optic's
//! verdict (`@useoptic/optic`, installed from npm into `target/tools/optic`), the engine's, and
//! the oracle's count of breaks the engine missed. Also the time to diff the largest public
//! document of the corpus against a changed copy of itself.
//!
//! `@pb33f/openapi-changes` is not among the peers: its npm package downloads its program from
//! GitHub's releases when installed, which these machines cannot reach (see the README).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};
use openapi_workspace::Level;
use serde_json::{Value, json};

use crate::{SPEC, breaking};

const CASES: &str = "crates/openapi-workspace/tests/diff";

/// The Optic release, and the ajv it needs: ajv 8.18+ generates code ajv-errors 3 cannot read.
const OPTIC_PACKAGE: &str = r#"{
  "name": "payments-optic",
  "private": true,
  "dependencies": { "@useoptic/optic": "1.0.9" },
  "overrides": { "ajv": "8.17.1" }
}
"#;

/// One pair of documents and what each judge said.
struct Row {
    case: String,
    /// What the case's source says: drift's classes, the named case's verdict, our version change.
    expected: String,
    optic: Verdict,
    ours: Verdict,
    /// Breaks the oracle showed that the engine missed, and pairs of schemas it judged.
    misses: usize,
    judged: usize,
}

/// A judge's verdict: whether old clients break, and the rules it named.
struct Verdict {
    breaks: bool,
    rules: Vec<String>,
}

pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    let optic = install_optic(root)?;
    let work = root.join("target/diff-peers");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let judge = |case: &str, expected: String, base: &str, head: &str, ext: &str| -> anyhow::Result<Row> {
        let (base_file, head_file) = (work.join(format!("{case}.base.{ext}")), work.join(format!("{case}.head.{ext}")));
        std::fs::write(&base_file, base)?;
        std::fs::write(&head_file, head)?;
        let diff = openapi_workspace::diff_texts(base, head).with_context(|| format!("{case}: the engine"))?;
        let proof = openapi_workspace::prove_texts(base, head).with_context(|| format!("{case}: the oracle"))?;
        let ours = Verdict {
            breaks: diff.changes.iter().any(|change| change.level == Level::Breaking),
            rules: diff
                .changes
                .iter()
                .filter(|change| change.level == Level::Breaking)
                .map(|change| {
                    serde_json::to_value(change.rule).map(|rule| rule.as_str().unwrap_or_default().to_owned())
                })
                .collect::<Result<_, _>>()?,
        };
        let optic = run_optic(&optic, &base_file, &head_file).with_context(|| format!("{case}: optic"))?;
        Ok(Row { case: case.to_owned(), expected, optic, ours, misses: proof.misses.len(), judged: proof.judged })
    };

    let base: Value = read_json(&root.join(CASES).join("drift/base.json"))?;
    let base_text = serde_json::to_string_pretty(&base)?;
    let mut drift = Vec::new();
    for (case, classes) in listed(&root.join(CASES).join("drift/classes.txt"))? {
        let head = patched(&base, &root.join(CASES).join(format!("drift/patch/{case}.json")))?;
        eprintln!("== drift: {case}");
        drift.push(judge(&case, classes, &base_text, &serde_json::to_string_pretty(&head)?, "json")?);
    }
    let mut named = Vec::new();
    for (case, verdict) in listed(&root.join(CASES).join("named/verdicts.txt"))? {
        let head = patched(&base, &root.join(CASES).join(format!("named/{case}.json")))?;
        eprintln!("== named: {case}");
        let expected = verdict.split_once(' ').map_or(verdict.clone(), |(verdict, _)| verdict.to_owned());
        named.push(judge(&case, expected, &base_text, &serde_json::to_string_pretty(&head)?, "json")?);
    }
    let mut history = Vec::new();
    let commits = spec_history(root)?;
    for pair in commits.windows(2) {
        let (base, head) = (breaking::git_show(root, &pair[0])?, breaking::git_show(root, &pair[1])?);
        let case = format!("{}..{}", pair[0], pair[1]);
        eprintln!("== history: {case}");
        let version = |text: &str| breaking::parse(text).and_then(|document| breaking::version(&document));
        let expected = format!("{} → {}", version(&base)?, version(&head)?);
        history.push(judge(&case, expected, &base, &head, "yaml")?);
    }
    let timing = largest_document(root, &work)?;
    let text = report(&drift, &named, &history, &timing);
    std::fs::write(root.join("DIFF-PEERS.md"), text)?;
    eprintln!("== wrote DIFF-PEERS.md");
    let misses: usize = drift.iter().chain(&named).chain(&history).map(|row| row.misses).sum();
    if misses > 0 {
        bail!("the oracle found {misses} breaks the engine missed (DIFF-PEERS.md)");
    }
    Ok(())
}

/// Lines of a case list: the case and the rest of the line.
fn listed(file: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let text = std::fs::read_to_string(file).with_context(|| file.display().to_string())?;
    Ok(text
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split_once(' '))
        .map(|(case, rest)| (case.to_owned(), rest.to_owned()))
        .collect())
}

fn read_json(file: &Path) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(file).with_context(|| file.display().to_string())?;
    serde_json::from_str(&text).with_context(|| file.display().to_string())
}

/// `base` with the JSON Patch in `file` applied.
fn patched(base: &Value, file: &Path) -> anyhow::Result<Value> {
    let patch: json_patch::Patch = serde_json::from_value(read_json(file)?)?;
    let mut head = base.clone();
    json_patch::patch(&mut head, &patch).with_context(|| file.display().to_string())?;
    Ok(head)
}

/// The commits that changed our document, oldest first.
fn spec_history(root: &Path) -> anyhow::Result<Vec<String>> {
    let output = Command::new("git")
        .args(["log", "--reverse", "--format=%h", "--", SPEC])
        .current_dir(root)
        .output()
        .context("git log")?;
    Ok(String::from_utf8(output.stdout)?.lines().map(str::to_owned).collect())
}

/// `target/tools/optic/node_modules/.bin/optic`, installed with npm if missing or out of date.
fn install_optic(root: &Path) -> anyhow::Result<PathBuf> {
    let dir = root.join("target/tools/optic");
    let bin = dir.join("node_modules/.bin/optic");
    let manifest = dir.join("package.json");
    if bin.exists() && std::fs::read_to_string(&manifest).ok().as_deref() == Some(OPTIC_PACKAGE) {
        return Ok(bin);
    }
    std::fs::create_dir_all(&dir)?;
    std::fs::write(&manifest, OPTIC_PACKAGE)?;
    eprintln!("== installing @useoptic/optic into {}", dir.display());
    let status = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--no-package-lock", "--ignore-scripts", "--loglevel=error"])
        .current_dir(&dir)
        .status()
        .context("npm (Node.js) is needed to install optic")?;
    if !status.success() || !bin.exists() {
        bail!("npm install of @useoptic/optic failed ({status})");
    }
    Ok(bin)
}

/// Optic's verdict: its exit status (1: breaking) and the rules of the checks its report says failed.
fn run_optic(optic: &Path, base: &Path, head: &Path) -> anyhow::Result<Verdict> {
    let output = Command::new(optic)
        .args(["diff", "--check", "--severity", "error"])
        .arg(base)
        .arg(head)
        .env("OPTIC_TELEMETRY_LEVEL", "off")
        .output()?;
    let report = String::from_utf8_lossy(&output.stdout);
    let mut rules: Vec<String> = Vec::new();
    for line in report.lines().map(str::trim) {
        // A failed check: `x [its rule] what it found`.
        let Some((rule, _)) = line.strip_prefix("x [").and_then(|rest| rest.split_once("] ")) else { continue };
        if !rules.iter().any(|r| r == rule) {
            rules.push(rule.to_owned());
        }
    }
    match output.status.code() {
        Some(0) if rules.is_empty() => Ok(Verdict { breaks: false, rules }),
        Some(1) if !rules.is_empty() => Ok(Verdict { breaks: true, rules }),
        code => bail!(
            "optic exited {code:?} after naming {} breaking rules:\n{report}\n{}",
            rules.len(),
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

/// The time to diff (and to prove) the largest document of the corpus against a changed copy of
/// itself: one operation removed, one added, one property retyped.
fn largest_document(root: &Path, work: &Path) -> anyhow::Result<String> {
    let archive = root.join("crates/openapi-workspace/tests/corpus/public/github.tar.gz");
    let status = Command::new("tar").arg("-xzf").arg(&archive).arg("-C").arg(work).status()?;
    if !status.success() {
        bail!("tar -xzf {}", archive.display());
    }
    let text = std::fs::read_to_string(work.join("api.github.com.json"))?;
    let mut head: Value = serde_json::from_str(&text)?;
    let paths = head["paths"].as_object_mut().context("paths")?;
    let first = paths.keys().next().cloned().context("a path")?;
    let moved = paths.remove(&first).context("a path item")?;
    paths.insert("/a-new-path".into(), moved);
    let schemas = head["components"]["schemas"].as_object_mut().context("schemas")?;
    let retyped = schemas.values_mut().find_map(|schema| {
        let property = schema.get_mut("properties")?.as_object_mut()?.values_mut().find(|p| p["type"] == "string")?;
        property["type"] = json!("integer");
        Some(())
    });
    retyped.context("a string property to retype")?;
    let head = serde_json::to_string(&head)?;
    let started = Instant::now();
    let diff = openapi_workspace::diff_texts(&text, &head)?;
    let diffed = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let proof = openapi_workspace::prove_texts(&text, &head)?;
    let proved = started.elapsed().as_secs_f64();
    let mut out = format!(
        "GitHub's document ({:.1} MB) against a changed copy: the diff in {diffed:.1} s ({} changes), the \
         oracle in {proved:.1} s ({} pairs of schemas, {} misses, {} unshown); {}.",
        text.len() as f64 / 1e6,
        diff.changes.len(),
        proof.judged,
        proof.misses.len(),
        proof.unshown.len(),
        if cfg!(debug_assertions) {
            "a debug build"
        } else {
            "a release build (`cargo run --release -p xtask -- diff-peers`)"
        }
    );
    for miss in &proof.misses {
        write!(out, "\n- miss: {}", miss.chars().take(400).collect::<String>())?;
    }
    Ok(out)
}

fn yes(breaks: bool) -> &'static str {
    if breaks { "breaks" } else { "—" }
}

fn table(out: &mut String, rows: &[Row], expected: &str) {
    writeln!(out, "| case | {expected} | Optic | openapi-workspace | oracle: pairs, misses |").unwrap();
    writeln!(out, "|---|---|---|---|---|").unwrap();
    for row in rows {
        let rules = |verdict: &Verdict| match verdict.rules.is_empty() {
            true => yes(verdict.breaks).to_owned(),
            false => format!("{}: {}", yes(verdict.breaks), verdict.rules.join(", ")),
        };
        writeln!(
            out,
            "| {} | {} | {} | {} | {}, {} |",
            row.case,
            row.expected.replace(',', ", "),
            rules(&row.optic),
            rules(&row.ours),
            row.judged,
            row.misses
        )
        .unwrap();
    }
}

/// Where Optic's verdict differs from the engine's (whose every pair the oracle holds).
fn differences(out: &mut String, rows: &[&Row]) {
    let missed: Vec<&str> =
        rows.iter().filter(|row| row.ours.breaks && !row.optic.breaks).map(|row| row.case.as_str()).collect();
    let more: Vec<&str> =
        rows.iter().filter(|row| !row.ours.breaks && row.optic.breaks).map(|row| row.case.as_str()).collect();
    writeln!(
        out,
        "- Optic says nothing breaks where the engine finds a break ({}): {}",
        missed.len(),
        missed.join(", ")
    )
    .unwrap();
    writeln!(out, "- Optic finds a break where the engine does not ({}): {}", more.len(), more.join(", ")).unwrap();
}

fn report(drift: &[Row], named: &[Row], history: &[Row], timing: &str) -> String {
    let mut out = String::new();
    let all: Vec<&Row> = drift.iter().chain(named).chain(history).collect();
    let misses: usize = all.iter().map(|row| row.misses).sum();
    let judged: usize = all.iter().map(|row| row.judged).sum();
    writeln!(
        out,
        "# The diff engine beside its peers\n\n\
         Written by `cargo xtask diff-peers`; do not edit. The same pairs of documents judged by Optic \
         (`@useoptic/optic` 1.0.9, `optic diff --check`), by `openapi-workspace diff`, and by the \
         engine's oracle, which builds values from both schemas of every pair the engine compares and \
         validates them in the direction they travel: a value that breaks where the engine said \
         compatible is a miss. \"breaks\" means a client written against the base fails against the \
         head; the rules named are each tool's breaking ones.\n\n\
         `@pb33f/openapi-changes` could not be run: its npm package fetches its program from GitHub's \
         releases when installed, which these machines cannot reach.\n\n\
         **{} pairs, {judged} pairs of schemas judged by the oracle, {misses} misses.** {timing}\n",
        all.len()
    )
    .unwrap();
    writeln!(out, "## Summary\n").unwrap();
    differences(&mut out, &all);
    let drift_disagrees: Vec<&str> = drift
        .iter()
        .filter(|row| {
            let classes: Vec<&str> = row.expected.split(',').collect();
            let breaks = classes.iter().any(|class| matches!(*class, "BackwardIncompatible" | "Incompatible"));
            !classes.contains(&"Unhandled") && breaks != row.ours.breaks
        })
        .map(|row| row.case.as_str())
        .collect();
    let unhandled = drift.iter().filter(|row| row.expected.contains("Unhandled")).count();
    writeln!(
        out,
        "- drift: {unhandled} of its {} cases are \"Unhandled\" (it gives no verdict; the engine does, held by the \
         oracle); where it gives one, it differs from the engine on {} ({}), each explained in \
         `crates/openapi-workspace/src/diff/oracle/patches.rs`.",
        drift.len(),
        drift_disagrees.len(),
        drift_disagrees.join(", ")
    )
    .unwrap();
    let named_wrong: Vec<&str> = named
        .iter()
        .filter(|row| (row.expected == "breaking") != row.ours.breaks)
        .map(|row| row.case.as_str())
        .collect();
    let optic_named_wrong: Vec<&str> = named
        .iter()
        .filter(|row| (row.expected == "breaking") != row.optic.breaks)
        .map(|row| row.case.as_str())
        .collect();
    writeln!(
        out,
        "- The misses other tools' users reported: the engine judges {} of {} as their list says{}; Optic {} of {}{}.\n",
        named.len() - named_wrong.len(),
        named.len(),
        if named_wrong.is_empty() { String::new() } else { format!(" (not: {})", named_wrong.join(", ")) },
        named.len() - optic_named_wrong.len(),
        named.len(),
        if optic_named_wrong.is_empty() { String::new() } else { format!(" (not: {})", optic_named_wrong.join(", ")) },
    )
    .unwrap();
    writeln!(out, "## drift's cases (Apache-2.0; `{CASES}/drift/NOTICE.md`)\n").unwrap();
    table(&mut out, drift, "drift");
    writeln!(out, "\n## Misses other tools' users reported (`{CASES}/named`)\n").unwrap();
    table(&mut out, named, "should");
    writeln!(out, "\n## Our document's history (`{SPEC}`, each commit that changed it)\n").unwrap();
    table(&mut out, history, "version");
    out
}
