//! `cargo xtask corpus [NAME…]`: every document the generator is tested on, generated as a
//! workspace of its own the way its users make one (the `openapi-workspace` tool's
//! `write_workspace`), then checked the way they build it. For each document:
//!
//! - generated twice, each time in a child process of its own (so the figures are one
//!   document's: seconds, peak memory), and the two outputs compared file by file — the output
//!   must not depend on the process (hash seeds, thread timing);
//! - `cargo check --workspace` with `-D warnings`, with the default features and with
//!   `--all-features`, offline, with this repository's lock file, every document sharing one
//!   target directory (`$CARGO_TARGET_DIR/corpus`) so the dependencies are compiled once (the
//!   compiler's incremental state of an earlier run is removed first, so no check is warmed); then
//!   the client alone with one group of operations, its largest (what a team using a few
//!   operations builds: `--no-default-features --features GROUP`);
//! - where the document says how, its mock started with `cargo run` and asked one operation.
//!
//! It writes `CORPUS.md`, the table of what it measured, and fails when any document fails.
//! `--ci` is what fits CI's time: a heavy document is generated twice (and the two compared) but
//! its checks are left to the full run, and the table is printed rather than written.
//! These compiles are the slow part of the generator's tests, so they live here rather than in
//! `cargo test` (the README's test command); `.ci/run` runs both.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail, ensure};

/// A document of the corpus: the workspace's name, its path from the repository's root, and the
/// operation its mock is asked, if it is run. A public document too large to keep as it is is an
/// archive (`.tar.gz`, with its licence) and `entry` its document's path inside it.
pub(crate) struct Document {
    pub(crate) name: &'static str,
    pub(crate) path: &'static str,
    entry: Option<&'static str>,
    serve: Option<Probe>,
    /// What CI's run (`Reach::Ci`) does with it.
    weight: Weight,
}

/// How much of CI's time a document's checks take, and so what `--ci` does with it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Weight {
    /// Generated twice and checked.
    Light,
    /// Generated twice; its checks (minutes of CI's time each) left to the full run.
    Heavy,
}

/// What a run checks: everything (`cargo xtask corpus`, which writes `CORPUS.md`), or what fits
/// CI's time (`--ci`: a heavy document's checks left to the full run).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    Full,
    Ci,
}

/// A `GET` the generated mock must answer `200` with a JSON object holding `fields`, and a path
/// it must refuse without a credential (`401`, as the real router does: paths cannot be probed).
struct Probe {
    path: &'static str,
    fields: &'static [&'static str],
    unknown: &'static str,
}

const fn document(name: &'static str, path: &'static str) -> Document {
    Document { name, path, entry: None, serve: None, weight: Weight::Light }
}

const fn archived(name: &'static str, path: &'static str, entry: &'static str) -> Document {
    Document { name, path, entry: Some(entry), serve: None, weight: Weight::Light }
}

