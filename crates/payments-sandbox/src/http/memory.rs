//! The allocator, and giving freed memory back to the system.
//!
//! The binary allocates with mimalloc (`main.rs`). Under glibc's malloc, memory allocated by
//! one runtime worker and freed by the other made the workers wait on each other's arena
//! locks, on the request path; mimalloc frees into the owning thread's pages without a lock
//! (BENCHMARKS.md, *Why, measured: The allocator*).
//!
//! What mimalloc frees stays with the thread that freed it until that thread collects. The
//! connection layer asks for a collection ([`release_freed`]) a few seconds after connections
//! closed; each runtime worker collects when it next goes idle ([`on_worker_park`]), and the
//! asking thread collects what is not a worker's. Otherwise the process stayed larger after
//! half-open connections closed than before they came.
//!
//! Collecting and trimming are C calls (mimalloc's `mi_collect`, glibc's `malloc_trim`), which
//! is why this module allows `unsafe` code.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bumped by each request to collect; a worker collects once when it sees a new value.
static REQUESTED: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static COLLECTED: Cell<u64> = const { Cell::new(0) };
}

/// Asks every runtime worker to collect when it next parks, and collects this thread's heap and
/// the pages no thread owns now. Call it from a blocking thread: a forced collection walks the
/// heap.
pub fn release_freed() {
    REQUESTED.fetch_add(1, Ordering::Relaxed);
    collect();
    // What C code allocated through glibc (SQLite's page cache beyond its bound, for one).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory; it touches nothing in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// For the runtime's `on_thread_park`: runs on every park, so it only compares two integers
/// unless a collection was asked for since this worker's last.
pub fn on_worker_park() {
    let requested = REQUESTED.load(Ordering::Relaxed);
    if COLLECTED.with(|seen| seen.replace(requested)) != requested {
        collect();
    }
}

fn collect() {
    // SAFETY: mi_collect only returns free pages to the system; live allocations are untouched.
    // Without mimalloc as the global allocator (the tests' builds) it has nothing to return.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
