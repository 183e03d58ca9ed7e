//! The reference `cargo xtask bench` holds the sandbox's HTTP layer against: a bare axum server
//! answering `GET /currencies` and `GET /balances/{id}` with fixed bytes — the sandbox's own
//! answers, captured by the benchmark — behind the same bearer check as the sandbox (the token's
//! SHA-256, compared in constant time). It is the speed of the stack (tokio, hyper, axum) with
//! nothing of the sandbox in it: no database, no serialisation, no middleware, no logging.
//!
//! It is also the loopback webhook receiver the benchmark counts deliveries with:
//! `POST /receive` answers `200` at once, `GET /received` says how many it has had.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use clap::Parser;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

#[derive(Parser)]
struct Cli {
    #[arg(long)]
    listen: SocketAddr,
    /// The bearer token that is let in.
    #[arg(long)]
    token: String,
    /// The body `GET /currencies` answers.
    #[arg(long)]
    currencies: PathBuf,
    /// The body `GET /balances/{id}` answers, whatever the id.
    #[arg(long)]
    balance: PathBuf,
}

struct Fixed {
    token_hash: [u8; 32],
    currencies: Vec<u8>,
    balance: Vec<u8>,
    received: AtomicU64,
}

impl Fixed {
    /// The sandbox's check: a bearer token whose SHA-256 matches, compared in constant time.
    fn allows(&self, headers: &HeaderMap) -> bool {
        let Some(token) = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
        else {
            return false;
        };
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        hash.ct_eq(&self.token_hash).into()
    }

    fn answer(&self, headers: &HeaderMap, body: &[u8]) -> Response {
        if !self.allows(headers) {
            return StatusCode::UNAUTHORIZED.into_response();
        }
        ([(header::CONTENT_TYPE, "application/json")], body.to_vec()).into_response()
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let cli = Cli::parse();
    let fixed = Arc::new(Fixed {
        token_hash: Sha256::digest(cli.token.as_bytes()).into(),
        currencies: std::fs::read(&cli.currencies)?,
        balance: std::fs::read(&cli.balance)?,
        received: AtomicU64::new(0),
    });
    let app = Router::new()
        .route(
            "/currencies",
            get(|State(f): State<Arc<Fixed>>, h: HeaderMap| async move { f.answer(&h, &f.currencies) }),
        )
        .route(
            "/balances/{id}",
            get(|State(f): State<Arc<Fixed>>, h: HeaderMap| async move { f.answer(&h, &f.balance) }),
        )
        .route(
            "/receive",
            axum::routing::post(|State(f): State<Arc<Fixed>>| async move {
                f.received.fetch_add(1, Ordering::Relaxed);
                StatusCode::OK
            }),
        )
        .route(
            "/received",
            get(|State(f): State<Arc<Fixed>>| async move { f.received.load(Ordering::Relaxed).to_string() }),
        )
        .with_state(fixed);
    let listener = tokio::net::TcpListener::bind(cli.listen).await?;
    axum::serve(listener, app).await
}
