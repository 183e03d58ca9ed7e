//! Failed authentications, limited per client address: guessing tokens costs the guesser time,
//! and costs the sandbox no lookup once the address is over its limit.
//!
//! Every `401` an address receives adds one to what it owes; what it owes drains at
//! `per_minute` a minute. Once it owes `per_minute`, its requests that carry a token this
//! process does not already know answer `429` with `Retry-After` until one more failure fits —
//! before any handler runs, so before the token is looked up. Nothing else is refused: a request
//! without a token (the payment page, the documentation, the document, an operation answering
//! `401` at no cost) and a request with a token this process knows (a caller sharing the
//! address, behind the same NAT, with a guesser) go on.
//!
//! What each address owes is kept in a count-min sketch rather than a map: [`ROWS`] rows of
//! [`WIDTH`] decaying counters, each address adding to one counter per row (chosen by a keyed
//! hash the client cannot aim at) and owing the least of its counters. Its memory is fixed
//! however many addresses fail, each request costs one hash and [`ROWS`] atomic loads, and no
//! lock is taken. Addresses that share a counter can only be counted high, never low: an
//! address is refused for another's failures only when every one of its counters is shared
//! with an address over the limit, which with `n` such addresses happens to a fraction
//! `(n / WIDTH)^ROWS` of the others (one in 2,000 at 10,000 guessing addresses).

use std::hash::{BuildHasher, RandomState};
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use payments_server::ApiError;
use payments_server::runtime::bearer_token;

use super::client_address::bucket;
use crate::domain::Sandbox;

/// Rows of the sketch: each address has one counter in each.
const ROWS: usize = 4;
/// Counters in a row.
const WIDTH: usize = 1 << COLUMN_BITS;
const COLUMN_BITS: u32 = 16;
// Each row's column is its own bits of one 64-bit hash.
const _: () = assert!(ROWS as u32 * COLUMN_BITS <= u64::BITS);
/// A counter's time unit: 1/16 s (a `u32` of them lasts eight years).
const TICKS_PER_SECOND: f64 = 16.0;
/// A counter's failure unit: 1/1024 of a failure.
const UNITS_PER_FAILURE: f64 = 1024.0;

pub struct AuthFailures {
    sandbox: Sandbox,
    sketch: Sketch,
}

impl AuthFailures {
    pub fn new(sandbox: Sandbox, per_minute: NonZeroU32) -> Self {
        Self { sandbox, sketch: Sketch::new(per_minute) }
    }

    /// `429` for a request from `client` while it owes its limit, when the request carries a
    /// token this process does not already know.
    pub fn refusal(&self, client: IpAddr, request: &Request) -> Option<Response> {
        // The sketch first: it is cheaper than reading the header, and nearly always says no.
        let wait = self.sketch.blocked_for(bucket(client), Instant::now())?;
        let Ok(token) = bearer_token(request.headers()) else { return None };
        if self.sandbox.knows_token(token) {
            return None;
        }
        let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
        Some(
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!("Too many failed authentications from this address: retry after {seconds} seconds"),
            )
            .retry_after(seconds)
            .into_response(),
        )
    }

    /// Counts a `401` answered to `client`.
    pub fn failed(&self, client: IpAddr) {
        self.sketch.failed(bucket(client), Instant::now());
    }
}

/// The decaying counters (see the module's documentation). A counter is one `u64`: what is owed
/// (in 1/1024 failures) in the high half, and when (in ticks since `started`) in the low half,
/// so it is read and replaced whole, without a lock.
pub struct Sketch {
    counters: Box<[AtomicU64]>,
    hasher: RandomState,
    /// What is owed at most before an address waits, in failure units.
    limit: f64,
    /// What drains per tick, in failure units.
    drain: f64,
    started: Instant,
    /// The tick from which every counter has drained to nothing: until an address fails again,
    /// none owes anything, and a request is let through without hashing its address.
    clear_at: AtomicU32,
}

impl Sketch {
    pub fn new(per_minute: NonZeroU32) -> Self {
        let limit = f64::from(per_minute.get());
        Self {
            counters: (0..ROWS * WIDTH).map(|_| AtomicU64::new(0)).collect(),
            hasher: RandomState::new(),
            limit: limit * UNITS_PER_FAILURE,
            drain: limit * UNITS_PER_FAILURE / 60.0 / TICKS_PER_SECOND,
            started: Instant::now(),
            clear_at: AtomicU32::new(0),
        }
    }

    /// The bytes the sketch holds, whatever the number of addresses.
    pub fn bytes(&self) -> usize {
        self.counters.len() * size_of::<AtomicU64>()
    }

    /// How long `address` must still wait before another failure fits, if it must.
    pub fn blocked_for(&self, address: IpAddr, now: Instant) -> Option<Duration> {
        let tick = self.tick(now);
        if tick >= self.clear_at.load(Ordering::Relaxed) {
            return None;
        }
        let owed = self.owed(address, tick);
        let over = owed + UNITS_PER_FAILURE - self.limit;
        (over > 0.0).then(|| Duration::from_secs_f64(over / self.drain / TICKS_PER_SECOND))
    }

