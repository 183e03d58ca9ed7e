//! A generated workspace written to disk, formatted in this workspace's style: what
//! `cargo xtask codegen --spec FILE --out DIR` and the `openapi-workspace` binary do; and
//! checked against what is on disk (`openapi-workspace check`), as `codegen --check` checks ours.

use super::rustfmt::rustfmt;
use std::path::Path;

use super::standalone::{File, STANDALONE_EDITION, Standalone, standalone};
use crate::error::{Error, Result};
use crate::read::Note;

/// Our `rustfmt.toml`, which goes with every generated workspace (in its edition), so `cargo fmt`
/// there agrees with what was written.
pub(super) const RUSTFMT_TOML: &str = include_str!("../../../../../rustfmt.toml");

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
    let (written, files) = rendered(spec, out, strict)?;
    for (file, contents) in files {
        let path = out.join(file);
        if std::fs::read_to_string(&path).is_ok_and(|current| current == contents) {
            continue;
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        std::fs::write(&path, contents).map_err(|e| Error::io(&path, e))?;
    }
    Ok(written)
}

/// What `check` found: the workspace is what the document generates, or it is not (a unified
/// diff of every difference, from what is in `out` to what would be written).
pub enum Checked {
    Same(Written),
    Stale { written: Written, diff: String },
}

/// Whether `out` holds exactly what [`write_workspace`] would write there for `spec`: each file
/// it writes, with the same contents, and no file marked `@generated` that it no longer writes
/// (hand-written files beside them, `Cargo.lock` and `target/` are not its business). Nothing is
/// written.
pub fn check_workspace(spec: &Path, out: &Path, strict: bool) -> Result<Checked> {
    let (written, files) = rendered(spec, out, strict)?;
    let mut diff = String::new();
    let mut expected = std::collections::BTreeSet::new();
    for (file, contents) in &files {
        expected.insert(file.clone());
        let path = out.join(file);
        let current = match std::fs::read_to_string(&path) {
            Ok(current) => current,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(error) => return Err(Error::io(&path, error)),
        };
        if current != *contents {
            diff.push_str(&unified(&current, contents, file));
        }
    }
    for file in generated_files(out)? {
        if !expected.contains(&file) {
            let path = out.join(&file);
            let current = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
            diff.push_str(&unified(&current, "", &file));
        }
    }
    Ok(match diff.is_empty() {
        true => Checked::Same(written),
        false => Checked::Stale { written, diff },
    })
}

/// `from` → `to` as a unified diff of the file at `path` (`a/PATH`, `b/PATH`, as git writes them).
fn unified(from: &str, to: &str, path: &str) -> String {
    similar::TextDiff::from_lines(from, to)
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

/// The files under `out` (paths relative to it, `/`-separated) that say they are generated: their
/// first line holds `@generated`. `target/` and hidden directories are not looked into.
fn generated_files(out: &Path) -> Result<Vec<String>> {
    fn walk(root: &Path, dir: &Path, found: &mut Vec<String>) -> Result<()> {
        let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
        for entry in entries {
            let path = entry.map_err(|e| Error::io(dir, e))?.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    walk(root, &path, found)?;
                }
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else { continue };
            if text.lines().next().is_some_and(|line| line.contains("@generated")) {
                let relative = path.strip_prefix(root).expect("under the root");
                found
                    .push(relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/"));
            }
        }
        Ok(())
    }
    let mut found = Vec::new();
    walk(out, out, &mut found)?;
    Ok(found)
}

/// The workspace for `spec` as it would be written into `out`: each file's path under `out` and
/// its contents, the Rust ones through rustfmt (with the workspace's own `rustfmt.toml`, formatted
/// from a scratch directory so nothing is written into `out`).
fn rendered(spec: &Path, out: &Path, strict: bool) -> Result<(Written, Vec<(String, String)>)> {
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
    let rustfmt_toml = RUSTFMT_TOML.replace("edition = \"2024\"", &format!("edition = \"{}\"", STANDALONE_EDITION));
    let scratch = tempfile::tempdir().map_err(|e| Error::io("a scratch directory", e))?;
    let config = scratch.path().join("rustfmt.toml");
    std::fs::write(&config, &rustfmt_toml).map_err(|e| Error::io(&config, e))?;
    let formatted = crate::timings::timed("write/rustfmt", || formatted(&files, &config))?;
    let mut rendered: Vec<(String, String)> = files.iter().map(|file| file.path.clone()).zip(formatted).collect();
    rendered.push(("rustfmt.toml".into(), rustfmt_toml));
    Ok((Written { name, notes }, rendered))
}

/// Each file's contents, its Rust files through rustfmt: a rustfmt per core at once, since a big
/// document's largest files take seconds each (and those are cut in pieces: `rustfmt`).
fn formatted(files: &[File], config: &Path) -> Result<Vec<String>> {
    super::rustfmt::parallel(files, |file| match file.rust {
        true => rustfmt(&file.contents, STANDALONE_EDITION, config),
        false => Ok(file.contents.clone()),
    })
}
