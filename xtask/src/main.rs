//! `cargo xtask codegen [--check]`: regenerates everything derived from `openapi/payments.yaml`.
//! With `--check` nothing is written; stale files are shown as a unified diff and the command
//! fails, which is how CI refuses drift between the document and the code.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use payments_codegen::Config;

const SPEC: &str = "openapi/payments.yaml";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["codegen"] => codegen(Mode::Write),
        ["codegen", "--check"] => codegen(Mode::Check),
        _ => {
            eprintln!("usage: cargo xtask codegen [--check]");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Write,
    Check,
}

fn codegen(mode: Mode) -> Result<(), String> {
    let root = workspace_root();
    let spec = std::fs::read_to_string(root.join(SPEC)).map_err(|e| format!("{SPEC}: {e}"))?;
    let generated = payments_codegen::generate(&spec, &Config::workspace(SPEC)).map_err(|e| format!("{SPEC}: {e}"))?;
    let rendition = payments_codegen::openapi_31(&spec).map_err(|e| format!("{SPEC}: {e}"))?;
    let markdown = payments_codegen::markdown_reference(&spec, SPEC).map_err(|e| format!("{SPEC}: {e}"))?;

    let files = [
        ("crates/payments-types/src/generated.rs", generated.types),
        ("crates/payments-client/src/generated.rs", generated.client),
        ("crates/payments-server/src/generated.rs", generated.server),
        ("crates/payments-server/src/schemas.json", generated.server_schemas),
        ("docs/openapi-3.1.json", rendition),
        ("docs/api.md", markdown),
    ];
    let mut stale = Vec::new();
    for (path, contents) in &files {
        if ensure_file_contents(&root.join(path), path, contents, mode)? {
            stale.push(*path);
        }
    }
    match (mode, stale.is_empty()) {
        (Mode::Check, false) => Err(format!(
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

/// Makes `path` hold `contents` (or, checking, reports with a diff that it does not).
/// Returns whether the file was stale.
fn ensure_file_contents(path: &Path, display: &str, contents: &str, mode: Mode) -> Result<bool, String> {
    let current = std::fs::read_to_string(path).unwrap_or_default();
    if current == contents {
        return Ok(false);
    }
    match mode {
        Mode::Check => {
            let diff = similar::TextDiff::from_lines(&current, contents);
            eprint!(
                "{}",
                diff.unified_diff()
                    .context_radius(3)
                    .header(&format!("a/{display}"), &format!("b/{display}"))
            );
        }
        Mode::Write => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{display}: {e}"))?;
            }
            std::fs::write(path, contents).map_err(|e| format!("{display}: {e}"))?;
        }
    }
    Ok(true)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace root")
        .to_path_buf()
}
