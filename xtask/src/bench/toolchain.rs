//! What the toolchain costs here: `codegen --check`, workspaces written for the largest corpus
//! documents, a cold build of the client, and the hand-written code's size.

use anyhow::{Context, bail};
use std::path::Path;
use std::time::Instant;

use serde_json::Value;

use crate::wrk::median;

/// What the generator costs here: `cargo xtask codegen --check` (the median of five runs), a
/// workspace written for the largest 3.0 and 3.1 documents of the corpus (the median of three),
/// and (full runs only: it builds every dependency again) a cold debug build of the client crate.
/// A smoke run (`full` false) runs each step once: it proves the steps, its figures mean nothing.
pub(super) struct Toolchain {
    /// In this process, and as the command a user runs.
    pub(super) check: f64,
    pub(super) check_command: f64,
    /// (document, operations, seconds) for each corpus document.
    pub(super) documents: Vec<(&'static str, usize, f64)>,
    pub(super) cold_client: Option<f64>,
}

/// The corpus documents the generator is timed on: nexus (3.0, 193 operations) and Prefect's
/// (3.1 by FastAPI, 179 operations in 1.3 MB, the largest).
pub(super) const TIMED_DOCUMENTS: [&str; 2] = [
    "crates/openapi-workspace/tests/corpus/nexus.json",
    "crates/openapi-workspace/tests/corpus/openapi-3.1/prefect.json",
];

pub(super) fn toolchain(root: &Path, work: &Path, full: bool) -> anyhow::Result<Toolchain> {
    eprintln!("== codegen time");
    let (checks, writes) = if full { (5, 3) } else { (1, 1) };
    let mut runs = Vec::new();
    for _ in 0..checks {
        let start = Instant::now();
        crate::codegen(crate::Mode::Check)?;
        runs.push(start.elapsed().as_secs_f64());
    }
    let check = median(runs);
    // As a user runs it: cargo's own start and freshness check included.
    let mut runs = Vec::new();
    for _ in 0..checks {
        let start = Instant::now();
        let status = crate::cargo().current_dir(root).args(["xtask", "codegen", "--check"]).status()?;
        if !status.success() {
            bail!("cargo xtask codegen --check failed");
        }
        runs.push(start.elapsed().as_secs_f64());
    }
    let check_command = median(runs);
    let mut documents = Vec::new();
    for document in TIMED_DOCUMENTS {
        let spec = root.join(document);
        let text = std::fs::read_to_string(&spec).with_context(|| document.to_string())?;
        let operations = serde_json::from_str::<Value>(&text).with_context(|| document.to_string())?["paths"]
            .as_object()
            .map_or(0, |paths| {
                paths
                    .values()
                    .filter_map(Value::as_object)
                    .map(|item| item.keys().filter(|k| k.as_str() != "parameters").count())
                    .sum()
            });
        let mut runs = Vec::new();
        for i in 0..writes {
            let out = work.join(format!("codegen-{i}")).join("timed");
            let start = Instant::now();
            openapi_workspace::write_workspace(&spec, &out, &Default::default())?;
            runs.push(start.elapsed().as_secs_f64());
        }
        let name = Path::new(document).file_name().and_then(|n| n.to_str()).unwrap_or(document);
        documents.push((name, operations, median(runs)));
    }
    if !full {
        return Ok(Toolchain { check, check_command, documents, cold_client: None });
    }
    eprintln!("== a cold debug build of payments-client");
    let start = Instant::now();
    let status = crate::cargo()
        .current_dir(root)
        .args(["build", "--quiet", "--package", "payments-client"])
        .env("CARGO_TARGET_DIR", work.join("cold-target"))
        .status()?;
    if !status.success() {
        bail!("the cold build of payments-client failed");
    }
    Ok(Toolchain { check, check_command, documents, cold_client: Some(start.elapsed().as_secs_f64()) })
}

/// The "# The toolchain" section of BENCHMARKS.md.
pub(super) fn render_toolchain(t: &Toolchain) -> String {
    let mut out = format!(
        "# The toolchain\n\n`cargo xtask codegen --check` (the document read, the three crates generated and \
         formatted, compared with what is committed; the generator's heaviest dependencies built at opt-level 1 in \
         the dev profile, see Cargo.toml): **{:.2} s** as the command (cargo's start and freshness check \
         included), {:.2} s of it the generator's own work, medians of five runs.\n\nA workspace written for another \
         document (`openapi_workspace::write_workspace`, what `openapi-workspace` and `cargo xtask codegen --spec` \
         do: read, repaired, generated, every file through rustfmt, written), the median of three:\n\n\
         | document | operations | seconds | ms per operation |\n|---|---|---|---|\n",
        t.check_command, t.check
    );
    for (name, operations, seconds) in &t.documents {
        out.push_str(&format!(
            "| {name} | {operations} | {seconds:.2} | {:.1} |\n",
            seconds * 1000.0 / (*operations).max(1) as f64
        ));
    }
    out.push_str(&format!(
        "\nA cold debug build of the client crate (`cargo build -p payments-client` into an empty target directory, \
         dependencies included): {}.\n",
        t.cold_client.map_or("not measured in this run".to_owned(), |s| format!("{s:.0} s"))
    ));
    out
}

/// The hand-written end of BENCHMARKS.md (from `# Why, measured`): the measurements behind
/// decisions, which the bench does not take again and keeps as they are.
pub(super) const HAND_WRITTEN: &str = "\n# Why, measured\n";

pub(super) fn hand_written(root: &Path) -> anyhow::Result<String> {
    let path = root.join("BENCHMARKS.md");
    let current = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    Ok(current.find(HAND_WRITTEN).map_or(String::new(), |at| current[at..].to_owned()))
}
