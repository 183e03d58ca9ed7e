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

use super::client_address::TrustedProxies;
use super::edge::Edge;
use super::parse_errors::ErrorBodies;
use super::request_limits::MAX_HEAD;
use super::shares::Shares;

/// How long and how many: the bounds on what clients may hold.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections served at once; further clients wait in the listen backlog.
    pub max_connections: usize,
    /// Connections one client address (an IPv6 client's /64) is sure of; past this, its
    /// connections are taken only while fewer than half of `max_connections` are open, and
    /// otherwise answered `429` and closed, so one address holds half the slots at most and the
    /// other half stays for addresses within their share. For requests through a trusted proxy,
    /// the requests in flight one client may have (see [`super::shares`]).
    pub connections_per_address: usize,
    /// Proxies (load balancers) whose forwarding header names the client; see
    /// [`super::client_address`].
    pub trusted_proxies: TrustedProxies,
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
            connections_per_address: 128,
            trusted_proxies: TrustedProxies::default(),
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
    let shares = Shares::new(limits.connections_per_address.min(limits.max_connections));
    let refusing = Arc::new(std::sync::atomic::AtomicUsize::new(0));
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
        // A trusted proxy's connections carry many clients: its own share is the whole cap.
        let share = if limits.trusted_proxies.trusts(peer.ip()) {
            None
        } else {
            let open = limits.max_connections - permits.available_permits();
            match shares.take(peer.ip(), open < limits.max_connections / 2) {
                Some(held) => Some(held),
                None => {
                    tokio::spawn(refuse_connection(stream, shares.share(), refusing.clone()));
                    continue;
                }
            }
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
            drop(share);
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

/// Refusals held before they are answered at most; past this, they are answered at once.
const TARPIT: usize = 1024;
/// How long a refusal is held before it is answered.
const TARPIT_DELAY: Duration = Duration::from_millis(250);

/// Answers a connection over its address's share `429` (the error object, `Retry-After`) and
/// closes it, without reading what it sent. The answer waits a quarter of a second first (up to
/// [`TARPIT`] at once): a client that opens a connection again as soon as one is refused would
/// otherwise keep the accept loop busy refusing it, and fill the listen queue that other
/// clients' connections wait in.
async fn refuse_connection(stream: tokio::net::TcpStream, share: usize, refusing: Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::AsyncWriteExt;
    if refusing.fetch_add(1, Ordering::Relaxed) < TARPIT {
        tokio::time::sleep(TARPIT_DELAY).await;
    }
    refusing.fetch_sub(1, Ordering::Relaxed);
    let error = payments_server::ApiError::new(
        hyper::StatusCode::TOO_MANY_REQUESTS,
        format!(
            "Too many connections from this address: {share} at once while the server is busy; close one, or retry later"
        ),
    );
    let body = payments_server::ERROR_OBJECT.body(&error);
    let head = format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\nretry-after: 1\r\n\
         connection: close\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let mut stream = stream;
    let answer = async {
        stream.write_all(head.as_bytes()).await?;
        stream.write_all(&body).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), answer).await;
}

/// A listener on `address`, its queue of connections waiting to be accepted as long as the system
/// allows (4,096, or `net.core.somaxconn` if lower; tokio's default is 1,024): under a burst of
/// connections a full queue drops new ones, and their clients try again only a second later.
pub fn listen(address: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if address.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(4096)
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
