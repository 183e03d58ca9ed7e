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

/// `text` written as a document, in a directory of its own (removed when the `TempDir` drops).
fn document(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("api.yaml");
    std::fs::write(&spec, text).unwrap();
    (dir, spec)
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
    let (_dir, spec) = document(
        "openapi: 3.0.3\ninfo: {title: Two, version: '1'}\npaths:\n  /ok:\n    get:\n      operationId: ok\n      \
         responses: {'200': {description: ok, content: {application/json: {schema: {type: object, properties: \
         {fine: {type: boolean}}}, example: {fine: true}}}}}\n  /mixed:\n    post:\n      operationId: mixed\n      \
         requestBody:\n        content: {multipart/mixed: {schema: {type: object}}}\n      responses: {'204': \
         {description: done}}\n",
    );
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
    let (mock, _) = Mock::start_with(&spec, &["--stateful", "--seed", "none"]);

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
    let (_, bo) = call(&mock, "POST", "/owners", Some(json!({"name": "Bo"})));
    assert_eq!(call(&mock, "GET", "/owners/2/pets", None), (200, json!([])), "{bo}");
    assert_eq!(call(&mock, "GET", &format!("/owners/2/pets/{rex_id}"), None).0, 404);
    // No owner, no list: the parent is looked for first.
    let (status, error) = call(&mock, "GET", "/owners/9/pets", None);
    assert_eq!(status, 404, "{error}");
    assert!(error["message"].as_str().is_some_and(|m| m.contains("no owners 9")), "{error}");
    // A replace keeps the id and when it was made, and nothing else of before.
    let (status, replaced) = call(&mock, "PUT", &format!("/owners/1/pets/{rex_id}"), Some(json!({"name": "Rex II"})));
    assert_eq!(status, 200, "{replaced}");
    assert_eq!(
        (&replaced["id"], &replaced["created_at"], &replaced["name"]),
        (&rex["id"], &rex["created_at"], &json!("Rex II"))
    );
    assert!(replaced.get("tag").is_none(), "{replaced}");
    // A JSON Patch (`application/json-patch+json`): whole, or not at all (`409`).
    let patch = |operations: serde_json::Value| {
        let head = format!(
            "PATCH /owners/1/pets/{rex_id} HTTP/1.1\r\nauthorization: Bearer any\r\ncontent-type: application/json-patch+json"
        );
        let (status, _, body) = mock.send(&head, &operations.to_string());
        (status, serde_json::from_str::<serde_json::Value>(&body).unwrap())
    };
    let (status, patched) = patch(json!([{"op": "add", "path": "/tag", "value": "good"}]));
    assert_eq!((status, &patched["tag"], &patched["name"]), (200, &json!("good"), &json!("Rex II")), "{patched}");
    let (status, refused) =
        patch(json!([{"op": "remove", "path": "/tag"}, {"op": "test", "path": "/tag", "value": 1}]));
    assert_eq!(status, 409, "{refused}");
    assert_eq!(call(&mock, "GET", &format!("/owners/1/pets/{rex_id}"), None).1["tag"], "good");
    // Deleted, it is gone: the document's 404, in its error object.
    assert_eq!(call(&mock, "DELETE", &format!("/owners/1/pets/{rex_id}"), None), (204, serde_json::Value::Null));
    let (status, error) = call(&mock, "GET", &format!("/owners/1/pets/{rex_id}"), None);
    assert_eq!(status, 404, "{error}");
    assert!(error["message"].as_str().is_some_and(|m| m.contains("no pets")), "{error}");
    assert_eq!(call(&mock, "GET", "/owners/1/pets", None), (200, json!([tom])));
    // Still checked first: a body the document refuses changes nothing.
    assert_eq!(call(&mock, "POST", "/owners/1/pets", Some(json!({"name": ""}))).0, 400);
    assert_eq!(call(&mock, "GET", "/owners/1/pets", None), (200, json!([tom])));
    // An owner deleted takes its pets with it: its list and theirs are 404 (schemathesis'
    // use-after-free check), nothing can be made under it.
    assert_eq!(call(&mock, "DELETE", "/owners/1", None).0, 204);
    assert_eq!(call(&mock, "GET", "/owners/1/pets", None).0, 404);
    assert_eq!(call(&mock, "GET", &format!("/owners/1/pets/{}", tom["id"].as_str().unwrap()), None).0, 404);
    assert_eq!(call(&mock, "POST", "/owners/1/pets", Some(json!({"name": "Rex"}))).0, 404);
}