/// Ours and the generator's samples first, then public documents (`tests/corpus/README.md` says
/// where each comes from and under which licence).
pub(crate) const CORPUS: &[Document] = &[
    document("payments", "openapi/payments.yaml"),
    document("payments31", "docs/openapi-3.1.json"),
    document("sample", "crates/openapi-workspace/tests/samples/parameters_and_responses.yaml"),
    document("generality", "crates/openapi-workspace/tests/samples/generality.yaml"),
    document("styles", "crates/openapi-workspace/tests/samples/parameter_styles.yaml"),
    document("events", "crates/openapi-workspace/tests/samples/events.yaml"),
    document("multipart", "crates/openapi-workspace/tests/samples/multipart.yaml"),
    document("discriminated", "crates/openapi-workspace/tests/samples/discriminated.yaml"),
    document("untypable", "crates/openapi-workspace/tests/samples/untypable.yaml"),
    document("keeper", "crates/openapi-workspace/tests/corpus/keeper.json"),
    document("buildomat", "crates/openapi-workspace/tests/corpus/buildomat.json"),
    document("propolis-server", "crates/openapi-workspace/tests/corpus/propolis-server.json"),
    document("nexus", "crates/openapi-workspace/tests/corpus/nexus.json"),
    document("webhook-example", "crates/openapi-workspace/tests/corpus/openapi-3.1/webhook-example.yaml"),
    document("non-oauth-scopes", "crates/openapi-workspace/tests/corpus/openapi-3.1/non-oauth-scopes.yaml"),
    document("tictactoe", "crates/openapi-workspace/tests/corpus/openapi-3.1/tictactoe.yaml"),
    Document {
        name: "crates-io",
        path: "crates/openapi-workspace/tests/corpus/openapi-3.1/crates-io.json",
        entry: None,
        weight: Weight::Light,
        serve: Some(Probe {
            path: "/api/v1/summary",
            fields: &["just_updated", "most_downloaded", "new_crates", "num_crates", "popular_categories"],
            unknown: "/api/v1/no-such-thing",
        }),
    },
    document("prefect", "crates/openapi-workspace/tests/corpus/openapi-3.1/prefect.json"),
    document("adyen-transfers", "crates/openapi-workspace/tests/corpus/openapi-3.1/adyen-transfers.json"),
    document("adyen-balance-webhooks", "crates/openapi-workspace/tests/corpus/openapi-3.1/adyen-balance-webhooks.json"),
    archived("kubernetes-apps-v1", "crates/openapi-workspace/tests/corpus/public/kubernetes-apps-v1.tar.gz", "v1.json"),
    Document {
        weight: Weight::Heavy,
        ..archived(
            "digitalocean",
            "crates/openapi-workspace/tests/corpus/public/digitalocean.tar.gz",
            "specification/DigitalOcean-public.v2.yaml",
        )
    },
    Document {
        weight: Weight::Heavy,
        ..archived("github", "crates/openapi-workspace/tests/corpus/public/github.tar.gz", "api.github.com.json")
    },
    Document {
        weight: Weight::Heavy,
        ..archived("stripe", "crates/openapi-workspace/tests/corpus/public/stripe.tar.gz", "spec3.json")
    },
    Document {
        weight: Weight::Heavy,
        ..archived("openai", "crates/openapi-workspace/tests/corpus/public/openai.tar.gz", "openapi.yaml")
    },
];

/// What generating one document took, as the child process reports it on its last line.
struct Generation {
    seconds: f64,
    peak_mib: f64,
    warnings: usize,
    files: usize,
    lines: usize,
    /// Operations with page and item streams.
    paginated: usize,
}

/// A check that gave no figure: it failed (with cargo's errors), or this run's reach left it out.
enum Unchecked {
    Failed(String),
    Skipped,
}
use Unchecked::{Failed, Skipped};

/// One row of the table.
struct Row {
    name: &'static str,
    path: &'static str,
    generation: Generation,
    identical: bool,
    check: Vec<(&'static str, Result<f64, Unchecked>)>,
    /// The group checked alone, and how that went (`None`: the document has one group).
    group: Option<(String, Result<f64, Unchecked>)>,
    served: Option<anyhow::Result<()>>,
}

impl Row {
    fn passed(&self) -> bool {
        self.identical
            && self
                .check
                .iter()
                .map(|(_, r)| r)
                .chain(self.group.iter().map(|(_, r)| r))
                .all(|r| !matches!(r, Err(Failed(_))))
            && !matches!(self.served, Some(Err(_)))
    }
}

/// The child's side: generates `spec` into `out` and prints what it took.
pub(crate) fn generate_one(spec: &Path, out: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    let written = openapi_workspace::write_workspace(spec, out, &Default::default())?;
    let seconds = started.elapsed().as_secs_f64();
    let (mut files, mut lines) = (0, 0);
    for file in files_under(out)? {
        files += 1;
        lines += std::fs::read_to_string(out.join(&file))?.lines().count();
    }
    println!(
        "generated seconds={seconds:.3} peak_kib={} warnings={} files={files} lines={lines} paginated={}",
        peak_kib()?,
        written.notes.len(),
        written.paginated.len()
    );
    Ok(())
}

/// This process's peak resident memory (Linux's `VmHWM`), in KiB.
pub(crate) fn peak_kib() -> anyhow::Result<u64> {
    peak_kib_of("self")
}

/// The peak resident memory of `process` (a pid, or `self`), in KiB.
pub(crate) fn peak_kib_of(process: &str) -> anyhow::Result<u64> {
    let path = format!("/proc/{process}/status");
    let status = std::fs::read_to_string(&path).context(path.clone())?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).with_context(|| format!("no VmHWM in {path}"))?;
    Ok(line.split_whitespace().nth(1).context("VmHWM's value")?.parse()?)
}

