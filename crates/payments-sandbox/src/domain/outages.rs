//! Outages in the log: while the database is out (a full disk, a server down), every request and
//! every round of the workers fails the same way, and a line for each would bury the log (and,
//! with the disk full, fill whatever disk the log is on). Each cause gets a line when it is
//! first met, then at most one per [`INTERVAL`] saying how many failures it caused meanwhile,
//! and one when it is over.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::error::{Error, Outage};

/// At most one line per cause per this.
pub const INTERVAL: Duration = Duration::from_secs(10);

/// What has been said of each cause going on now.
struct Going {
    since: Instant,
    last_line: Instant,
    last_failure: Instant,
    /// Failures since the last line.
    unsaid: u64,
}

static GOING: Mutex<Option<HashMap<Outage, Going>>> = Mutex::new(None);
/// Whether `GOING` holds anything: read after every committed write, so without the lock.
static ANY: AtomicBool = AtomicBool::new(false);

/// Logs `error` when it is an outage (rate-limited as the module says) and answers whether it
/// was one; other errors are the caller's to log.
pub fn report(error: &Error, what: &str) -> bool {
    let Some(outage) = error.outage() else { return false };
    let now = Instant::now();
    let mut going = GOING.lock().unwrap_or_else(|p| p.into_inner());
    let going = going.get_or_insert_with(HashMap::new);
    match going.get_mut(&outage) {
        None => {
            going.insert(outage, Going { since: now, last_line: now, last_failure: now, unsaid: 0 });
            ANY.store(true, Ordering::Relaxed);
            let detail = error.chain();
            tracing::error!(%outage, %detail, "database outage: {what} failed; answering 503/507 until it is over");
        }
        Some(state) if now.duration_since(state.last_line) >= INTERVAL => {
            state.last_failure = now;
            let failures = state.unsaid + 1;
            let seconds = now.duration_since(state.since).as_secs();
            let detail = error.chain();
            tracing::error!(%outage, %detail, failures, seconds, "database outage goes on: {failures} failures since the last line");
            state.last_line = now;
            state.unsaid = 0;
        }
        Some(state) => {
            state.last_failure = now;
            state.unsaid += 1;
        }
    }
    true
}

/// Says that every outage going on is over: called once a write has been committed.
pub fn over() {
    if !ANY.load(Ordering::Relaxed) {
        return;
    }
    let mut going = GOING.lock().unwrap_or_else(|p| p.into_inner());
    ANY.store(false, Ordering::Relaxed);
    let Some(going) = going.as_mut().filter(|going| !going.is_empty()) else { return };
    for (outage, state) in going.drain() {
        let seconds = state.since.elapsed().as_secs();
        tracing::warn!(%outage, seconds, "database outage over: writes are committed again");
    }
}

/// An outage that failed something within `window` and that no committed write has ended
/// since, if there is one.
pub fn recent(window: Duration) -> Option<Outage> {
    if !ANY.load(Ordering::Relaxed) {
        return None;
    }
    let going = GOING.lock().unwrap_or_else(|p| p.into_inner());
    going.as_ref()?.iter().find(|(_, state)| state.last_failure.elapsed() < window).map(|(outage, _)| *outage)
}