    /// Counts a failure of `address`: each of its counters is raised to what it owes plus one,
    /// and no further (the conservative update, which keeps shared counters from adding up
    /// more than one of their addresses owes).
    pub fn failed(&self, address: IpAddr, now: Instant) {
        let tick = self.tick(now);
        let owed = (self.owed(address, tick) + UNITS_PER_FAILURE).min(u32::MAX as f64);
        // Until this tick, a check reads the counters (a check racing this failure may miss it,
        // as it may miss the counters it raises).
        let drained = f64::from(tick) + (owed / self.drain).ceil() + 1.0;
        self.clear_at.fetch_max(drained.min(f64::from(u32::MAX)) as u32, Ordering::Relaxed);
        for counter in self.counters(address) {
            let mut current = counter.load(Ordering::Relaxed);
            while self.decayed(current, tick) < owed {
                let raised = ((owed as u64) << 32) | u64::from(tick);
                match counter.compare_exchange_weak(current, raised, Ordering::Relaxed, Ordering::Relaxed) {
                    Ok(_) => break,
                    Err(changed) => current = changed,
                }
            }
        }
    }

    /// What `address` owes at `tick`: the least of its counters.
    fn owed(&self, address: IpAddr, tick: u32) -> f64 {
        self.counters(address).map(|c| self.decayed(c.load(Ordering::Relaxed), tick)).fold(f64::MAX, f64::min)
    }

    /// One keyed hash gives every row its column: its 64 bits are [`ROWS`] columns of
    /// [`WIDTH`], as independent as the outputs of [`ROWS`] keyed hashes, at a quarter of
    /// their cost (instructions per request, BENCHMARKS.md).
    fn counters(&self, address: IpAddr) -> impl Iterator<Item = &AtomicU64> {
        let hash = self.hasher.hash_one(address);
        (0..ROWS).map(move |row| {
            let column = (hash >> (row as u32 * COLUMN_BITS)) as usize % WIDTH;
            &self.counters[row * WIDTH + column]
        })
    }

    fn decayed(&self, counter: u64, tick: u32) -> f64 {
        let owed = (counter >> 32) as f64;
        let elapsed = f64::from(tick.saturating_sub(counter as u32));
        (owed - elapsed * self.drain).max(0.0)
    }

    fn tick(&self, now: Instant) -> u32 {
        let ticks = now.saturating_duration_since(self.started).as_secs_f64() * TICKS_PER_SECOND;
        ticks.min(f64::from(u32::MAX)) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn address(n: u32) -> IpAddr {
        IpAddr::V4(n.into())
    }

    #[test]
    fn an_address_waits_once_it_owes_its_limit_and_drains_at_the_limit_a_minute() {
        let sketch = Sketch::new(NonZeroU32::new(30).unwrap());
        let start = Instant::now();
        let guesser = address(1);
        for _ in 0..29 {
            sketch.failed(guesser, start);
        }
        assert_eq!(sketch.blocked_for(guesser, start), None, "29 of 30: one more fits");
        sketch.failed(guesser, start);
        let wait = sketch.blocked_for(guesser, start).expect("30 of 30: waits");
        assert!((1.9..=2.1).contains(&wait.as_secs_f64()), "one failure drains in 2 s: {wait:?}");
        assert_eq!(sketch.blocked_for(guesser, start + Duration::from_millis(2100)), None);
        // Others are not touched.
        assert_eq!(sketch.blocked_for(address(2), start), None);
    }

    #[test]
    fn once_everything_has_drained_nothing_is_read_until_the_next_failure() {
        let sketch = Sketch::new(NonZeroU32::new(30).unwrap());
        let start = Instant::now();
        let guesser = address(1);
        for _ in 0..30 {
            sketch.failed(guesser, start);
        }
        // Thirty failures drain in a minute: a tick past that, every counter is empty and the
        // counters are not read at all.
        let drained = start + Duration::from_secs(61);
        assert!(sketch.tick(drained) >= sketch.clear_at.load(Ordering::Relaxed));
        assert_eq!(sketch.blocked_for(guesser, drained), None);
        // Failing again reads them again: at the limit again, the guesser waits.
        for _ in 0..30 {
            sketch.failed(guesser, drained);
        }
        assert!(sketch.tick(drained) < sketch.clear_at.load(Ordering::Relaxed));
        assert!(sketch.blocked_for(guesser, drained).is_some());
        assert_eq!(sketch.blocked_for(address(2), drained), None);
    }

    #[test]
    fn a_million_addresses_leave_its_memory_as_it_was_and_the_quiet_ones_unrefused() {
        let sketch = Sketch::new(NonZeroU32::new(30).unwrap());
        let bytes = sketch.bytes();
        let now = Instant::now();
        // A thousand guessers at the limit, and a million addresses failing once each.
        for guesser in 0..1_000 {
            for _ in 0..30 {
                sketch.failed(address(guesser), now);
            }
        }
        for n in 1_000..1_001_000 {
            sketch.failed(address(n), now);
        }
        assert_eq!(sketch.bytes(), bytes);
        assert!((0..1_000).all(|guesser| sketch.blocked_for(address(guesser), now).is_some()));
        let refused = (2_000_000..2_010_000).filter(|&n| sketch.blocked_for(address(n), now).is_some()).count();
        assert!(refused <= 10, "of 10,000 addresses that never failed, {refused} refused");
    }
}
