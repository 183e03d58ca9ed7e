//! `openapi-workspace mock --spec FILE`: the binary serving a document at once, as a user runs it
//! (a child process on a free port, spoken to over HTTP), with nothing generated or compiled.
//! That it answers as the generated server does is `tests/output/tests/engine.rs`'s (every
//! sample document, both servers); here, what the command itself does.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// The mock of `spec`, running, and its base address (`127.0.0.1:port`).
struct Mock {
    child: Child,
    address: String,
}

impl Mock {
    fn start(spec: &Path) -> Mock {
        Mock::start_with(spec, &[]).0
    }

    /// The mock of `spec` run with `flags` too, and the lines it printed on stdout before its
    /// address (the warnings, with `--message-format json`).
    fn start_with(spec: &Path, flags: &[&str]) -> (Mock, Vec<String>) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_openapi-workspace"))
            .args(["mock", "--listen", "127.0.0.1:0"])
            .args(flags)
            .arg("--spec")
            .arg(spec)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut before = Vec::new();
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "the mock ended; it printed {before:?}");
            match line.trim().strip_prefix("mock at http://") {
                Some(address) => return (Mock { child, address: address.to_owned() }, before),
                None => before.push(line),
            }
        }
    }

    /// The answer to a request of `head` (its request line and headers) and `body`: the status,
    /// the headers (lower case) and the body.
    fn send(&self, head: &str, body: &str) -> (u16, String, String) {
        let mut stream = TcpStream::connect(&self.address).unwrap();
        let request = format!(
            "{head}\r\nhost: {}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
            self.address,
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (headers, body) = answer.split_once("\r\n\r\n").unwrap();
        let status = headers[9..12].parse().unwrap();
        (status, headers.to_ascii_lowercase(), body.to_owned())
    }
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sample(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples").join(name)
}

#[test]
fn serves_a_document_at_once_checking_each_request() {
    let mock = Mock::start(&sample("pet_store.yaml"));
    // The document's example of the first success, in its media type.
    let (status, headers, body) = mock.send("GET /pets?limit=5 HTTP/1.1\r\nauthorization: Bearer any", "");
    assert_eq!(status, 200, "{body}");
    assert!(headers.contains("content-type: application/json"), "{headers}");
    let pets: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert!(pets.is_array(), "{body}");
    // Checked first, refused in the document's error object: no credential, a bound broken,
    // a body that breaks its schema, an id that is not one, a method and a path it lacks.
    let refused = [
        ("GET /pets HTTP/1.1", "", 401),
        ("GET /pets?limit=0 HTTP/1.1\r\nauthorization: Bearer any", "", 400),
        ("POST /pets HTTP/1.1\r\nauthorization: Bearer any\r\ncontent-type: application/json", "{\"name\": 5}", 400),
        ("GET /pets/not-an-id HTTP/1.1\r\nauthorization: Bearer any", "", 404),
        ("DELETE /pets HTTP/1.1\r\nauthorization: Bearer any", "", 405),
        ("GET /owners HTTP/1.1\r\nauthorization: Bearer any", "", 404),
    ];
    for (head, sent, expected) in refused {
        let (status, headers, body) = mock.send(head, sent);
        assert_eq!(status, expected, "{head}: {body}");
        let error: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["request"], "error", "{head}: {body}");
        assert_eq!(error["code"], expected, "{head}: {body}");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{head}: {body}");
        assert!(headers.contains("content-type: application/json"), "{headers}");
    }
    // A browser's preflight from another origin is let through (CORS).
    let (status, headers, _) = mock.send(
        "OPTIONS /pets HTTP/1.1\r\norigin: http://localhost:3000\r\naccess-control-request-method: POST\r\n\
         access-control-request-headers: authorization, content-type",
        "",
    );
    assert_eq!(status, 200, "{headers}");
    assert!(headers.contains("access-control-allow-origin: http://localhost:3000"), "{headers}");
}

#[test]
fn an_operation_it_cannot_serve_is_left_out_with_a_warning_and_the_rest_served() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("api.yaml");
    std::fs::write(
        &spec,
        "openapi: 3.0.3\ninfo: {title: Two, version: '1'}\npaths:\n  /ok:\n    get:\n      operationId: ok\n      \
         responses: {'200': {description: ok, content: {application/json: {schema: {type: object, properties: \
         {fine: {type: boolean}}}, example: {fine: true}}}}}\n  /mixed:\n    post:\n      operationId: mixed\n      \
         requestBody:\n        content: {multipart/mixed: {schema: {type: object}}}\n      responses: {'204': \
         {description: done}}\n",
    )
    .unwrap();
    // As cargo's `--message-format json`, the warnings are JSON lines on stdout, before the address.
    let (mock, printed) = Mock::start_with(&spec, &["--message-format", "json"]);
    let warnings: Vec<serde_json::Value> = printed.iter().map(|line| serde_json::from_str(line).unwrap()).collect();
    let [warning] = warnings.as_slice() else { panic!("{warnings:?}") };
    assert_eq!(warning["kind"], "warning", "{warning}");
    assert_eq!(warning["pointer"], "/paths/~1mixed/post", "{warning}");
    assert_eq!(warning["operation"], "POST /mixed", "{warning}");
    assert!(warning["message"].as_str().unwrap().starts_with("left out of the mock"), "{warning}");
    let (status, _, body) = mock.send("GET /ok HTTP/1.1", "");
    assert_eq!((status, body.as_str()), (200, "{\"fine\":true}"));
    let (status, _, _) = mock.send("POST /mixed HTTP/1.1\r\ncontent-type: multipart/mixed; boundary=x", "");
    assert_eq!(status, 404);
}

