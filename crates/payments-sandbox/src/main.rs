//! `payments-sandbox`: the command line is `command_line.rs`; the binary adds its allocator.

// The allocator is mimalloc's C calls, which have no safe wrapper.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc, mi_zalloc_aligned,
};

/// mimalloc (see `http/memory.rs` for why), asked for a plain block wherever its blocks are
/// aligned enough already: the `mimalloc` crate's allocator asks for every block by its
/// alignment, a slower path through mimalloc for the same block (BENCHMARKS.md, *A plain
/// block where one is aligned enough*).
struct Allocator;

/// The alignment every mimalloc block has: a block is a whole number of words from a
/// word-aligned start. (Not 16: a 24-byte block sits 24 bytes after the one before it.)
const PLAIN_ALIGNMENT: usize = size_of::<usize>();

fn plain(layout: &Layout) -> bool {
    layout.align() <= PLAIN_ALIGNMENT
}

// SAFETY: each call is mimalloc's own for the same block, its plain form only where the block
// it returns meets `layout`'s alignment; blocks are freed by `mi_free` either way.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if plain(&layout) {
                mi_malloc(layout.size()).cast()
            } else {
                mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe {
            if plain(&layout) {
                mi_zalloc(layout.size()).cast()
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi_free(ptr.cast::<c_void>()) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe {
            if plain(&layout) {
                mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[global_allocator]
static ALLOCATOR: Allocator = Allocator;

fn main() -> std::process::ExitCode {
    payments_sandbox::command_line::main()
}
