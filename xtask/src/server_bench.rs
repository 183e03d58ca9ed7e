//! The generated server's figure of `cargo xtask bench`: the generated server of
//! `samples/pet_store.yaml` against a hand-written axum server doing the same work, both in
//! `router-bench` (`crates/payments-codegen/tests/output/src/bin/router-bench.rs`), route by
//! route, under the same load, alternating; and the heap allocations each makes per request,
//! counted in-process by that binary. The target ([`TARGET`]): every route at that share of the
//! hand-written server's rate or better, the refused-input routes included.

use anyhow::{Context, bail};
use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use crate::bench::{Run, median, wrk};

/// The routes measured: name, method, path and query, JSON body, whether it is refused (`400`).
/// The same requests `router-bench allocations` counts.
const ROUTES: [(&str, &str, &str, &str, bool); 5] = [
    ("list", "GET", "/pets?limit=10&tag=dog", "", false),
    ("get", "GET", "/pets/0b5c6a4e-7c43-4f4e-9a55-52f7a3d1c0de", "", false),
    ("create", "POST", "/pets", r#"{"name":"Rex","tag":"dog","age":3}"#, false),
    ("create refused", "POST", "/pets", r#"{"name":"","tag":"dog","age":300}"#, true),
    ("list refused", "GET", "/pets?limit=500", "", true),
];

/// The least ratio of the generated server's rate to the hand-written one's, on every route.
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

pub struct Route {
    name: &'static str,
    generated: f64,
    hand_written: f64,
    /// Heap allocations per request: generated, hand-written.
    allocations: (f64, f64),
    /// Nanoseconds a request takes in the router alone, in-process: generated, hand-written.
    nanos: (f64, f64),
}

pub struct Servers {
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
pub fn measure(root: &Path, wrk_path: &Path, work: &Path, release: bool, seconds: u64) -> anyhow::Result<Servers> {
    eprintln!("== the generated server against a hand-written one");
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo.current_dir(root).args(["build", "--quiet", "--package", "payments-codegen-output", "--bin", "router-bench"]);
    if release {
        cargo.arg("--release");
    }
    if !cargo.status()?.success() {
        bail!("cargo build of router-bench failed");
    }
    let binary = root.join("target").join(if release { "release" } else { "debug" }).join("router-bench");
    let counted = Command::new(&binary).arg("allocations").output().context("router-bench allocations")?;
    if !counted.status.success() {
        bail!("router-bench allocations failed:\n{}", String::from_utf8_lossy(&counted.stderr));
    }
    let counted = String::from_utf8_lossy(&counted.stdout).into_owned();
    let generated = serve(&binary, "generated")?;
    let hand_written = serve(&binary, "hand-written")?;
    let (connections, rounds) = (16, if release { 3 } else { 1 });
    let mut routes = Vec::new();
    for (name, method, target, body, refused) in ROUTES {
        let args = [method.to_owned(), target.to_owned(), body.to_owned()];
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            // Alternating which goes first, so neither always meets a warmer or quieter machine.
            let order = if round % 2 == 0 { [true, false] } else { [false, true] };
            for is_generated in order {
                let server = if is_generated { &generated } else { &hand_written };
                let run = wrk(wrk_path, work, &server.address, ROUTE, &args, connections, seconds)?;
                check(&run, refused, name, is_generated)?;
                if is_generated { &mut ours } else { &mut theirs }.push(run.requests_per_second);
            }
        }
        let allocations = counted_pair(&counted, name, "")?;
        let nanos = counted_pair(&counted, name, "_ns")?;
        routes.push(Route { name, generated: median(ours), hand_written: median(theirs), allocations, nanos });
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

/// What `router-bench allocations` printed for `route` (`route="list" generated=62.0
/// hand-written=55.0 generated_ns=4148 hand-written_ns=4761`): the two servers' figures whose
/// names end in `suffix`.
fn counted_pair(printed: &str, route: &str, suffix: &str) -> anyhow::Result<(f64, f64)> {
    let line = printed
        .lines()
        .find(|line| line.starts_with(&format!("route={route:?} ")))
        .with_context(|| format!("router-bench allocations printed nothing for {route}:\n{printed}"))?;
    let field = |name: &str| -> anyhow::Result<f64> {
        line.split_whitespace()
            .find_map(|word| word.strip_prefix(name)?.strip_prefix('='))
            .and_then(|value| value.parse().ok())
            .with_context(|| format!("no {name} in {line:?}"))
    };
    Ok((field(&format!("generated{suffix}"))?, field(&format!("hand-written{suffix}"))?))
}

/// The "# The generated server" section of BENCHMARKS.md.
pub fn render(s: &Servers) -> String {
    let mut out = format!(
        "# The generated server\n\nThe server generated from a small document (`crates/payments-codegen/tests/samples/pet_store.yaml`: \
         a list with query parameters, a get by id, a create with a validated JSON body, a bearer token), implemented \
         with fixed answers, against a hand-written axum server doing the same work as a careful engineer would write \
         it (the same token check, parsing and validation of parameters and body, JSON answers and error object): \
         both in `router-bench` (`crates/payments-codegen/tests/output/src/bin/router-bench.rs`), {} connections, \
         {} s per run, {} rounds alternating which goes first, medians. Allocations are heap allocations per request, \
         counted in-process by a counting allocator with each request sent through the router as a service (its \
         body read to the end); the socket's own are the same for both and left out. The router's time is the same \
         request in-process, without sockets (the median of five rounds of 10,000): what is left of each request \
         once the HTTP stack's share, the same for both, is taken away.\n\n\
         | route | generated (req/s) | hand-written (req/s) | ratio (target ≥ {TARGET}×) | allocations: generated | hand-written | router's time: generated | hand-written |\n\
         |---|---|---|---|---|---|---|---|\n",
        s.connections, s.seconds, s.rounds
    );
    for r in &s.routes {
        let ratio = r.generated / r.hand_written;
        let verdict = if ratio >= TARGET { "met" } else { "**missed**" };
        out.push_str(&format!(
            "| {} | {:.0} | {:.0} | **{ratio:.2}×** ({verdict}) | {:.0} | {:.0} | {:.2} µs | {:.2} µs |\n",
            r.name,
            r.generated,
            r.hand_written,
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
    fn counts_are_read_per_route() {
        let printed = "route=\"list\" generated=62.0 hand-written=55.0 generated_ns=4148 hand-written_ns=4761\n\
                       route=\"list refused\" generated=46.5 hand-written=33.0 generated_ns=1573 hand-written_ns=1433\n";
        assert_eq!(counted_pair(printed, "list", "").unwrap(), (62.0, 55.0));
        assert_eq!(counted_pair(printed, "list", "_ns").unwrap(), (4148.0, 4761.0));
        assert_eq!(counted_pair(printed, "list refused", "").unwrap(), (46.5, 33.0));
        assert!(counted_pair(printed, "get", "").is_err());
    }
}
