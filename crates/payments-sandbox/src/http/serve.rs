//! The connection layer: accepting, the limits every connection lives under, and the stop.
//!
//! hyper does the HTTP/1.1 work; this file only decides how many connections may exist at
//! once, how long a client may take, and how the server stops. HTTP/2 is not served: the
//! sandbox speaks plain HTTP, where browsers and HTTP clients use HTTP/1.1 (h2c needs prior
//! knowledge nobody configures), and each protocol served is one more set of limits to hold.

use std::convert::Infallible;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use super::edge::Edge;
use super::parse_errors::ErrorBodies;
use super::request_limits::MAX_HEAD;

/// How long and how many: the bounds on what clients may hold.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections served at once; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// A request's head (request line and headers) must arrive within this, counted from when
    /// the connection is ready for it. A keep-alive connection with no new request is closed
    /// after this too.
    pub header_timeout: Duration,
    /// A request's body must arrive within this, counted from the end of its head.
    pub body_timeout: Duration,
    /// After SIGTERM/SIGINT, requests in flight get this long to finish; then the server
    /// closes what is left and stops.
    pub shutdown_grace: Duration,
    /// `401`s an address may receive per minute (in a burst) before its requests without a
    /// known token answer `429`; `None` for no limit.
    pub failed_authentications_per_minute: Option<NonZeroU32>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 1024,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(10),
            failed_authentications_per_minute: NonZeroU32::new(30),
        }
    }
}

/// Serves `app` on `listener` until `shutdown` resolves; then stops accepting, lets requests in
/// flight finish for up to `limits.shutdown_grace`, and returns with whatever is still open
/// closed.
pub async fn serve(
    listener: TcpListener,
    app: Edge,
    limits: &Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(limits.header_timeout).max_buf_size(MAX_HEAD);
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let connections = GracefulShutdown::new();
    let closed = Arc::new(AtomicBool::new(false));
    let trimming = tokio::spawn(give_back_freed_memory(closed.clone()));
    tokio::pin!(shutdown);
    loop {
        // A permit first: at the cap, nothing more is accepted until a connection ends.
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
            () = &mut shutdown => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    accept_failed(error).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        let app = app.clone();
        let service = hyper::service::service_fn(move |request: hyper::Request<hyper::body::Incoming>| {
            let app = app.clone();
            async move { Ok::<_, Infallible>(app.handle(peer, request.map(axum::body::Body::new)).await) }
        });
        let connection = connections.watch(http.serve_connection(TokioIo::new(ErrorBodies::new(stream)), service));
        let closed = closed.clone();
        tokio::spawn(async move {
            let _ = connection.await;
            drop(permit);
            closed.store(true, Ordering::Relaxed);
        });
    }
    drop(listener);
    trimming.abort();
    let open = connections.count();
    tracing::info!(open, "shutting down: finishing requests in flight");
    if tokio::time::timeout(limits.shutdown_grace, connections.shutdown()).await.is_err() {
        tracing::warn!(grace = ?limits.shutdown_grace, "shutting down: closed connections still open after the grace period");
    }
    Ok(())
}

/// Every few seconds, when connections have closed since the last look, asks that what they
/// freed go back to the system (see [`super::memory`]).
async fn give_back_freed_memory(closed: Arc<AtomicBool>) {
    let mut ticks = tokio::time::interval(Duration::from_secs(5));
    loop {
        ticks.tick().await;
        if closed.swap(false, Ordering::Relaxed) {
            let _ = tokio::task::spawn_blocking(super::memory::release_freed).await;
        }
    }
}

/// Accepting fails for the server's own reasons (out of file descriptors) or the client's (it
/// hung up before being accepted). The first kind would fail again at once: wait a little.
async fn accept_failed(error: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if !matches!(error.kind(), ConnectionAborted | ConnectionRefused | ConnectionReset) {
        tracing::error!(%error, "accepting a connection failed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
