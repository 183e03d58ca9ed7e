//! `payments-sandbox`'s command line. Opens (creating on first start) the database, makes sure
//! the tenants asked for exist, and serves the API until SIGINT or SIGTERM. In the library so
//! that the tests' build of the binary (tests/Cargo.toml) is this same code.

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use crate::http::client_address::{ForwardingHeader, TrustedProxies};
use crate::log_format::LogFormat;
use crate::{DeliveryOptions, Limits, Options, Sandbox, Server, TargetPolicy};
use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(version, about = "The payments sandbox: the Payments API on an embedded database.")]
struct Cli {
    /// The database: a SQLite file, created on first start (`sqlite::memory:` for one that is
    /// gone when the sandbox stops), or a `postgres://user@host:port/db` URL, which several
    /// instances can share. Either is migrated to this release's schema at start.
    #[arg(long, global = true, default_value = "payments-sandbox.db", env = "PAYMENTS_SANDBOX_DATABASE")]
    database: String,
    /// How logs are written to stderr: `text` for people, `json` (one object per line) for
    /// log collectors.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text, env = "PAYMENTS_SANDBOX_LOG_FORMAT")]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    serve: Serve,
}

#[derive(clap::Args)]
struct Serve {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080", env = "PAYMENTS_SANDBOX_LISTEN")]
    listen: SocketAddr,
    /// Base URL of pay links; defaults to `http://<listen address>`.
    #[arg(long, env = "PAYMENTS_SANDBOX_PUBLIC_URL")]
    public_url: Option<String>,
    /// Tokens that must each have a tenant (comma-separated); missing ones are created.
    #[arg(long, env = "PAYMENTS_SANDBOX_TOKENS", value_delimiter = ',', hide_env_values = true)]
    tokens: Vec<String>,
    /// Requests per second per tenant, bursts of twice that; 0 for no limit.
    #[arg(long, default_value_t = 100)]
    rate_limit: u32,
    /// Seconds between moves of the simulated rails (accounts activate, payments settle);
    /// 0 leaves it to `POST /sandbox/advance`.
    #[arg(long, default_value_t = 5)]
    rail_interval: u64,
    /// Allow webhook endpoints on loopback, over plain http too (local development).
    #[arg(long)]
    webhook_allow_loopback: bool,
    /// A PEM file of extra root certificates webhook targets may chain to (a private CA).
    #[arg(long)]
    webhook_root_ca: Option<std::path::PathBuf>,
    /// Seconds between redeliveries of a failed notification, aligned to multiples of it
    /// (3600: on the hour).
    #[arg(long, default_value_t = DeliveryOptions::default().retry_interval.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    webhook_retry_interval: u64,
    /// Seconds a claimed notification stays claimed: when an instance dies mid-delivery, others
    /// deliver what it held after this. Longer than a receiver's 10 seconds, so a slow receiver
    /// is not posted to twice.
    #[arg(long, default_value_t = DeliveryOptions::default().lease.as_secs(), value_parser = clap::value_parser!(u64).range(11..))]
    webhook_lease: u64,
    /// Seconds notifications that are over (delivered, or discarded) are kept, with their
    /// events, before they are pruned; notifications still being retried are always kept.
    /// The default is 7 days: the 24 hours of retries, then six days to browse them.
    #[arg(long, default_value_t = DeliveryOptions::default().retention.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    webhook_retention: u64,
    /// Connections served at once; more wait to be accepted until one closes.
    #[arg(long, default_value_t = Limits::default().max_connections as u64, value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: u64,
    /// Connections one client address (an IPv6 client's /64) is sure of: past this, its new
    /// connections are taken only while fewer than half of --max-connections are open, and are
    /// answered 429 and closed otherwise. Through a trusted proxy: the requests in flight one
    /// client may have.
    #[arg(long, default_value_t = Limits::default().connections_per_address as u64, value_parser = clap::value_parser!(u64).range(1..))]
    max_connections_per_address: u64,
    /// A proxy (load balancer) in front of the sandbox, as an address or network
    /// (`10.0.0.0/8`, `::1`), repeatable: for connections from it, the client is the right-most
    /// address of `--client-address-header` that is not a trusted proxy. Every per-address limit
    /// and the access log use that address.
    #[arg(long = "trusted-proxy", value_name = "CIDR", value_parser = parse_network)]
    trusted_proxies: Vec<ipnet::IpNet>,
    /// The header trusted proxies append the client's address to.
    #[arg(long, value_enum, default_value_t = ForwardingHeader::default())]
    client_address_header: ForwardingHeader,
    /// Seconds a client has to send a request's line and headers; a kept-alive connection with
    /// no new request is closed after this too.
    #[arg(long, default_value_t = Limits::default().header_timeout.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    header_timeout: u64,
    /// Seconds a client has to send a request's body, from the end of its headers (408 after).
    #[arg(long, default_value_t = Limits::default().body_timeout.as_secs(), value_parser = clap::value_parser!(u64).range(1..))]
    body_timeout: u64,
    /// Seconds requests in flight get to finish after SIGTERM or SIGINT; then the sandbox
    /// closes what is left and exits.
    #[arg(long, default_value_t = Limits::default().shutdown_grace.as_secs())]
    shutdown_grace: u64,
    /// 401 answers an address may get per minute before its requests without a known token are
    /// answered 429; 0 for no limit.
    #[arg(long, default_value_t = Limits::default().failed_authentications_per_minute.map_or(0, NonZeroU32::get))]
    failed_auth_limit: u32,
}

