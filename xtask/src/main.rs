//! `cargo xtask codegen [--check]`: regenerates everything derived from `openapi/payments.yaml`.
//! With `--check` nothing is written; stale files are shown as a unified diff and the command
//! fails, which is how CI refuses drift between the document and the code.
//!
//! `cargo xtask codegen --spec FILE --out DIR`: the same three crates for another OpenAPI 3.0
//! document (YAML or JSON), as a Cargo workspace of their own in DIR, named after DIR
//! (`DIR-types`, `DIR-client`, `DIR-server`).
//!
//! `cargo xtask docs`: the same, then the static reference `target/api-docs/index.html`, one
//! self-contained file (Swagger UI and the document inlined) that opens from disk.
//!
//! `cargo xtask bench [--smoke]`: measures the sandbox and rewrites `BENCHMARKS.md` (see
//! `bench.rs`); `--codegen` measures the generator alone and rewrites only its section,
//! `--upload` the upload through a generated server (`upload.rs`) and its section, `--server` the
//! generated server against a hand-written one (`server_bench.rs`) and its section,
//! `--instructions [--smoke | --only KIND]` the sandbox's instructions per request under
//! callgrind (`bench/instructions.rs`) and its section; `--only` counts the kinds whose name
//! holds KIND and prints them, leaving BENCHMARKS.md as it is.
//!
//! `cargo xtask breaking --base <git-ref> [--head FILE]`: the breaking-change gate (see
//! `breaking.rs`).
//!
//! `cargo xtask diff-peers`: the diff engine beside Optic and drift on the same pairs, written to
//! `DIFF-PEERS.md` (see `diff_peers.rs`).
//!
//! `cargo xtask corpus [NAME…]`: every corpus document generated as a workspace of its own and
//! checked as its users build it; writes `CORPUS.md` (see `corpus.rs`). `--directory`: every
//! document of the APIs.guru collection generated, a sample checked (see `directory/`).
//! `--mock`: every corpus document served by `openapi-workspace mock --stateful` (see
//! `corpus_mock.rs`).

/// The allocator `openapi-workspace` runs with, so the corpus measures generation as it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod bench;
mod breaking;
mod corpus;
mod corpus_mock;
mod diff_peers;
mod directory;
#[cfg(test)]
mod layers;
mod samples;
mod server_bench;
#[cfg(test)]
mod tidy;
mod upload;
mod wrk;

use anyhow::{Context, anyhow, bail};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use openapi_workspace::Config;

const SPEC: &str = "openapi/payments.yaml";

/// What `codegen` writes from it, in the order it writes them.
const GENERATED: [&str; 8] = [
    "crates/payments-types/src/generated.rs",
    "crates/payments-client/src/generated.rs",
    "crates/payments-server/src/generated.rs",
    "crates/payments-cli/src/generated.rs",
    "tests/docs_samples/generated.rs",
    "crates/payments-server/src/schemas.json",
    "docs/openapi-3.1.json",
    "docs/api.md",
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["codegen"] => codegen(Mode::Write),
        ["codegen", "--check"] => codegen(Mode::Check),
        ["codegen", "--spec", spec, "--out", out] => standalone(Path::new(spec), Path::new(out), false),
        ["codegen", "--spec", spec, "--out", out, "--strict"] => standalone(Path::new(spec), Path::new(out), true),
        ["docs"] => codegen(Mode::Write).and_then(|()| static_docs()),
        ["bench"] => bench::run(&workspace_root(), false),
        ["bench", "--smoke"] => bench::run(&workspace_root(), true),
        ["bench", "--codegen"] => bench::codegen_only(&workspace_root()),
        ["bench", "--upload"] => bench::upload_only(&workspace_root()),
        ["bench", "--server"] => bench::server_only(&workspace_root()),
        ["bench", "--instructions"] => bench::instructions_only(&workspace_root(), false, None),
        ["bench", "--instructions", "--smoke"] => bench::instructions_only(&workspace_root(), true, None),
        ["bench", "--instructions", "--only", kind] => bench::instructions_only(&workspace_root(), false, Some(kind)),
        ["corpus", "--generate-one", spec, out] => corpus::generate_one(Path::new(spec), Path::new(out)),
        ["corpus", "--directory-one", spec, out] => directory::generate_one(Path::new(spec), Path::new(out)),
        ["corpus", "--directory"] => directory::run(&workspace_root(), false),
        ["corpus", "--mock"] => corpus_mock::run(&workspace_root()),
        ["corpus", "--directory", "--check-sample"] => directory::check_sample(&workspace_root()),
        ["corpus", "--directory", "--ci"] | ["corpus", "--ci", "--directory"] => {
            directory::run(&workspace_root(), true)
        }
        ["corpus", "--ci", only @ ..] => corpus::run(&workspace_root(), only, corpus::Reach::Ci),
        ["corpus", only @ ..] => corpus::run(&workspace_root(), only, corpus::Reach::Full),
        ["diff-peers"] => diff_peers::run(&workspace_root()),
        ["breaking", "--base", base, rest @ ..] => {
            let head = match rest {
                [] => None,
                ["--head", file] => Some(Path::new(*file)),
                _ => return usage(),
            };
            return match breaking::run(&workspace_root(), base, head) {
                Ok(breaking::Verdict::Pass) => ExitCode::SUCCESS,
                Ok(breaking::Verdict::Breaking) => ExitCode::FAILURE,
                Err(message) => {
                    eprintln!("{message:#}");
                    ExitCode::from(2)
                }
            };
        }
        _ => return usage(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message:#}");
            ExitCode::FAILURE
        }
    }
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: cargo xtask codegen [--check] | cargo xtask codegen --spec FILE --out DIR [--strict] | cargo xtask docs | cargo xtask bench [--smoke | --codegen | --upload | --server | --instructions [--smoke | --only KIND]] | \
         cargo xtask breaking --base <git-ref> [--head FILE] | cargo xtask diff-peers | cargo xtask corpus [--ci] [NAME...] | cargo xtask corpus --mock | cargo xtask corpus --directory [--ci | --check-sample]"
    );
    ExitCode::from(2)
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Write,
    Check,
}

