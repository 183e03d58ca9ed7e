//! The HTTP edge under hostile clients, through raw sockets against a sandbox on an ephemeral
//! port: errors raised before routing, unknown paths and ids, slow clients, the connection cap,
//! and the limit on failed authentications.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::num::NonZeroU32;
use std::time::{Duration, Instant};

use payments_sandbox::Limits;
use payments_tests::sandbox::*;
use payments_tests::{assert_error, raw};

/// What the server wrote on `stream` until it closed it (or `within` ran out), and how long
/// that took.
fn read_until_closed(stream: &mut TcpStream, within: Duration) -> (String, Duration) {
    let started = Instant::now();
    stream.set_read_timeout(Some(within)).unwrap();
    let mut received = Vec::new();
    let mut buffer = [0u8; 16 * 1024];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => received.extend_from_slice(&buffer[..n]),
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => break,
            Err(error) => panic!("the server did not close the connection within {within:?}: {error}"),
        }
    }
    (String::from_utf8_lossy(&received).into_owned(), started.elapsed())
}

/// Sends `request` and returns the whole answer (the server closes after each of these).
fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(request).unwrap();
    read_until_closed(&mut stream, Duration::from_secs(10)).0
}

/// Status, headers (lower-case names) and JSON body of an answer.
fn parse(answer: &str) -> (u16, String, serde_json::Value) {
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or_else(|| panic!("a whole answer: {answer:?}"));
    let status = head.split(' ').nth(1).and_then(|code| code.parse().ok()).expect("a status line");
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("a JSON body ({e}): {answer}"));
    (status, head.to_lowercase(), body)
}

fn assert_error_object(answer: &str, status: u16, needle: &str) {
    let (got, head, body) = parse(answer);
    assert_eq!(got, status, "{answer}");
    assert!(head.contains("\r\ncontent-type: application/json"), "{head}");
    assert_eq!(body["request"], "error", "{body}");
    assert_eq!(body["code"], status, "{body}");
    let message = body["message"].as_str().expect("a message");
    assert!(message.contains(needle), "{message:?} should mention {needle:?}");
}

#[tokio::test]
async fn errors_raised_before_routing_carry_the_error_object() {
    let sandbox = start_sandbox().await;
    let addr = sandbox.addr;
    tokio::task::spawn_blocking(move || {
        // A header line without a colon, a negative length, a request line that is not HTTP.
        let malformed = exchange(addr, b"GET /currencies HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n");
        assert_error_object(&malformed, 400, "could not be parsed");
        let negative =
            exchange(addr, b"POST /balances HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n{\"currency\":\"GBP\"}");
        assert_error_object(&negative, 400, "could not be parsed");
        assert_error_object(&exchange(addr, b"GET / HTTP/9.9\r\n\r\n"), 400, "could not be parsed");
        // URIs too long for hyper to hold, and too long for the sandbox.
        for length in [70_000, 9_000] {
            let request = format!("GET /{} HTTP/1.1\r\nHost: x\r\n\r\n", "a".repeat(length));
            assert_error_object(&exchange(addr, request.as_bytes()), 414, "URI too long");
        }
        // Too many headers, and headers too large.
        let many: String = (0..150).map(|i| format!("X-Header-{i}: v\r\n")).collect();
        let request = format!("GET /currencies HTTP/1.1\r\nHost: x\r\n{many}\r\n");
        assert_error_object(&exchange(addr, request.as_bytes()), 431, "at most 100 headers");
        let request = format!("GET /currencies HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "b".repeat(70_000));
        assert_error_object(&exchange(addr, request.as_bytes()), 431, "Request headers too large");
        let request = format!("GET /currencies HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n", "b".repeat(200_000));
        assert_error_object(&exchange(addr, request.as_bytes()), 431, "Request headers too large");
        // A declared body over the limit, refused before any of it is sent.
        let request = "POST /balances HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok_alice\r\nContent-Type: application/json\r\nContent-Length: 1000000000000000\r\n\r\n";
        assert_error_object(&exchange(addr, request.as_bytes()), 413, "larger than 65536 bytes");
    })
    .await
    .unwrap();
    // The sandbox serves on.
    assert_eq!(sandbox.client(ALICE).list_currencies().send().await.unwrap().status().as_u16(), 200);
}

#[tokio::test]
async fn unknown_paths_ask_for_a_token_first_and_ids_have_one_spelling() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let balance = open_balance(&client, "GBP").await;
    let url = |path: &str| format!("{}{path}", sandbox.url);
    assert_error(&raw("GET", &url("/no/such/path"), None, None, "").await, 401, "Missing or invalid credential");
    assert_error(&raw("GET", &url("/no/such/path"), Some("tok_nobody"), None, "").await, 401, "credential");
    assert_error(&raw("GET", &url("/no/such/path"), Some(ALICE), None, "").await, 404, "no such path /no/such/path");
    // The canonical spelling finds the balance; every other spelling of the same UUID is 404.
    let id = balance.id.hyphenated().to_string();
    assert_eq!(raw("GET", &url(&format!("/balances/{id}")), Some(ALICE), None, "").await.status, 200);
    let spellings = [
        id.to_uppercase(),
        balance.id.simple().to_string(),
        format!("{{{id}}}"),
        format!("urn:uuid:{id}"),
        "not-a-uuid".to_owned(),
    ];
    for spelling in spellings {
        let answer = raw("GET", &url(&format!("/balances/{spelling}")), Some(ALICE), None, "").await;
        assert_error(&answer, 404, "lower-case hyphenated");
    }
    // Without a token the answer is still 401: ids are not probed without a credential.
    assert_error(&raw("GET", &url("/balances/NOT-AN-ID"), None, None, "").await, 401, "credential");
}