/// `send` with a bearer token, and a JSON body when there is one: the status and the JSON answered.
fn call(mock: &Mock, method: &str, path: &str, body: Option<serde_json::Value>) -> (u16, serde_json::Value) {
    let head = match body {
        Some(_) => format!("{method} {path} HTTP/1.1\r\nauthorization: Bearer any\r\ncontent-type: application/json"),
        None => format!("{method} {path} HTTP/1.1\r\nauthorization: Bearer any"),
    };
    let (status, _, answer) = mock.send(&head, &body.map(|b| b.to_string()).unwrap_or_default());
    (status, if answer.is_empty() { serde_json::Value::Null } else { serde_json::from_str(&answer).unwrap() })
}

#[test]
fn stateful_it_keeps_what_is_created_until_it_is_deleted() {
    use serde_json::json;
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mock/shelter.yaml");
    let (mock, _) = Mock::start_with(&spec, &["--stateful"]);

    // Owners: integer ids in sequence, the server's timestamp, a list wrapped with its counts.
    let (status, ada) = call(&mock, "POST", "/owners", Some(json!({"name": "Ada"})));
    assert_eq!(status, 201, "{ada}");
    assert_eq!((&ada["id"], &ada["name"]), (&json!(1), &json!("Ada")), "{ada}");
    assert!(ada["created_at"].as_str().is_some_and(|at| at.len() == 20 && at.ends_with('Z')), "{ada}");
    assert_eq!(call(&mock, "GET", "/owners/1", None), (200, ada.clone()));
    let (_, page) = call(&mock, "GET", "/owners", None);
    assert_eq!(page, json!({"data": [ada], "has_more": false, "total": 1}));
    // A merge patch changes what it names and keeps the rest.
    let (status, renamed) = call(&mock, "PATCH", "/owners/1", Some(json!({"name": "Ada L"})));
    assert_eq!((status, &renamed["name"], &renamed["created_at"]), (200, &json!("Ada L"), &ada["created_at"]));

    // Pets, nested under their owner: UUIDs, newest first, filtered by a property, scoped.
    let (_, rex) = call(&mock, "POST", "/owners/1/pets", Some(json!({"name": "Rex", "tag": "dog"})));
    let (_, tom) = call(&mock, "POST", "/owners/1/pets", Some(json!({"name": "Tom", "tag": "cat"})));
    let rex_id = rex["id"].as_str().unwrap().to_owned();
    assert!(rex_id.len() == 36 && rex_id.matches('-').count() == 4, "{rex}");
    assert_eq!(call(&mock, "GET", "/owners/1/pets", None), (200, json!([tom, rex])));
    assert_eq!(call(&mock, "GET", "/owners/1/pets?tag=dog", None), (200, json!([rex])));
    assert_eq!(call(&mock, "GET", "/owners/2/pets", None), (200, json!([])));
    assert_eq!(call(&mock, "GET", &format!("/owners/2/pets/{rex_id}"), None).0, 404);
    // A replace keeps the id and when it was made, and nothing else of before.
    let (status, replaced) = call(&mock, "PUT", &format!("/owners/1/pets/{rex_id}"), Some(json!({"name": "Rex II"})));
    assert_eq!(status, 200, "{replaced}");
    assert_eq!(
        (&replaced["id"], &replaced["created_at"], &replaced["name"]),
        (&rex["id"], &rex["created_at"], &json!("Rex II"))
    );
    assert!(replaced.get("tag").is_none(), "{replaced}");
    // Deleted, it is gone: the document's 404, in its error object.
    assert_eq!(call(&mock, "DELETE", &format!("/owners/1/pets/{rex_id}"), None), (204, serde_json::Value::Null));
    let (status, error) = call(&mock, "GET", &format!("/owners/1/pets/{rex_id}"), None);
    assert_eq!(status, 404, "{error}");
    assert!(error["message"].as_str().is_some_and(|m| m.contains("no pets")), "{error}");
    assert_eq!(call(&mock, "GET", "/owners/1/pets", None), (200, json!([tom])));
    // Still checked first: a body the document refuses changes nothing.
    assert_eq!(call(&mock, "POST", "/owners/1/pets", Some(json!({"name": ""}))).0, 400);
    assert_eq!(call(&mock, "GET", "/owners/1/pets", None), (200, json!([tom])));
}

#[test]
fn without_stateful_every_answer_is_the_example() {
    let mock = Mock::start(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mock/shelter.yaml"));
    let (status, created) = call(&mock, "POST", "/owners", Some(serde_json::json!({"name": "Ada"})));
    assert_eq!((status, &created["name"]), (201, &serde_json::json!("Example owner")));
    let (status, found) = call(&mock, "GET", "/owners/12345", None);
    assert_eq!((status, &found["id"]), (200, &serde_json::json!(7)));
}
