//! `cargo xtask bench --instructions [--smoke]`: the sandbox's CPU per request, counted in
//! instructions by valgrind's callgrind over all its threads. The count does not move with the
//! machine's noise (the same binary gives the same count within a fraction of a percent), so it
//! judges a change to the hot paths where throughput on a shared machine cannot.
//!
//! One sandbox (a SQLite file) and one bare axum reference (`crates/bench-reference`: the same
//! bytes behind the same bearer check) run under callgrind with instrumentation off. For each
//! request kind: a warm-up on one keep-alive connection, then instrumentation on, counters zeroed,
//! `N` requests on that connection (pipelined, a few ahead of their answers), everything they
//! caused done (a webhook's delivery), and the
//! counters dumped. Instructions per request is the dump's total over `N`; where they go is
//! callgrind_annotate's top functions by inclusive count (a build with line tables, in a target
//! directory of its own so the usual release build stays as it is). `--smoke` runs the same on a
//! debug build with a few requests each, as CI keeps the machinery working, and judges nothing.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use serde_json::json;

use super::sandbox::{Sandbox, Setup, answering, created, raw_body};
use super::{TOKEN, ensure_debian};
use crate::wrk::free_port;

/// Requests before counting, and counted, per kind; the count kept is the least of `rounds`
/// (a payment's vary with when SQLite checkpoints and FTS5 merges fall among them). With `only`,
/// the kinds whose name holds it, and no other.
#[derive(Clone, Copy)]
struct Counts<'a> {
    warm_up: usize,
    counted: usize,
    rounds: usize,
    only: Option<&'a str>,
}

/// Requests written ahead of the answers read (`Traced::count`).
const WINDOW: usize = 4;

/// Each server's tokio workers, as on CI's 2 cores.
const WORKERS: usize = 2;

const FULL: Counts = Counts { warm_up: 200, counted: 1_000, rounds: 3, only: None };
const SMOKE: Counts = Counts { warm_up: 3, counted: 5, rounds: 1, only: None };

/// A request kind's count: instructions per request, and the functions that take most of them
/// (inclusive, per request).
pub(crate) struct Counted {
    pub(crate) kind: &'static str,
    pub(crate) per_request: f64,
    /// By inclusive count (callees counted), and by their own.
    pub(crate) inclusive: Vec<(f64, String)>,
    pub(crate) own: Vec<(f64, String)>,
}

/// What a run measured: the reference's two kinds, then the sandbox's.
pub(crate) struct Measured {
    pub(crate) release: bool,
    pub(crate) counted: usize,
    pub(crate) rounds: usize,
    pub(crate) reference: Vec<Counted>,
    pub(crate) sandbox: Vec<Counted>,
}

/// `only`: the kinds whose name holds it, and no other (a cut's count while it is made).
pub(crate) fn measure(root: &Path, smoke: bool, only: Option<&str>) -> anyhow::Result<Measured> {
    ensure_debian("valgrind", "valgrind")?;
    let counts = &Counts { only, ..if smoke { SMOKE } else { FULL } };
    let (sandbox_binary, reference_binary) = build(root, !smoke)?;
    // Kept after the run: its dumps answer `callgrind_annotate --inclusive=yes DUMP` for
    // whatever the tables below leave out.
    let work = root.join("target/instructions/work");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work)?;
    let measured = (|| {
        let sandbox = Traced::start(&sandbox_binary, &work, "sandbox", &sandbox_arguments(&work))?;
        let address = sandbox.server.address.clone();
        let setup = Setup::of(&address, "Instructions")?;
        std::fs::write(work.join("currencies.json"), raw_body(&address, "/currencies")?)?;
        std::fs::write(work.join("balance.json"), raw_body(&address, &format!("/balances/{}", setup.balance))?)?;
        let reference = Traced::start(&reference_binary, &work, "reference", &reference_arguments(&work))?;
        let get = |path: String| move |_: usize| ("GET", path.clone(), None);
        let reference_counts = vec![
            reference.count("GET /currencies", counts, get("/currencies".into()), None)?,
            reference.count("GET /balances/{id}", counts, get(format!("/balances/{}", setup.balance)), None)?,
        ]
        .into_iter()
        .flatten()
        .collect();
        let mut sandbox_counts: Vec<Counted> = vec![
            sandbox.count("GET /currencies", counts, get("/currencies".into()), None)?,
            sandbox.count("GET /balances/{id}", counts, get(format!("/balances/{}", setup.balance)), None)?,
            sandbox.count(
                "POST /transactions (a payment)",
                counts,
                |i| ("POST", "/transactions".into(), Some(setup.payment(i))),
                None,
            )?,
            sandbox.count(
                "GET /transactions?… (a filtered page)",
                counts,
                get(format!("/transactions?balance_id={}&transaction_type=payment&limit=20", setup.balance)),
                None,
            )?,
            sandbox.count(
                "POST /paymentrequests",
                counts,
                |i| ("POST", "/paymentrequests".into(), Some(setup.payment_request(i))),
                None,
            )?,
            sandbox.count("GET /pay/{id} (the pay page)", counts, get(format!("/pay/{}", setup.request)), None)?,
        ]
        .into_iter()
        .flatten()
        .collect();
        // Last: from here on, every ping is delivered to the reference's receiver.
        let endpoint = created(
            &address,
            "/webhook-endpoints",
            json!({"url": format!("http://{}/receive", reference.server.address), "events": ["ping"]}),
        )?;
        let ping = json!({"endpoint_id": endpoint["id"]}).to_string();
        let receiver = reference.server.address.clone();
        sandbox_counts.extend(sandbox.count(
            "POST /webhooks (a ping, delivered)",
            counts,
            |_| ("POST", "/webhooks".into(), Some(ping.clone())),
            Some(&|sent| delivered(&receiver, sent)),
        )?);
        Ok::<_, anyhow::Error>(Measured {
            release: !smoke,
            counted: counts.counted,
            rounds: counts.rounds,
            reference: reference_counts,
            sandbox: sandbox_counts,
        })
    })();
    eprintln!("== the dumps and the servers' logs: {}", work.display());
    measured
}