#[tokio::test]
async fn slow_and_idle_clients_are_cut_off() {
    let mut options = test_options();
    options.limits =
        Limits { header_timeout: Duration::from_secs(1), body_timeout: Duration::from_secs(1), ..Limits::default() };
    let sandbox = start_sandbox_with(options).await;
    let addr = sandbox.addr;
    tokio::task::spawn_blocking(move || {
        // Nothing at all, half a request line, half the headers: closed without an answer.
        for sent in [&b""[..], b"GET /curr", b"GET /currencies HTTP/1.1\r\nHost: x\r\nAuthor"] {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream.write_all(sent).unwrap();
            let (answer, took) = read_until_closed(&mut stream, Duration::from_secs(10));
            assert_eq!(answer, "", "no answer to an unfinished head");
            assert!(took >= Duration::from_millis(900), "closed only once the header timeout ran out: {took:?}");
        }
        // Half a body: 408 with the error object once the body timeout runs out.
        let mut stream = TcpStream::connect(addr).unwrap();
        stream
            .write_all(b"POST /balances HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok_alice\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"curr")
            .unwrap();
        let (answer, _) = read_until_closed(&mut stream, Duration::from_secs(10));
        assert_error_object(&answer, 408, "did not arrive within 1 seconds");
        // A kept-alive connection that sends no further request is closed.
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(b"GET /currencies HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok_alice\r\n\r\n").unwrap();
        let (answer, took) = read_until_closed(&mut stream, Duration::from_secs(10));
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        assert!(took >= Duration::from_millis(900), "kept alive for the timeout first: {took:?}");
    })
    .await
    .unwrap();
    // Nothing half-sent was stored.
    assert!(sandbox.client(ALICE).list_balances().send().await.unwrap().into_inner().is_empty());
}

#[tokio::test]
async fn connections_over_the_cap_wait_until_one_closes() {
    let mut options = test_options();
    options.limits = Limits { max_connections: 2, ..Limits::default() };
    let sandbox = start_sandbox_with(options).await;
    let addr = sandbox.addr;
    tokio::task::spawn_blocking(move || {
        let request =
            b"GET /currencies HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer tok_alice\r\nConnection: close\r\n\r\n";
        let first = TcpStream::connect(addr).unwrap();
        let _second = TcpStream::connect(addr).unwrap();
        // The kernel completes the third handshake, but the sandbox does not take it up.
        let mut third = TcpStream::connect(addr).unwrap();
        third.write_all(request).unwrap();
        third.set_read_timeout(Some(Duration::from_millis(700))).unwrap();
        let mut byte = [0u8; 1];
        let waited = third.read(&mut byte);
        assert!(waited.is_err(), "no answer while two connections are open: {waited:?}");
        // One closes: the third is served.
        drop(first);
        let (answer, _) = read_until_closed(&mut third, Duration::from_secs(5));
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn failed_authentications_are_limited_per_address_where_a_token_is_asked_for() {
    let mut options = test_options();
    options.limits = Limits { failed_authentications_per_minute: NonZeroU32::new(5), ..Limits::default() };
    let sandbox = start_sandbox_with(options).await;
    let client = sandbox.client(ALICE);
    let gbp = open_balance(&client, "GBP").await;
    let request = client
        .create_payment_request()
        .body(payments_client::types::PaymentRequestCreate::builder().amount(amount(500)).currency(Some(code("GBP"))))
        .send()
        .await
        .unwrap()
        .into_inner();
    let url = format!("{}/currencies", sandbox.url);
    // Alice has called before; Bob has not.
    assert_eq!(raw("GET", &url, Some(ALICE), None, "").await.status, 200);
    for guess in 0..5 {
        let answer = raw("GET", &url, Some(&format!("tok_guess_{guess}")), None, "").await;
        assert_error(&answer, 401, "credential");
    }
    // Over the limit: a token this sandbox does not know is 429 before any lookup, with how
    // long to wait. Bob's token is valid, but this sandbox has not seen it yet: from this
    // address it waits too.
    for token in ["tok_guess_5", "tok_guess_0", BOB] {
        let answer = raw("GET", &url, Some(token), None, "").await;
        assert_error(&answer, 429, "Too many failed authentications");
        let retry_after: u64 = answer.headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=12).contains(&retry_after), "a refill of one in 12 s: {retry_after}");
    }
    // A caller whose token this sandbox knows keeps working from the same address.
    assert_eq!(raw("GET", &url, Some(ALICE), None, "").await.status, 200);
    assert_eq!(sandbox.client(ALICE).list_currencies().send().await.unwrap().status().as_u16(), 200);
    // What asks for no token stays reachable: a payer on the same address pays, a reader reads
    // the reference and the document; a request without a token costs no lookup and is 401.
    let pay = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    assert_eq!(pay.get(&request.payment_url).send().await.unwrap().status(), 200);
    let paid = pay
        .post(&request.payment_url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("payer_name=Ada")
        .send()
        .await
        .unwrap();
    assert_eq!(paid.status(), 303);
    assert_eq!(balance_of(&client, gbp.id).await, 500);
    for path in ["/docs/", "/openapi.yaml", "/openapi.json", "/healthz"] {
        let answer = reqwest::get(format!("{}{path}", sandbox.url)).await.unwrap();
        assert_eq!(answer.status(), 200, "{path}");
    }
    assert_error(&raw("GET", &url, None, None, "").await, 401, "credential");
}

#[tokio::test]
async fn two_authorization_headers_are_refused() {
    let sandbox = start_sandbox().await;
    let answer = reqwest::Client::new()
        .get(format!("{}/currencies", sandbox.url))
        .header("authorization", format!("Bearer {ALICE}"))
        .header("authorization", "Bearer tok_other")
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 400);
    let body: serde_json::Value = answer.json().await.unwrap();
    assert_eq!(body["message"], "Invalid request: More than one Authorization header: send one credential");
}

/// A connection from `from` to `to`, sending half a request's head and holding it.
async fn half_sent(from: std::net::IpAddr, to: SocketAddr) -> std::io::Result<tokio::net::TcpStream> {
    use tokio::io::AsyncWriteExt;
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.bind(SocketAddr::new(from, 0))?;
    let mut stream = socket.connect(to).await?;
    stream.write_all(b"GET /currencies HTTP/1.1\r\nHost: x\r\nAuthor").await?;
    Ok(stream)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_holding_every_connection_it_can_starves_no_other() {
    let sandbox = start_sandbox().await;
    let addr = sandbox.addr;
    // The holder, on a runtime of its own: 1,500 half-sent requests from 127.0.0.1, each
    // opened again as soon as it is closed (refused at once past its share, or cut off by
    // the header timeout).
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let held = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let holder = {
        let (stop, held) = (stop.clone(), held.clone());
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let tasks: Vec<_> = (0..1_500)
                    .map(|_| {
                        let (stop, held) = (stop.clone(), held.clone());
                        tokio::spawn(async move {
                            use tokio::io::AsyncReadExt;
                            let ordering = std::sync::atomic::Ordering::Relaxed;
                            while !stop.load(ordering) {
                                let Ok(mut stream) = half_sent([127, 0, 0, 1].into(), addr).await else {
                                    tokio::time::sleep(Duration::from_millis(50)).await;
                                    continue;
                                };
                                held.fetch_add(1, ordering);
                                let mut rest = Vec::new();
                                let read = stream.read_to_end(&mut rest);
                                let _ = tokio::time::timeout(Duration::from_secs(30), read).await;
                                held.fetch_sub(1, ordering);
                                tokio::time::sleep(Duration::from_millis(50)).await;
                            }
                        })
                    })
                    .collect();
                for task in tasks {
                    let _ = task.await;
                }
            });
        })
    };
    // Let the holder take what it can.
    tokio::time::sleep(Duration::from_secs(2)).await;
    // Another client (127.0.0.2), a new connection for each request.
    let other = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let mut slowest = Duration::ZERO;
    for _ in 0..30 {
        let started = Instant::now();
        let answer = other
            .get(format!("{}/currencies", sandbox.url))
            .bearer_auth(ALICE)
            .timeout(Duration::from_secs(5))
            .send()
            .await
            .expect("answered while another address holds its share");
        assert_eq!(answer.status(), 200);
        slowest = slowest.max(started.elapsed());
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // What the holder was refused past its share was told why.
    let refused = half_sent([127, 0, 0, 1].into(), addr).await.unwrap();
    let (answer, _) = tokio::task::spawn_blocking(move || {
        let mut refused = refused.into_std().unwrap();
        refused.set_nonblocking(false).unwrap();
        read_until_closed(&mut refused, Duration::from_secs(5))
    })
    .await
    .unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    eprintln!(
        "with {} half-sent requests held open by one address, the slowest of 30 requests from another took {slowest:?}",
        held.load(std::sync::atomic::Ordering::Relaxed)
    );
    assert!(slowest < Duration::from_secs(1), "the other client waited {slowest:?}");
    assert_error_object(&answer, 429, "Too many connections from this address: 128 at once while the server is busy");
    drop(sandbox);
    holder.join().unwrap();
}

