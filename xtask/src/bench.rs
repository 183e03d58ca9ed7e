//! `cargo xtask bench [--smoke]`: measures the sandbox, built for release, on this machine, on
//! each backend (a SQLite file; a throwaway PostgreSQL server from `scripts/throwaway-postgres`),
//! and a 1 GiB upload through a generated server (`upload.rs`), and rewrites `BENCHMARKS.md`. Load comes from wrk (Debian's package, installed when missing).
//! Figures are reported as ratios against a reference measured in the same run where one
//! exists, since the machines here are shared and noisy; absolute numbers are context.
//!
//! `--smoke` runs every step on a debug build with little data and short runs, writes
//! `target/bench/BENCHMARKS.md`, and asserts nothing about speed: it is how CI keeps this
//! command working.

use anyhow::{Context, anyhow, bail};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::wrk::{Run, free_port, median, wrk};

const TOKEN: &str = "tok_bench";

/// How big and how long: the full run, or the smoke run.
struct Scale {
    name: &'static str,
    /// Payments seeded before the lists are measured...
    transactions: u64,
    /// ...or as many as this many seconds of seeding make, if fewer.
    seed_seconds: u64,
    seconds: u64,
    release: bool,
}

// 600 s: PostgreSQL on 2 cores shared with the load and the sandbox seeds 2,500 payments a second
// at first and fewer as the tables grow (908,000 in 480 s), SQLite a million in under 250 s.
const FULL: Scale = Scale { name: "full", transactions: 1_000_000, seed_seconds: 600, seconds: 10, release: true };
const SMOKE: Scale = Scale { name: "smoke", transactions: 2_000, seed_seconds: 60, seconds: 1, release: false };

/// What the generator costs here: `cargo xtask codegen --check` (the median of five runs), a
/// workspace written for the largest 3.0 and 3.1 documents of the corpus (the median of three),
/// and (full runs only: it builds every dependency again) a cold debug build of the client crate.
struct Toolchain {
    /// In this process, and as the command a user runs.
    check: f64,
    check_command: f64,
    /// (document, operations, seconds) for each corpus document.
    documents: Vec<(&'static str, usize, f64)>,
    cold_client: Option<f64>,
}

/// The corpus documents the generator is timed on: nexus (3.0, 193 operations) and Prefect's
/// (3.1 by FastAPI, 179 operations in 1.3 MB, the largest).
const TIMED_DOCUMENTS: [&str; 2] = [
    "crates/openapi-workspace/tests/corpus/nexus.json",
    "crates/openapi-workspace/tests/corpus/openapi-3.1/prefect.json",
];

fn toolchain(root: &Path, work: &Path, cold: bool) -> anyhow::Result<Toolchain> {
    eprintln!("== codegen time");
    let mut runs = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        super::codegen(super::Mode::Check)?;
        runs.push(start.elapsed().as_secs_f64());
    }
    let check = median(runs);
    // As a user runs it: cargo's own start and freshness check included.
    let mut runs = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .current_dir(root)
            .args(["xtask", "codegen", "--check"])
            .status()?;
        if !status.success() {
            bail!("cargo xtask codegen --check failed");
        }
        runs.push(start.elapsed().as_secs_f64());
    }
    let check_command = median(runs);
    let mut documents = Vec::new();
    for document in TIMED_DOCUMENTS {
        let spec = root.join(document);
        let text = std::fs::read_to_string(&spec).with_context(|| document.to_string())?;
        let operations = serde_json::from_str::<Value>(&text).with_context(|| document.to_string())?["paths"]
            .as_object()
            .map_or(0, |paths| {
                paths
                    .values()
                    .filter_map(Value::as_object)
                    .map(|item| item.keys().filter(|k| k.as_str() != "parameters").count())
                    .sum()
            });
        let mut runs = Vec::new();
        for i in 0..3 {
            let out = work.join(format!("codegen-{i}")).join("timed");
            let start = Instant::now();
            openapi_workspace::write_workspace(&spec, &out, false)?;
            runs.push(start.elapsed().as_secs_f64());
        }
        let name = Path::new(document).file_name().and_then(|n| n.to_str()).unwrap_or(document);
        documents.push((name, operations, median(runs)));
    }
    if !cold {
        return Ok(Toolchain { check, check_command, documents, cold_client: None });
    }
    eprintln!("== a cold debug build of payments-client");
    let start = Instant::now();
    let status = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .current_dir(root)
        .args(["build", "--quiet", "--package", "payments-client"])
        .env("CARGO_TARGET_DIR", work.join("cold-target"))
        .status()?;
    if !status.success() {
        bail!("the cold build of payments-client failed");
    }
    Ok(Toolchain { check, check_command, documents, cold_client: Some(start.elapsed().as_secs_f64()) })
}

/// The "# The toolchain" section of BENCHMARKS.md.
fn render_toolchain(t: &Toolchain) -> String {
    let mut out = format!(
        "# The toolchain\n\n`cargo xtask codegen --check` (the document read, the three crates generated and \
         formatted, compared with what is committed; the generator's heaviest dependencies built at opt-level 1 in \
         the dev profile, see Cargo.toml): **{:.2} s** as the command (cargo's start and freshness check \
         included), {:.2} s of it the generator's own work, medians of five runs.\n\nA workspace written for another \
         document (`openapi_workspace::write_workspace`, what `openapi-workspace` and `cargo xtask codegen --spec` \
         do: read, repaired, generated, every file through rustfmt, written), the median of three:\n\n\
         | document | operations | seconds | ms per operation |\n|---|---|---|---|\n",
        t.check_command, t.check
    );
    for (name, operations, seconds) in &t.documents {
        out.push_str(&format!(
            "| {name} | {operations} | {seconds:.2} | {:.1} |\n",
            seconds * 1000.0 / (*operations).max(1) as f64
        ));
    }
    out.push_str(&format!(
        "\nA cold debug build of the client crate (`cargo build -p payments-client` into an empty target directory, \
         dependencies included): {}.\n",
        t.cold_client.map_or("not measured in this run".to_owned(), |s| format!("{s:.0} s"))
    ));
    out
}

