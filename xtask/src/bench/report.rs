//! The run written as `BENCHMARKS.md`'s sections.

use super::measure::*;
use super::*;
use crate::wrk::Run;

pub(super) fn mean(runs: &[Run], field: impl Fn(&Run) -> f64) -> f64 {
    runs.iter().map(field).sum::<f64>() / runs.len().max(1) as f64
}

pub(super) fn render(scale: &Scale, results: &[Results]) -> String {
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

pub(super) fn render_backend(out: &mut String, scale: &Scale, r: &Results, verdict: impl Fn(bool) -> &'static str) {
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
         of files it maps (the binary; on SQLite, the WAL's index).\n",
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
