//! Transparent huge pages turned off for this process and the `rustfmt` it runs. mimalloc asks the
//! kernel for huge pages on its arenas, and every one it faults in again after a purge is zeroed
//! whole: on the largest documents that zeroing was most of the generator's system time
//! (BENCHMARKS.md, "The generator without huge pages, its builders as text").
// `prctl` has no safe wrapper in std.
#![allow(unsafe_code)]

/// Asks the kernel for no transparent huge pages from here on, for this process and its children
/// (Linux only; elsewhere, or on a kernel that refuses, nothing changes but speed).
pub(crate) fn turn_off() {
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE reads its integer arguments only and touches no memory of ours.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}