/// The sandbox and the reference, built with line tables (for callgrind_annotate's names) into
/// `target/instructions`; or, for the smoke run, the debug builds.
fn build(root: &Path, release: bool) -> anyhow::Result<(PathBuf, PathBuf)> {
    if !release {
        let dir = crate::cargo_build(root, &["--package", "payments-sandbox", "--package", "bench-reference"], false)?;
        return Ok((dir.join("payments-sandbox"), dir.join("bench-reference")));
    }
    eprintln!("== building payments-sandbox and bench-reference (release, with line tables)");
    let target = root.join("target/instructions");
    let status = crate::cargo()
        .current_dir(root)
        .args(["build", "--quiet", "--release", "--package", "payments-sandbox", "--package", "bench-reference"])
        .arg("--target-dir")
        .arg(&target)
        .env("CARGO_PROFILE_RELEASE_DEBUG", "line-tables-only")
        .status()?;
    if !status.success() {
        bail!("cargo build (release, with line tables) failed");
    }
    Ok((target.join("release/payments-sandbox"), target.join("release/bench-reference")))
}

fn sandbox_arguments(work: &Path) -> Vec<String> {
    [
        "--rate-limit",
        "0",
        "--rail-interval",
        "0",
        "--webhook-allow-loopback",
        "--database",
        &work.join("instructions.db").display().to_string(),
    ]
    .map(str::to_owned)
    .to_vec()
}

fn reference_arguments(work: &Path) -> Vec<String> {
    let file = |name: &str| work.join(name).display().to_string();
    [
        "--token".into(),
        TOKEN.into(),
        "--currencies".into(),
        file("currencies.json"),
        "--balance".into(),
        file("balance.json"),
    ]
    .to_vec()
}

/// The requests' bodies, naming what `Setup` made.
impl Setup {
    /// The `i`th payment: a fresh `order_id` each, so each is a payment and none a replay.
    fn payment(&self, i: usize) -> String {
        json!({
            "transaction_type": "payment",
            "amount": 100 + i % 900,
            "balance_id": self.balance,
            "recipient_id": self.recipients[i % self.recipients.len()],
            "order_id": format!("instructions-{i}"),
            "reference": format!("Invoice {i}"),
        })
        .to_string()
    }

    fn payment_request(&self, i: usize) -> String {
        json!({"amount": 1000 + i, "settlement_balance_id": self.balance, "reference": format!("Order {i}")})
            .to_string()
    }
}

/// A server under callgrind, instrumentation off until a count asks for it.
struct Traced {
    server: Sandbox,
    dumps: PathBuf,
}

