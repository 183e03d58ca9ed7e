//! `openapi-workspace --spec FILE --out DIR`: an OpenAPI 3.0 or 3.1 document (YAML or JSON) to a
//! Cargo workspace of three crates — the models, a progenitor client and an axum server trait —
//! named after DIR. The same as `cargo xtask codegen --spec FILE --out DIR` in this repository;
//! installed with `cargo install --path crates/openapi-workspace`, it needs no checkout.

use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage: openapi-workspace --spec FILE --out DIR [--strict]";

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let strict = args.iter().any(|a| a == "--strict");
    args.retain(|a| a != "--strict");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (spec, out) = match args.as_slice() {
        ["--spec", spec, "--out", out] | ["--out", out, "--spec", spec] => (Path::new(*spec), Path::new(*out)),
        ["--help" | "-h"] => {
            println!(
                "{USAGE}\n\nWrites DIR-types, DIR-client and DIR-server into DIR. Warnings on stderr say, each with its JSON \
                 pointer, what was repaired or approximated; --strict refuses such a document instead."
            );
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    match openapi_workspace::write_workspace(spec, out, strict) {
        Ok(written) => {
            for note in &written.notes {
                eprintln!("warning: {}#{}: {}", spec.display(), note.pointer, note.message);
            }
            let (name, out) = (written.name, out.display());
            println!(
                "wrote {out}: crates {name}-types, {name}-client and {name}-server; check them with `cargo check \
                 --manifest-path {out}/Cargo.toml --workspace`"
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("openapi-workspace: {}", error.chain());
            ExitCode::FAILURE
        }
    }
}