#[derive(Subcommand)]
enum Command {
    /// Create a tenant and print its token.
    CreateTenant {
        /// A name for the tenant.
        #[arg(long, default_value = "Sandbox tenant")]
        name: String,
    },
    /// Copy the SQLite database (`--database`) to a file while sandboxes keep serving from it:
    /// the copy holds every write acknowledged before the backup began, and starts as a
    /// database of its own (`--database FILE`). The file appears only once whole. PostgreSQL:
    /// pg_dump (see the README).
    Backup {
        /// Where the copy goes (replaced if it exists).
        #[arg(long)]
        to: std::path::PathBuf,
    },
}

/// Parses the arguments and runs what they ask; the binary's `main`.
pub fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // Logs go to stderr (stdout carries the announcement and printed tokens); `RUST_LOG` filters.
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "payments_sandbox=info".into());
    // Lines gather in a buffer that a thread of its own writes every few milliseconds (see
    // `logs`); what is left is written when `_flush_at_exit` drops.
    let (stderr, _flush_at_exit) = match crate::logs::to(std::io::stderr()) {
        Ok(logs) => logs,
        Err(error) => {
            eprintln!("payments-sandbox: cannot start the log writer: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(stderr.clone())
        .with_ansi(false)
        .event_format(cli.log_format);
    match cli.log_format {
        LogFormat::Text => logs.init(),
        // Spans' fields are kept as JSON, for the `span` member of each line.
        LogFormat::Json => logs.fmt_fields(tracing_subscriber::fmt::format::JsonFields::new()).init(),
    }
    crate::logs::write_access_lines(cli.log_format, stderr);
    match start(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            // One line, with every cause (`{:#}`): what to do is in it.
            let said = format!("{error:#}");
            eprintln!("payments-sandbox: {}", said.split_whitespace().collect::<Vec<_>>().join(" "));
            std::process::ExitCode::FAILURE
        }
    }
}

fn start(cli: Cli) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_park(crate::http::memory::on_worker_park)
        .build()
        .context("cannot start the runtime")?;
    runtime.block_on(serve(cli))
}

