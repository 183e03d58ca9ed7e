//! rustfmt over the workspace's small Rust files (the crates' `lib.rs`, the server's `main.rs`,
//! the xtask), so they are what `cargo fmt` makes of them. The generated code is not among them:
//! it is written as prettyplease printed it, and rustfmt skips it (see `standalone::File`).

use std::path::Path;

use crate::error::{Error, Result};

/// `source` formatted by rustfmt in `edition` with the configuration at `config`.
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

/// `work` done on each of `pieces`, a worker per core; the results in the pieces' order.
pub(super) fn parallel<T: Sync>(pieces: &[T], work: impl Fn(&T) -> Result<String> + Sync) -> Result<Vec<String>> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, usize::from).min(pieces.len().max(1));
    let mut done: Vec<(usize, Result<String>)> = std::thread::scope(|scope| {
        let worker = || {
            let mut done = Vec::new();
            loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(piece) = pieces.get(index) else { return done };
                done.push((index, work(piece)));
            }
        };
        let handles: Vec<_> = (0..workers).map(|_| scope.spawn(worker)).collect();
        handles.into_iter().flat_map(|handle| handle.join().expect("a rustfmt worker")).collect()
    });
    done.sort_by_key(|(index, _)| *index);
    done.into_iter().map(|(_, formatted)| formatted).collect()
}