#[tokio::test]
async fn behind_a_trusted_proxy_each_client_is_counted_apart_and_nobody_else_is_believed() {
    let mut options = test_options();
    options.limits = Limits {
        failed_authentications_per_minute: NonZeroU32::new(3),
        trusted_proxies: payments_sandbox::http::client_address::TrustedProxies {
            networks: vec!["127.0.0.1/32".parse().unwrap()],
            ..Default::default()
        },
        ..Limits::default()
    };
    let sandbox = start_sandbox_with(options).await;
    let url = format!("{}/currencies", sandbox.url);
    let from = |local: [u8; 4], forwarded: &'static str, token: &'static str| {
        let client = reqwest::Client::builder().local_address(std::net::IpAddr::from(local)).build().unwrap();
        let url = url.clone();
        async move {
            client.get(&url).bearer_auth(token).header("x-forwarded-for", forwarded).send().await.unwrap().status()
        }
    };
    // Through the proxy (127.0.0.1), a guesser at 203.0.113.9, whatever it wrote to the left.
    for _ in 0..3 {
        assert_eq!(from([127, 0, 0, 1], "198.51.100.1, 203.0.113.9", "tok_guess").await, 401);
    }
    assert_eq!(from([127, 0, 0, 1], "198.51.100.2, 203.0.113.9", "tok_guess").await, 429);
    // Another client of the proxy, with a token this sandbox has not seen: untouched.
    assert_eq!(from([127, 0, 0, 1], "203.0.113.10", BOB).await, 200);
    // The same /64 of IPv6 is one client; the next /64 another.
    for _ in 0..3 {
        assert_eq!(from([127, 0, 0, 1], "2001:db8:0:1::1", "tok_guess").await, 401);
    }
    assert_eq!(from([127, 0, 0, 1], "2001:db8:0:1:ffff::2", "tok_guess").await, 429);
    assert_eq!(from([127, 0, 0, 1], "2001:db8:0:2::1", "tok_guess").await, 401);
    // A peer that is not a trusted proxy (127.0.0.2) forging the header is counted as itself:
    // its failures do not land on the address it names, and naming another does not free it.
    for _ in 0..3 {
        assert_eq!(from([127, 0, 0, 2], "203.0.113.11", "tok_guess").await, 401);
    }
    assert_eq!(from([127, 0, 0, 2], "203.0.113.12", "tok_guess").await, 429);
    assert_eq!(from([127, 0, 0, 1], "203.0.113.11", "tok_guess").await, 401, "203.0.113.11 owes nothing");
}