fn codegen(mode: Mode) -> anyhow::Result<()> {
    let root = workspace_root();
    let spec = std::fs::read_to_string(root.join(SPEC)).context(SPEC)?;
    let config = Config::workspace(SPEC);
    // The client and the document read for the references at once, then the CLI (which needs the
    // client's builders); the samples are written with all three; then the references (which show the samples) and the samples'
    // test through rustfmt, at once. The generated code is written as prettyplease printed it:
    // each crate's `#[rustfmt::skip] mod generated;` keeps `cargo fmt` off it.
    let join = |e: openapi_workspace::Error| anyhow::Error::new(e).context(SPEC);
    let (generated, read) = std::thread::scope(|s| {
        let generated = s.spawn(|| openapi_workspace::generate(&spec, &config));
        let read = s.spawn(|| openapi_workspace::Spec::parse(&spec));
        Ok::<_, anyhow::Error>((
            generated.join().expect("generate").map_err(join)?,
            read.join().expect("parse").map_err(join)?,
        ))
    })?;
    let cli = openapi_workspace::cli(&spec, "payments_client", &generated.builders, &config).map_err(join)?;
    // Our own document is served whole and as written: nothing repaired, approximated or retyped.
    if let Some(note) = generated.notes.first() {
        anyhow::bail!("{SPEC}#{}: {} (our document must need no repair)", note.pointer, note.message);
    }
    let flavour = samples::flavour();
    let samples = openapi_workspace::samples(&read, &generated.builders, Some(&cli), &flavour).map_err(join)?;
    samples::complete(&read, &samples, &flavour)?;
    let guide = openapi_workspace::guide(&samples, &samples::guide()).map_err(join)?;
    let samples_test = openapi_workspace::samples_test_file(&samples, SPEC, Some(&guide));
    let (rendition, markdown, samples_test) = std::thread::scope(|s| {
        let rendition = s.spawn(|| openapi_workspace::openapi_31(&read, &samples, Some(&guide)));
        let markdown = s.spawn(|| openapi_workspace::markdown_reference(&read, SPEC, &samples, Some(&guide)));
        let samples_test = rustfmt(&root, &samples_test, "2024");
        Ok::<_, anyhow::Error>((
            rendition.join().expect("openapi_31").map_err(join)?,
            markdown.join().expect("markdown").map_err(join)?,
            samples_test?,
        ))
    })?;
    let contents = [
        generated.types,
        generated.client,
        generated.server,
        cli,
        samples_test,
        generated.server_schemas,
        rendition,
        markdown,
    ];
    let mut stale = Vec::new();
    for (path, contents) in GENERATED.iter().zip(&contents) {
        if ensure_file_contents(&root.join(path), path, contents, mode)? {
            stale.push(*path);
        }
    }
    match (mode, stale.is_empty()) {
        (Mode::Check, false) => Err(anyhow!(
            "\n{} generated file(s) are stale: {}.\nRun `cargo xtask codegen` and commit the result.",
            stale.len(),
            stale.join(", ")
        )),
        (Mode::Write, _) => {
            for path in &stale {
                println!("updated {path}");
            }
            Ok(())
        }
        (Mode::Check, true) => Ok(()),
    }
}

/// Writes the standalone workspace for `spec` into `out` (`openapi_workspace::write_workspace`, as
/// the `openapi-workspace` binary does), with the notes on stderr.
fn standalone(spec: &Path, out: &Path, strict: bool) -> anyhow::Result<()> {
    let written = openapi_workspace::write_workspace(spec, out, &openapi_workspace::Options { strict, name: None })?;
    for note in &written.notes {
        eprintln!("warning: {}#{}: {}", spec.display(), note.pointer, note.message);
    }
    let name = written.name;
    println!(
        "wrote {} crates {name}-types, {name}-client and {name}-server; check them with `cargo check --manifest-path {}/Cargo.toml --workspace`",
        out.display(),
        out.display()
    );
    Ok(())
}

