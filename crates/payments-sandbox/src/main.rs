//! `payments-sandbox`: the command line is `command_line.rs`; the binary adds its allocator.

/// See `http/memory.rs` for why.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    payments_sandbox::command_line::main()
}