/// Every file under `dir`, relative to it, sorted.
pub(crate) fn files_under(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    fn walk(root: &Path, dir: &Path, found: &mut Vec<PathBuf>) -> anyhow::Result<()> {
        for entry in std::fs::read_dir(dir).with_context(|| dir.display().to_string())? {
            let path = entry?.path();
            if path.is_dir() {
                walk(root, &path, found)?;
            } else {
                found.push(path.strip_prefix(root)?.to_path_buf());
            }
        }
        Ok(())
    }
    let mut found = Vec::new();
    walk(dir, dir, &mut found)?;
    found.sort();
    Ok(found)
}

/// The document's file: its path, or its entry in its archive unpacked under `work`.
pub(crate) fn unpacked(root: &Path, document: &Document, work: &Path) -> anyhow::Result<PathBuf> {
    let Some(entry) = document.entry else { return Ok(root.join(document.path)) };
    let dir = work.join("documents").join(document.name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| dir.display().to_string())?;
    }
    std::fs::create_dir_all(&dir)?;
    let status = Command::new("tar").arg("-xzf").arg(root.join(document.path)).arg("-C").arg(&dir).status()?;
    ensure!(status.success(), "tar could not unpack {}", document.path);
    Ok(dir.join(entry))
}

/// Runs the child: this program again, generating `spec` into a fresh `out`.
fn generate(root: &Path, spec: &Path, out: &Path) -> anyhow::Result<Generation> {
    if out.exists() {
        std::fs::remove_dir_all(out).with_context(|| out.display().to_string())?;
    }
    let output = Command::new(std::env::current_exe()?)
        .args(["corpus", "--generate-one"])
        .arg(spec)
        .arg(out)
        .current_dir(root)
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    ensure!(
        output.status.success(),
        "generating {} failed:\n{}{}",
        spec.display(),
        stdout,
        String::from_utf8_lossy(&output.stderr)
    );
    let line = stdout.lines().find_map(|l| l.strip_prefix("generated ")).context("the child printed no figures")?;
    let field = |name: &str| -> anyhow::Result<&str> {
        line.split(' ').find_map(|f| f.strip_prefix(name)?.strip_prefix('=')).with_context(|| format!("no {name}"))
    };
    Ok(Generation {
        seconds: field("seconds")?.parse()?,
        peak_mib: field("peak_kib")?.parse::<f64>()? / 1024.0,
        warnings: field("warnings")?.parse()?,
        files: field("files")?.parse()?,
        lines: field("lines")?.parse()?,
        paginated: field("paginated")?.parse()?,
    })
}

/// Whether the two trees hold the same files with the same contents; the first difference, if not.
fn same_tree(a: &Path, b: &Path) -> anyhow::Result<Option<String>> {
    let (files_a, files_b) = (files_under(a)?, files_under(b)?);
    if files_a != files_b {
        return Ok(Some(format!("different files: {files_a:?} and {files_b:?}")));
    }
    for file in files_a {
        if std::fs::read(a.join(&file))? != std::fs::read(b.join(&file))? {
            return Ok(Some(format!("{} differs", file.display())));
        }
    }
    Ok(None)
}

/// `cargo check` in the workspace in `dir` as its users build it, `-D warnings`, of what `what`
/// says (`--workspace`, features); its seconds.
/// A `cargo check` that failed: what cargo wrote on stderr, or why it could not be run.
#[derive(Debug, Clone)]
pub(crate) struct CheckFailed(pub(crate) String);

