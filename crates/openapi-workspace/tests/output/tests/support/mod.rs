//! What every served test here does first.

/// Serves `router` on an ephemeral port of the loopback interface; answers its base URL. Also
/// installs the TLS crypto provider, which reqwest needs before any client is built (this
/// workspace builds it without one, see payments-client).
pub(crate) async fn serve(router: axum::Router) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    url
}