/// The hand-written end of BENCHMARKS.md (from `# Why, measured`): the measurements behind
/// decisions, which the bench does not take again and keeps as they are.
const HAND_WRITTEN: &str = "\n# Why, measured\n";

fn hand_written(root: &Path) -> anyhow::Result<String> {
    let path = root.join("BENCHMARKS.md");
    let current = std::fs::read_to_string(&path).with_context(|| path.display().to_string())?;
    Ok(current.find(HAND_WRITTEN).map_or(String::new(), |at| current[at..].to_owned()))
}

/// `cargo xtask bench --codegen`: the toolchain section alone, measured now and put in place of
/// the one in BENCHMARKS.md (the rest of the file is left as the last full run wrote it).
pub fn codegen_only(root: &Path) -> anyhow::Result<()> {
    let work = std::env::temp_dir().join(format!("payments-bench-codegen-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let measured = toolchain(root, &work, true);
    let _ = std::fs::remove_dir_all(&work);
    put_section(root, "# The toolchain", HAND_WRITTEN, &render_toolchain(&measured?))
}

/// `cargo xtask bench --upload`: the uploads section alone, measured now and put in place of the
/// one in BENCHMARKS.md (before the toolchain's; the rest left as the last full run wrote it).
pub fn upload_only(root: &Path) -> anyhow::Result<()> {
    put_section(
        root,
        "# Uploads",
        "# The toolchain",
        &crate::upload::render(&crate::upload::measure(root, 1 << 30, true)?),
    )
}

/// `cargo xtask bench --server`: the generated server's section alone, measured now and put in
/// place of the one in BENCHMARKS.md (before the uploads'; the rest left as the last full run
/// wrote it).
pub fn server_only(root: &Path) -> anyhow::Result<()> {
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

/// Where a run keeps its data.
enum Database {
    Sqlite(PathBuf),
    /// The server's URL, and where its programs are (`psql`).
    Postgres {
        url: String,
        bin: PathBuf,
    },
}

impl Database {
    fn name(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "SQLite",
            Self::Postgres { .. } => "PostgreSQL",
        }
    }

    fn argument(&self) -> String {
        match self {
            Self::Sqlite(path) => path.display().to_string(),
            Self::Postgres { url, .. } => url.clone(),
        }
    }

    /// Bytes the data takes: the SQLite file (and its WAL), or the PostgreSQL database.
    fn bytes(&self) -> anyhow::Result<u64> {
        match self {
            Self::Sqlite(path) => Ok(["", "-wal"]
                .iter()
                .filter_map(|suffix| std::fs::metadata(format!("{}{suffix}", path.display())).ok())
                .map(|m| m.len())
                .sum()),
            Self::Postgres { url, bin } => {
                let out = Command::new(bin.join("psql"))
                    .args([url.as_str(), "-Atc", "CHECKPOINT; SELECT pg_database_size(current_database())"])
                    .output()
                    .context("psql")?;
                let text = String::from_utf8_lossy(&out.stdout);
                text.lines().last().and_then(|l| l.trim().parse().ok()).with_context(|| format!("psql said {text:?}"))
            }
        }
    }
}

/// A throwaway PostgreSQL server, stopped and removed when this is dropped (its script's stdin
/// closes).
struct Postgres {
    script: Child,
    url: String,
    bin: PathBuf,
}

impl Postgres {
    fn start(root: &Path) -> anyhow::Result<Self> {
        let script = root.join("scripts/throwaway-postgres");
        let mut child = Command::new(&script)
            .arg(free_port().to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run {}", script.display()))?;
        let mut line = String::new();
        let mut stdout = child.stdout.take().context("the script's stdout")?;
        let mut byte = [0u8; 1];
        while stdout.read(&mut byte)? == 1 && byte[0] != b'\n' {
            line.push(byte[0] as char);
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[..] {
            ["ready", url, bin, ..] => Ok(Self { url: url.to_owned(), bin: PathBuf::from(bin), script: child }),
            _ => Err(anyhow!("PostgreSQL did not start (see above); install it (Debian: apt-get install postgresql)")),
        }
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        drop(self.script.stdin.take());
        let _ = self.script.wait();
    }
}

pub fn run(root: &Path, smoke: bool) -> anyhow::Result<()> {
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
    let mut report = render(scale, &measured?);
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
    if let Some(path) = which("wrk") {
        return Ok(path);
    }
    eprintln!("== installing wrk (Debian)");
    let root = Command::new("id").arg("-u").output().map(|o| o.stdout.starts_with(b"0")).unwrap_or(false);
    let apt = |args: &[&str]| {
        let mut command = if root { Command::new("apt-get") } else { Command::new("sudo") };
        if !root {
            command.arg("apt-get");
        }
        command.args(args).env("DEBIAN_FRONTEND", "noninteractive").status()
    };
    let _ = apt(&["update", "-qq"]);
    apt(&["install", "-y", "-qq", "wrk"]).context("cannot install wrk")?;
    which("wrk").context("wrk is not installed and could not be installed (apt-get install wrk)")
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")?.to_str()?.split(':').map(|dir| Path::new(dir).join(program)).find(|p| p.is_file())
}

/// Builds the sandbox and the reference server (`crates/bench-reference`); their paths.
fn build(root: &Path, release: bool) -> anyhow::Result<(PathBuf, PathBuf)> {
    eprintln!("== building payments-sandbox and bench-reference ({})", if release { "release" } else { "debug" });
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo.current_dir(root).args(["build", "--quiet", "--package", "payments-sandbox", "--package", "bench-reference"]);
    if release {
        cargo.arg("--release");
    }
    let status = cargo.status()?;
    if !status.success() {
        bail!("cargo build failed");
    }
    let dir = crate::target_dir(root).join(if release { "release" } else { "debug" });
    Ok((dir.join("payments-sandbox"), dir.join("bench-reference")))
}

/// A server process for the run (the sandbox, or the reference); killed when dropped.
struct Sandbox {
    child: Child,
    address: String,
}

impl Sandbox {
    /// SIGTERM, and wait: connections close and the WAL is checkpointed into the file.
    fn stop(mut self) {
        let _ = Command::new("kill").args(["-TERM", &self.child.id().to_string()]).status();
        let _ = self.child.wait();
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(binary: &Path, work: &Path, database: &Database) -> anyhow::Result<Sandbox> {
    start_with(binary, work, database, &[])
}

fn start_with(binary: &Path, work: &Path, database: &Database, extra: &[&str]) -> anyhow::Result<Sandbox> {
    let address = format!("127.0.0.1:{}", free_port());
    let log = std::fs::File::create(work.join("sandbox.log"))?;
    // The bench is one address measuring the server, not a client among others: its half-open
    // connections (a thousand) are all its own.
    let child = Command::new(binary)
        .args(["--listen", &address, "--rate-limit", "0", "--rail-interval", "0", "--webhook-allow-loopback"])
        .args(["--max-connections-per-address", "1024"])
        .args(extra)
        .arg("--database")
        .arg(database.argument())
        .env("PAYMENTS_SANDBOX_TOKENS", TOKEN)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let sandbox = Sandbox { child, address };
    let deadline = Instant::now() + Duration::from_secs(30);
    while call(&sandbox.address, "GET", "/currencies", None).is_err() {
        if Instant::now() > deadline {
            bail!("the sandbox did not start (see its log)");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(sandbox)
}

/// One HTTP/1.1 request; the status and the JSON body.
fn call(address: &str, method: &str, path: &str, body: Option<&Value>) -> anyhow::Result<(u16, Value)> {
    let mut stream = TcpStream::connect(address)?;
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response.get(9..12).and_then(|s| s.parse().ok()).context("no HTTP status")?;
    let json = response.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or_default();
    Ok((status, serde_json::from_str(json).unwrap_or(Value::Null)))
}

fn created(address: &str, path: &str, body: Value) -> anyhow::Result<Value> {
    match call(address, "POST", path, Some(&body))? {
        (200 | 201, value) => Ok(value),
        (status, value) => Err(anyhow!("POST {path}: {status} {value}")),
    }
}

/// The body of a GET, as bytes.
fn raw_body(address: &str, path: &str) -> anyhow::Result<Vec<u8>> {
    match call(address, "GET", path, None)? {
        (200, value) => Ok(serde_json::to_vec(&value)?),
        (status, value) => Err(anyhow!("GET {path}: {status} {value}")),
    }
}

/// The reference server on the bodies `measure` wrote into `work`.
fn start_reference(binary: &Path, work: &Path) -> anyhow::Result<Sandbox> {
    let address = format!("127.0.0.1:{}", free_port());
    let child = Command::new(binary)
        .args(["--listen", &address, "--token", TOKEN, "--currencies"])
        .arg(work.join("currencies.json"))
        .arg("--balance")
        .arg(work.join("balance.json"))
        .stdout(Stdio::null())
        .spawn()
        .with_context(|| format!("cannot start {}", binary.display()))?;
    let reference = Sandbox { child, address };
    let deadline = Instant::now() + Duration::from_secs(10);
    while call(&reference.address, "GET", "/currencies", None).is_err() {
        if Instant::now() > deadline {
            bail!("the reference server did not start");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(reference)
}

/// Pings one endpoint on the reference server's `/receive` (plain HTTP on loopback) as fast as
/// wrk can ask, then waits until every one has been delivered: how many, and in how long from
/// the first ping.
fn deliveries(
    wrk_path: &Path,
    work: &Path,
    address: &str,
    receiver: &str,
    scale: &Scale,
) -> anyhow::Result<(u64, f64)> {
    eprintln!("== webhook deliveries to a loopback receiver");
    let endpoint = created(
        address,
        "/webhook-endpoints",
        json!({"url": format!("http://{receiver}/receive"), "events": ["ping"]}),
    )?;
    let id = endpoint["id"].as_str().context("an endpoint id")?.to_owned();
    let received = || received(receiver);
    let start = Instant::now();
    let pinged = wrk(wrk_path, work, address, PING, &[id], 8, scale.seconds.min(5))?;
    let sent = pinged.requests - pinged.failed;
    let deadline = Instant::now() + Duration::from_secs(120);
    while received()? < sent {
        if Instant::now() > deadline {
            bail!("{} of {sent} pings delivered in 120 s", received()?);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((sent, start.elapsed().as_secs_f64()))
}

/// How many 4 KiB appends, each followed by `fdatasync`, the disk under `dir` takes per second
/// (one after another): what a durable commit costs here at the least.
fn fdatasync_rate(dir: &Path, seconds: u64) -> anyhow::Result<f64> {
    let path = dir.join("fdatasync-probe");
    let mut file = std::fs::File::create(&path)?;
    let block = [0x5au8; 4096];
    let start = Instant::now();
    let mut count = 0u64;
    while start.elapsed() < Duration::from_secs(seconds.max(1)) {
        file.write_all(&block)?;
        file.sync_data()?;
        count += 1;
    }
    let rate = count as f64 / start.elapsed().as_secs_f64();
    drop(file);
    let _ = std::fs::remove_file(&path);
    Ok(rate)
}

/// Pays with a fresh `order_id` on every request, `<prefix>s<thread>-<n>`, referenced
/// `Invoice <order_id>`. Arguments: the prefix (unique per run), the balance, the recipients.
const PAY: &str = r#"
-- `me` is the global `thread:set` gives each thread: a local of that name would hide it, and
-- every thread would send the same order ids (half the payments answered as replays).
local prefix, balance, recipients, counter = nil, nil, {}, 0
local threads = {}
function setup(thread) thread:set("me", #threads) table.insert(threads, thread) end
function init(args)
  prefix, balance = args[1], args[2]
  for i = 3, #args do recipients[#recipients + 1] = args[i] end
end
request = function()
  counter = counter + 1
  local id = string.format("%ss%d-%d", prefix, me, counter)
  local body = string.format(
    '{"transaction_type":"payment","amount":%d,"balance_id":"%s","recipient_id":"%s","order_id":"%s","reference":"Invoice %s"}',
    100 + counter % 900, balance, recipients[1 + counter % #recipients], id, id)
  return wrk.format("POST", "/transactions", {["Authorization"] = "Bearer tok_bench", ["Content-Type"] = "application/json"}, body)
end
"#;

/// Pings the endpoint given (`POST /webhooks`): a notification for each.
const PING: &str = r#"
local body
function init(args) body = string.format('{"endpoint_id":"%s"}', args[1]) end
request = function()
  return wrk.format("POST", "/webhooks", {["Authorization"] = "Bearer tok_bench", ["Content-Type"] = "application/json"}, body)
end
"#;

/// Lists with the query given, the `{n}` in it replaced by a random number up to args[2]:
/// `/transactions?order_id=s0-{n}` picks one of the seeded payments.
const LIST: &str = r#"
local template, most = nil, 1
function init(args)
  template, most = args[1], tonumber(args[2])
  math.randomseed(os.time())
end
request = function()
  local path = string.gsub(template, "{n}", tostring(math.random(1, most)))
  return wrk.format("GET", path, {["Authorization"] = "Bearer tok_bench"})
end
"#;

/// Lists back to back, cycling through the queries given.
const READERS: &str = r#"
local queries, i = {}, 0
function init(args)
  for _, query in ipairs(args) do queries[#queries + 1] = query end
  math.randomseed(os.time())
end
request = function()
  i = i + 1
  local path = string.gsub(queries[1 + i % #queries], "{n}", tostring(math.random(1, 1000)))
  return wrk.format("GET", path, {["Authorization"] = "Bearer tok_bench"})
end
"#;

struct Results {
    backend: &'static str,
    machine: String,
    /// Payments in the database while the lists were measured, and the seeding's seconds.
    seeded: u64,
    seed_seconds: f64,
    memory_after_seed: Memory,
    lists: Vec<(&'static str, &'static str, f64, Run)>,
    pay_alone: Vec<Run>,
    pay_with_readers: Vec<Run>,
    readers: Vec<Run>,
    /// Per request: the sandbox's runs and the reference's, alternating.
    gets: Vec<(&'static str, Vec<Run>, Vec<Run>)>,
    fdatasync_per_second: f64,
    reads_idle: Vec<Run>,
    reads_beside_payers: Vec<Run>,
    /// Pings delivered to the loopback receiver, and how long it took.
    deliveries: (u64, f64),
    bytes_per_transaction: f64,
    half_open: HalfOpen,
    retention: Retention,
    backup: Backup,
}

/// A backup of the database as seeded, taken while the sandbox serves, against writing the
/// same number of bytes to a new file and flushing it (the least any backup must do).
struct Backup {
    how: &'static str,
    bytes: u64,
    seconds: f64,
    write_seconds: f64,
}

/// The sandbox's resident memory in MiB: its own (anonymous: heap, stacks, SQLite's page cache)
/// and the files it maps (the binary, and the SQLite database, which its writer maps).
struct Memory {
    anonymous: f64,
    files: f64,
}

impl Memory {
    fn of(sandbox: &Sandbox) -> anyhow::Result<Self> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", sandbox.child.id()))?;
        let field = |name: &str| -> anyhow::Result<f64> {
            let kib: f64 = status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
                .with_context(|| format!("{name} in /proc/<pid>/status"))?;
            Ok(kib / 1024.0)
        };
        Ok(Self { anonymous: field("RssAnon:")?, files: field("RssFile:")? })
    }
}

/// The sandbox's resident memory (MiB) idle, holding half-open connections, and after they
/// closed.
struct HalfOpen {
    connections: usize,
    idle: f64,
    holding: f64,
    closed: f64,
}

/// Bytes the database grew by per payment with an endpoint subscribed to every event: while
/// nothing is pruned, and with the retention pruning what was delivered.
struct Retention {
    kept: f64,
    pruned: f64,
    payments: (u64, u64),
}

fn measure(
    wrk_path: &Path,
    binary: &Path,
    reference: &Path,
    work: &Path,
    scale: &Scale,
    database: &Database,
) -> anyhow::Result<Results> {
    eprintln!("== on {}", database.name());
    let sandbox = start(binary, work, database)?;
    let address = sandbox.address.clone();
    let balance = created(&address, "/balances", json!({"currency": "GBP", "name": "Bench"}))?;
    let balance_id = balance["id"].as_str().context("a balance id")?.to_owned();
    let request = created(
        &address,
        "/paymentrequests",
        json!({"amount": 100_000_000_000u64, "settlement_balance_id": balance_id, "reference": "Funding"}),
    )?;
    created(
        &address,
        &format!("/sandbox/paymentrequests/{}/pay", request["id"].as_str().unwrap_or_default()),
        json!({}),
    )?;
    let mut recipients = vec![];
    for i in 0..5 {
        // Recipients are saved in the name their bank holds, which validation tells.
        let account = json!({"currency": "GBP", "sort_code": "040004", "account_number": format!("1234567{i}")});
        let held = created(&address, "/recipients/validate", json!({"country": "GB", "bank_account": account}))?;
        let mut account = account;
        account["account_name"] = held["account_name"].clone();
        let recipient = created(
            &address,
            "/recipients",
            json!({"type": "personal", "country": "GB", "alias": format!("Supplier {i}"), "bank_account": account}),
        )?;
        recipients.push(recipient["id"].as_str().context("a recipient id")?.to_owned());
    }

    // Seed: payments through the API until there are enough; halfway, the rail moves the first
    // half on, so statuses differ.
    eprintln!("== seeding {} payments", scale.transactions);
    let seeding = Instant::now();
    let pay = |prefix: String| [vec![prefix, balance_id.clone()], recipients.clone()].concat();
    let mut made = 0u64;
    let mut first_run = 0;
    let mut advanced = false;
    for run_number in 0.. {
        if made >= scale.transactions || seeding.elapsed().as_secs() >= scale.seed_seconds {
            break;
        }
        let run = wrk(wrk_path, work, &address, PAY, &pay(format!("seed{run_number}")), 16, scale.seconds.min(5))?;
        made += run.requests - run.failed;
        if run_number == 0 {
            first_run = run.requests - run.failed;
        }
        // Halfway: through the payments wanted, or through the time allowed if it runs out first.
        if !advanced && (made >= scale.transactions / 2 || seeding.elapsed().as_secs() >= scale.seed_seconds / 2) {
            created(&address, "/sandbox/advance", json!({}))?;
            advanced = true;
        }
    }
    let seed_seconds = seeding.elapsed().as_secs_f64();
    let seeded = made;
    let memory_after_seed = Memory::of(&sandbox)?;
    // The first run's two wrk threads numbered their payments from 1: `seed0s0-<n>` and
    // `seed0s1-<n>` exist up to about this.
    let per_thread = (first_run / 2).max(1).to_string();

    eprintln!("== filtered lists, one client");
    // Issue 13's target: a filtered page under 10 ms at 1,000,000 transactions. `processing`
    // is the older half (the newest payments are `initiated`), `refunded` none of them: a plan
    // that walks the newest rows expecting the filter's rows among them reads the whole table.
    let queries: [(&str, &str, f64, &str); 7] = [
        ("no filter", "", 0.0, "/transactions?limit=10"),
        ("order_id", "≤ 10 ms", 10.0, "/transactions?limit=10&order_id=seed0s0-{n}"),
        ("status (the older half)", "≤ 10 ms", 10.0, "/transactions?limit=10&status=processing"),
        ("status no transaction has", "≤ 10 ms", 10.0, "/transactions?limit=10&status=refunded"),
        ("search, rare (an order id's digits)", "≤ 10 ms", 10.0, "/transactions?limit=10&search=seed0s1-{n}"),
        ("search, common (a recipient, 1 in 5)", "≤ 10 ms", 10.0, "/transactions?limit=10&search=lovelace"),
        ("status and type", "≤ 10 ms", 10.0, "/transactions?limit=10&status=initiated&transaction_type=payment"),
    ];
    let mut lists = Vec::new();
    for (name, target, limit, query) in queries {
        let run = wrk(wrk_path, work, &address, LIST, &[query.to_owned(), per_thread.clone()], 1, scale.seconds)?;
        lists.push((name, target, limit, run));
    }

    eprintln!("== payments alone, then beside two clients listing");
    let reader_queries: Vec<String> = [
        "/transactions?limit=10&order_id=seed0s0-{n}",
        "/transactions?limit=10&status=processing",
        "/transactions?limit=10&search=seed0s1-{n}",
        "/transactions?limit=10&search=hopper",
    ]
    .iter()
    .map(|q| q.to_string())
    .collect();
    let (mut pay_alone, mut pay_with_readers, mut readers) = (vec![], vec![], vec![]);
    for round in 0..3 {
        pay_alone.push(wrk(wrk_path, work, &address, PAY, &pay(format!("alone{round}")), 16, scale.seconds)?);
        let reading = {
            let (wrk_path, work, address, queries) =
                (wrk_path.to_path_buf(), work.to_path_buf(), address.clone(), reader_queries.clone());
            let seconds = scale.seconds;
            std::thread::spawn(move || wrk(&wrk_path, &work, &address, READERS, &queries, 2, seconds))
        };
        pay_with_readers.push(wrk(wrk_path, work, &address, PAY, &pay(format!("beside{round}")), 16, scale.seconds)?);
        readers.push(reading.join().map_err(|_| anyhow!("the readers' wrk panicked"))??);
    }
    eprintln!("== the disk's fdatasync rate");
    let fdatasync_per_second = fdatasync_rate(work, scale.seconds.min(3))?;

    eprintln!("== GETs: the sandbox against bare axum serving its bytes behind the same bearer check");
    let balance_path = format!("/balances/{balance_id}");
    std::fs::write(work.join("currencies.json"), raw_body(&address, "/currencies")?)?;
    std::fs::write(work.join("balance.json"), raw_body(&address, &balance_path)?)?;
    let bare = start_reference(reference, work)?;
    let mut gets = vec![];
    for (name, path) in [("GET /currencies", "/currencies".to_owned()), ("GET /balances/{id}", balance_path.clone())] {
        let (mut ours, mut theirs) = (vec![], vec![]);
        for _ in 0..3 {
            let args = [path.clone(), "1".to_owned()];
            ours.push(wrk(wrk_path, work, &address, LIST, &args, 16, scale.seconds)?);
            theirs.push(wrk(wrk_path, work, &bare.address, LIST, &args, 16, scale.seconds)?);
        }
        gets.push((name, ours, theirs));
    }
    let deliveries = deliveries(wrk_path, work, &address, &bare.address, scale)?;
    bare.stop();

    eprintln!("== GET /balances/{{id}} idle, then while 8 clients pay");
    let (mut reads_idle, mut reads_beside_payers) = (vec![], vec![]);
    let get_balance = [balance_path, "1".to_owned()];
    for round in 0..3 {
        reads_idle.push(wrk(wrk_path, work, &address, LIST, &get_balance, 16, scale.seconds)?);
        let paying = {
            let (wrk_path, work, address, args) =
                (wrk_path.to_path_buf(), work.to_path_buf(), address.clone(), pay(format!("payers{round}")));
            let seconds = scale.seconds;
            std::thread::spawn(move || wrk(&wrk_path, &work, &address, PAY, &args, 8, seconds))
        };
        reads_beside_payers.push(wrk(wrk_path, work, &address, LIST, &get_balance, 16, scale.seconds)?);
        made += paying.join().map_err(|_| anyhow!("the payers' wrk panicked"))??.requests;
    }

    let half_open = half_open(&sandbox, 1_000)?;
    let backup = backup(binary, work, database)?;
    let transactions = made + pay_alone.iter().chain(&pay_with_readers).map(|r| r.requests - r.failed).sum::<u64>();
    sandbox.stop();
    let bytes = database.bytes()?;
    let retention = retention(wrk_path, binary, reference, work, scale, database, &pay)?;
    Ok(Results {
        backend: database.name(),
        machine: machine(),
        seeded,
        seed_seconds,
        memory_after_seed,
        lists,
        pay_alone,
        pay_with_readers,
        readers,
        gets,
        fdatasync_per_second,
        reads_idle,
        reads_beside_payers,
        deliveries,
        bytes_per_transaction: bytes as f64 / transactions.max(1) as f64,
        half_open,
        retention,
        backup,
    })
}

/// Backs the database up while the sandbox serves it: `payments-sandbox backup` on SQLite,
/// `pg_dump --format=custom` on PostgreSQL (the README's ways); then writes as many bytes to a
/// new file and flushes it, for the ratio.
fn backup(binary: &Path, work: &Path, database: &Database) -> anyhow::Result<Backup> {
    eprintln!("== a backup of the database as seeded, while the sandbox serves");
    let target = work.join("backup");
    let _ = std::fs::remove_file(&target);
    let started = Instant::now();
    let (how, output) = match database {
        Database::Sqlite(path) => (
            "`payments-sandbox backup`",
            Command::new(binary).arg("backup").arg("--database").arg(path).arg("--to").arg(&target).output(),
        ),
        Database::Postgres { url, bin } => (
            "`pg_dump --format=custom`",
            Command::new(bin.join("pg_dump")).args(["--format=custom", "--file"]).arg(&target).arg(url).output(),
        ),
    };
    let output = output.context("the backup did not run")?;
    if !output.status.success() {
        bail!("the backup failed: {}", String::from_utf8_lossy(&output.stderr));
    }
    let seconds = started.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&target)?.len();
    let _ = std::fs::remove_file(&target);
    let started = Instant::now();
    {
        let mut file = std::fs::File::create(&target)?;
        let block = vec![0x5a_u8; 1 << 20];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(block.len() as u64) as usize;
            file.write_all(&block[..n])?;
            left -= n as u64;
        }
        file.sync_all()?;
    }
    let write_seconds = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&target);
    Ok(Backup { how, bytes, seconds, write_seconds })
}

/// The failed-authentication limit's cost per failed request, with one address failing and with
/// a million (`crates/payments-sandbox/benches/auth_failures.rs`), as the line it prints.
fn auth_failures(root: &Path, scale: &Scale) -> anyhow::Result<String> {
    eprintln!("== the failed-authentication limit, one address and a million");
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo.current_dir(root).args(["bench", "--quiet", "--package", "payments-sandbox", "--bench", "auth_failures"]);
    if !scale.release {
        cargo.args(["--profile", "dev", "--", "--smoke"]);
    }
    let output = cargo.output().context("cargo bench")?;
    let text = String::from_utf8_lossy(&output.stdout);
    match text.lines().find(|line| line.starts_with("auth_failures ")) {
        Some(line) if output.status.success() => Ok(line.to_owned()),
        _ => Err(anyhow!("the auth_failures bench failed: {}", String::from_utf8_lossy(&output.stderr))),
    }
}

/// A `name=value` of the bench's line.
fn field(line: &str, name: &str) -> f64 {
    line.split_whitespace()
        .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
        .and_then(|value| value.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Opens `count` connections that never finish a request (nothing sent, half a request line,
/// half the headers, half a body, in turn), then closes them: the sandbox's resident memory
/// before, while it holds them, and six seconds after they closed.
fn half_open(sandbox: &Sandbox, count: usize) -> anyhow::Result<HalfOpen> {
    eprintln!("== {count} half-open connections");
    // The sandbox's own memory: on SQLite its resident total also counts the database's mapped
    // pages, which reads bring in and connections do not.
    let rss = || Memory::of(sandbox).map(|memory| memory.anonymous);
    let partial: [&[u8]; 4] = [
        b"",
        b"GET /curr",
        b"POST /transactions HTTP/1.1\r\nHost: x\r\nAuthorization: Be",
        b"POST /transactions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"amo",
    ];
    let idle = rss()?;
    let mut held = Vec::with_capacity(count);
    for i in 0..count {
        let mut stream = TcpStream::connect(&sandbox.address)?;
        stream.write_all(partial[i % partial.len()])?;
        held.push(stream);
    }
    // Well inside the 10 s header and body timeouts: all are still open.
    std::thread::sleep(Duration::from_secs(1));
    let holding = rss()?;
    drop(held);
    // The sandbox hands freed memory back to the system every 5 s.
    std::thread::sleep(Duration::from_secs(6));
    Ok(HalfOpen { connections: count, idle, holding, closed: rss()? })
}

/// Payments with an endpoint subscribed to every event (delivered to the reference server):
/// first with the default retention, which keeps every notification and event for 7 days,
/// then with a retention of one second, which prunes what was delivered; what the database grew
/// by per payment in each.
fn retention(
    wrk_path: &Path,
    binary: &Path,
    reference: &Path,
    work: &Path,
    scale: &Scale,
    database: &Database,
    pay: &dyn Fn(String) -> Vec<String>,
) -> anyhow::Result<Retention> {
    eprintln!("== payments with every event delivered: notifications kept, then pruned");
    let receiver = start_reference(reference, work)?;
    let phase = |extra: &[&str], prefix: &str| -> anyhow::Result<(u64, f64)> {
        let before = database.bytes()?;
        let sandbox = start_with(binary, work, database, extra)?;
        // Whatever is past the retention is pruned at start; give it a moment.
        std::thread::sleep(Duration::from_secs(2));
        let run = wrk(wrk_path, work, &sandbox.address, PAY, &pay(prefix.to_owned()), 16, scale.seconds)?;
        // Until the receiver has had everything (no new delivery for two seconds), then one more
        // second for the last prune.
        let (mut last, deadline) = (received(&receiver.address)?, Instant::now() + Duration::from_secs(120));
        loop {
            std::thread::sleep(Duration::from_secs(2));
            let now = received(&receiver.address)?;
            if now == last || Instant::now() > deadline {
                break;
            }
            last = now;
        }
        std::thread::sleep(Duration::from_secs(1));
        sandbox.stop();
        let paid = run.requests - run.failed;
        Ok((paid, database.bytes()?.saturating_sub(before) as f64 / paid.max(1) as f64))
    };
    {
        let sandbox = start(binary, work, database)?;
        created(
            &sandbox.address,
            "/webhook-endpoints",
            json!({"url": format!("http://{}/receive", receiver.address)}),
        )?;
        sandbox.stop();
    }
    let (kept_payments, kept) = phase(&[], "kept")?;
    let (pruned_payments, pruned) = phase(&["--webhook-retention", "1"], "pruned")?;
    receiver.stop();
    Ok(Retention { kept, pruned, payments: (kept_payments, pruned_payments) })
}

/// How many notifications the reference server has received.
fn received(receiver: &str) -> anyhow::Result<u64> {
    let mut stream = TcpStream::connect(receiver)?;
    write!(stream, "GET /received HTTP/1.1\r\nHost: {receiver}\r\nConnection: close\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    response.rsplit("\r\n\r\n").next().and_then(|n| n.trim().parse().ok()).context("a count")
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

fn mean(runs: &[Run], field: impl Fn(&Run) -> f64) -> f64 {
    runs.iter().map(field).sum::<f64>() / runs.len().max(1) as f64
}

fn render(scale: &Scale, results: &[Results]) -> String {
    // A smoke run proves the command works; its figures judge nothing.
    let smoke = scale.name == "smoke";
    let verdict = |ok: bool| {
        if smoke {
            "(smoke)"
        } else if ok {
            "met"
        } else {
            "**missed**"
        }
    };
    let mut out = String::new();
    out.push_str("# Benchmarks\n\n");
    out.push_str(&format!(
        "Written by `cargo xtask bench`{} on {} ({}); load from wrk. Absolute figures depend on the \
         machine (shared and noisy here): the ratios are the measurements.\n\n",
        if scale.name == "smoke" { " --smoke (debug build, little data: no figure here means anything)" } else { "" },
        results.first().map_or("", |r| r.machine.as_str()),
        if scale.release { "release build" } else { "debug build" },
    ));
    out.push_str(
        "Each backend is measured the same way: the embedded SQLite file (the default), then PostgreSQL (a \
         throwaway server on this machine, started by `scripts/throwaway-postgres` with its default settings).\n\n",
    );
    for r in results {
        out.push_str(&format!("# {}\n\n", r.backend));
        render_backend(&mut out, scale, r, verdict);
    }
    out
}

fn render_backend(out: &mut String, scale: &Scale, r: &Results, verdict: impl Fn(bool) -> &'static str) {
    let smoke = scale.name == "smoke";
    out.push_str(&format!(
        "## Filtered lists\n\n{} transactions in one tenant (seeded through the API in {:.0} s{}), 10 per page, one \
         client asking back to back for {} s each.\n\n| filter | median | p99 | lists/s | target |\n|---|---|---|---|---|\n",
        r.seeded,
        r.seed_seconds,
        if r.seeded < scale.transactions {
            format!(": the {} s of seeding allowed ran out before {}", scale.seed_seconds, scale.transactions)
        } else {
            String::new()
        },
        scale.seconds
    ));
    for (name, target, limit, run) in &r.lists {
        let status =
            if *limit > 0.0 { format!("{target}: {}", verdict(run.median_ms <= *limit)) } else { String::new() };
        out.push_str(&format!(
            "| {name} | {:.2} ms | {:.2} ms | {:.0} | {status} |\n",
            run.median_ms, run.p99_ms, run.requests_per_second
        ));
    }
    let m = &r.memory_after_seed;
    out.push_str(&format!(
        "\nResident memory after seeding: **{:.0} MiB** of the sandbox's own (heap, stacks, caches), and {:.0} MiB \
         of files it maps (the binary; on SQLite, the database, which the writer maps).\n",
        m.anonymous, m.files
    ));
    let alone = mean(&r.pay_alone, |run| run.requests_per_second);
    let beside = mean(&r.pay_with_readers, |run| run.requests_per_second);
    let ratio = beside / alone.max(f64::MIN_POSITIVE);
    out.push_str(&format!(
        "\n## Payments while others read\n\n`POST /transactions` from 16 connections (a fresh `order_id` each), \
         alone and beside two clients listing back to back (order_id, status and search filters), {} s each, \
         three rounds alternating.\n\n| | payments/s | median | p99 |\n|---|---|---|---|\n\
         | alone | {alone:.0} | {:.2} ms | {:.2} ms |\n| beside two readers | {beside:.0} | {:.2} ms | {:.2} ms |\n\
         | the readers | {:.0} lists/s | {:.2} ms | {:.2} ms |\n\n\
         **Ratio: {ratio:.2}×** (rounds: {}; target ≥ 0.5×, aim 0.8×: {}).\n",
        scale.seconds,
        mean(&r.pay_alone, |run| run.median_ms),
        mean(&r.pay_alone, |run| run.p99_ms),
        mean(&r.pay_with_readers, |run| run.median_ms),
        mean(&r.pay_with_readers, |run| run.p99_ms),
        mean(&r.readers, |run| run.requests_per_second),
        mean(&r.readers, |run| run.median_ms),
        mean(&r.readers, |run| run.p99_ms),
        r.pay_alone
            .iter()
            .zip(&r.pay_with_readers)
            .map(|(alone, beside)| format!(
                "{:.2}×",
                beside.requests_per_second / alone.requests_per_second.max(f64::MIN_POSITIVE)
            ))
            .collect::<Vec<_>>()
            .join(", "),
        if smoke {
            verdict(true)
        } else if ratio >= 0.8 {
            "target and aim met"
        } else if ratio >= 0.5 {
            "target met, aim not"
        } else {
            verdict(false)
        },
    ));
    let ratio_of = |ours: &[Run], theirs: &[Run]| {
        mean(ours, |run| run.requests_per_second) / mean(theirs, |run| run.requests_per_second).max(f64::MIN_POSITIVE)
    };
    out.push_str(
        "\n## The server against its stack\n\nThe same GETs (16 connections, three rounds alternating) against the \
         sandbox and against `crates/bench-reference`: bare axum answering the sandbox's own bytes behind the same \
         bearer check (SHA-256, constant-time comparison), nothing else.\n\n| request | sandbox/s | bare axum/s | \
         ratio | target |\n|---|---|---|---|---|\n",
    );
    for (name, ours, theirs) in &r.gets {
        let ratio = ratio_of(ours, theirs);
        out.push_str(&format!(
            "| {name} | {:.0} | {:.0} | **{ratio:.2}×** | ≥ 0.95×: {} |\n",
            mean(ours, |run| run.requests_per_second),
            mean(theirs, |run| run.requests_per_second),
            verdict(ratio >= 0.95)
        ));
    }
    let writes = alone / r.fdatasync_per_second.max(f64::MIN_POSITIVE);
    out.push_str(&format!(
        "\n## Durable writes against the disk\n\nThe disk under the database takes {:.0} fdatasync/s (4 KiB appends, \
         one after another); payments alone (above) made {alone:.0}/s, each on disk before it was answered.\n\n\
         **Ratio: {writes:.2}×** (target ≥ 1.0× and ≥ 2,000/s: {}).\n",
        r.fdatasync_per_second,
        verdict(writes >= 1.0 && alone >= 2000.0)
    ));
    let reads = ratio_of(&r.reads_beside_payers, &r.reads_idle);
    out.push_str(&format!(
        "\n## Reads under write load\n\n`GET /balances/{{id}}` from 16 connections, idle and while 8 connections pay, \
         three rounds alternating: {:.0}/s idle, {:.0}/s while paying.\n\n**Ratio: {reads:.2}×** (target ≥ 0.8×: {}).\n",
        mean(&r.reads_idle, |run| run.requests_per_second),
        mean(&r.reads_beside_payers, |run| run.requests_per_second),
        verdict(reads >= 0.8)
    ));
    let (delivered, seconds) = r.deliveries;
    let per_second = delivered as f64 / seconds.max(f64::MIN_POSITIVE);
    out.push_str(&format!(
        "\n## Webhook deliveries\n\n{delivered} pings, made as fast as 8 connections could ask, all signed and \
         delivered to a loopback receiver (`bench-reference`, answering 200 at once) {seconds:.1} s after the first: \
         **{per_second:.0} deliveries/s** (target ≥ 2,000/s: {}).\n",
        verdict(per_second >= 2000.0)
    ));
    out.push_str(&format!(
        "\n## On disk\n\n{:.0} bytes per transaction (the database after a graceful stop, every index and the \
         search index included; no endpoint was subscribed to their events, and events nobody subscribes to are not \
         stored).\n\n",
        r.bytes_per_transaction
    ));
    let t = &r.retention;
    out.push_str(&format!(
        "With an endpoint subscribed to every event (each delivered to the loopback receiver), what the database \
         grew by per payment: **{:.0} bytes** while every notification and its event is kept ({} payments, the \
         default 7-day retention), **{:.0} bytes** once the retention prunes what was delivered ({} payments after a \
         restart with `--webhook-retention 1`: the first phase's notifications pruned at start, this phase's \
         after delivery; freed pages are reused{}).\n\n",
        t.kept,
        t.payments.0,
        t.pruned,
        t.payments.1,
        if r.backend == "PostgreSQL" { ": the sandbox vacuums the tables after each prune" } else { "" },
    ));
    let b = &r.backup;
    out.push_str(&format!(
        "## Backup\n\n{} of the database as seeded, while the sandbox served it: {:.1} MB in **{:.2} s**, \
         against {:.2} s to write and flush as many bytes to a new file: **{:.1}×** of that.\n\n",
        b.how,
        b.bytes as f64 / 1e6,
        b.seconds,
        b.write_seconds,
        b.seconds / b.write_seconds.max(f64::MIN_POSITIVE),
    ));
    let h = &r.half_open;
    out.push_str(&format!(
        "\n## Half-open connections\n\n{} connections that never finish a request (nothing sent, half a request \
         line, half the headers, half a body, in turn): the sandbox's own resident memory {:.0} MiB before, **{:.0} MiB** while the \
         sandbox holds them ({:.1} KiB each), **{:.0} MiB** six seconds after they closed (freed memory is handed back \
         to the system every 5 s). Each would be closed by the \
         10 s header or body timeout; at most 1,024 are served at once (`--max-connections`).\n\n",
        h.connections,
        h.idle,
        h.holding,
        (h.holding - h.idle) * 1024.0 / h.connections.max(1) as f64,
        h.closed,
    ));
}
