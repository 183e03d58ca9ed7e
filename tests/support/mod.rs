//! Shared pieces of the end-to-end tests.

pub mod database;
pub mod nginx;
pub mod payers;
pub mod process;
pub mod receiver;
pub mod sandbox;
pub mod tmpfs;

use std::net::SocketAddr;

/// Runs each listed test — an `async fn` of no arguments, listed with the `#[tokio::test]`
/// attribute it would carry — once on a SQLite file (`sqlite::name`) and once on a throwaway
/// PostgreSQL server (`postgres::name`): one suite, written once, on both backends.
#[macro_export]
macro_rules! on_both_backends {
    ($( #[$test:meta] $name:ident ),* $(,)?) => {
        mod sqlite {
            $(
                #[$test]
                async fn $name() {
                    $crate::database::on($crate::database::Backend::Sqlite, super::$name()).await
                }
            )*
        }
        mod postgres {
            $(
                #[$test]
                async fn $name() {
                    $crate::database::on($crate::database::Backend::Postgres, super::$name()).await
                }
            )*
        }
    };
}

/// Serves `app` on an ephemeral loopback port for the rest of the test process.
pub async fn serve(app: axum::Router) -> SocketAddr {
    payments_client::install_crypto_provider();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind an ephemeral port");
    let addr = listener.local_addr().expect("a bound address");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("the server runs") });
    addr
}

/// A raw HTTP response, for the failures the generated client would refuse to send.
pub struct Raw {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: serde_json::Value,
}

/// Sends a raw request and reads the JSON body (`Null` when the body is not JSON).
pub async fn raw(
    method: &str,
    url: &str,
    token: Option<&str>,
    content_type: Option<&str>,
    body: impl Into<reqwest::Body>,
) -> Raw {
    payments_client::install_crypto_provider();
    let client = reqwest::Client::new();
    let mut request = client.request(method.parse().expect("a method"), url).body(body);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    if let Some(content_type) = content_type {
        request = request.header("content-type", content_type);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.bytes().await.expect("a body");
    let body = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
    Raw { status, headers, body }
}

/// Asserts that `raw` is the error object with `status`, and that its message contains `needle`.
pub fn assert_error(raw: &Raw, status: u16, needle: &str) {
    assert_eq!(raw.status, status, "status of {:?}", raw.body);
    let body = raw.body.as_object().unwrap_or_else(|| panic!("an error object, got {:?}", raw.body));
    assert_eq!(body.len(), 3, "exactly request, code, message: {body:?}");
    assert_eq!(body["request"], "error");
    assert_eq!(body["code"], status);
    let message = body["message"].as_str().expect("a message string");
    assert!(message.to_lowercase().contains(&needle.to_lowercase()), "message {message:?} should mention {needle:?}");
    assert_eq!(
        raw.headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/json"),
        "error bodies are JSON"
    );
}