/// `source` in the workspace's style (`rustfmt.toml`), so generated files are what `cargo fmt`
/// would make of them and its check holds for them too.
fn rustfmt(root: &Path, source: &str, edition: &str) -> anyhow::Result<String> {
    Ok(openapi_workspace::rustfmt(source, edition, &root.join("rustfmt.toml"))?)
}

/// Makes `path` hold `contents` (or, checking, reports with a diff that it does not).
/// Returns whether the file was stale.
fn ensure_file_contents(path: &Path, display: &str, contents: &str, mode: Mode) -> anyhow::Result<bool> {
    let current = std::fs::read_to_string(path).unwrap_or_default();
    if current == contents {
        return Ok(false);
    }
    match mode {
        Mode::Check => {
            let diff = similar::TextDiff::from_lines(&current, contents);
            eprint!(
                "{}",
                diff.unified_diff().context_radius(3).header(&format!("a/{display}"), &format!("b/{display}"))
            );
        }
        Mode::Write => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).with_context(|| display.to_string())?;
            }
            std::fs::write(path, contents).with_context(|| display.to_string())?;
        }
    }
    Ok(true)
}

/// Writes `target/api-docs/index.html`: Swagger UI's files (from the vendored
/// `utoipa-swagger-ui`) and the 3.1 rendition, inlined into one page that needs no server.
fn static_docs() -> anyhow::Result<()> {
    let root = workspace_root();
    let asset = |name: &str| -> anyhow::Result<String> {
        let config = std::sync::Arc::new(utoipa_swagger_ui::Config::default());
        let file = utoipa_swagger_ui::serve(name, config)
            .map_err(|e| anyhow!("swagger-ui {name}: {e}"))?
            .with_context(|| format!("swagger-ui has no {name}"))?;
        if file.gzpipped {
            bail!("swagger-ui {name} is stored gzipped; build utoipa-swagger-ui without its gzip feature");
        }
        // Inline, a literal `</script` would end the element early.
        Ok(String::from_utf8_lossy(&file.bytes).replace("</script", "<\\/script"))
    };
    let spec = std::fs::read_to_string(root.join("docs/openapi-3.1.json")).context("docs/openapi-3.1.json")?;
    let spec: serde_json::Value = serde_json::from_str(&spec).context("docs/openapi-3.1.json")?;
    let title = spec.pointer("/info/title").and_then(|t| t.as_str()).unwrap_or("API").to_owned();
    let spec = serde_json::to_string(&spec)?.replace("</", "<\\/");
    let page = format!(
        r##"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title} reference</title>
<!-- Generated by `cargo xtask docs` from openapi/payments.yaml (via docs/openapi-3.1.json). -->
<style>{css}</style>
</head>
<body>
<div id="swagger-ui"></div>
<script>{bundle}</script>
<script>
window.ui = SwaggerUIBundle({{
  spec: {spec},
  dom_id: "#swagger-ui",
  deepLinking: true,
  displayOperationId: true,
  displayRequestDuration: true,
  docExpansion: "list",
  filter: true,
  tryItOutEnabled: true,
  persistAuthorization: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout"
}});
</script>
</body>
</html>
"##,
        css = asset("swagger-ui.css")?,
        bundle = asset("swagger-ui-bundle.js")?,
    );
    let out = root.join("target/api-docs/index.html");
    std::fs::create_dir_all(out.parent().expect("a parent"))?;
    std::fs::write(&out, page).with_context(|| out.display().to_string())?;
    println!("wrote {} (open it in a browser; nothing is fetched)", out.display());
    Ok(())
}

/// The cargo running this command (`CARGO`), or the one on the path.
fn cargo() -> std::process::Command {
    std::process::Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
}

/// Builds what `what` names (`--package`s and `--bin`s) in the dev or release profile, quietly;
/// answers the directory its binaries are in.
fn cargo_build(root: &Path, what: &[&str], release: bool) -> anyhow::Result<PathBuf> {
    let mut cargo = cargo();
    cargo.current_dir(root).args(["build", "--quiet"]).args(what);
    if release {
        cargo.arg("--release");
    }
    if !cargo.status()?.success() {
        bail!("cargo build {} failed", what.join(" "));
    }
    Ok(target_dir(root).join(if release { "release" } else { "debug" }))
}

/// Where cargo builds: `CARGO_TARGET_DIR` when set (relative to the working directory, as cargo
/// reads it), else the workspace's `target`.
fn target_dir(root: &Path) -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => std::path::absolute(dir).expect("the working directory"),
        None => root.join("target"),
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the workspace root").to_path_buf()
}