async fn serve(cli: Cli) -> anyhow::Result<()> {
    if let Some(Command::Backup { to }) = &cli.command {
        // Not opened as a store: a backup reads, and migrates nothing.
        let (database, target) = (cli.database.clone(), to.clone());
        let made = tokio::task::spawn_blocking(move || crate::backup(&database, &target))
            .await
            .context("the backup stopped")??;
        let (bytes, seconds) = (made.bytes, made.took.as_secs_f64());
        println!("Backed up {} to {}: {bytes} bytes in {seconds:.1} s", cli.database, to.display());
        return Ok(());
    }
    let store = crate::open_store(&cli.database).await?;
    // What messages show of the database: never a password.
    let database = store.describe();
    let serve = cli.serve;
    let policy = TargetPolicy { allow_loopback: serve.webhook_allow_loopback };
    if let Some(Command::CreateTenant { name }) = cli.command {
        let token = Sandbox::new(store, "", policy).create_tenant(&name).await?;
        println!("{token}");
        return Ok(());
    }
    // Listen first: the public URL (pay links) may depend on the port the system picked.
    let listener =
        crate::http::serve::listen(serve.listen).with_context(|| format!("cannot listen on {}", serve.listen))?;
    let address = listener.local_addr().context("cannot read the address listened on")?;
    let public_url = serve.public_url.unwrap_or_else(|| format!("http://{address}"));
    let options = Options {
        public_url: public_url.clone(),
        rate_limit: NonZeroU32::new(serve.rate_limit),
        rail_interval: (serve.rail_interval > 0).then(|| Duration::from_secs(serve.rail_interval)),
        webhooks: DeliveryOptions {
            retry_interval: Duration::from_secs(serve.webhook_retry_interval),
            lease: Duration::from_secs(serve.webhook_lease),
            root_ca: serve.webhook_root_ca,
            retention: Duration::from_secs(serve.webhook_retention),
            policy,
        },
        limits: Limits {
            max_connections: usize::try_from(serve.max_connections).unwrap_or(usize::MAX),
            connections_per_address: usize::try_from(serve.max_connections_per_address).unwrap_or(usize::MAX),
            trusted_proxies: TrustedProxies { networks: serve.trusted_proxies, header: serve.client_address_header },
            header_timeout: Duration::from_secs(serve.header_timeout),
            body_timeout: Duration::from_secs(serve.body_timeout),
            shutdown_grace: Duration::from_secs(serve.shutdown_grace),
            failed_authentications_per_minute: NonZeroU32::new(serve.failed_auth_limit),
        },
    };
    let shutdown = shutdown_signal()?;
    let server = Server::new(store, options)?;
    let sandbox = server.sandbox();
    for token in serve.tokens.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
        sandbox.ensure_tenant(token, "Sandbox tenant").await?;
    }
    let mut new_tokens = vec![];
    if sandbox.tenant_count().await? == 0 {
        new_tokens.push(sandbox.create_tenant("Sandbox tenant").await?);
    }
    let unreconciled = sandbox.unreconciled_balances().await?;
    if !unreconciled.is_empty() {
        bail!("balances disagree with their ledger entries: {unreconciled:?}");
    }
    // Announced once ready: what connects from here on is served.
    announce(&public_url, &database, &new_tokens);
    tracing::info!(%address, %database, "listening");
    server.run(listener, shutdown).await.context("serving failed")?;
    tracing::info!("stopped");
    Ok(())
}

/// A network (`10.0.0.0/8`) or a single address (`10.0.0.1`, `::1`).
fn parse_network(text: &str) -> Result<ipnet::IpNet, NotANetwork> {
    text.parse::<ipnet::IpNet>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(ipnet::IpNet::from))
        .map_err(|_| NotANetwork(text.to_owned()))
}

#[derive(Debug, thiserror::Error)]
#[error("{0:?} is neither an address nor a network such as 10.0.0.0/8")]
struct NotANetwork(String);

fn announce(url: &str, database: &str, new_tokens: &[String]) {
    // Printed as `(database SQLite <path>)` or `(database PostgreSQL <url without password>)`.
    println!("Payments sandbox on {url} (database {database})");
    match new_tokens.first() {
        Some(token) => {
            println!("Created a tenant. Its token (shown once, stored hashed): {token}");
            println!("Try:  curl -H 'Authorization: Bearer {token}' {url}/currencies");
        }
        None => {
            println!(
                "Use a token of this database, or add one: payments-sandbox create-tenant (with the same --database)"
            )
        }
    }
    println!("API reference: {url}/docs    Stop with Ctrl-C.");
}

/// Resolves on SIGINT or SIGTERM; the server then stops accepting and finishes what is in flight.
/// The handlers are registered here, at once, so a signal that arrives while the server is still
/// starting is not lost (nor left to the default action, which would kill the process).
fn shutdown_signal() -> anyhow::Result<impl Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
        let mut terminate = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
        Ok(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
