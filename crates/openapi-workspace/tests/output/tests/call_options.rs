//! Per-call options of a generated client, over real HTTP: a timeout and a header set for one
//! call (`with_timeout`, `with_header`) or for every call (`Config::timeout`, `Config::header`),
//! and the client they were cloned from left as it was.

mod support;

use std::time::Duration;

use axum::http::HeaderMap;
use openapi_workspace_output::errors::client;

/// A server answering `GET /repos/{name}` after the milliseconds its name says, with the value of
/// the request's `x-tenant` header as the repository's name.
async fn slow_server() -> String {
    let app = axum::Router::new().route(
        "/repos/{name}",
        axum::routing::get(|axum::extract::Path(name): axum::extract::Path<String>, headers: HeaderMap| async move {
            tokio::time::sleep(Duration::from_millis(name.parse().unwrap_or(0))).await;
            let tenant = headers.get("x-tenant").and_then(|v| v.to_str().ok()).unwrap_or("none").to_owned();
            axum::Json(serde_json::json!({"name": tenant, "stars": 0}))
        }),
    );
    support::serve(app).await
}

fn no_retries() -> client::Config {
    client::Config::new().retry(client::retry::RetryPolicy::none())
}

#[tokio::test]
async fn a_timeout_for_one_call_cuts_that_call_only() {
    let url = slow_server().await;
    let client = client::Client::new(&url, no_retries());
    let hasty = client.with_timeout(Duration::from_millis(50));
    match hasty.get_repo().name("400").send().await {
        Err(client::Error::CommunicationError(error)) => assert!(error.is_timeout(), "{error}"),
        other => panic!("not a timeout: {other:?}"),
    }
    // The client it was made from keeps the HTTP client's own (15 s): the same call succeeds.
    assert_eq!(client.get_repo().name("400").send().await.unwrap().name, "none");

    let configured = client::Client::new(&url, no_retries().timeout(Duration::from_millis(50)));
    assert!(configured.get_repo().name("400").send().await.is_err());
    assert!(configured.get_repo().name("0").send().await.is_ok());
}

#[tokio::test]
async fn a_header_for_one_call_is_sent_with_that_call_only() {
    let url = slow_server().await;
    let client = client::Client::new(&url, no_retries());
    let value = |text: &'static str| reqwest::header::HeaderValue::from_static(text);
    let name = reqwest::header::HeaderName::from_static("x-tenant");
    let tenant = client.with_header(name.clone(), value("acme"));
    assert_eq!(tenant.get_repo().name("0").send().await.unwrap().name, "acme");
    assert_eq!(client.get_repo().name("0").send().await.unwrap().name, "none");

    let configured = client::Client::new(&url, no_retries().header(name.clone(), value("globex")));
    assert_eq!(configured.get_repo().name("0").send().await.unwrap().name, "globex");
    // A call's own header replaces the client's.
    let replaced = configured.with_header(name, value("initech"));
    assert_eq!(replaced.get_repo().name("0").send().await.unwrap().name, "initech");
}
