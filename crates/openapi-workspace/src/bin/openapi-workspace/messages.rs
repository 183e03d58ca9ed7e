//! What the tool says: warnings and errors for a person on stderr, or, with `--message-format
//! json`, one JSON object a line on stdout (as cargo's), each with its file, JSON pointer,
//! operation (`GET /pets/{id}`, when the pointer is in one), kind and message, so CI can annotate
//! the document where it needs attention.

use std::path::Path;

use openapi_workspace::{Error, Note};
use serde_json::{Value, json};

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum MessageFormat {
    Human,
    Json,
}

pub(crate) struct Messages {
    pub(crate) format: MessageFormat,
    pub(crate) quiet: bool,
}

impl Messages {
    /// The repairs and approximations reading the document needed: warnings.
    pub(crate) fn notes(&self, spec: &Path, notes: &[Note]) {
        if self.quiet {
            return;
        }
        for note in notes {
            match self.format {
                MessageFormat::Human => eprintln!("warning: {}#{}: {}", spec.display(), note.pointer, note.message),
                MessageFormat::Json => {
                    line(located("warning", Some(spec), Some(&note.pointer), &note.message));
                }
            }
        }
    }

    pub(crate) fn error(&self, error: &Error) {
        let (file, pointer, message) = parts(error);
        match self.format {
            MessageFormat::Human => eprintln!("openapi-workspace: {}", error.chain()),
            MessageFormat::Json => line(located("error", file, pointer.as_deref(), &message)),
        }
    }

    pub(crate) fn written(&self, out: &Path, name: &str) {
        if self.quiet {
            return;
        }
        let crates = [format!("{name}-types"), format!("{name}-client"), format!("{name}-server")];
        match self.format {
            MessageFormat::Human => println!(
                "wrote {out}: crates {}, {} and {}; check them with `cargo check --manifest-path {out}/Cargo.toml \
                 --workspace`, write them again with `cargo xtask codegen` there",
                crates[0],
                crates[1],
                crates[2],
                out = out.display()
            ),
            MessageFormat::Json => line(json!({"kind": "written", "out": out.display().to_string(), "crates": crates})),
        }
    }

    pub(crate) fn same(&self, spec: &Path, out: &Path) {
        if self.quiet {
            return;
        }
        match self.format {
            MessageFormat::Human => eprintln!("{} is what {} generates", out.display(), spec.display()),
            MessageFormat::Json => line(json!({"kind": "fresh", "out": out.display().to_string()})),
        }
    }

    /// The diff is the answer, so it is printed even when quiet.
    pub(crate) fn stale(&self, spec: &Path, out: &Path, diff: &str) {
        match self.format {
            MessageFormat::Human => {
                print!("{diff}");
                eprintln!(
                    "{} is not what {} generates (the diff above); run `openapi-workspace generate --spec {} --out {}`, \
                     or `cargo xtask codegen` in it",
                    out.display(),
                    spec.display(),
                    spec.display(),
                    out.display()
                );
            }
            MessageFormat::Json => line(json!({"kind": "stale", "out": out.display().to_string(), "diff": diff})),
        }
    }
}

fn line(value: Value) {
    println!("{value}");
}

fn located(kind: &str, file: Option<&Path>, pointer: Option<&str>, message: &str) -> Value {
    json!({
        "kind": kind,
        "file": file.map(|f| f.display().to_string()),
        "pointer": pointer,
        "operation": pointer.and_then(operation),
        "message": message,
    })
}

/// The error's file (the document, or the directory, it is about), its JSON pointer, and what it
/// says with its sources.
fn parts(error: &Error) -> (Option<&Path>, Option<String>, String) {
    match error {
        Error::InFile { path, source } => {
            let (_, pointer, message) = parts(source);
            (Some(path), pointer, message)
        }
        Error::At { at, why } if at.starts_with('/') || at.starts_with("#/") => {
            (None, Some(at.trim_start_matches('#').to_owned()), why.clone())
        }
        // `file#/pointer`, or a file (or directory) alone.
        Error::At { at, why } => match at.split_once("#/") {
            Some((file, pointer)) => (Some(Path::new(file)), Some(format!("/{pointer}")), why.clone()),
            None => (Some(Path::new(at)), None, why.clone()),
        },
        other => (None, None, other.chain()),
    }
}

/// `GET /pets/{id}` for a pointer into that operation (`/paths/~1pets~1{id}/get/...`).
fn operation(pointer: &str) -> Option<String> {
    const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
    let mut segments = pointer.strip_prefix("/paths/")?.split('/');
    let path = segments.next()?.replace("~1", "/").replace("~0", "~");
    let method = segments.next().filter(|m| METHODS.contains(m))?;
    Some(format!("{} {path}", method.to_ascii_uppercase()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_operation_is_named_from_a_pointer_into_it() {
        assert_eq!(super::operation("/paths/~1pets~1{id}/get/responses/200").as_deref(), Some("GET /pets/{id}"));
        assert_eq!(super::operation("/paths/~1pets/parameters/0"), None);
        assert_eq!(super::operation("/components/schemas/Pet"), None);
    }
}