#[test]
fn without_stateful_every_answer_is_the_example() {
    let mock = Mock::start(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mock/shelter.yaml"));
    let (status, created) = call(&mock, "POST", "/owners", Some(serde_json::json!({"name": "Ada"})));
    assert_eq!((status, &created["name"]), (201, &serde_json::json!("Example owner")));
    let (status, found) = call(&mock, "GET", "/owners/12345", None);
    assert_eq!((status, &found["id"]), (200, &serde_json::json!(7)));
}

/// A request to the shop (its api key sent) with `extra` header lines: the status, the headers
/// (lower case) and the JSON answered.
fn shop(
    mock: &Mock,
    method: &str,
    path: &str,
    extra: &str,
    body: Option<serde_json::Value>,
) -> (u16, String, serde_json::Value) {
    let mut head = format!("{method} {path} HTTP/1.1\r\nx-api-key: any{extra}");
    if body.is_some() {
        head.push_str("\r\ncontent-type: application/json");
    }
    let (status, headers, answer) = mock.send(&head, &body.map(|b| b.to_string()).unwrap_or_default());
    let json = if answer.is_empty() { serde_json::Value::Null } else { serde_json::from_str(&answer).unwrap() };
    (status, headers, json)
}

fn shop_spec() -> std::path::PathBuf {
    sample("shop.yaml")
}

#[test]
fn stateful_it_pages_by_the_documents_own_parameters() {
    use serde_json::json;
    let (mock, _) = Mock::start_with(&shop_spec(), &["--stateful", "--seed", "none"]);
    let ids: Vec<String> = (1..=5)
        .map(|n| {
            let (status, _, order) =
                shop(&mock, "POST", "/orders", "", Some(json!({"item": format!("cup {n}"), "quantity": n})));
            assert_eq!(status, 201, "{order}");
            order["id"].as_str().unwrap().to_owned()
        })
        .collect();
    // A cursor: the limit's default (2), newest first, the next page after the last one shown.
    let listed = |page: &serde_json::Value| -> Vec<String> {
        page["data"].as_array().unwrap().iter().map(|order| order["id"].as_str().unwrap().to_owned()).collect()
    };
    let (_, _, first) = shop(&mock, "GET", "/orders", "", None);
    assert_eq!(listed(&first), [ids[4].clone(), ids[3].clone()], "{first}");
    assert_eq!((&first["has_more"], &first["next_cursor"]), (&json!(true), &json!(ids[3])), "{first}");
    let (_, _, second) = shop(&mock, "GET", &format!("/orders?cursor={}", ids[3]), "", None);
    assert_eq!(listed(&second), [ids[2].clone(), ids[1].clone()], "{second}");
    let (_, _, last) = shop(&mock, "GET", &format!("/orders?limit=2&cursor={}", ids[1]), "", None);
    assert_eq!(listed(&last), [ids[0].clone()], "{last}");
    // The last page says so; the cursor, required, is null.
    assert_eq!((&last["has_more"], &last["next_cursor"]), (&json!(false), &json!(null)), "{last}");
    let (_, _, all) = shop(&mock, "GET", "/orders?limit=10", "", None);
    assert_eq!(listed(&all).len(), 5, "{all}");

    // Numbered pages, the next one's URL in the documented `Link` header; a text id the client chose.
    for slug in ["a", "b", "c"] {
        let (status, _, article) = shop(&mock, "POST", "/articles", "", Some(json!({"slug": slug, "title": slug})));
        assert_eq!((status, &article["slug"]), (201, &json!(slug)));
    }
    let (status, _, taken) = shop(&mock, "POST", "/articles", "", Some(json!({"slug": "a", "title": "again"})));
    assert_eq!(status, 409, "{taken}");
    assert_eq!(shop(&mock, "GET", "/articles/b", "", None).2["title"], "b");
    let (_, headers, page) = shop(&mock, "GET", "/articles?per_page=2", "", None);
    assert_eq!(page, json!([{"slug": "c", "title": "c"}, {"slug": "b", "title": "b"}]));
    let link = format!("link: <http://{}/articles?per_page=2&page=2>; rel=\"next\"", mock.address);
    assert!(headers.contains(&link), "{headers}");
    let (_, headers, page) = shop(&mock, "GET", "/articles?per_page=2&page=2", "", None);
    assert_eq!(page, json!([{"slug": "a", "title": "a"}]));
    assert!(!headers.contains("link:"), "{headers}");
}

#[test]
fn stateful_it_keeps_an_idempotency_key_a_location_and_actions() {
    use serde_json::json;
    let (mock, _) = Mock::start_with(&shop_spec(), &["--stateful"]);
    // Seeded with the document's example.
    let (_, _, seeded) = shop(&mock, "GET", "/orders", "", None);
    assert_eq!(seeded["data"][0]["item"], "Example teapot", "{seeded}");
    let example = seeded["data"][0]["id"].as_str().unwrap().to_owned();

    // The first answer again for the same key and body, and nothing more made; another body is refused.
    let order = json!({"item": "kettle", "quantity": 2});
    let (status, headers, made) = shop(&mock, "POST", "/orders", "\r\nidempotency-key: k1", Some(order.clone()));
    assert_eq!(status, 201, "{made}");
    let id = made["id"].as_str().unwrap().to_owned();
    assert!(headers.contains(&format!("location: http://{}/orders/{id}", mock.address)), "{headers}");
    let (status, _, again) = shop(&mock, "POST", "/orders", "\r\nidempotency-key: k1", Some(order));
    assert_eq!((status, &again), (201, &made));
    let (status, _, refused) =
        shop(&mock, "POST", "/orders", "\r\nidempotency-key: k1", Some(json!({"item": "kettle", "quantity": 3})));
    assert_eq!(status, 409, "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("idempotency key k1"), "{refused}");
    assert_eq!(shop(&mock, "GET", "/orders?limit=10", "", None).2["data"].as_array().unwrap().len(), 2);

    // An action moves the status to the value it names, and a list filters by it.
    let (status, _, cancelled) = shop(&mock, "POST", &format!("/orders/{id}/cancel"), "", None);
    assert_eq!((status, &cancelled["status"], &cancelled["item"]), (200, &json!("cancelled"), &json!("kettle")));
    assert_eq!(shop(&mock, "GET", &format!("/orders/{id}"), "", None).2["status"], "cancelled");
    let (_, _, filtered) = shop(&mock, "GET", "/orders?status=cancelled", "", None);
    assert_eq!(filtered["data"], json!([cancelled]));
    // One whose answer is not the item acts all the same (`x-mock-set`), answering as documented.
    let (status, _, answered) = shop(&mock, "POST", &format!("/orders/{example}/fulfil"), "", None);
    assert_eq!((status, answered), (202, serde_json::Value::Null));
    assert_eq!(shop(&mock, "GET", &format!("/orders/{example}"), "", None).2["status"], "shipped");
    let unknown = "/orders/00000000-0000-4000-8000-000000000000/cancel";
    assert_eq!(shop(&mock, "POST", unknown, "", None).0, 404);

    // A reset forgets it all, but the seed.
    assert_eq!(shop(&mock, "POST", "/__mock/reset", "", None).0, 204);
    let (_, _, after) = shop(&mock, "GET", "/orders", "", None);
    assert_eq!((after["data"].as_array().unwrap().len(), &after["data"][0]["status"]), (1, &json!("pending")));
}

#[test]
fn stateful_it_starts_with_a_seed_file() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let seed = dir.path().join("seed.json");
    let articles = json!([{"slug": "kept", "title": "From the seed"}]);
    std::fs::write(&seed, json!({"/articles": articles}).to_string()).unwrap();
    let (mock, _) = Mock::start_with(&shop_spec(), &["--stateful", "--seed", seed.to_str().unwrap()]);
    assert_eq!(shop(&mock, "GET", "/articles", "", None).2, articles);
    assert_eq!(shop(&mock, "GET", "/orders", "", None).2["data"], json!([]));
    // A collection the mock does not keep is refused at start, saying which.
    std::fs::write(&seed, json!({"/nowhere": []}).to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_openapi-workspace"))
        .args(["mock", "--listen", "127.0.0.1:0", "--stateful", "--seed", seed.to_str().unwrap(), "--spec"])
        .arg(shop_spec())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("/nowhere is no collection the mock keeps"), "{said}");
}

#[test]
fn stateful_with_a_database_it_keeps_what_was_answered_across_a_kill() {
    use serde_json::json;
    let dir = tempfile::tempdir().unwrap();
    let database = dir.path().join("shelter.db");
    let spec = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mock/shelter.yaml");
    let flags = ["--stateful", "--seed", "none", "--database", database.to_str().unwrap()];
    let (mut mock, _) = Mock::start_with(&spec, &flags);
    let (_, ada) = call(&mock, "POST", "/owners", Some(json!({"name": "Ada"})));
    let (_, bo) = call(&mock, "POST", "/owners", Some(json!({"name": "Bo"})));
    let (_, rex) = call(&mock, "POST", "/owners/2/pets", Some(json!({"name": "Rex"})));
    let (status, renamed) = call(&mock, "PATCH", "/owners/1", Some(json!({"name": "Ada L"})));
    assert_eq!(status, 200, "{renamed}");
    // Killed, not stopped: what was answered was on disk before it was.
    mock.child.kill().unwrap();
    mock.child.wait().unwrap();

    let (mock, _) = Mock::start_with(&spec, &flags);
    assert_eq!(call(&mock, "GET", "/owners/1", None), (200, renamed));
    let pets_of_bo = call(&mock, "GET", "/owners/2/pets", None);
    assert_eq!(pets_of_bo, (200, json!([rex])), "{bo}");
    // The sequence goes on after what was kept; what is deleted stays deleted, with what was under it.
    let (_, cy) = call(&mock, "POST", "/owners", Some(json!({"name": "Cy"})));
    assert_eq!(cy["id"], 3, "{cy} after {ada}");
    assert_eq!(call(&mock, "DELETE", "/owners/2", None).0, 204);
    drop(mock);
    let (mock, _) = Mock::start_with(&spec, &flags);
    let (_, page) = call(&mock, "GET", "/owners", None);
    let names: Vec<&str> = page["data"].as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Cy", "Ada L"]);
    assert_eq!(call(&mock, "GET", "/owners/2/pets", None).0, 404);
    // A reset empties the file too (the seed is none).
    assert_eq!(call(&mock, "POST", "/__mock/reset", None).0, 204);
    drop(mock);
    let (mock, _) = Mock::start_with(&spec, &flags);
    assert_eq!(call(&mock, "GET", "/owners", None).1["data"], json!([]));
}

#[test]
fn a_missing_authorization_header_parameter_is_401_and_an_integer_beyond_its_format_400() {
    let (_dir, spec) = document(
        "openapi: 3.0.3\ninfo: {title: Keeper, version: '1'}\npaths:\n  /jobs/{n}:\n    get:\n      operationId: jobs\n      \
         parameters:\n        - {name: Authorization, in: header, required: true, schema: {type: string}}\n        \
         - {name: n, in: path, required: true, schema: {type: integer, format: int32}}\n      \
         responses: {'200': {description: ok, content: {application/json: {schema: {type: object}}}}}\n",
    );
    let mock = Mock::start(&spec);
    // A credential taken as a parameter, not a scheme: still "not authenticated" (RFC 9110).
    let (status, _, body) = mock.send("GET /jobs/1 HTTP/1.1", "");
    assert_eq!(status, 401, "{body}");
    assert!(body.contains("header `authorization` is required"), "{body}");
    // An int32 past its range is refused as the generated server's `i32` refuses it.
    let (status, _, body) = mock.send("GET /jobs/2147483648 HTTP/1.1\r\nauthorization: x", "");
    assert_eq!(status, 400, "{body}");
    assert_eq!(mock.send("GET /jobs/2147483647 HTTP/1.1\r\nauthorization: x", "").0, 200);
}

#[test]
fn stateful_an_extension_names_the_id_the_paths_do_not() {
    let book = "{type: object, required: [isbn, title], properties: {isbn: {type: string}, title: {type: string}}}";
    let (_dir, spec) = document(&format!(
        "openapi: 3.0.3\ninfo: {{title: Books, version: '1'}}\npaths:\n  /books:\n    post:\n      operationId: addBook\n      \
             x-mock-id: isbn\n      requestBody: {{required: true, content: {{application/json: {{schema: {book}}}}}}}\n      \
             responses: {{'201': {{description: added, content: {{application/json: {{schema: {book}}}}}}}}}\n  \
             /books/{{code}}:\n    get:\n      operationId: getBook\n      parameters: [{{name: code, in: path, required: true, \
             schema: {{type: string}}}}]\n      responses: {{'200': {{description: the book, content: {{application/json: \
             {{schema: {book}}}}}}}}}\n"
    ));
    let (mock, _) = Mock::start_with(&spec, &["--stateful", "--seed", "none"]);
    let (status, _, made) =
        mock.send("POST /books HTTP/1.1\r\ncontent-type: application/json", r#"{"isbn": "978-0", "title": "Dune"}"#);
    assert_eq!(status, 201, "{made}");
    let (status, _, found) = mock.send("GET /books/978-0 HTTP/1.1", "");
    assert_eq!((status, found), (200, made));
}

#[test]
fn stateful_a_collection_with_a_slash_at_its_end_is_one() {
    // FastAPI's way: `/automations/` beside `/automations/{id}`.
    let thing = "{type: object, properties: {id: {type: string, format: uuid}, name: {type: string}}}";
    let (_dir, spec) = document(&format!(
        "openapi: 3.0.3\ninfo: {{title: Fast, version: '1'}}\npaths:\n  /automations/:\n    post:\n      operationId: make\n      \
             requestBody: {{required: true, content: {{application/json: {{schema: {thing}}}}}}}\n      \
             responses: {{'201': {{description: made, headers: {{Location: {{schema: {{type: string}}}}}}, content: \
             {{application/json: {{schema: {thing}}}}}}}}}\n  /automations/{{id}}:\n    get:\n      operationId: read\n      \
             parameters: [{{name: id, in: path, required: true, schema: {{type: string, format: uuid}}}}]\n      \
             responses: {{'200': {{description: it, content: {{application/json: {{schema: {thing}}}}}}}}}\n"
    ));
    let (mock, _) = Mock::start_with(&spec, &["--stateful", "--seed", "none"]);
    let (status, headers, made) =
        mock.send("POST /automations/ HTTP/1.1\r\ncontent-type: application/json", r#"{"name": "nightly"}"#);
    assert_eq!(status, 201, "{made}");
    let made: serde_json::Value = serde_json::from_str(&made).unwrap();
    let id = made["id"].as_str().unwrap();
    assert!(headers.contains(&format!("location: http://{}/automations/{id}\r\n", mock.address)), "{headers}");
    let (status, _, found) = mock.send(&format!("GET /automations/{id} HTTP/1.1"), "");
    assert_eq!((status, serde_json::from_str::<serde_json::Value>(&found).unwrap()), (200, made));
}

#[test]
fn refusals_take_the_statuses_the_operation_documents() {
    // FastAPI's way: every operation documents `422` for what breaks it, and no `400` nor `404`.
    let (_dir, spec) = document(
        "openapi: 3.0.3\ninfo: {title: Fast, version: '1'}\npaths:\n  /flows/{id}:\n    get:\n      operationId: readFlow\n      \
         parameters:\n        - {name: id, in: path, required: true, schema: {type: string, format: uuid}}\n        \
         - {name: limit, in: query, schema: {type: integer, minimum: 1}}\n      \
         responses:\n        '200': {description: ok, content: {application/json: {schema: {type: object}}}}\n        \
         '422': {description: invalid, content: {application/json: {schema: {$ref: '#/components/schemas/HTTPValidationError'}}}}\n\
         components:\n  schemas:\n    HTTPValidationError:\n      type: object\n      properties:\n        \
         detail: {type: string}\n",
    );
    let mock = Mock::start(&spec);
    let id = "00000000-0000-4000-8000-000000000000";
    assert_eq!(mock.send(&format!("GET /flows/{id}?limit=2 HTTP/1.1"), "").0, 200);
    for refused in [format!("GET /flows/{id}?limit=0 HTTP/1.1"), "GET /flows/not-a-uuid HTTP/1.1".to_owned()] {
        let (status, _, body) = mock.send(&refused, "");
        assert_eq!(status, 422, "{refused}: {body}");
        let error: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert!(error["detail"].is_string(), "{body}");
    }
}

#[test]
fn stateful_a_link_pairs_what_the_paths_do_not() {
    // The create's answer links to the read, naming the body's `uid` as its `userId`.
    let user = "{type: object, properties: {uid: {type: string}, name: {type: string}}}";
    let (_dir, spec) = document(&format!(
        "openapi: 3.0.3\ninfo: {{title: Links, version: '1'}}\npaths:\n  /users:\n    post:\n      operationId: addUser\n      \
             requestBody: {{required: true, content: {{application/json: {{schema: {user}}}}}}}\n      \
             responses:\n        '201':\n          description: added\n          content: {{application/json: {{schema: {user}}}}}\n          \
             links: {{GetUser: {{operationId: getUser, parameters: {{userId: '$response.body#/uid'}}}}}}\n  \
             /user/{{userId}}:\n    get:\n      operationId: getUser\n      parameters: [{{name: userId, in: path, \
             required: true, schema: {{type: string}}}}]\n      responses: {{'200': {{description: the user, content: \
             {{application/json: {{schema: {user}}}}}}}, '404': {{description: none}}}}\n"
    ));
    let (mock, _) = Mock::start_with(&spec, &["--stateful", "--seed", "none"]);
    let (status, _, made) = mock.send("POST /users HTTP/1.1\r\ncontent-type: application/json", r#"{"name": "Ada"}"#);
    assert_eq!(status, 201, "{made}");
    let made: serde_json::Value = serde_json::from_str(&made).unwrap();
    let uid = made["uid"].as_str().unwrap();
    let (status, _, found) = mock.send(&format!("GET /user/{uid} HTTP/1.1"), "");
    assert_eq!((status, serde_json::from_str::<serde_json::Value>(&found).unwrap()), (200, made));
    assert_eq!(mock.send("GET /user/nobody HTTP/1.1", "").0, 404);
}

#[test]
fn stateful_a_conflict_takes_the_refusal_the_operation_documents() {
    // No `409` documented, but `422`: a key sent again with another body is refused so.
    let thing = "{type: object, properties: {id: {type: string, format: uuid}, name: {type: string}}}";
    let (_dir, spec) = document(&format!(
        "openapi: 3.0.3\ninfo: {{title: Keys, version: '1'}}\npaths:\n  /things:\n    post:\n      operationId: make\n      \
             parameters: [{{name: Idempotency-Key, in: header, schema: {{type: string}}}}]\n      \
             requestBody: {{required: true, content: {{application/json: {{schema: {thing}}}}}}}\n      \
             responses: {{'201': {{description: made, content: {{application/json: {{schema: {thing}}}}}}}, \
             '422': {{description: refused}}}}\n  /things/{{id}}:\n    get:\n      operationId: read\n      \
             parameters: [{{name: id, in: path, required: true, schema: {{type: string, format: uuid}}}}]\n      \
             responses: {{'200': {{description: it, content: {{application/json: {{schema: {thing}}}}}}}}}\n"
    ));
    let (mock, _) = Mock::start_with(&spec, &["--stateful", "--seed", "none"]);
    let head = "POST /things HTTP/1.1\r\ncontent-type: application/json\r\nidempotency-key: k";
    assert_eq!(mock.send(head, r#"{"name": "a"}"#).0, 201);
    assert_eq!(mock.send(head, r#"{"name": "a"}"#).0, 201);
    let (status, _, body) = mock.send(head, r#"{"name": "b"}"#);
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("sent before with another body"), "{body}");
}

#[test]
fn stateful_an_item_is_found_by_the_property_its_parameter_names() {
    // dropshot's way: `{pool_name}` names a pool by its `name`, not its `id` (a UUID, made so
    // though the parameter is text), and `time_created` is set. No `404` is documented, only
    // `422`: an unknown name is refused with it.
    let pool = "{type: object, properties: {id: {type: string, format: uuid, readOnly: true}, name: {type: string}, \
                time_created: {type: string, format: date-time, readOnly: true, example: '2001-01-01T00:00:00Z'}}}";
    let (_dir, spec) = document(&format!(
        "openapi: 3.0.3\ninfo: {{title: Pools, version: '1'}}\npaths:\n  /pools:\n    post:\n      operationId: addPool\n      \
             requestBody: {{required: true, content: {{application/json: {{schema: {pool}}}}}}}\n      \
             responses: {{'201': {{description: added, content: {{application/json: {{schema: {pool}}}}}}}}}\n  \
             /pools/{{pool_name}}:\n    get:\n      operationId: getPool\n      parameters: [{{name: pool_name, in: path, \
             required: true, schema: {{type: string}}}}]\n      responses: {{'200': {{description: the pool, content: \
             {{application/json: {{schema: {pool}}}}}}}, '422': {{description: refused}}}}\n"
    ));
    let (mock, _) = Mock::start_with(&spec, &["--stateful", "--seed", "none"]);
    let (status, _, made) = mock.send("POST /pools HTTP/1.1\r\ncontent-type: application/json", r#"{"name": "blue"}"#);
    assert_eq!(status, 201, "{made}");
    let pool: serde_json::Value = serde_json::from_str(&made).unwrap();
    let id = pool["id"].as_str().unwrap();
    assert!(id.len() == 36 && id.split('-').map(str::len).eq([8, 4, 4, 4, 12]), "{pool}");
    assert!(pool["time_created"].as_str().is_some_and(|at| at.len() == 20 && !at.starts_with("2001")), "{pool}");
    let (status, _, found) = mock.send("GET /pools/blue HTTP/1.1", "");
    assert_eq!((status, found), (200, made));
    let (status, _, body) = mock.send("GET /pools/green HTTP/1.1", "");
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("no pools green"), "{body}");
}
