//! wrk, the load generator the benchmarks drive: one run of a Lua script against an address,
//! read into a [`Run`], and the median of several.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

pub(crate) fn median(mut runs: Vec<f64>) -> f64 {
    runs.sort_by(f64::total_cmp);
    runs[runs.len() / 2]
}

/// What one wrk run saw.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Run {
    pub requests_per_second: f64,
    pub median_ms: f64,
    pub p99_ms: f64,
    pub requests: u64,
    pub failed: u64,
}

/// Runs wrk with `script` for `seconds` on `connections` connections.
pub(crate) fn wrk(
    wrk: &Path,
    work: &Path,
    address: &str,
    script: &str,
    args: &[String],
    connections: u32,
    seconds: u64,
) -> anyhow::Result<Run> {
    let file = work.join(format!("script-{}.lua", free_port()));
    std::fs::write(&file, script)?;
    let threads = connections.clamp(1, 2);
    let output = Command::new(wrk)
        .args(["--latency", "-t", &threads.to_string(), "-c", &connections.to_string(), "-d", &format!("{seconds}s")])
        .arg("-s")
        .arg(&file)
        .arg(format!("http://{address}"))
        .arg("--")
        .args(args)
        .output()
        .context("wrk")?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        bail!("wrk failed:\n{text}{}", String::from_utf8_lossy(&output.stderr));
    }
    parse_wrk(&text).with_context(|| format!("cannot read wrk's output:\n{text}"))
}

fn parse_wrk(text: &str) -> Option<Run> {
    let duration_ms = |value: &str| -> Option<f64> {
        let number: f64 = value.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse().ok()?;
        Some(if value.ends_with("us") {
            number / 1000.0
        } else if value.ends_with("ms") {
            number
        } else if value.ends_with('m') {
            number * 60_000.0
        } else {
            number * 1000.0
        })
    };
    let mut run = Run::default();
    for line in text.lines().map(str::trim) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["50%", value] => run.median_ms = duration_ms(value)?,
            ["99%", value] => run.p99_ms = duration_ms(value)?,
            ["Requests/sec:", value] => run.requests_per_second = value.parse().ok()?,
            [count, "requests", "in", ..] => run.requests = count.parse().ok()?,
            ["Non-2xx", "or", "3xx", "responses:", count] => run.failed = count.parse().ok()?,
            _ => {}
        }
    }
    (run.requests > 0).then_some(run)
}

/// A port free on loopback now, for a server about to start (or a file named after it).
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap_or(18080)
}

#[cfg(test)]
mod tests {
    use super::parse_wrk;

    #[test]
    fn reads_wrk_output() {
        let text = "Running 1s test @ http://127.0.0.1:1\n  1 threads and 1 connections\n  Latency Distribution\n     50%  812.00us\n     75%    1.10ms\n     90%    1.50ms\n     99%    2.35ms\n  1200 requests in 1.00s, 1.2MB read\n  Non-2xx or 3xx responses: 3\nRequests/sec:   1199.50\nTransfer/sec:      1.20MB\n";
        let run = parse_wrk(text).unwrap();
        assert_eq!((run.requests, run.failed), (1200, 3));
        assert!((run.median_ms - 0.812).abs() < 1e-9 && (run.p99_ms - 2.35).abs() < 1e-9);
        assert!((run.requests_per_second - 1199.5).abs() < 1e-9);
    }
}
