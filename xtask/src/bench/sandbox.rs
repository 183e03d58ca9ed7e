//! The servers a run measures, each a process killed when dropped (the sandbox on a backend,
//! the bare axum reference, a throwaway PostgreSQL), the requests that set them up, and the
//! disk's own fsync rate.

use anyhow::{Context, anyhow, bail};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::*;
use crate::wrk::free_port;

/// Where a run keeps its data.
pub(super) enum Database {
    Sqlite(PathBuf),
    /// The server's URL, and where its programs are (`psql`).
    Postgres {
        url: String,
        bin: PathBuf,
    },
}

impl Database {
    pub(super) fn name(&self) -> &'static str {
        match self {
            Self::Sqlite(_) => "SQLite",
            Self::Postgres { .. } => "PostgreSQL",
        }
    }

    pub(super) fn argument(&self) -> String {
        match self {
            Self::Sqlite(path) => path.display().to_string(),
            Self::Postgres { url, .. } => url.clone(),
        }
    }

    /// Bytes the data takes: the SQLite file (and its WAL), or the PostgreSQL database.
    pub(super) fn bytes(&self) -> anyhow::Result<u64> {
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
pub(super) struct Postgres {
    pub(super) script: Child,
    pub(super) url: String,
    pub(super) bin: PathBuf,
}

impl Postgres {
    pub(super) fn start(root: &Path) -> anyhow::Result<Self> {
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

/// A server process for the run (the sandbox, or the reference); killed when dropped.
pub(super) struct Sandbox {
    pub(super) child: Child,
    pub(super) address: String,
}

impl Sandbox {
    /// SIGTERM, and wait: connections close and the WAL is checkpointed into the file.
    pub(super) fn stop(mut self) {
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

pub(super) fn start(binary: &Path, work: &Path, database: &Database) -> anyhow::Result<Sandbox> {
    start_with(binary, work, database, &[])
}

pub(super) fn start_with(binary: &Path, work: &Path, database: &Database, extra: &[&str]) -> anyhow::Result<Sandbox> {
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
    answering(&sandbox.address, Duration::from_secs(30)).context("the sandbox did not start (see its log)")?;
    Ok(sandbox)
}

/// Waits until the server at `address` answers `GET /currencies`, for `within` at the most.
pub(super) fn answering(address: &str, within: Duration) -> anyhow::Result<()> {
    let deadline = Instant::now() + within;
    while call(address, "GET", "/currencies", None).is_err() {
        if Instant::now() > deadline {
            bail!("no answer from {address} in {} s", within.as_secs());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(())
}

/// One HTTP/1.1 request; the status and the JSON body.
pub(super) fn call(address: &str, method: &str, path: &str, body: Option<&Value>) -> anyhow::Result<(u16, Value)> {
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

pub(super) fn created(address: &str, path: &str, body: Value) -> anyhow::Result<Value> {
    match call(address, "POST", path, Some(&body))? {
        (200 | 201, value) => Ok(value),
        (status, value) => Err(anyhow!("POST {path}: {status} {value}")),
    }
}

/// The resources the requests name: a funded balance, recipients, a payment request.
pub(super) struct Setup {
    pub(super) balance: String,
    pub(super) recipients: Vec<String>,
    /// The funding payment request, paid.
    pub(super) request: String,
}

impl Setup {
    /// A GBP balance named `name`, funded by a paid payment request, and five recipients.
    pub(super) fn of(address: &str, name: &str) -> anyhow::Result<Self> {
        let balance = created(address, "/balances", json!({"currency": "GBP", "name": name}))?;
        let balance = balance["id"].as_str().context("a balance id")?.to_owned();
        let funding = created(
            address,
            "/paymentrequests",
            json!({"amount": 100_000_000_000u64, "settlement_balance_id": balance, "reference": "Funding"}),
        )?;
        let request = funding["id"].as_str().context("a payment request id")?.to_owned();
        created(address, &format!("/sandbox/paymentrequests/{request}/pay"), json!({}))?;
        let mut recipients = vec![];
        for i in 0..5 {
            // Saved in the name the bank holds, which validation tells.
            let mut account =
                json!({"currency": "GBP", "sort_code": "040004", "account_number": format!("1234567{i}")});
            let held = created(address, "/recipients/validate", json!({"country": "GB", "bank_account": account}))?;
            account["account_name"] = held["account_name"].clone();
            let recipient = created(
                address,
                "/recipients",
                json!({"type": "personal", "country": "GB", "alias": format!("Supplier {i}"), "bank_account": account}),
            )?;
            recipients.push(recipient["id"].as_str().context("a recipient id")?.to_owned());
        }
        Ok(Self { balance, recipients, request })
    }
}

/// The body of a GET, as bytes.
pub(super) fn raw_body(address: &str, path: &str) -> anyhow::Result<Vec<u8>> {
    match call(address, "GET", path, None)? {
        (200, value) => Ok(serde_json::to_vec(&value)?),
        (status, value) => Err(anyhow!("GET {path}: {status} {value}")),
    }
}

/// The reference server on the bodies `measure` wrote into `work`.
pub(super) fn start_reference(binary: &Path, work: &Path) -> anyhow::Result<Sandbox> {
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
    answering(&reference.address, Duration::from_secs(10)).context("the reference server did not start")?;
    Ok(reference)
}

/// How many 4 KiB appends, each followed by `fdatasync`, the disk under `dir` takes per second
/// (one after another): what a durable commit costs here at the least.
pub(super) fn fdatasync_rate(dir: &Path, seconds: u64) -> anyhow::Result<f64> {
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
