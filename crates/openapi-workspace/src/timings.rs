//! `OPENAPI_WORKSPACE_TIMINGS=1`: each stage's seconds on stderr, so a slow document shows where
//! its time goes without a profiler (`read 5.0 s`, `write/client 11.3 s`, …).

use std::sync::OnceLock;
use std::time::Instant;

/// Runs `stage`, printing its wall time under `name` when timings are asked for.
pub(crate) fn timed<T>(name: &str, stage: impl FnOnce() -> T) -> T {
    static ON: OnceLock<bool> = OnceLock::new();
    if !*ON.get_or_init(|| std::env::var_os("OPENAPI_WORKSPACE_TIMINGS").is_some_and(|v| v != "0")) {
        return stage();
    }
    let start = Instant::now();
    let out = stage();
    eprintln!("timing: {name} {:.2} s{}", start.elapsed().as_secs_f64(), memory());
    out
}

/// The process's resident memory now and at its peak, where the system tells it (Linux's
/// `/proc/self/status`): a stage that holds memory shows up beside the one that takes time.
fn memory() -> String {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else { return String::new() };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    match (field("VmRSS:"), field("VmHWM:")) {
        (Some(now), Some(peak)) => format!(", {} MiB resident, peak {} MiB", now / 1024, peak / 1024),
        _ => String::new(),
    }
}
