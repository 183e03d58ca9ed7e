//! What the failed-authentication limit costs a request, with one address failing and with a
//! million (`cargo xtask bench` runs this and reports both, and their ratio, in BENCHMARKS.md).
//! A request that fails authentication costs the edge one check (is the address over its
//! limit?) and one count (a 401 more); that pair is timed here, straight on the limiter's
//! sketch, so nothing else of a request is in the figure.
//!
//! `cargo bench -p payments-sandbox --bench auth_failures [-- --smoke]`

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::num::NonZeroU32;
use std::time::Instant;

use payments_sandbox::http::auth_failures::Sketch;

/// Nanoseconds per check-and-count over `addresses`, `rounds` times over.
fn per_failure(sketch: &Sketch, addresses: &[IpAddr], rounds: usize) -> f64 {
    let now = Instant::now();
    let started = Instant::now();
    for _ in 0..rounds {
        for &address in addresses {
            black_box(sketch.blocked_for(address, now));
            sketch.failed(address, now);
        }
    }
    started.elapsed().as_nanos() as f64 / (addresses.len() * rounds) as f64
}

fn main() {
    let smoke = std::env::args().any(|a| a == "--smoke");
    let million = if smoke { 10_000 } else { 1_000_000 };
    let limit = NonZeroU32::new(30).expect("not zero");
    // IPv4 and IPv6 clients alike (each IPv6 one a /64 of its own).
    let addresses: Vec<IpAddr> = (0..million as u32)
        .map(|n| match n % 2 {
            0 => IpAddr::V4(Ipv4Addr::from(n.wrapping_mul(2_654_435_761))),
            _ => IpAddr::V6(Ipv6Addr::from((u128::from(n) << 64) | 1)),
        })
        .collect();
    let one = [addresses[0]];
    let sketch = Sketch::new(limit);
    let bytes = sketch.bytes();
    // Warm up, then the one address, then a million, three rounds over them.
    per_failure(&sketch, &one, 100_000);
    let one_address = per_failure(&sketch, &one, million * 3);
    let sketch = Sketch::new(limit);
    let many = per_failure(&sketch, &addresses, 3);
    assert_eq!(sketch.bytes(), bytes, "the sketch does not grow");
    println!(
        "auth_failures addresses={million} one_ns={one_address:.1} many_ns={many:.1} ratio={:.2} bytes={bytes}",
        many / one_address
    );
}
