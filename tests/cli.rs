//! The generated CLI (`payments`, crates/payments-cli) driving a real sandbox: a balance created,
//! read and listed through it, JSON on stdout, the error object on stderr with exit 1, another
//! tenant's id unknown to it, and a missing token a usage error.

use payments_tests::sandbox::{ALICE, BOB, start_sandbox};
use serde_json::Value;

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Run {
    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }
}

async fn payments(base_url: &str, token: Option<&str>, args: &[&str]) -> Run {
    let mut command = tokio::process::Command::new(payments_tests::process::cli_binary());
    command.args(args).env("PAYMENTS_BASE_URL", base_url).env_remove("PAYMENTS_TOKEN");
    if let Some(token) = token {
        command.env("PAYMENTS_TOKEN", token);
    }
    let output = command.output().await.expect("payments runs");
    Run {
        code: output.status.code().expect("an exit code"),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cli_drives_the_sandbox() {
    let sandbox = start_sandbox().await;
    let url = sandbox.url.as_str();

    let created = payments(url, Some(ALICE), &["create-balance", "--currency", "GBP", "--name", "Main"]).await;
    assert_eq!(created.code, 0, "{}", created.stderr);
    let balance = created.json();
    assert_eq!((balance["currency"].as_str(), balance["balance"].as_i64()), (Some("GBP"), Some(0)), "{balance}");
    let id = balance["id"].as_str().unwrap().to_string();

    let read = payments(url, Some(ALICE), &["get-balance", "--id", &id]).await;
    assert_eq!(read.code, 0, "{}", read.stderr);
    assert_eq!(read.json(), balance);

    let listed = payments(url, Some(ALICE), &["list-balances", "--currency", "GBP"]).await;
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let ids: Vec<Value> = listed.json().as_array().unwrap().iter().map(|b| b["id"].clone()).collect();
    assert_eq!(ids, vec![Value::String(id.clone())]);

    // Another tenant cannot see it: the error object on stderr, exit 1, nothing on stdout.
    let foreign = payments(url, Some(BOB), &["get-balance", "--id", &id]).await;
    assert_eq!(foreign.code, 1, "{}", foreign.stdout);
    assert!(foreign.stdout.is_empty(), "{}", foreign.stdout);
    let error: Value = serde_json::from_str(&foreign.stderr).expect("the error object");
    assert_eq!((error["request"].as_str(), error["code"].as_i64()), (Some("error"), Some(404)), "{error}");

    // A bad token reaches the API and is refused there.
    let refused = payments(url, Some("tok_nobody"), &["list-balances"]).await;
    assert_eq!(refused.code, 1);
    assert!(refused.stderr.contains("\"code\": 401"), "{}", refused.stderr);

    // No token: a usage error before any request.
    let no_token = payments(url, None, &["list-balances"]).await;
    assert_eq!(no_token.code, 2);
    assert!(no_token.stderr.contains("PAYMENTS_TOKEN"), "{}", no_token.stderr);

    // The API's own validation answers through the CLI too.
    let invalid = payments(url, Some(ALICE), &["create-balance", "--currency", "GBP", "--name", ""]).await;
    assert_ne!(invalid.code, 0, "{}", invalid.stdout);
}
