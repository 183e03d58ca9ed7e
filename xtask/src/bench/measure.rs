//! One backend measured: lists, payments alone and beside readers, GETs against bare axum,
//! reads under write load, deliveries, backups, memory, half-open connections, retention.

use anyhow::{Context, anyhow, bail};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

use super::sandbox::*;
use super::scripts::*;
use super::*;
use crate::wrk::{Run, wrk};

pub(super) struct Results {
    pub(super) backend: &'static str,
    pub(super) machine: String,
    /// Payments in the database while the lists were measured, and the seeding's seconds.
    pub(super) seeded: u64,
    pub(super) seed_seconds: f64,
    pub(super) memory_after_seed: Memory,
    pub(super) lists: Vec<(&'static str, &'static str, f64, Run)>,
    pub(super) pay_alone: Vec<Run>,
    pub(super) pay_with_readers: Vec<Run>,
    pub(super) readers: Vec<Run>,
    /// Per request: the sandbox's runs and the reference's, alternating.
    pub(super) gets: Vec<(&'static str, Vec<Run>, Vec<Run>)>,
    pub(super) fdatasync_per_second: f64,
    pub(super) reads_idle: Vec<Run>,
    pub(super) reads_beside_payers: Vec<Run>,
    /// Pings delivered to the loopback receiver, and how long it took.
    pub(super) deliveries: (u64, f64),
    pub(super) bytes_per_transaction: f64,
    pub(super) half_open: HalfOpen,
    pub(super) retention: Retention,
    pub(super) backup: Backup,
}

/// A backup of the database as seeded, taken while the sandbox serves, against writing the
/// same number of bytes to a new file and flushing it (the least any backup must do).
pub(super) struct Backup {
    pub(super) how: &'static str,
    pub(super) bytes: u64,
    pub(super) seconds: f64,
    pub(super) write_seconds: f64,
}

/// The sandbox's resident memory in MiB: its own (anonymous: heap, stacks, SQLite's page cache)
/// and the files it maps (the binary, and the SQLite database, which its writer maps).
pub(super) struct Memory {
    pub(super) anonymous: f64,
    pub(super) files: f64,
}

impl Memory {
    pub(super) fn of(sandbox: &Sandbox) -> anyhow::Result<Self> {
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
pub(super) struct HalfOpen {
    pub(super) connections: usize,
    pub(super) idle: f64,
    pub(super) holding: f64,
    pub(super) closed: f64,
}

/// Bytes the database grew by per payment with an endpoint subscribed to every event: while
/// nothing is pruned, and with the retention pruning what was delivered.
pub(super) struct Retention {
    pub(super) kept: f64,
    pub(super) pruned: f64,
    pub(super) payments: (u64, u64),
}

pub(super) fn measure(
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
    let Setup { balance: balance_id, recipients, .. } = Setup::of(&address, "Bench")?;

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

/// Pings one endpoint on the reference server's `/receive` (plain HTTP on loopback) as fast as
/// wrk can ask, then waits until every one has been delivered: how many, and in how long from
/// the first ping.
pub(super) fn deliveries(
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

/// Backs the database up while the sandbox serves it: `payments-sandbox backup` on SQLite,
/// `pg_dump --format=custom` on PostgreSQL (the README's ways); then writes as many bytes to a
/// new file and flushes it, for the ratio.
pub(super) fn backup(binary: &Path, work: &Path, database: &Database) -> anyhow::Result<Backup> {
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
pub(super) fn auth_failures(root: &Path, scale: &Scale) -> anyhow::Result<String> {
    eprintln!("== the failed-authentication limit, one address and a million");
    let mut cargo = crate::cargo();
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
pub(super) fn field(line: &str, name: &str) -> f64 {
    line.split_whitespace()
        .find_map(|pair| pair.strip_prefix(name)?.strip_prefix('='))
        .and_then(|value| value.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Opens `count` connections that never finish a request (nothing sent, half a request line,
/// half the headers, half a body, in turn), then closes them: the sandbox's resident memory
/// before, while it holds them, and six seconds after they closed.
pub(super) fn half_open(sandbox: &Sandbox, count: usize) -> anyhow::Result<HalfOpen> {
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
pub(super) fn retention(
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
pub(super) fn received(receiver: &str) -> anyhow::Result<u64> {
    let mut stream = TcpStream::connect(receiver)?;
    write!(stream, "GET /received HTTP/1.1\r\nHost: {receiver}\r\nConnection: close\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    response.rsplit("\r\n\r\n").next().and_then(|n| n.trim().parse().ok()).context("a count")
}