impl Traced {
    fn start(binary: &Path, work: &Path, name: &str, arguments: &[String]) -> anyhow::Result<Self> {
        let address = format!("127.0.0.1:{}", free_port());
        let dumps = work.join(format!("{name}.callgrind"));
        let log = std::fs::File::create(work.join(format!("{name}.log")))?;
        let child = Command::new("valgrind")
            .args(["--tool=callgrind", "--instr-atstart=no", "--dump-instr=no"])
            .arg(format!("--callgrind-out-file={}", dumps.display()))
            .arg(binary)
            .args(["--listen", &address])
            .args(arguments)
            .env("PAYMENTS_SANDBOX_TOKENS", TOKEN)
            // Both runtimes as many workers whatever the machine's cores: an idle worker's
            // searching and parking are counted too, and their share grows with the workers.
            .env("TOKIO_WORKER_THREADS", WORKERS.to_string())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("cannot start {} under valgrind", binary.display()))?;
        let server = Sandbox { child, address };
        // Under valgrind a start takes many times as long.
        answering(&server.address, Duration::from_secs(180))
            .with_context(|| format!("{name} did not start under valgrind (see {}/{name}.log)", work.display()))?;
        Ok(Self { server, dumps })
    }

    /// The instructions `counts.counted` requests of a kind take (`request(i)`: method, path,
    /// body), after `counts.warm_up` of them; `settled(sent)` says when all they caused is done.
    fn count(
        &self,
        kind: &'static str,
        counts: &Counts,
        mut request: impl FnMut(usize) -> (&'static str, String, Option<String>),
        settled: Option<&dyn Fn(usize) -> anyhow::Result<bool>>,
    ) -> anyhow::Result<Option<Counted>> {
        if counts.only.is_some_and(|only| !kind.contains(only)) {
            return Ok(None);
        }
        eprintln!("== {kind}");
        let mut connection = Connection::open(&self.server.address)?;
        // Requests `from..to`, pipelined: each is written `WINDOW` ahead of the answer read, so
        // the server finds its next request already there. Sent one by one, a server parks
        // between requests and is woken for the next, and how much of that it does moves with
        // timing: bare axum's count moved by a twelfth from run to run.
        let mut send = |from: usize, to: usize| -> anyhow::Result<()> {
            let mut pending = std::collections::VecDeque::new();
            for i in from..to {
                while pending.len() < WINDOW && i + pending.len() < to {
                    let (method, path, body) = request(i + pending.len());
                    connection.write(method, &path, body.as_deref())?;
                    pending.push_back(format!("{method} {path}"));
                }
                let status = connection.answer()?;
                let sent = pending.pop_front().context("an answer to no request")?;
                if !(200..300).contains(&status) {
                    bail!("{sent}: {status}");
                }
            }
            Ok(())
        };
        send(0, counts.warm_up)?;
        let settle = |sent: usize| -> anyhow::Result<()> {
            let Some(settled) = settled else { return Ok(()) };
            let deadline = Instant::now() + Duration::from_secs(300);
            while !settled(sent)? {
                if Instant::now() > deadline {
                    bail!("{kind}: what the requests caused was not done in 300 s");
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(())
        };
        settle(counts.warm_up)?;
        let mut least: Option<(u64, PathBuf)> = None;
        let mut sent = counts.warm_up;
        for _ in 0..counts.rounds {
            let before = self.dumped()?;
            self.control(&["--instr=on"])?;
            self.control(&["--zero"])?;
            send(sent, sent + counts.counted)?;
            sent += counts.counted;
            settle(sent)?;
            self.control(&["--dump"])?;
            self.control(&["--instr=off"])?;
            let dump = self.dumped()?.into_iter().find(|d| !before.contains(d)).context("callgrind wrote no dump")?;
            let total = total(&dump)?;
            eprintln!("   {:.0} instructions per request", total as f64 / counts.counted as f64);
            if least.as_ref().is_none_or(|(least, _)| total < *least) {
                least = Some((total, dump));
            }
        }
        let (total, dump) = least.context("no round counted")?;
        let per_request = total as f64 / counts.counted as f64;
        let inclusive = top_functions(&dump, counts.counted, true)?;
        let own = top_functions(&dump, counts.counted, false)?;
        Ok(Some(Counted { kind, per_request, inclusive, own }))
    }

    /// callgrind_control on the server: it answers once the server next runs, so a request on a
    /// connection of its own wakes a server that waits for one.
    fn control(&self, arguments: &[&str]) -> anyhow::Result<()> {
        let pid = self.server.child.id().to_string();
        let mut control = Command::new("callgrind_control")
            .args(arguments)
            .arg(&pid)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("callgrind_control (Debian: valgrind)")?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = control.try_wait()? {
                return match status.success() {
                    true => Ok(()),
                    false => Err(anyhow!("callgrind_control {} {pid} failed", arguments.join(" "))),
                };
            }
            if Instant::now() > deadline {
                let _ = control.kill();
                bail!("callgrind_control {} {pid}: no answer in 60 s", arguments.join(" "));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The dump files callgrind has written so far.
    fn dumped(&self) -> anyhow::Result<Vec<PathBuf>> {
        let dir = self.dumps.parent().context("a work directory")?;
        let name = self.dumps.file_name().and_then(|n| n.to_str()).context("a dump name")?;
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(name)) {
                found.push(path);
            }
        }
        Ok(found)
    }
}

/// The events a dump counted: its `totals:` line (or `summary:`, in older formats).
fn total(dump: &Path) -> anyhow::Result<u64> {
    let text = std::fs::read_to_string(dump).with_context(|| dump.display().to_string())?;
    let line = |key: &str| text.lines().find_map(|line| line.strip_prefix(key).map(str::to_owned));
    line("totals:")
        .or_else(|| line("summary:"))
        .and_then(|count| count.split_whitespace().next()?.parse().ok())
        .with_context(|| format!("{}: no total", dump.display()))
}

/// The functions with the largest counts, inclusive or their own, per request, as
/// callgrind_annotate names them; each name once. Inclusive, the frames every request passes
/// through (the runtime's, futures polling futures, closures called) are left out: they hold
/// nearly everything and say nothing of where it goes.
fn top_functions(dump: &Path, requests: usize, inclusive: bool) -> anyhow::Result<Vec<(f64, String)>> {
    const PLUMBING: [&str; 7] = [
        "as core::future::future::Future>::poll",
        "tokio::",
        "core::ops::function::",
        "std::sys::backtrace::",
        "std::panicking::",
        "std::panic::",
        "::{{closure}}",
    ];
    let output = Command::new("callgrind_annotate")
        .arg(format!("--inclusive={}", if inclusive { "yes" } else { "no" }))
        .args(["--threshold=100"])
        .arg(dump)
        .output()
        .context("callgrind_annotate (Debian: valgrind)")?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut top: Vec<(f64, String)> = Vec::new();
    for (count, function) in text.lines().filter_map(annotated) {
        let function = function.trim_end_matches("'2").to_owned();
        let plumbing = inclusive && PLUMBING.iter().any(|p| function.contains(p));
        if plumbing || function.contains("PROGRAM TOTALS") || top.iter().any(|(_, f)| *f == function) {
            continue;
        }
        top.push((count as f64 / requests as f64, function.chars().take(140).collect()));
        if top.len() == 15 {
            break;
        }
    }
    Ok(top)
}

/// A line of callgrind_annotate's table, `1,234,567 (12.34%)  file:function [object]`: the count
/// and the function.
fn annotated(line: &str) -> Option<(u64, String)> {
    let (count, rest) = line.trim_start().split_once(' ')?;
    let count = count.replace(',', "").parse::<u64>().ok()?;
    let (_, function) = rest.split_once(")  ")?;
    let function = function.split(" [").next().unwrap_or(function);
    // `file:function`: a Rust function's path has colons of its own.
    let function = function.split_once(':').map_or(function, |(_, name)| name).trim();
    (!function.is_empty()).then(|| (count, function.to_owned()))
}

/// Whether the receiver has had `sent` notifications.
fn delivered(receiver: &str, sent: usize) -> anyhow::Result<bool> {
    Ok(super::measure::received(receiver)? >= sent as u64)
}

/// One keep-alive HTTP/1.1 connection, as a client that sends many requests keeps it.
struct Connection {
    reader: BufReader<TcpStream>,
    address: String,
}

impl Connection {
    fn open(address: &str) -> anyhow::Result<Self> {
        let stream = TcpStream::connect(address)?;
        stream.set_nodelay(true)?;
        Ok(Self { reader: BufReader::new(stream), address: address.to_owned() })
    }

    /// Sends a request; its answer is read by [`Connection::answer`], in turn.
    fn write(&mut self, method: &str, path: &str, body: Option<&str>) -> anyhow::Result<()> {
        let body = body.unwrap_or_default();
        let content = if body.is_empty() { "" } else { "Content-Type: application/json\r\n" };
        write!(
            self.reader.get_mut(),
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {TOKEN}\r\n{content}Content-Length: {}\r\n\r\n{body}",
            self.address,
            body.len()
        )?;
        Ok(())
    }

    /// Reads the next answer whole; its status.
    fn answer(&mut self) -> anyhow::Result<u16> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        let status = line.get(9..12).and_then(|s| s.parse().ok()).with_context(|| format!("no status in {line:?}"))?;
        let mut length = None;
        loop {
            line.clear();
            self.reader.read_line(&mut line)?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse::<usize>().ok();
            }
        }
        let length = length.context("an answer without Content-Length")?;
        let mut answer = vec![0; length];
        self.reader.read_exact(&mut answer)?;
        Ok(status)
    }
}