pub(crate) fn check(dir: &Path, target: &Path, what: &[&str]) -> Result<f64, CheckFailed> {
    let started = Instant::now();
    let output = crate::cargo()
        .args(["check", "--offline", "--quiet"])
        .args(what)
        .arg("--manifest-path")
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .env("RUSTFLAGS", "-D warnings")
        .output()
        .map_err(|e| CheckFailed(e.to_string()))?;
    if !output.status.success() {
        return Err(CheckFailed(String::from_utf8_lossy(&output.stderr).into_owned()));
    }
    Ok(started.elapsed().as_secs_f64())
}

/// The group of operations of the client in `dir` (`NAME-client`) that gates the most of its
/// code, if it has groups: the features its manifest lists after the line that introduces them.
fn largest_group(dir: &Path, name: &str) -> anyhow::Result<Option<String>> {
    let client = dir.join(format!("{name}-client"));
    let manifest = std::fs::read_to_string(client.join("Cargo.toml"))?;
    let code = std::fs::read_to_string(client.join("src/generated.rs"))?;
    let groups = manifest
        .split_once("# One feature per group")
        .map(|(_, rest)| rest.lines().filter_map(|line| line.split_once(" = [").map(|(group, _)| group)))
        .into_iter()
        .flatten()
        .filter(|group| *group != "unreached-models");
    Ok(groups
        .max_by_key(|group| (code.matches(&format!("feature = \"{group}\"")).count(), std::cmp::Reverse(*group)))
        .map(str::to_owned))
}

