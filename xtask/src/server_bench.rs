//! The generated server's figure of `cargo xtask bench`: the generated server of
//! `samples/pet_store.yaml` against a hand-written axum server doing the same work, both in
//! `router-bench` (`crates/openapi-workspace/tests/output/src/bin/router-bench.rs`), route by
//! route, under the same load, alternating; and the heap allocations each makes per request,
//! counted in-process by that binary. The target ([`TARGET`]): every route at that share of the
//! hand-written server's requests per CPU second or better, the refused-input routes included.
//! Judged on CPU time per request, not on wrk's rate: on a machine of two cores wrk shares them
//! with the server, and the same server's rate moves from run to run far more than the CPU time
//! it spends on a request (BENCHMARKS.md, "Why, measured: The generated handlers").

use anyhow::{Context, bail};
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::wrk::{Run, median, wrk};

/// The least ratio of the generated server's requests per CPU second to the hand-written
/// one's, on every route.
const TARGET: f64 = 0.9;

/// Sends the request its arguments give (method, path, body) with router-bench's token.
const ROUTE: &str = r#"
local request_text
function init(args)
  local headers = {["Authorization"] = "Bearer tok_router_bench"}
  local body = nil
  if args[3] ~= nil and args[3] ~= "" then
    headers["Content-Type"] = "application/json"
    body = args[3]
  end
  request_text = wrk.format(args[1], args[2], headers, body)
end
request = function() return request_text end
"#;

pub(crate) struct Route {
    name: String,
    /// Requests per second under wrk: generated, hand-written.
    rates: (f64, f64),
    /// The server's CPU time per request, in microseconds: generated, hand-written.
    cpu: (f64, f64),
    /// Heap allocations per request: generated, hand-written.
    allocations: (f64, f64),
    /// Nanoseconds a request takes in the router alone, in-process: generated, hand-written.
    nanos: (f64, f64),
}

pub(crate) struct Servers {
    routes: Vec<Route>,
    connections: u32,
    seconds: u64,
    rounds: usize,
}

/// A `router-bench serve` process, killed when dropped.
struct Serving {
    child: Child,
    address: String,
}

