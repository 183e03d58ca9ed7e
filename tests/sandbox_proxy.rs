//! Two sandbox instances on one PostgreSQL database behind a real reverse proxy (nginx), as the
//! README's "Several instances" recipe runs them with `--trusted-proxy`: one client's failed
//! logins and held connections leave every other client untouched, the access log names each
//! client rather than the proxy, and a forged `X-Forwarded-For` changes nothing.

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use payments_tests::database::postgres;
use payments_tests::nginx::Nginx;
use payments_tests::process::spawn_with;

/// A client whose connections come from `local` (loopback has all of 127.0.0.0/8).
fn client_from(local: [u8; 4]) -> reqwest::Client {
    payments_client::install_crypto_provider();
    reqwest::Client::builder()
        .local_address(IpAddr::from(local))
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap()
}

async fn status(client: &reqwest::Client, url: &str, token: &str, forwarded: Option<&str>) -> u16 {
    let mut request = client.get(url).bearer_auth(token);
    if let Some(forwarded) = forwarded {
        request = request.header("x-forwarded-for", forwarded);
    }
    request.send().await.expect("an answer").status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn behind_nginx_one_client_neither_locks_out_nor_starves_the_others() {
    let database = postgres().fresh_database();
    let arguments = ["--trusted-proxy", "127.0.0.1", "--failed-auth-limit", "5", "--log-format", "json"];
    let first = spawn_with(&database, Some("tok_known,tok_new"), &arguments);
    let second = spawn_with(&database, Some("tok_known,tok_new"), &arguments);
    let upstreams: Vec<SocketAddr> =
        [&first, &second].iter().map(|p| p.url.trim_start_matches("http://").parse().unwrap()).collect();
    let nginx = Nginx::start(&upstreams);
    let url = format!("http://{}/currencies", nginx.addr);
    let (guesser, payer) = (client_from([127, 0, 0, 2]), client_from([127, 0, 0, 3]));

    // Both instances have served the payer's first token.
    for _ in 0..4 {
        assert_eq!(status(&payer, &url, "tok_known", None).await, 200);
    }
    // The guesser fails on both instances until each refuses it; what it writes into
    // X-Forwarded-For itself (left of what nginx appends) does not make it someone else.
    let mut refused = 0;
    for guess in 0..40 {
        let forged = format!("203.0.113.{guess}");
        match status(&guesser, &url, &format!("tok_guess_{guess}"), Some(&forged)).await {
            401 => {}
            429 => refused += 1,
            other => panic!("a guess was answered {other}"),
        }
    }
    assert!(refused >= 20, "each instance refuses the guesser after 5 failures: {refused} of 40 refused");
    // Every other client is untouched: a token neither instance has seen yet, reference data,
    // and the guesser itself with a token this process knows.
    for _ in 0..4 {
        assert_eq!(status(&payer, &url, "tok_new", None).await, 200);
        assert_eq!(status(&client_from([127, 0, 0, 4]), &url, "tok_known", None).await, 200);
    }
    // The access log names the clients, not nginx.
    let clients: std::collections::BTreeSet<String> = [&first, &second]
        .iter()
        .flat_map(|p| p.logged())
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(&line).ok())
        .filter(|line| line["message"] == "request")
        .map(|line| line["client"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(clients, ["127.0.0.2", "127.0.0.3", "127.0.0.4"].map(String::from).into(), "{clients:?}");

    // A peer that is not a trusted proxy, straight to an instance, naming the payer's address:
    // its failures are its own.
    let direct = format!("{}/currencies", first.url);
    let forger = client_from([127, 0, 0, 5]);
    for _ in 0..5 {
        assert_eq!(status(&forger, &direct, "tok_guess", Some("127.0.0.3")).await, 401);
    }
    assert_eq!(status(&forger, &direct, "tok_guess", Some("127.0.0.3")).await, 429);
    assert_eq!(status(&client_from([127, 0, 0, 6]), &url, "tok_guess_again", None).await, 401);

    // The guesser holds 1,500 half-sent requests open at nginx; the payer is still answered
    // at once.
    let mut held = Vec::new();
    for _ in 0..1_500 {
        use tokio::io::AsyncWriteExt;
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind(SocketAddr::new([127, 0, 0, 2].into(), 0)).unwrap();
        let mut stream = socket.connect(nginx.addr).await.expect("nginx takes the connection");
        stream.write_all(b"GET /currencies HTTP/1.1\r\nHost: x\r\nAuthor").await.unwrap();
        held.push(stream);
    }
    let mut slowest = Duration::ZERO;
    for _ in 0..20 {
        let started = Instant::now();
        assert_eq!(status(&payer, &url, "tok_known", None).await, 200);
        slowest = slowest.max(started.elapsed());
    }
    eprintln!("behind nginx, beside 1,500 half-sent requests of another client: the slowest of 20 took {slowest:?}");
    assert!(slowest < Duration::from_secs(1), "{slowest:?}");
    drop(held);
}
