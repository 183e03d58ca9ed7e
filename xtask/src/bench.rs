//! `cargo xtask bench [--smoke]`: measures the sandbox, built for release, on this machine, on
//! each backend (a SQLite file; a throwaway PostgreSQL server from `scripts/throwaway-postgres`),
//! and a 1 GiB upload through a generated server (`upload.rs`), and rewrites `BENCHMARKS.md`. Load comes from wrk (Debian's package, installed when missing).
//! Figures are reported as ratios against a reference measured in the same run where one
//! exists, since the machines here are shared and noisy; absolute numbers are context.
//!
//! `--smoke` runs every step on a debug build with little data and short runs, writes
//! `target/bench/BENCHMARKS.md`, and asserts nothing about speed: it is how CI keeps this
//! command working.

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::Command;

mod instructions;
mod measure;
mod report;
mod sandbox;
mod scripts;
mod toolchain;

use measure::*;
use report::*;
use sandbox::*;
use toolchain::*;

pub(super) const TOKEN: &str = "tok_bench";

/// How big and how long: the full run, or the smoke run.
pub(super) struct Scale {
    pub(super) name: &'static str,
    /// Payments seeded before the lists are measured...
    pub(super) transactions: u64,
    /// ...or as many as this many seconds of seeding make, if fewer.
    pub(super) seed_seconds: u64,
    pub(super) seconds: u64,
    pub(super) release: bool,
}

// 600 s: PostgreSQL on 2 cores shared with the load and the sandbox seeds 2,500 payments a second
// at first and fewer as the tables grow (908,000 in 480 s), SQLite a million in under 250 s.
pub(super) const FULL: Scale =
    Scale { name: "full", transactions: 1_000_000, seed_seconds: 600, seconds: 10, release: true };
// The smoke run proves the machinery in CI, where its minutes count: a few hundred payments.
pub(super) const SMOKE: Scale =
    Scale { name: "smoke", transactions: 500, seed_seconds: 20, seconds: 1, release: false };