/// The machine a run counted on: its CPU's model and its cores.
fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines().find_map(|line| Some(line.strip_prefix("model name")?.split_once(':')?.1.trim().to_owned()))
        })
        .unwrap_or_else(|| "an unknown CPU".to_owned());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    format!("{model}, {cores} cores")
}

/// BENCHMARKS.md's section.
pub(crate) fn render(measured: &Measured) -> String {
    let reference = |kind: &str| measured.reference.iter().find(|r| r.kind == kind).map(|r| r.per_request);
    let mut out = String::from("# Instructions per request\n\n");
    out.push_str(&format!(
        "Counted by valgrind's callgrind over all the server's threads (`cargo xtask bench --instructions`, see \
         `xtask/src/bench/instructions.rs`): {} requests of each kind on one keep-alive connection, pipelined \
         {WINDOW} ahead of their answers (the server finds each next request there, as a busy one does), after a warm-up, \
         the least of {} such counts, on {}, each server with {WORKERS} tokio workers; the sandbox on a SQLite file. \
         Against bare axum: the reference server (`crates/bench-reference`) answering the same bytes behind the same \
         bearer check. Counted on {}: compare counts within a run, as its CPU decides which of glibc's and the \
         crates' routines run.\n\n",
        measured.counted,
        measured.rounds,
        if measured.release {
            "a release build with line tables"
        } else {
            "a debug build (the smoke run: judge nothing)"
        },
        machine(),
    ));
    out.push_str("| request | instructions per request | against bare axum |\n|---|---:|---:|\n");
    for counted in &measured.reference {
        out.push_str(&format!("| bare axum `{}` | {:.0} | 1× |\n", counted.kind, counted.per_request));
    }
    for counted in &measured.sandbox {
        let against = reference(counted.kind).map_or("—".to_owned(), |r| format!("{:.2}×", counted.per_request / r));
        out.push_str(&format!("| sandbox `{}` | {:.0} | {against} |\n", counted.kind, counted.per_request));
    }
    out.push_str(
        "\nWhere they go: for each kind, per request, the functions with the most instructions counting their \
         callees (the frames every request passes through left out), and with the most of their own.\n",
    );
    let named = measured.reference.iter().take(1).map(|c| ("bare axum", c));
    for (server, counted) in named.chain(measured.sandbox.iter().map(|c| ("sandbox", c))) {
        out.push_str(&format!(
            "\n{server} `{}`:\n\n| with callees | function | own | function |\n|---:|---|---:|---|\n",
            counted.kind
        ));
        let cell = |entry: Option<&(f64, String)>| {
            entry.map_or((String::new(), String::new()), |(count, function)| {
                (format!("{count:.0}"), format!("`{}`", function.replace('|', "\\|")))
            })
        };
        for i in 0..counted.inclusive.len().max(counted.own.len()) {
            let ((a, f), (b, g)) = (cell(counted.inclusive.get(i)), cell(counted.own.get(i)));
            out.push_str(&format!("| {a} | {f} | {b} | {g} |\n"));
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn callgrind_annotate_lines_give_the_count_and_the_whole_function_path() {
        let line = "  2,946,497 (44.12%)  /rustc/abc/library/std/src/panicking.rs:std::panicking::catch_unwind [/x/payments-sandbox]";
        assert_eq!(super::annotated(line), Some((2_946_497, "std::panicking::catch_unwind".to_owned())));
        let unknown = "1,000 ( 0.01%)  ???:sqlite3Fts5IndexWrite [/x/payments-sandbox]";
        assert_eq!(super::annotated(unknown), Some((1_000, "sqlite3Fts5IndexWrite".to_owned())));
        assert_eq!(super::annotated("Ir                   file:function"), None);
        assert_eq!(super::annotated("--------------------"), None);
    }
}
