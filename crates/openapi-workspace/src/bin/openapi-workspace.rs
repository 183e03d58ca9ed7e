//! `openapi-workspace --spec FILE --out DIR`: an OpenAPI 3.0, 3.1 or 3.2 document (YAML or JSON)
//! to a Cargo workspace of three crates — the models, a progenitor client and an axum server
//! trait — named after DIR. The same as `cargo xtask codegen --spec FILE --out DIR` in this
//! repository; installed with `cargo install --path crates/openapi-workspace`, it needs no
//! checkout. `openapi-workspace check --spec FILE --out DIR` writes nothing and fails, with a
//! unified diff, when DIR is not exactly what FILE generates: a team's CI step.
//! `openapi-workspace diff --base OLD --head NEW` says what changed between two versions of a
//! document and what it does to their clients, and fails at a chosen level: the other CI step.

use std::path::Path;
use std::process::ExitCode;

const USAGE: &str = "usage: openapi-workspace [check] --spec FILE --out DIR [--strict]\n       \
                     openapi-workspace diff --base OLD --head NEW [--format text|json|markdown] \
                     [--fail-on breaking|warning|info|version|none]";

fn main() -> ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "diff") {
        return diff(&args[1..]);
    }
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

/// `diff`: the changes on stdout; exit 1 when one reaches `--fail-on` (default `breaking`), or,
/// with `--fail-on version`, when `info.version` did not change as much as the changes ask.
fn diff(args: &[String]) -> ExitCode {
    let (mut base, mut head, mut format, mut fail_on) = (None, None, openapi_workspace::Format::Text, "breaking");
    let mut args = args.iter().map(String::as_str);
    while let Some(arg) = args.next() {
        match (arg, args.next()) {
            ("--base", Some(path)) => base = Some(Path::new(path)),
            ("--head", Some(path)) => head = Some(Path::new(path)),
            ("--format", Some("text")) => format = openapi_workspace::Format::Text,
            ("--format", Some("json")) => format = openapi_workspace::Format::Json,
            ("--format", Some("markdown")) => format = openapi_workspace::Format::Markdown,
            ("--fail-on", Some(level @ ("breaking" | "warning" | "info" | "version" | "none"))) => fail_on = level,
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let (Some(base), Some(head)) = (base, head) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let diff = match openapi_workspace::diff_files(base, head) {
        Ok(diff) => diff,
        Err(error) => {
            eprintln!("openapi-workspace: {}", error.chain());
            return ExitCode::from(2);
        }
    };
    print!("{}", diff.write(format));
    let failed = match fail_on {
        "breaking" => diff.reaches(openapi_workspace::Level::Breaking),
        "warning" => diff.reaches(openapi_workspace::Level::Warning),
        "info" => diff.reaches(openapi_workspace::Level::Info),
        "version" => !diff.verdict.enough,
        _ => false,
    };
    if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
