//! `cargo xtask codegen --spec FILE --out DIR` writes a Cargo workspace that builds: generated
//! here for the real document and for a sample, then checked by `cargo check --workspace`
//! (offline, with this workspace's lock file, so the dependencies are the ones already fetched).

use std::path::Path;
use std::process::Command;

fn check(name: &str, document: &str) {
    check_in(name, document, &tempfile::tempdir().unwrap());
}

/// [`check`], writing the workspace into `dir`.
fn check_in(name: &str, document: &str, dir: &tempfile::TempDir) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let text = std::fs::read_to_string(root.join(document)).unwrap();
    let files = payments_codegen::standalone(&text, name, document).unwrap_or_else(|e| panic!("{document}: {e}")).files;
    for file in &files {
        let path = dir.path().join(&file.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, &file.contents).unwrap();
    }
    std::fs::copy(root.join("Cargo.lock"), dir.path().join("Cargo.lock")).unwrap();
    // As its users build it: with the default features, and with every feature.
    for features in [None, Some("--all-features")] {
        let output = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["check", "--offline", "--quiet", "--workspace"])
            .args(features)
            .arg("--manifest-path")
            .arg(dir.path().join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", root.join("target/standalone"))
            .env("RUSTFLAGS", "-D warnings")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "the workspace generated from {document} does not build ({}):\n{}",
            features.unwrap_or("default features"),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let names: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    for member in ["types", "client", "server"] {
        assert!(names.contains(&format!("{name}-{member}/src/lib.rs").as_str()), "{names:?}");
    }
}

#[test]
fn the_payments_document_as_a_workspace_of_its_own() {
    check("payments", "openapi/payments.yaml");
}

#[test]
fn a_sample_as_a_workspace_of_its_own() {
    check("sample", "crates/payments-codegen/tests/samples/parameters_and_responses.yaml");
}

#[test]
fn the_generality_sample_as_a_workspace_of_its_own() {
    check("generality", "crates/payments-codegen/tests/samples/generality.yaml");
}

/// Its client carries the styles runtime (and percent-encoding), its server the runtime's
/// `styles` module.
#[test]
fn the_parameter_styles_sample_as_a_workspace_of_its_own() {
    check("styles", "crates/payments-codegen/tests/samples/parameter_styles.yaml");
}

/// Its client carries the events runtime (and `futures`), its server the runtime's `events`.
#[test]
fn the_events_sample_as_a_workspace_of_its_own() {
    check("events", "crates/payments-codegen/tests/samples/events.yaml");
}

/// Its client carries the multipart runtime, its server the runtime's `multipart` (multer,
/// temporary files).
#[test]
fn the_multipart_sample_as_a_workspace_of_its_own() {
    check("multipart", "crates/payments-codegen/tests/samples/multipart.yaml");
}

