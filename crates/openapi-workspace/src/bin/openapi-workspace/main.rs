//! `openapi-workspace`: an OpenAPI 3.0, 3.1 or 3.2 document (YAML or JSON) to a Cargo workspace
//! of three crates — the models, a progenitor client and an axum server trait — with an `xtask`
//! that writes them again. `generate` (the default) writes it; `check` writes nothing and fails
//! with a unified diff when a workspace is stale (a team's CI step); `diff` says what changed
//! between two versions of a document and what it does to their clients (the other CI step).
//! Installed with `cargo install --path crates/openapi-workspace`, it needs no checkout.
//!
//! Exit codes, as diff(1) has them: 0 done (written; up to date; no change at the level asked);
//! 1 the answer is no (`check`: stale; `diff`: a change at `--fail-on`'s level); 2 trouble (a
//! usage error, a document refused, a file that cannot be read or written).

mod huge_pages;
mod messages;
mod mock;
mod mock_database;

/// Generation allocates much and briefly (token and syntax trees): see Cargo.toml.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};
use messages::{MessageFormat, Messages};

#[derive(Parser)]
#[command(
    name = "openapi-workspace",
    version,
    about = "An OpenAPI document to a Rust workspace: models, a progenitor client, an axum server trait and its mock.",
    after_help = "Exit status: 0 done; 1 `check` found the workspace stale, or `diff` a change at --fail-on's \
                  level; 2 trouble (usage, a refused document, a file that cannot be read or written).",
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// `generate`'s arguments, for when no command is named.
    #[command(flatten)]
    generate: Generate,
    /// Print only errors (and `check`'s diff): no warnings, no summary.
    #[arg(long, short, global = true)]
    quiet: bool,
    /// How warnings and errors are printed: `human`, or `json` (one object a line, as cargo's
    /// `--message-format json`, for CI annotations).
    #[arg(long, global = true, value_enum, default_value_t = MessageFormat::Human)]
    message_format: MessageFormat,
}

#[derive(Subcommand)]
enum Command {
    /// Write the workspace DIR for the document FILE (the default command).
    Generate(Generate),
    /// Write nothing; exit 1 with a unified diff on stdout when DIR is not exactly what FILE
    /// generates (a file changed, missing, or marked @generated but no longer written).
    Check(Generate),
    /// The changes from one version of a document to another, and what each does to clients.
    Diff(Diff),
    /// Serve the document FILE at once as a mock: every request validated as the generated
    /// server validates it, each operation answering its documented example.
    Mock(mock::Mock),
}

#[derive(Args)]
struct Generate {
    /// The OpenAPI document (YAML or JSON; one split across files is followed).
    #[arg(long, value_name = "FILE", required = true)]
    spec: Option<PathBuf>,
    /// The workspace's directory: DIR-types, DIR-client and DIR-server are written into it.
    #[arg(long, value_name = "DIR", required = true)]
    out: Option<PathBuf>,
    /// The crates' prefix, instead of DIR's name (lower-case letters, digits and dashes).
    #[arg(long)]
    name: Option<String>,
    /// Refuse a document that needs any repair or approximation (each a warning otherwise).
    #[arg(long)]
    strict: bool,
}

#[derive(Args)]
struct Diff {
    /// The document before.
    #[arg(long, value_name = "OLD")]
    base: PathBuf,
    /// The document after.
    #[arg(long, value_name = "NEW")]
    head: PathBuf,
    /// How the changes are written on stdout.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    format: DiffFormat,
    /// Exit 1 when a change reaches this level; `version`: when `info.version` did not change as
    /// much as the changes ask.
    #[arg(long, value_enum, default_value_t = FailOn::Breaking)]
    fail_on: FailOn,
}

#[derive(Clone, Copy, ValueEnum)]
enum DiffFormat {
    Text,
    Json,
    Markdown,
}

#[derive(Clone, Copy, ValueEnum)]
enum FailOn {
    Breaking,
    Warning,
    Info,
    Version,
    None,
}

/// "The answer is no", distinct from trouble (2) and from done (0).
const NO: u8 = 1;
const TROUBLE: u8 = 2;

fn main() -> ExitCode {
    huge_pages::turn_off();
    let cli = Cli::parse();
    let messages = Messages { format: cli.message_format, quiet: cli.quiet };
    match cli.command {
        None => generate(&cli.generate, &messages),
        Some(Command::Generate(args)) => generate(&args, &messages),
        Some(Command::Check(args)) => check(&args, &messages),
        Some(Command::Diff(args)) => diff(&args, &messages),
        Some(Command::Mock(args)) => mock::mock(&args, &messages),
    }
}

fn options(args: &Generate) -> openapi_workspace::Options {
    openapi_workspace::Options { strict: args.strict, name: args.name.clone() }
}

fn paths(args: &Generate) -> (&std::path::Path, &std::path::Path) {
    let required = "clap requires --spec and --out";
    (args.spec.as_deref().expect(required), args.out.as_deref().expect(required))
}

fn generate(args: &Generate, messages: &Messages) -> ExitCode {
    let (spec, out) = paths(args);
    match openapi_workspace::write_workspace(spec, out, &options(args)) {
        Ok(written) => {
            messages.notes(spec, &written.notes);
            messages.written(out, &written.name);
            ExitCode::SUCCESS
        }
        Err(error) => {
            messages.error(&error);
            ExitCode::from(TROUBLE)
        }
    }
}

fn check(args: &Generate, messages: &Messages) -> ExitCode {
    let (spec, out) = paths(args);
    match openapi_workspace::check_workspace(spec, out, &options(args)) {
        Ok(openapi_workspace::Checked::Same(written)) => {
            messages.notes(spec, &written.notes);
            messages.same(spec, out);
            ExitCode::SUCCESS
        }
        Ok(openapi_workspace::Checked::Stale { written, diff }) => {
            messages.notes(spec, &written.notes);
            messages.stale(spec, out, &diff);
            ExitCode::from(NO)
        }
        Err(error) => {
            messages.error(&error);
            ExitCode::from(TROUBLE)
        }
    }
}

/// `diff`: the changes on stdout in `--format`; exit 1 when one reaches `--fail-on`.
fn diff(args: &Diff, messages: &Messages) -> ExitCode {
    let diff = match openapi_workspace::diff_files(&args.base, &args.head) {
        Ok(diff) => diff,
        Err(error) => {
            messages.error(&error);
            return ExitCode::from(TROUBLE);
        }
    };
    let format = match args.format {
        DiffFormat::Text => openapi_workspace::Format::Text,
        DiffFormat::Json => openapi_workspace::Format::Json,
        DiffFormat::Markdown => openapi_workspace::Format::Markdown,
    };
    print!("{}", diff.write(format));
    let failed = match args.fail_on {
        FailOn::Breaking => diff.reaches(openapi_workspace::Level::Breaking),
        FailOn::Warning => diff.reaches(openapi_workspace::Level::Warning),
        FailOn::Info => diff.reaches(openapi_workspace::Level::Info),
        FailOn::Version => !diff.verdict.enough,
        FailOn::None => false,
    };
    if failed { ExitCode::from(NO) } else { ExitCode::SUCCESS }
}