/// `cargo run` in the workspace in `dir` serves its mock: `probe` answered as it says.
fn serve(dir: &Path, target: &Path, probe: &Probe) -> anyhow::Result<()> {
    let mut server = crate::cargo()
        .args(["run", "--offline", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target)
        .env("PORT", "0")
        .stdout(Stdio::piped())
        .spawn()?;
    let mut line = String::new();
    BufReader::new(server.stdout.take().context("piped stdout")?).read_line(&mut line)?;
    let asked = (|| {
        let address = line.trim().strip_prefix("mock at http://").with_context(|| format!("printed {line:?}"))?;
        let get = |path: &str| -> anyhow::Result<String> {
            let mut stream = std::net::TcpStream::connect(address)?;
            write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")?;
            let mut answer = String::new();
            stream.read_to_string(&mut answer)?;
            Ok(answer)
        };
        Ok::<_, anyhow::Error>((get(probe.path)?, get(probe.unknown)?))
    })();
    // `cargo run` replaced itself with the server (it execs on Unix): this ends the server.
    server.kill()?;
    server.wait()?;
    let (answer, unknown) = asked?;
    let (head, body) = answer.split_once("\r\n\r\n").context("no end of headers")?;
    ensure!(head.starts_with("HTTP/1.1 200"), "GET {} answered {answer}", probe.path);
    let body: serde_json::Value = serde_json::from_str(body).context("the body is not JSON")?;
    for field in probe.fields {
        ensure!(body.get(field).is_some(), "{field} missing from {body}");
    }
    ensure!(unknown.starts_with("HTTP/1.1 401"), "GET {} without a credential answered {unknown}", probe.unknown);
    Ok(())
}

pub(crate) fn run(root: &Path, only: &[&str], reach: Reach) -> anyhow::Result<()> {
    for name in only {
        ensure!(CORPUS.iter().any(|d| d.name == *name), "no document {name} in the corpus");
    }
    let work = crate::target_dir(root).join("corpus");
    let cargo_target = work.join("target");
    // What an earlier run's checks left for the compiler to reuse goes (the dependencies stay
    // built): each workspace is checked as its users first check it, not warmed by the last run.
    let incremental = cargo_target.join("debug").join("incremental");
    if incremental.exists() {
        std::fs::remove_dir_all(&incremental).with_context(|| incremental.display().to_string())?;
    }
    let mut rows = Vec::new();
    let chosen = |d: &&Document| only.is_empty() || only.contains(&d.name);
    for document in CORPUS.iter().filter(chosen) {
        eprintln!("== {} ({})", document.name, document.path);
        let out = work.join("workspaces").join(document.name);
        let again = work.join("again").join(document.name);
        let spec = unpacked(root, document, &work)?;
        let generation = generate(root, &spec, &out)?;
        std::fs::copy(root.join("Cargo.lock"), out.join("Cargo.lock"))?;
        // The second generation, which only has to come out the same, runs beside the checks
        // (the first, timed, ran alone).
        let (regenerated, checks) = std::thread::scope(|scope| {
            let regenerating = scope.spawn(|| generate(root, &spec, &again));
            let mut checks = Vec::new();
            for (label, what) in
                [("default", &["--workspace"][..]), ("all features", &["--workspace", "--all-features"])]
            {
                if document.weight != Weight::Light && reach == Reach::Ci {
                    report(label, &Err(Skipped));
                    checks.push((label, Err(Skipped)));
                    continue;
                }
                let result = check(&out, &cargo_target, what).map_err(|failed| Failed(failed.0));
                report(label, &result);
                checks.push((label, result));
            }
            (regenerating.join().expect("the regeneration's thread ends"), checks)
        });
        regenerated?;
        let group = largest_group(&out, document.name)?.map(|group| {
            let label = format!("the client with {group} alone");
            let result = if document.weight != Weight::Light && reach == Reach::Ci {
                Err(Skipped)
            } else {
                let client = format!("{}-client", document.name);
                check(&out, &cargo_target, &["-p", &client, "--no-default-features", "--features", &group])
                    .map_err(|failed| Failed(failed.0))
            };
            report(&label, &result);
            (group, result)
        });
        // The lock file is not generated (cargo has rewritten the copy for this workspace).
        std::fs::copy(out.join("Cargo.lock"), again.join("Cargo.lock"))?;
        let difference = same_tree(&out, &again)?;
        if let Some(difference) = &difference {
            eprintln!("   regenerated differently: {difference}");
        }
        let served = document.serve.as_ref().map(|probe| {
            let result = serve(&out, &cargo_target, probe);
            if let Err(why) = &result {
                eprintln!("   its mock: {why:#}");
            }
            result
        });
        rows.push(Row {
            name: document.name,
            path: document.path,
            generation,
            identical: difference.is_none(),
            check: checks,
            group,
            served,
        });
    }
    if only.is_empty() && reach == Reach::Full {
        write_section(root, "# The generator's corpus", &table(&rows))?;
        eprintln!("wrote CORPUS.md");
    } else {
        eprint!("{}", table(&rows));
    }
    let failed: Vec<&str> = rows.iter().filter(|r| !r.passed()).map(|r| r.name).collect();
    if !failed.is_empty() {
        bail!("{} of {} documents failed: {}", failed.len(), rows.len(), failed.join(", "));
    }
    Ok(())
}

/// Replaces the section of `CORPUS.md` that starts with the line `heading` (up to the next heading
/// of its level or above) with `text`, or adds it at the end: the curated corpus and the
/// collection are measured by separate runs.
pub(crate) fn write_section(root: &Path, heading: &str, text: &str) -> anyhow::Result<()> {
    let path = root.join("CORPUS.md");
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    let level = heading.chars().take_while(|c| *c == '#').count();
    let is_heading = |line: &str, at_most: usize| {
        let hashes = line.chars().take_while(|c| *c == '#').count();
        hashes > 0 && hashes <= at_most && line[hashes..].starts_with(' ')
    };
    let lines: Vec<&str> = current.split_inclusive('\n').collect();
    let start = lines.iter().position(|l| l.trim_end() == heading);
    let mut out = String::new();
    match start {
        None => {
            out.push_str(&current);
            if !out.is_empty() && !out.ends_with("\n\n") {
                out.push('\n');
            }
            out.push_str(text);
        }
        Some(start) => {
            let end = (start + 1..lines.len()).find(|&i| is_heading(lines[i], level)).unwrap_or(lines.len());
            out.extend(lines[..start].iter().copied());
            out.push_str(text);
            if end < lines.len() {
                out.push('\n');
                out.extend(lines[end..].iter().copied());
            }
        }
    }
    std::fs::write(&path, out).context("CORPUS.md")
}

fn report(label: &str, result: &Result<f64, Unchecked>) {
    match result {
        Ok(seconds) => eprintln!("   cargo check ({label}): {seconds:.1} s"),
        Err(Failed(errors)) => eprintln!("   cargo check ({label}) failed:\n{errors}"),
        Err(Skipped) => eprintln!("   cargo check ({label}): left to the full run"),
    }
}

fn table(rows: &[Row]) -> String {
    // Generation is timed in this process's own build of the generator: the committed table is
    // measured as users run the tool, optimised (`cargo run --release -p xtask -- corpus`).
    let build = match cfg!(debug_assertions) {
        true => "a debug build of the generator (`cargo xtask corpus`)",
        false => {
            "the generator built for release, as `cargo install` builds it (`cargo run --release -p xtask -- corpus`)"
        }
    };
    let mut text = format!(
        "# The generator's corpus\n\n\
         Written by `cargo xtask corpus` (see `xtask/src/corpus.rs`), here with {build}: each document generated as a workspace \
         of its own by `openapi-workspace`, twice, in separate processes (the two outputs must be identical), then \
         `cargo check --workspace` with `-D warnings`, with the default features and with `--all-features`, all \
         documents sharing one target directory (in a cold run, the first check also builds the dependencies), and \
         the client alone with only its largest group of operations (`-p NAME-client --no-default-features --features \
         GROUP`: a tag, or the paths' first segment; the group gating the most of the client's code). Generation \
         includes rustfmt over the small files (the generated code is kept as prettyplease prints it); memory is the generating process's peak resident set. Paged: the operations given page and item streams (`model/pagination.rs`: none of these documents says how it pages, every one is inferred).\n\n\
         | document | generate (s) | peak memory (MiB) | warnings | files | lines | paged | regenerated identical | check, default (s) | check, all features (s) | check, largest group alone (s) | mock answers |\n\
         |---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---|\n",
    );
    for row in rows {
        let g = &row.generation;
        let figure = |result: &Result<f64, Unchecked>| match result {
            Ok(seconds) => format!("{seconds:.1}"),
            Err(Failed(_)) => "**fails**".into(),
            Err(Skipped) => "—".into(),
        };
        let check = |i: usize| figure(&row.check[i].1);
        let group = match &row.group {
            None => "—".into(),
            Some((group, result)) => format!("{} (`{group}`)", figure(result)),
        };
        let served = match &row.served {
            None => "—",
            Some(Ok(())) => "yes",
            Some(Err(_)) => "**no**",
        };
        text.push_str(&format!(
            "| [{}]({}) | {:.2} | {:.0} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            row.name,
            row.path,
            g.seconds,
            g.peak_mib,
            g.warnings,
            g.files,
            g.lines,
            g.paginated,
            if row.identical { "yes" } else { "**no**" },
            check(0),
            check(1),
            group,
            served
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_run_rewrites_its_own_section_and_keeps_the_other() {
        let root = std::env::temp_dir().join(format!("corpus-sections-{}", std::process::id()));
        std::fs::create_dir_all(&root).unwrap();
        let read = || std::fs::read_to_string(root.join("CORPUS.md")).unwrap();
        super::write_section(&root, "# The generator's corpus", "# The generator's corpus\n\nold table\n").unwrap();
        super::write_section(&root, crate::directory::SECTION, "# The APIs.guru collection\n\nsummary\n").unwrap();
        super::write_section(&root, "# The generator's corpus", "# The generator's corpus\n\nnew table\n").unwrap();
        assert_eq!(read(), "# The generator's corpus\n\nnew table\n\n# The APIs.guru collection\n\nsummary\n");
        super::write_section(&root, crate::directory::SECTION, "# The APIs.guru collection\n\nagain\n").unwrap();
        assert_eq!(read(), "# The generator's corpus\n\nnew table\n\n# The APIs.guru collection\n\nagain\n");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