/// `cargo run` in the workspace generated from a real 3.1 document (utoipa's, crates.io's) serves
/// its mock: asked over HTTP, an operation answers its documented success, a body of its schema,
/// and what the real router refuses is still refused.
#[test]
fn cargo_run_in_a_generated_workspace_serves_a_mock() {
    use std::io::{BufRead, BufReader, Read, Write};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    check_in("crates-io", "crates/payments-codegen/tests/corpus/openapi-3.1/crates-io.json", &dir);
    let mut server = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["run", "--offline", "--quiet", "--manifest-path"])
        .arg(dir.path().join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target/standalone"))
        .env("PORT", "0")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let address = line.trim().strip_prefix("mock at http://").unwrap_or_else(|| panic!("printed {line:?}")).to_owned();
    let get = |path: &str| {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        write!(stream, "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer
    };
    let summary = get("/api/v1/summary");
    let unknown = get("/api/v1/no-such-thing");
    // `cargo run` replaced itself with the server (it execs on Unix): this ends the server.
    server.kill().unwrap();
    server.wait().unwrap();
    let (head, body) = summary.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{summary}");
    let body: serde_json::Value = serde_json::from_str(body).unwrap();
    for field in ["just_updated", "most_downloaded", "new_crates", "num_crates", "popular_categories"] {
        assert!(body.get(field).is_some(), "{field} missing from {body}");
    }
    // Without a credential, an unknown path is `401`, as in the real router (paths cannot be
    // probed without one).
    assert!(unknown.starts_with("HTTP/1.1 401"), "{unknown}");
}

// Public documents (`tests/corpus`, progenitor's samples), as they are.
#[test]
fn keeper_as_a_workspace_of_its_own() {
    check("keeper", "crates/payments-codegen/tests/corpus/keeper.json");
}

#[test]
fn buildomat_as_a_workspace_of_its_own() {
    check("buildomat", "crates/payments-codegen/tests/corpus/buildomat.json");
}

#[test]
fn propolis_server_as_a_workspace_of_its_own() {
    check("propolis-server", "crates/payments-codegen/tests/corpus/propolis-server.json");
}

#[test]
fn nexus_as_a_workspace_of_its_own() {
    check("nexus", "crates/payments-codegen/tests/corpus/nexus.json");
}

// OpenAPI 3.1 documents (`tests/corpus/openapi-3.1`, the OpenAPI Initiative's examples), and
// our own 3.1 rendition.
#[test]
fn our_3_1_rendition_as_a_workspace_of_its_own() {
    check("payments31", "docs/openapi-3.1.json");
}

#[test]
fn a_3_1_document_of_webhooks_alone_as_a_workspace_of_its_own() {
    check("webhook-example", "crates/payments-codegen/tests/corpus/openapi-3.1/webhook-example.yaml");
}

#[test]
fn a_3_1_operation_without_responses_as_a_workspace_of_its_own() {
    check("non-oauth-scopes", "crates/payments-codegen/tests/corpus/openapi-3.1/non-oauth-scopes.yaml");
}

#[test]
fn a_3_1_document_with_an_api_key_and_unnameable_enum_values_as_a_workspace_of_its_own() {
    check("tictactoe", "crates/payments-codegen/tests/corpus/openapi-3.1/tictactoe.yaml");
}

// Real 3.1 documents as their tools write them (`tests/corpus/openapi-3.1/README.md`).
#[test]
fn crates_io_by_utoipa_5_as_a_workspace_of_its_own() {
    check("crates-io", "crates/payments-codegen/tests/corpus/openapi-3.1/crates-io.json");
}

#[test]
fn prefect_by_fastapi_as_a_workspace_of_its_own() {
    check("prefect", "crates/payments-codegen/tests/corpus/openapi-3.1/prefect.json");
}

#[test]
fn adyen_transfers_with_three_security_schemes_as_a_workspace_of_its_own() {
    check("adyen-transfers", "crates/payments-codegen/tests/corpus/openapi-3.1/adyen-transfers.json");
}

#[test]
fn adyen_balance_webhooks_as_a_workspace_of_its_own() {
    check("adyen-balance-webhooks", "crates/payments-codegen/tests/corpus/openapi-3.1/adyen-balance-webhooks.json");
}

#[test]
fn crate_names_are_checked() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples/bounds.yaml")).unwrap();
    for bad in ["", "Upper", "9lives", "under_score", "trailing-"] {
        let error = payments_codegen::standalone(&text, bad, "bounds.yaml").unwrap_err().to_string();
        assert!(error.contains("cannot name crates"), "{bad:?}: {error}");
    }
}

/// The version a manifest line asks for: `name = "1"` or `name = { version = "1", .. }`.
fn requirement(line: &str) -> Option<(&str, &str)> {
    let (name, rest) = line.split_once(" = ")?;
    let rest = rest.strip_prefix("{ version = ").unwrap_or(rest);
    let version = rest.strip_prefix('"')?.split('"').next()?;
    Some((name.trim(), version))
}

#[test]
fn standalone_manifests_ask_for_the_versions_our_crates_build_with() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let ours = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let ours: Vec<(&str, &str)> = ours.lines().filter_map(requirement).collect();
    let text = std::fs::read_to_string(root.join("crates/payments-codegen/tests/samples/bounds.yaml")).unwrap();
    let files = payments_codegen::standalone(&text, "sample", "bounds.yaml").unwrap().files;
    let mut checked = 0;
    for file in files.iter().filter(|f| f.path.ends_with("/Cargo.toml")) {
        let dependencies = file.contents.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
        for (name, version) in dependencies.lines().filter_map(requirement) {
            let workspace = ours.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
            assert_eq!(workspace, Some(version), "{}: {name}", file.path);
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} dependencies read");
}