#[tokio::test]
async fn every_answer_carries_its_request_id_and_says_any_origin_may_read_it() {
    let sandbox = start_sandbox().await;
    let client = reqwest::Client::new();
    let get = |id: Option<&'static str>| {
        let mut request =
            client.get(format!("{}/currencies", sandbox.url)).header("authorization", format!("Bearer {ALICE}"));
        if let Some(id) = id {
            request = request.header("x-request-id", id);
        }
        request.header("origin", "null").send()
    };
    // A new id for a request without one: a UUID, different each time.
    let (first, second) = (get(None).await.unwrap(), get(None).await.unwrap());
    let id = |response: &reqwest::Response| response.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert!(uuid::Uuid::parse_str(&id(&first)).is_ok(), "{}", id(&first));
    assert_ne!(id(&first), id(&second));
    // A client's own id is kept.
    let given = get(Some("trace-42")).await.unwrap();
    assert_eq!(id(&given), "trace-42");
    for response in [&first, &given] {
        let headers = response.headers();
        assert_eq!(headers["access-control-allow-origin"], "*");
        assert_eq!(headers["access-control-expose-headers"], "x-request-id,retry-after");
    }
    // So does a refusal made before the router, and an error from it.
    let unauthorized = client.get(format!("{}/currencies", sandbox.url)).send().await.unwrap();
    assert_eq!(unauthorized.status(), 401);
    assert_eq!(unauthorized.headers()["access-control-allow-origin"], "*");
    assert!(uuid::Uuid::parse_str(&id(&unauthorized)).is_ok());

    // A preflight is answered before authentication: any method, and the headers asked for,
    // named (`*` would not cover `Authorization`).
    let preflight = client
        .request(reqwest::Method::OPTIONS, format!("{}/transactions", sandbox.url))
        .header("origin", "https://docs.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization, content-type, idempotency-key")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 200);
    let headers = preflight.headers();
    for (name, value) in [
        ("access-control-allow-origin", "*"),
        ("access-control-allow-methods", "*"),
        ("access-control-allow-headers", "authorization, content-type, idempotency-key"),
        ("vary", "access-control-request-headers"),
    ] {
        assert_eq!(headers[name], value, "{name}");
    }
    assert!(headers.contains_key("x-request-id"));
}