impl Serving {
    /// The CPU time the process has spent so far, in nanoseconds: the sum over its threads of
    /// the scheduler's own count (`/proc/PID/task/*/schedstat`, whose first field it is).
    fn cpu_nanos(&self) -> anyhow::Result<u64> {
        let tasks = format!("/proc/{}/task", self.child.id());
        let mut total = 0;
        for task in std::fs::read_dir(&tasks).with_context(|| tasks.clone())? {
            let stat = std::fs::read_to_string(task?.path().join("schedstat"))?;
            let first = stat.split_whitespace().next().context("an empty schedstat")?;
            total += first.parse::<u64>().with_context(|| format!("schedstat {stat:?}"))?;
        }
        Ok(total)
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(binary: &Path, which: &str) -> anyhow::Result<Serving> {
    let mut child = Command::new(binary)
        .args(["serve", which])
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| binary.display().to_string())?;
    let mut address = String::new();
    let mut stdout = child.stdout.take().context("router-bench's stdout")?;
    let mut byte = [0u8; 1];
    while stdout.read(&mut byte)? == 1 && byte[0] != b'\n' {
        address.push(byte[0] as char);
    }
    if address.is_empty() {
        let _ = child.kill();
        bail!("router-bench serve {which} did not start");
    }
    Ok(Serving { child, address })
}

/// Builds `router-bench`, counts its allocations and measures both servers on every route.
pub(crate) fn measure(
    root: &Path,
    wrk_path: &Path,
    work: &Path,
    release: bool,
    seconds: u64,
) -> anyhow::Result<Servers> {
    eprintln!("== the generated server against a hand-written one");
    let binary =
        crate::cargo_build(root, &["--package", "openapi-workspace-output", "--bin", "router-bench"], release)?
            .join("router-bench");
    let counted = Command::new(&binary).arg("allocations").output().context("router-bench allocations")?;
    if !counted.status.success() {
        bail!("router-bench allocations failed:\n{}", String::from_utf8_lossy(&counted.stderr));
    }
    let counted = String::from_utf8_lossy(&counted.stdout).into_owned();
    let generated = serve(&binary, "generated")?;
    let hand_written = serve(&binary, "hand-written")?;
    let (connections, rounds) = (16, if release { 5 } else { 1 });
    let mut routes = Vec::new();
    // The routes are router-bench's, as it counted them.
    for line in counted.lines() {
        let counted = Counted::read(line)?;
        let (name, refused) = (&counted.name, counted.status >= 400);
        let args = [counted.method.clone(), counted.target.clone(), counted.body.clone()];
        let (mut rates, mut cpu) = ([Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
        for round in 0..rounds {
            // Alternating which goes first, so neither always meets a warmer or quieter machine.
            let order = if round % 2 == 0 { [true, false] } else { [false, true] };
            for is_generated in order {
                let server = if is_generated { &generated } else { &hand_written };
                let before = server.cpu_nanos()?;
                let run = wrk(wrk_path, work, &server.address, ROUTE, &args, connections, seconds)?;
                let spent = server.cpu_nanos()? - before;
                check(&run, refused, name, is_generated)?;
                let which = usize::from(!is_generated);
                rates[which].push(run.requests_per_second);
                cpu[which].push(spent as f64 / 1000.0 / run.requests.max(1) as f64);
            }
        }
        let [rates_generated, rates_hand_written] = rates;
        let [cpu_generated, cpu_hand_written] = cpu;
        routes.push(Route {
            name: counted.name,
            rates: (median(rates_generated), median(rates_hand_written)),
            cpu: (median(cpu_generated), median(cpu_hand_written)),
            allocations: counted.allocations,
            nanos: counted.nanos,
        });
    }
    if routes.is_empty() {
        bail!("router-bench allocations printed no route");
    }
    Ok(Servers { routes, connections, seconds, rounds })
}

/// Every answer of a run was the route's: all `2xx`, or (refused) none.
fn check(run: &Run, refused: bool, name: &str, generated: bool) -> anyhow::Result<()> {
    let expected = if refused { run.requests } else { 0 };
    if run.failed != expected {
        let server = if generated { "generated" } else { "hand-written" };
        bail!("{server} server, route {name}: {} of {} answers were not 2xx", run.failed, run.requests);
    }
    Ok(())
}

/// A route as `router-bench allocations` prints it, a JSON object a line: the request, the
/// status both servers answered it with, and each server's allocations and nanoseconds per
/// request (generated, hand-written).
struct Counted {
    name: String,
    method: String,
    target: String,
    body: String,
    status: u16,
    allocations: (f64, f64),
    nanos: (f64, f64),
}

impl Counted {
    fn read(line: &str) -> anyhow::Result<Self> {
        let value: serde_json::Value =
            serde_json::from_str(line).with_context(|| format!("router-bench allocations printed {line:?}"))?;
        let text = |name: &str| value[name].as_str().map(str::to_owned).with_context(|| format!("no {name} in {line}"));
        let pair = |name: &str| -> anyhow::Result<(f64, f64)> {
            let number =
                |server: &str| value[name][server].as_f64().with_context(|| format!("no {name}.{server} in {line}"));
            Ok((number("generated")?, number("hand-written")?))
        };
        let status = value["status"].as_u64().and_then(|s| u16::try_from(s).ok());
        Ok(Self {
            name: text("route")?,
            method: text("method")?,
            target: text("target")?,
            body: text("body")?,
            status: status.with_context(|| format!("no status in {line}"))?,
            allocations: pair("allocations")?,
            nanos: pair("nanos")?,
        })
    }
}

/// The "# The generated server" section of BENCHMARKS.md.
pub(crate) fn render(s: &Servers) -> String {
    let mut out = format!(
        "# The generated server\n\nThe server generated from a small document (`crates/openapi-workspace/tests/samples/pet_store.yaml`: \
         a list with query parameters, a get by id, a create with a validated JSON body, a bearer token), implemented \
         with fixed answers, against a hand-written axum server doing the same work as a careful engineer would write \
         it (the same token check, parsing and validation of parameters and body, JSON answers and error object): \
         both in `router-bench` (`crates/openapi-workspace/tests/output/src/bin/router-bench.rs`), {} connections, \
         {} s per run, {} rounds alternating which goes first, medians. The ratio is the hand-written server's CPU \
         time per request over the generated one's (the scheduler's count for the server's threads, divided by the \
         requests wrk had answered): the requests a core serves, which is what a rate measures once the server has \
         the machine to itself. Here wrk shares the two cores with the server, and the same server's rate moves \
         from run to run far more than its CPU time per request does (both are shown; \"Why, measured: The \
         generated handlers\"). Allocations are heap allocations per request, \
         counted in-process by a counting allocator with each request sent through the router as a service (its \
         body read to the end); the socket's own are the same for both and left out. The router's time is the same \
         request in-process, without sockets (the median of five rounds of 10,000): what is left of each request \
         once the HTTP stack's share, the same for both, is taken away.\n\n\
         | route | CPU per request: generated | hand-written | ratio (target ≥ {TARGET}×) | rate: generated (req/s) | hand-written (req/s) | allocations: generated | hand-written | router's time: generated | hand-written |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
        s.connections, s.seconds, s.rounds
    );
    for r in &s.routes {
        let ratio = r.cpu.1 / r.cpu.0;
        let verdict = if ratio >= TARGET { "met" } else { "**missed**" };
        out.push_str(&format!(
            "| {} | {:.2} µs | {:.2} µs | **{ratio:.2}×** ({verdict}) | {:.0} | {:.0} | {:.0} | {:.0} | {:.2} µs | {:.2} µs |\n",
            r.name,
            r.cpu.0,
            r.cpu.1,
            r.rates.0,
            r.rates.1,
            r.allocations.0,
            r.allocations.1,
            r.nanos.0 / 1000.0,
            r.nanos.1 / 1000.0
        ));
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_read_as_router_bench_prints_them() {
        let line = r#"{"route":"create refused","method":"POST","target":"/pets","body":"{\"name\":\"\"}","status":400,"allocations":{"generated":35.0,"hand-written":31.0},"nanos":{"generated":2140.0,"hand-written":1730.0}}"#;
        let counted = Counted::read(line).unwrap();
        assert_eq!(
            (counted.name.as_str(), counted.method.as_str(), counted.target.as_str()),
            ("create refused", "POST", "/pets")
        );
        assert_eq!((counted.body.as_str(), counted.status), (r#"{"name":""}"#, 400));
        assert_eq!((counted.allocations, counted.nanos), ((35.0, 31.0), (2140.0, 1730.0)));
        assert!(Counted::read(r#"{"route":"list"}"#).is_err());
    }
}
