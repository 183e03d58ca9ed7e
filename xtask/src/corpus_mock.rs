//! `cargo xtask corpus --mock`: each corpus document served by `openapi-workspace mock --stateful`
//! (the release binary, a child process each), measured as a user meets it: the time from the
//! command to its first answer, its peak memory then, the operations it serves, the resources it
//! infers and the operations those take part in; written into `CORPUS.md` ("The mock").

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, ensure};

use crate::corpus::{CORPUS, unpacked};

/// CORPUS.md's section this run writes.
const SECTION: &str = "# The mock";

/// One document's figures.
struct Served {
    name: &'static str,
    path: &'static str,
    /// From the command to the first answer.
    seconds: f64,
    peak_mib: u64,
    /// What the mock's ready line says: operations served, resources, operations in them.
    ready: String,
}

pub(crate) fn run(root: &Path) -> anyhow::Result<()> {
    let status = Command::new("cargo")
        .args(["build", "--release", "--quiet", "-p", "openapi-workspace"])
        .current_dir(root)
        .status()
        .context("cargo build")?;
    ensure!(status.success(), "cargo build --release -p openapi-workspace failed");
    let binary = crate::target_dir(root).join("release").join("openapi-workspace");
    let work = crate::target_dir(root).join("corpus-mock");
    let mut rows = Vec::new();
    for document in CORPUS {
        let spec = unpacked(root, document, &work)?;
        let served = serve(&binary, &spec).with_context(|| document.name)?;
        eprintln!("{}: {:.2} s, {} MiB; {}", document.name, served.0, served.1, served.2);
        rows.push(Served {
            name: document.name,
            path: document.path,
            seconds: served.0,
            peak_mib: served.1,
            ready: served.2,
        });
    }
    crate::corpus::write_section(root, SECTION, &table(&rows))?;
    eprintln!("wrote the mock's figures into CORPUS.md");
    Ok(())
}

/// Starts the mock of `spec`, asks it one request, and stops it: seconds to that answer, peak
/// resident memory (MiB), the ready line's words.
fn serve(binary: &Path, spec: &Path) -> anyhow::Result<(f64, u64, String)> {
    let started = Instant::now();
    let mut child = Command::new(binary)
        .args(["mock", "--stateful", "--listen", "127.0.0.1:0", "--message-format", "json", "--spec"])
        .arg(spec)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("openapi-workspace mock")?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?);
    let address = loop {
        let mut line = String::new();
        ensure!(stdout.read_line(&mut line)? > 0, "the mock ended before it listened");
        if let Some(address) = line.trim().strip_prefix("mock at http://") {
            break address.to_owned();
        }
    };
    // Any answer will do: a path no document has.
    let mut stream = std::net::TcpStream::connect(&address)?;
    stream.write_all(b"GET /zz-corpus-probe HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    let seconds = started.elapsed().as_secs_f64();
    ensure!(answer.starts_with("HTTP/1.1 "), "no HTTP answer: {answer:?}");
    let peak_kib = crate::corpus::peak_kib_of(&child.id().to_string())?;
    child.kill()?;
    child.wait()?;
    let mut stderr = String::new();
    child.stderr.take().context("stderr")?.read_to_string(&mut stderr)?;
    let ready = stderr
        .lines()
        .find_map(|line| line.split_once(", ready in ").map(|(head, rest)| (head.to_owned(), rest.to_owned())))
        .map(|(head, rest)| {
            let operations = head.rsplit(": ").next().unwrap_or_default().to_owned();
            let kept = rest.split_once('(').map_or("", |(_, kept)| kept.trim_end_matches(')'));
            let kept = kept.split(", the other").next().unwrap_or_default();
            format!("{operations}; {kept}")
        })
        .context("the mock's ready line")?;
    Ok((seconds, peak_kib / 1024, ready))
}

fn table(rows: &[Served]) -> String {
    let mut out = format!(
        "{SECTION}\n\nWritten by `cargo xtask corpus --mock` (see `xtask/src/corpus_mock.rs`): each document served by \
         `openapi-workspace mock --stateful` (release build), nothing generated or compiled; time from the command to \
         its first answer, and the process's peak resident memory then. Resources: what the stateful mock infers \
         from the paths (README, *State, inferred from the document*), and the operations that take part in them.\n\n\
         | document | first answer (s) | peak memory (MiB) | served |\n|---|---:|---:|---|\n"
    );
    for row in rows {
        out.push_str(&format!(
            "| [{}]({}) | {:.2} | {} | {} |\n",
            row.name, row.path, row.seconds, row.peak_mib, row.ready
        ));
    }
    out
}
