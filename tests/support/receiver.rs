//! A real HTTPS webhook receiver for the tests: a certificate for `localhost` from a test CA made
//! with rcgen, served by axum over tokio-rustls on an ephemeral port. It records every request
//! and answers as each path says:
//!
//! - `/ok` — `200`, after waiting while the gate is closed (see [`Receiver::close_gate`])
//! - `/flaky` — `500` to the first two attempts of each notification, then `200`
//! - `/hang` — the first attempt of each notification waits 12 s (past the 10 s limit), later ones `200`
//! - `/slow` — as `/ok`, 20 ms later

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;

/// One request the receiver got.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub body: Vec<u8>,
    pub signature: String,
    pub retry_count: u32,
    pub at: Instant,
    pub notification_id: String,
}

#[derive(Default)]
struct Inner {
    received: Mutex<Vec<Received>>,
    attempts: Mutex<HashMap<(String, String), u32>>,
    gate_closed: Mutex<bool>,
    gate: tokio::sync::Notify,
}

#[derive(Clone)]
pub struct Receiver {
    pub addr: SocketAddr,
    /// The test CA's certificate, PEM: pass it as the sandbox's extra root.
    pub ca_file: PathBuf,
    inner: Arc<Inner>,
    _dir: Arc<tempfile::TempDir>,
}

impl Receiver {
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}/{path}", self.addr.port())
    }

    pub fn received(&self) -> Vec<Received> {
        self.inner.received.lock().unwrap().clone()
    }

    /// Requests to `/ok` and `/slow` wait until [`Receiver::open_gate`].
    pub fn close_gate(&self) {
        *self.inner.gate_closed.lock().unwrap() = true;
    }

    pub fn open_gate(&self) {
        *self.inner.gate_closed.lock().unwrap() = false;
        self.inner.gate.notify_waiters();
    }
}

/// Starts a receiver with a fresh test CA.
pub async fn start_receiver() -> Receiver {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(rcgen::DnType::CommonName, "Payments test CA");
    ca_params.key_usages = vec![rcgen::KeyUsagePurpose::KeyCertSign, rcgen::KeyUsagePurpose::CrlSign];
    let ca_cert = ca_params.self_signed(&ca_key).unwrap();
    let issuer = rcgen::Issuer::new(ca_params, ca_key);
    let leaf_key = rcgen::KeyPair::generate().unwrap();
    let leaf_params = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
    let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
    let ca_file = dir.path().join("test-ca.pem");
    std::fs::write(&ca_file, ca_cert.pem()).unwrap();

    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone(), ca_cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(leaf_key.serialize_der().into()),
        )
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let tcp = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = tcp.local_addr().unwrap();
    let inner = Arc::new(Inner::default());
    let app = axum::Router::new().route("/{path}", axum::routing::post(receive)).with_state(inner.clone());
    tokio::spawn(async move { axum::serve(TlsListener { tcp, acceptor }, app).await.unwrap() });
    Receiver { addr, ca_file, inner, _dir: Arc::new(dir) }
}

async fn receive(
    State(inner): State<Arc<Inner>>,
    Path(path): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> StatusCode {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let notification_id = serde_json::from_slice::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v["id"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let received = Received {
        path: path.clone(),
        body: body.to_vec(),
        signature: header("x-service-signature"),
        retry_count: header("x-service-retry-count").parse().unwrap_or(u32::MAX),
        at: Instant::now(),
        notification_id: notification_id.clone(),
    };
    inner.received.lock().unwrap().push(received);
    let attempt = {
        let mut attempts = inner.attempts.lock().unwrap();
        let count = attempts.entry((path.clone(), notification_id)).or_default();
        *count += 1;
        *count
    };
    match path.as_str() {
        "flaky" if attempt <= 2 => StatusCode::INTERNAL_SERVER_ERROR,
        "down" => StatusCode::SERVICE_UNAVAILABLE,
        "hang" if attempt == 1 => {
            tokio::time::sleep(Duration::from_secs(12)).await;
            StatusCode::OK
        }
        "slow" | "ok" => {
            loop {
                let opened = inner.gate.notified();
                if !*inner.gate_closed.lock().unwrap() {
                    break;
                }
                opened.await;
            }
            if path == "slow" {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            StatusCode::OK
        }
        _ => StatusCode::OK,
    }
}

/// TLS over a TCP listener, for `axum::serve`.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    acceptor: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, addr)) = self.tcp.accept().await else { continue };
            // A failed handshake (a client that does not trust the CA) is that client's problem.
            if let Ok(tls) = self.acceptor.accept(stream).await {
                return (tls, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}
