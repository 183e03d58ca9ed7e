//! Freed memory handed back to the system between the generator's stages. glibc's allocator keeps
//! what a stage frees mapped for the next allocation, so after the client's peak (progenitor's
//! token streams, on the largest documents) the process would stay that size while the stages
//! after it allocate afresh around what they left behind.
// glibc's `malloc_trim` has no safe wrapper in std.
#![allow(unsafe_code)]

/// Returns the allocator's free pages to the system (glibc only; elsewhere nothing).
pub(crate) fn release() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: `malloc_trim` takes no pointer and only unmaps pages the allocator holds free.
        unsafe { malloc_trim(0) };
    }
}
