//! A generated workspace written to disk, formatted in this workspace's style: what
//! `cargo xtask codegen --spec FILE --out DIR` and the `openapi-workspace` binary do.

use std::path::Path;

use super::standalone::{File, STANDALONE_EDITION, Standalone, standalone};
use crate::error::{Error, Result};
use crate::read::Note;

/// Our `rustfmt.toml`, which goes with every generated workspace (in its edition), so `cargo fmt`
/// there agrees with what was written.
const RUSTFMT_TOML: &str = include_str!("../../../../../rustfmt.toml");

/// What writing a workspace did.
pub struct Written {
    /// The crates' prefix: `DIR`'s name (`DIR-types`, `DIR-client`, `DIR-server`).
    pub name: String,
    /// What reading the document left out or approximated, with its JSON pointer.
    pub notes: Vec<Note>,
}

/// Generates the workspace for the document at `spec` (YAML or JSON) into `out`, named after
/// `out`'s last component, every Rust file through rustfmt. `strict`: a document that needed
/// any repair or approximation (any note) is refused instead, with every note, and nothing is
/// written.
pub fn write_workspace(spec: &Path, out: &Path, strict: bool) -> Result<Written> {
    // A document split across files is made one first (`read::files`).
    let text = crate::timings::timed("read/files", || crate::read::files::bundle(spec))
        .map_err(|e| Error::InFile { path: spec.to_owned(), source: Box::new(e) })?;
    let name = std::path::absolute(out)
        .ok()
        .and_then(|out| out.file_name().and_then(|n| n.to_str()).map(|n| n.to_ascii_lowercase().replace('_', "-")))
        .ok_or_else(|| Error::at(out.display(), "cannot name crates after this directory"))?;
    let Standalone { files, notes } = standalone(&text, &name, &spec.display().to_string())
        .map_err(|e| Error::InFile { path: spec.to_owned(), source: Box::new(e) })?;
    if strict && !notes.is_empty() {
        let listed: Vec<String> =
            notes.iter().map(|n| format!("  {}#{}: {}", spec.display(), n.pointer, n.message)).collect();
        return Err(Error::at(
            spec.display(),
            format!("refused (--strict): {} repair(s) or approximation(s) needed:\n{}", notes.len(), listed.join("\n")),
        ));
    }
    std::fs::create_dir_all(out).map_err(|e| Error::io(out, e))?;
    let rustfmt_toml = RUSTFMT_TOML.replace("edition = \"2024\"", &format!("edition = \"{}\"", STANDALONE_EDITION));
    let config = out.join("rustfmt.toml");
    std::fs::write(&config, &rustfmt_toml).map_err(|e| Error::io(&config, e))?;
    let formatted = crate::timings::timed("write/rustfmt", || formatted(&files, &config))?;
    for (file, contents) in files.iter().zip(formatted) {
        let path = out.join(&file.path);
        if std::fs::read_to_string(&path).is_ok_and(|current| current == contents) {
            continue;
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        std::fs::write(&path, contents).map_err(|e| Error::io(&path, e))?;
    }
    Ok(Written { name, notes })
}

/// Each file's contents, its Rust files through rustfmt: a rustfmt per core at once, since a big
/// document's largest files take seconds each.
fn formatted(files: &[File], config: &Path) -> Result<Vec<String>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, usize::from);
    let mut done: Vec<(usize, Result<String>)> = std::thread::scope(|scope| {
        let work = || {
            let mut done = Vec::new();
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(file) = files.get(index) else { return done };
                let contents = match file.rust {
                    true => rustfmt(&file.contents, STANDALONE_EDITION, config),
                    false => Ok(file.contents.clone()),
                };
                done.push((index, contents));
            }
        };
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(work)).collect();
        handles.into_iter().flat_map(|handle| handle.join().expect("a rustfmt worker")).collect()
    });
    done.sort_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, contents)| contents).collect()
}

/// `source` formatted by rustfmt in `edition` with the configuration at `config`, so generated
/// files are what `cargo fmt` would make of them.
pub fn rustfmt(source: &str, edition: &str, config: &Path) -> Result<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(std::env::var("RUSTFMT").unwrap_or_else(|_| "rustfmt".into()))
        .args(["--edition", edition, "--emit", "stdout", "--config-path"])
        .arg(config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::io("rustfmt (`rustup component add rustfmt`)", e))?;
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = source.to_owned();
    // Written from another thread: rustfmt may fill its output pipe before reading all input.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().map_err(|e| Error::io("rustfmt", e))?;
    writer.join().expect("the writer thread").map_err(|e| Error::io("rustfmt", e))?;
    if !output.status.success() {
        return Err(Error::Rustfmt(String::from_utf8_lossy(&output.stderr).into_owned()));
    }
    String::from_utf8(output.stdout).map_err(|e| Error::library("rustfmt wrote other than UTF-8", e))
}
