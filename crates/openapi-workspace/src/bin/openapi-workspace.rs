//! `openapi-workspace --spec FILE --out DIR`: an OpenAPI 3.0, 3.1 or 3.2 document (YAML or JSON)
//! to a Cargo workspace of three crates — the models, a progenitor client and an axum server
//! trait — named after DIR. The same as `cargo xtask codegen --spec FILE --out DIR` in this
//! repository; installed with `cargo install --path crates/openapi-workspace`, it needs no
//! checkout. `openapi-workspace check --spec FILE --out DIR` writes nothing and fails, with a
//! unified diff, when DIR is not exactly what FILE generates: a team's CI step.

use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage: openapi-workspace [check] --spec FILE --out DIR [--strict]";

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.first().is_some_and(|a| a == "check");
    if check {
        args.remove(0);
    }
    let strict = args.iter().any(|a| a == "--strict");
    args.retain(|a| a != "--strict");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (spec, out) = match args.as_slice() {
        ["--spec", spec, "--out", out] | ["--out", out, "--spec", spec] => (Path::new(*spec), Path::new(*out)),
        ["--help" | "-h"] => {
            println!(
                "{USAGE}\n\nWrites DIR-types, DIR-client and DIR-server into DIR. Warnings on stderr say, each with its JSON \
                 pointer, what was repaired or approximated; --strict refuses such a document instead.\n\n\
                 check: writes nothing; exits 1 with a unified diff on stdout when DIR is not exactly what FILE \
                 generates (a file changed, missing, or marked @generated but no longer written), 0 when it is."
            );
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if check {
        return match openapi_workspace::check_workspace(spec, out, strict) {
            Ok(openapi_workspace::Checked::Same(_)) => {
                eprintln!("{} is what {} generates", out.display(), spec.display());
                ExitCode::SUCCESS
            }
            Ok(openapi_workspace::Checked::Stale { diff, .. }) => {
                print!("{diff}");
                eprintln!(
                    "{} is not what {} generates (the diff above); run `openapi-workspace --spec {} --out {}`",
                    out.display(),
                    spec.display(),
                    spec.display(),
                    out.display()
                );
                ExitCode::FAILURE
            }
            Err(error) => {
                eprintln!("openapi-workspace: {}", error.chain());
                ExitCode::FAILURE
            }
        };
    }
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