/// `cargo xtask bench --codegen`: the toolchain section alone, measured now and put in place of
/// the one in BENCHMARKS.md (the rest of the file is left as the last full run wrote it).
pub(crate) fn codegen_only(root: &Path) -> anyhow::Result<()> {
    let work = std::env::temp_dir().join(format!("payments-bench-codegen-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let measured = toolchain(root, &work, true);
    let _ = std::fs::remove_dir_all(&work);
    put_section(root, "# The toolchain", HAND_WRITTEN, &render_toolchain(&measured?))
}

/// `cargo xtask bench --upload`: the uploads section alone, measured now and put in place of the
/// one in BENCHMARKS.md (before the toolchain's; the rest left as the last full run wrote it).
pub(crate) fn upload_only(root: &Path) -> anyhow::Result<()> {
    put_section(
        root,
        "# Uploads",
        "# The toolchain",
        &crate::upload::render(&crate::upload::measure(root, 1 << 30, true)?),
    )
}

/// `cargo xtask bench --instructions [--smoke | --only KIND]`: the instructions section alone,
/// counted now and put in place of the one in BENCHMARKS.md (the smoke run's, or the kinds
/// `--only` names, in `target/bench/INSTRUCTIONS.md`).
pub(crate) fn instructions_only(root: &Path, smoke: bool, only: Option<&str>) -> anyhow::Result<()> {
    let section = instructions::render(&instructions::measure(root, smoke, only)?);
    if smoke || only.is_some() {
        let out = root.join("target/bench/INSTRUCTIONS.md");
        std::fs::create_dir_all(out.parent().expect("a parent"))?;
        std::fs::write(&out, &section)?;
        println!("{section}\nwrote {}", out.display());
        return Ok(());
    }
    put_section(root, "# Instructions per request", "# The failed-authentication limit", &section)
}

/// `cargo xtask bench --server`: the generated server's section alone, measured now and put in
/// place of the one in BENCHMARKS.md (before the uploads'; the rest left as the last full run
/// wrote it).
pub(crate) fn server_only(root: &Path) -> anyhow::Result<()> {
    let wrk = ensure_wrk()?;
    let work = std::env::temp_dir().join(format!("payments-bench-server-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let measured = crate::server_bench::measure(root, &wrk, &work, true, 5);
    let _ = std::fs::remove_dir_all(&work);
    put_section(root, "# The generated server", "# Uploads", &crate::server_bench::render(&measured?))
}

/// Puts `section` in BENCHMARKS.md in place of the one under `heading`, which ends where `next`
/// begins (the rest of the file as the last full run wrote it; without a `next`, the section ends
/// the file).
fn put_section(root: &Path, heading: &str, next: &str, section: &str) -> anyhow::Result<()> {
    let path = root.join("BENCHMARKS.md");
    let current = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    let (before, after) = match current.split_once(next) {
        Some((before, after)) => (before, format!("{next}{after}")),
        None => (current.as_str(), String::new()),
    };
    let before = before.split(heading).next().unwrap_or_default();
    std::fs::write(&path, format!("{before}{section}{after}")).with_context(|| path.display().to_string())?;
    println!("{section}\nwrote the section {heading:?} of {}", path.display());
    Ok(())
}

pub(crate) fn run(root: &Path, smoke: bool) -> anyhow::Result<()> {
    let scale = if smoke { &SMOKE } else { &FULL };
    let wrk = ensure_wrk()?;
    let (binary, reference) = build(root, scale.release)?;
    // First, so a build that fails stops the run before the long part.
    let limiter = auth_failures(root, scale)?;
    let upload = crate::upload::measure(root, if smoke { 16 << 20 } else { 1 << 30 }, scale.release)?;
    let work = std::env::temp_dir().join(format!("payments-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let servers = crate::server_bench::measure(root, &wrk, &work, scale.release, scale.seconds.min(5))?;
    let measured = (|| {
        let sqlite = measure(&wrk, &binary, &reference, &work, scale, &Database::Sqlite(work.join("bench.db")))?;
        let server = Postgres::start(root)?;
        let database = Database::Postgres { url: server.url.clone(), bin: server.bin.clone() };
        let postgres = measure(&wrk, &binary, &reference, &work, scale, &database)?;
        Ok::<_, anyhow::Error>([sqlite, postgres])
    })();
    let toolchain = measured.as_ref().ok().map(|_| toolchain(root, &work, scale.release)).transpose();
    let _ = std::fs::remove_dir_all(&work);
    let instructions = instructions::measure(root, smoke, None)?;
    let mut report = render(scale, &measured?);
    report.push_str(&instructions::render(&instructions));
    {
        let line = limiter;
        let addresses = field(&line, "addresses");
        report.push_str(&format!(
            "# The failed-authentication limit

What a failed authentication costs the edge (the check that the \
             address is under its limit, and the count of the failure), on the limiter's sketch alone \
             (`crates/payments-sandbox/benches/auth_failures.rs`): {:.0} ns with one address failing over and over, \
             **{:.0} ns** with {addresses:.0} distinct addresses failing in turn: **{:.2}×** of one address's, in \
             {:.0} KiB, whatever the number of addresses.\n\n",
            field(&line, "one_ns"),
            field(&line, "many_ns"),
            field(&line, "ratio"),
            field(&line, "bytes") / 1024.0,
        ));
    }
    report.push_str(&crate::server_bench::render(&servers));
    report.push_str(&crate::upload::render(&upload));
    if let Some(toolchain) = toolchain? {
        report.push_str(&render_toolchain(&toolchain));
    }
    report.push_str(&hand_written(root)?);
    let out = if smoke { root.join("target/bench/BENCHMARKS.md") } else { root.join("BENCHMARKS.md") };
    std::fs::create_dir_all(out.parent().expect("a parent"))?;
    std::fs::write(&out, &report).with_context(|| out.display().to_string())?;
    println!("{report}\nwrote {}", out.display());
    Ok(())
}

fn ensure_wrk() -> anyhow::Result<PathBuf> {
    ensure_debian("wrk", "wrk")
}

/// `program`, installed from Debian's `package` when it is missing.
fn ensure_debian(program: &str, package: &str) -> anyhow::Result<PathBuf> {
    if let Some(path) = which(program) {
        return Ok(path);
    }
    eprintln!("== installing {package} (Debian)");
    let root = Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0")).unwrap_or(false);
    let apt = |args: &[&str]| {
        let mut command = if root { Command::new("apt-get") } else { Command::new("sudo") };
        if !root {
            command.arg("apt-get");
        }
        command.args(args).env("DEBIAN_FRONTEND", "noninteractive").status()
    };
    let _ = apt(&["update", "-qq"]);
    apt(&["install", "-y", "-qq", package]).with_context(|| format!("cannot install {package}"))?;
    which(program)
        .with_context(|| format!("{program} is not installed and could not be installed (apt-get install {package})"))
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|dir| Path::new(dir).join(program)).find(|p| p.is_file())
}

/// Builds the sandbox and the reference server (`crates/bench-reference`); their paths.
fn build(root: &Path, release: bool) -> anyhow::Result<(PathBuf, PathBuf)> {
    eprintln!("== building payments-sandbox and bench-reference ({})", if release { "release" } else { "debug" });
    let dir = crate::cargo_build(root, &["--package", "payments-sandbox", "--package", "bench-reference"], release)?;
    Ok((dir.join("payments-sandbox"), dir.join("bench-reference")))
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cpu}, {cores} cores")
}
