//! `payments`: the command line is the library's (`lib.rs`).

fn main() -> std::process::ExitCode {
    payments_cli::main()
}
