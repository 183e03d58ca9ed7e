//! Backups of the SQLite file while the sandbox serves: `VACUUM INTO` on a read connection of
//! its own. It reads one snapshot (a read transaction, which in WAL mode never waits for the
//! writer nor holds it up), so the copy holds exactly the commits made before it began; it is
//! written compacted, with no WAL beside it.
//!
//! The copy is written under a temporary name, checked, flushed to disk and only then renamed
//! to its place: a backup that is killed, or that fails on a full disk, leaves no file at the
//! name asked for (and a previous backup there as it was), never half a database.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use crate::OpenError;

/// What a backup made.
#[derive(Debug, Clone)]
pub struct Backup {
    pub bytes: u64,
    pub took: Duration,
}

/// Copies the database at `path` (a sandbox database, checked) to `to`.
pub(super) fn backup(path: &Path, to: &Path) -> Result<Backup, OpenError> {
    let started = Instant::now();
    let shown = path.display();
    if !path.exists() {
        return Err(OpenError::refused(format!("{shown} does not exist")));
    }
    let source = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| OpenError::failed(format!("cannot open database {shown}"), e))?;
    source.busy_timeout(super::BUSY_TIMEOUT).map_err(|e| OpenError::failed("cannot set the busy timeout", e))?;
    let application_id: i64 = source
        .query_row("PRAGMA application_id", [], |row| row.get(0))
        .map_err(|e| OpenError::failed(format!("cannot read database {shown}"), e))?;
    if application_id != super::APPLICATION_ID {
        return Err(OpenError::refused(format!("{shown} is not a payments-sandbox database")));
    }
    let partial = partial_name(to);
    let _ = std::fs::remove_file(&partial);
    let written = copy(&source, &partial).and_then(|()| {
        check(&partial)?;
        let file = std::fs::File::open(&partial).map_err(|e| OpenError::failed("cannot open the copy", e))?;
        file.sync_all().map_err(|e| OpenError::failed("cannot flush the copy to disk", e))?;
        std::fs::rename(&partial, to)
            .map_err(|e| OpenError::failed(format!("cannot move the copy to {}", to.display()), e))?;
        sync_directory(to);
        Ok(file.metadata().map_err(|e| OpenError::failed("cannot read the copy's size", e))?.len())
    });
    match written {
        Ok(bytes) => Ok(Backup { bytes, took: started.elapsed() }),
        Err(error) => {
            let _ = std::fs::remove_file(&partial);
            Err(error)
        }
    }
}

fn copy(source: &Connection, partial: &Path) -> Result<(), OpenError> {
    let target = partial.to_str().ok_or_else(|| OpenError::refused("the backup's path is not UTF-8"))?;
    source
        .execute("VACUUM INTO ?1", [target])
        .map_err(|e| OpenError::failed(format!("cannot write the copy {}", partial.display()), e))?;
    Ok(())
}

/// The copy opens, is whole (SQLite's quick check of every page and index), and is ours.
fn check(partial: &Path) -> Result<(), OpenError> {
    let copy = Connection::open_with_flags(partial, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| OpenError::failed("cannot open the copy", e))?;
    let verdict: String = copy
        .query_row("PRAGMA quick_check", [], |row| row.get(0))
        .map_err(|e| OpenError::failed("cannot check the copy", e))?;
    if verdict != "ok" {
        return Err(OpenError::refused(format!("the copy failed its check: {verdict}")));
    }
    Ok(())
}

/// `to` with `.partial` after its name, in the same directory (so the rename stays on one file
/// system).
fn partial_name(to: &Path) -> PathBuf {
    let mut name = to.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    to.with_file_name(name)
}

/// Flushes the directory entry of `file`, so the rename survives a crash of the machine.
fn sync_directory(file: &Path) {
    let directory = match file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    if let Ok(directory) = std::fs::File::open(directory) {
        let _ = directory.sync_all();
    }
}
