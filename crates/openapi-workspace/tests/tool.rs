//! The `openapi-workspace` binary, run as a user runs it once installed: from a directory of its
//! own, with relative paths, and with nothing of this repository beside it.

use std::path::Path;
use std::process::Command;

fn tool(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_openapi-workspace")).args(args).current_dir(dir).output().unwrap()
}

#[test]
fn writes_the_same_workspace_as_the_library_from_any_directory() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let document = std::fs::read_to_string(root.join("crates/openapi-workspace/tests/samples/security.yaml")).unwrap();
    std::fs::write(dir.path().join("api.yaml"), &document).unwrap();

    let output = tool(dir.path(), &["--spec", "api.yaml", "--out", "Shop_api"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).contains("shop-api-types, shop-api-client and shop-api-server"));

    // Every file the library makes, the small ones formatted by rustfmt with the rustfmt.toml
    // written beside them (which keeps `cargo fmt` there in agreement), the generated code as
    // printed (rustfmt skips it).
    let config = dir.path().join("Shop_api/rustfmt.toml");
    let files = openapi_workspace::standalone(&document, "shop-api", "../api.yaml").unwrap().files;
    for file in &files {
        let written = std::fs::read_to_string(dir.path().join("Shop_api").join(&file.path))
            .unwrap_or_else(|e| panic!("{}: {e}", file.path));
        let expected = if file.rustfmt {
            openapi_workspace::rustfmt(&file.contents, openapi_workspace::STANDALONE_EDITION, &config).unwrap()
        } else {
            file.contents.clone()
        };
        assert!(written == expected, "{} differs from the library's", file.path);
    }
    let rustfmt = std::fs::read_to_string(dir.path().join("Shop_api/rustfmt.toml")).unwrap();
    assert!(rustfmt.contains("style_edition = \"2024\"") && !rustfmt.contains("\nedition"), "{rustfmt}");
    // And `cargo fmt --check` holds there: the generated code is printed otherwise, and skipped.
    let fmt = Command::new("cargo")
        .args(["fmt", "--all", "--check"])
        .current_dir(dir.path().join("Shop_api"))
        .output()
        .unwrap();
    assert!(fmt.status.success(), "{}{}", String::from_utf8_lossy(&fmt.stdout), String::from_utf8_lossy(&fmt.stderr));

    // A second run over the same directory changes nothing.
    let before = std::fs::metadata(dir.path().join("Shop_api/shop-api-server/src/lib.rs")).unwrap().modified().unwrap();
    assert!(tool(dir.path(), &["--out", "Shop_api", "--spec", "api.yaml"]).status.success());
    let after = std::fs::metadata(dir.path().join("Shop_api/shop-api-server/src/lib.rs")).unwrap().modified().unwrap();
    assert_eq!(before, after);
}

#[test]
fn refuses_with_a_pointer_and_a_failing_status() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.yaml"),
        "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\njsonSchemaDialect: https://example.com/dialect\n",
    )
    .unwrap();
    let output = tool(dir.path(), &["--spec", "bad.yaml", "--out", "bad"]);
    assert_eq!(output.status.code(), Some(2), "a refused document is trouble, not a no");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("bad.yaml") && stderr.contains("/jsonSchemaDialect"), "{stderr}");
    assert!(!dir.path().join("bad").exists(), "a refused document writes nothing");

    let usage = tool(dir.path(), &["--spec", "bad.yaml"]);
    assert_eq!(usage.status.code(), Some(2));
    let said = String::from_utf8_lossy(&usage.stderr);
    assert!(said.contains("--out <DIR>") && said.contains("Usage: openapi-workspace"), "{said}");
}

#[test]
fn repairs_are_warnings_and_strict_refuses_them() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root.join("crates/openapi-workspace/tests/samples/repairs.yaml"), dir.path().join("api.yaml"))
        .unwrap();

    let output = tool(dir.path(), &["--spec", "api.yaml", "--out", "api"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let shelf = "api.yaml#/paths/~1shelves~1{shelf}~1books~1{book}";
    for expected in [
        format!("warning: {shelf}/parameters/1: path parameter isbn is not in the path: dropped"),
        format!(
            "warning: {shelf}/parameters/0/required: path parameter shelf is not marked required; a path cannot go \
             without it: required"
        ),
        format!(
            "warning: {shelf}/get/parameters: the path names {{book}} but no parameter does: read as a required string"
        ),
        format!("warning: {shelf}/get/parameters/0: parameter lang has no schema: read as a string"),
        format!("warning: {shelf}/get/parameters/1/schema/default: the default \"10\" is not an integer: read as 10"),
        format!("warning: {shelf}/get/parameters/2/schema/default: the default \"none\" is not an integer: dropped"),
        format!(
            "warning: {shelf}/get/parameters/3/schema/default: the default \"author\" is not one of the schema's `enum` \
             values: dropped"
        ),
        "warning: api.yaml#/components/schemas/Book/properties/rating/exclusiveMinimum: a number here is OpenAPI \
         3.1's spelling; read as 3.0's `minimum: 0, exclusiveMinimum: true`"
            .to_owned(),
        format!(
            "warning: {shelf}/get/security/0/ghost: security scheme ghost is not in components/securitySchemes: \
             dropped from it"
        ),
        format!(
            "warning: {shelf}/get/security/1/ghost: security scheme ghost is not in components/securitySchemes: the \
             alternative, which asked for nothing else, dropped"
        ),
    ] {
        assert!(stderr.contains(&expected), "{expected}\nnot in:\n{stderr}");
    }
    assert_eq!(stderr.lines().filter(|l| l.starts_with("warning: ")).count(), 10, "{stderr}");

    let strict = tool(dir.path(), &["--spec", "api.yaml", "--out", "strict", "--strict"]);
    assert_eq!(strict.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert!(stderr.contains("refused (--strict): 10 repair(s) or approximation(s) needed"), "{stderr}");
    assert!(stderr.contains("path parameter isbn is not in the path"), "{stderr}");
    assert!(!dir.path().join("strict").exists(), "a refused document writes nothing");
}

#[test]
fn a_document_split_across_files_is_served_but_for_what_cannot_be() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    // DigitalOcean's layout: operations and schemas in files of their own.
    write(
        "spec/api.yaml",
        "openapi: 3.0.3\ninfo: {title: Split, version: '1'}\npaths:\n  /things:\n    get: {$ref: ops/list.yml}\n  /search:\n    get: {$ref: ops/search.yml}\n",
    );
    write(
        "spec/ops/list.yml",
        "operationId: listThings\nresponses:\n  '200':\n    description: The things.\n    content:\n      application/json:\n        schema: {type: array, items: {$ref: ../models/thing.yml}}\n",
    );
    write("spec/models/thing.yml", "type: object\nrequired: [id]\nproperties:\n  id: {type: string}\n");
    // A `pipeDelimited` scalar, which OpenAPI does not define (`a|b` of what?).
    write(
        "spec/ops/search.yml",
        "operationId: searchThings\nparameters:\n  - {name: filter, in: query, style: pipeDelimited, schema: {type: string}}\nresponses:\n  '200': {description: ok}\n",
    );

    let output = tool(dir.path(), &["--spec", "spec/api.yaml", "--out", "split"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "warning: spec/api.yaml#/paths/~1search/get: left out of the workspace: #/paths/~1search/get/parameters/0: \
             parameter filter is PipeDelimited"
        ),
        "{stderr}"
    );
    let client = std::fs::read_to_string(dir.path().join("split/split-client/src/generated.rs")).unwrap();
    assert!(client.contains("pub fn list_things"), "the servable operation is there");
    assert!(!client.contains("search_things"), "the other is left out");
    let types = std::fs::read_to_string(dir.path().join("split/split-types/src/generated.rs")).unwrap();
    assert!(types.contains("pub struct Thing"), "the schema in its own file is one model, named after its file");

    let strict = tool(dir.path(), &["--spec", "spec/api.yaml", "--out", "strict", "--strict"]);
    assert_eq!(strict.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&strict.stderr).contains("left out of the workspace"));
}

/// `check`, as a team's CI runs it: passes on what was generated, and fails with a unified diff
/// naming each difference — a file edited by hand, a file deleted, a generated file the
/// document no longer asks for, the document changed — without writing anything; a hand-written
/// file beside the crates and cargo's own files are not its business.
#[test]
fn check_fails_with_a_diff_whenever_the_workspace_is_not_what_the_document_generates() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let document = std::fs::read_to_string(root.join("crates/openapi-workspace/tests/samples/security.yaml")).unwrap();
    std::fs::write(dir.path().join("api.yaml"), &document).unwrap();
    let generated = tool(dir.path(), &["--spec", "api.yaml", "--out", "shop"]);
    assert!(generated.status.success(), "{}", String::from_utf8_lossy(&generated.stderr));
    let check = || tool(dir.path(), &["check", "--spec", "api.yaml", "--out", "shop"]);
    let passes = |why: &str| {
        let output = check();
        assert!(output.status.success(), "{why}: {}", String::from_utf8_lossy(&output.stdout));
        assert!(output.stdout.is_empty(), "{why}");
    };
    let fails = |why: &str, expected: &[&str]| {
        let output = check();
        let diff = String::from_utf8_lossy(&output.stdout).into_owned();
        assert_eq!(output.status.code(), Some(1), "{why}: {diff}");
        for line in expected {
            assert!(diff.contains(line), "{why}: no {line:?} in\n{diff}");
        }
        assert!(String::from_utf8_lossy(&output.stderr).contains("is not what api.yaml generates"), "{why}");
    };
    passes("as generated");
    std::fs::write(dir.path().join("shop/notes.md"), "ours\n").unwrap();
    std::fs::create_dir_all(dir.path().join("shop/target/debug")).unwrap();
    std::fs::write(dir.path().join("shop/target/debug/x.rs"), "// @generated by someone else\n").unwrap();
    std::fs::write(dir.path().join("shop/Cargo.lock"), "# This file is automatically @generated by Cargo.\n").unwrap();
    passes("with a hand-written file, a target directory and cargo's lock file beside the crates");

    let lib = dir.path().join("shop/shop-server/src/lib.rs");
    let text = std::fs::read_to_string(&lib).unwrap();
    std::fs::write(&lib, text.replace("pub use generated::*;", "pub use generated::*; // edited")).unwrap();
    fails(
        "edited by hand",
        &[
            "--- a/shop-server/src/lib.rs",
            "+++ b/shop-server/src/lib.rs",
            "-pub use generated::*; // edited",
            "+pub use generated::*;",
        ],
    );
    assert!(std::fs::read_to_string(&lib).unwrap().contains("// edited"), "check wrote the file");
    std::fs::write(&lib, &text).unwrap();

    std::fs::remove_file(dir.path().join("shop/shop-types/src/lib.rs")).unwrap();
    fails("a file deleted", &["+++ b/shop-types/src/lib.rs"]);
    assert!(tool(dir.path(), &["--spec", "api.yaml", "--out", "shop"]).status.success());

    std::fs::write(dir.path().join("shop/shop-types/src/old.rs"), "// @generated by openapi-workspace from x.\n")
        .unwrap();
    fails(
        "a generated file no longer written",
        &["--- a/shop-types/src/old.rs", "-// @generated by openapi-workspace from x."],
    );
    std::fs::remove_file(dir.path().join("shop/shop-types/src/old.rs")).unwrap();
    passes("as generated again");

    let changed = document.replacen("title: Security sample", "title: Security sample changed", 1);
    assert_ne!(changed, document);
    std::fs::write(dir.path().join("api.yaml"), changed).unwrap();
    fails("the document changed", &["--- a/README.md", "+# Security sample changed"]);
}

#[test]
fn what_the_models_generator_cannot_type_is_any_value_with_a_warning_and_strict_refuses_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root.join("crates/openapi-workspace/tests/samples/untypable.yaml"), dir.path().join("api.yaml"))
        .unwrap();

    let output = tool(dir.path(), &["--spec", "api.yaml", "--out", "api"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warned: Vec<&str> = stderr.lines().filter_map(|l| l.strip_prefix("warning: api.yaml#")).collect();
    let pointers: Vec<&str> = warned.iter().map(|l| l.split_once(": ").unwrap().0).collect();
    assert_eq!(
        pointers,
        [
            "/components/schemas/Reading/properties/links/format",
            "/components/schemas/Layout",
            "/components/schemas/Reading/properties/calibration",
            "/components/schemas/Reading/properties/raw",
            "/components/schemas/Reading/properties/unit",
            "/components/schemas/Reading/properties/weight",
        ],
        "{stderr}"
    );
    // A format an object cannot have is ignored (the read stage's repair), not the object retyped.
    assert!(warned[0].contains("format \"uri-map\" does not apply to an object: ignored"), "{stderr}");
    assert!(warned[1].contains("its allOf merges 3 unions (of 2, 2, 2 arms)"), "{stderr}");
    assert!(warned[2].contains("multiple implied types for an un-typed enum"), "{stderr}");
    assert!(warned[1..].iter().all(|w| w.contains("typed as serde_json::Value")), "{stderr}");
    assert!(!stderr.contains("panicked"), "typify's panics are caught, and quiet: {stderr}");
    let types = std::fs::read_to_string(dir.path().join("api/api-types/src/generated.rs")).unwrap();
    assert!(types.contains("pub struct Layout(pub ::serde_json::Value);"), "{types}");
    assert!(types.contains("pub weight: ::std::option::Option<::serde_json::Value>,"), "{types}");

    let strict = tool(dir.path(), &["--spec", "api.yaml", "--out", "strict", "--strict"]);
    assert_eq!(strict.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert!(stderr.contains("refused (--strict): 6 repair(s) or approximation(s) needed"), "{stderr}");
    assert!(!dir.path().join("strict").exists(), "a refused document writes nothing");
}

#[test]
fn an_operation_the_client_generator_cannot_take_is_found_and_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let operation = |name: &str, parameters: &str| {
        format!(
            "  /{name}:\n    get:\n      operationId: get_{name}\n{parameters}      responses: {{'204': {{description: ok}}}}\n"
        )
    };
    // An operation progenitor refuses (a websocket without its `101` answer), among operations
    // it takes: found by halving the operations, and only it left out.
    let untypable = "      x-dropshot-websocket: {}\n";
    let mut text = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n".to_owned();
    for name in ["a", "b", "c", "d", "e"] {
        text += &operation(name, if name == "d" { untypable } else { "" });
    }
    std::fs::write(dir.path().join("api.yaml"), text).unwrap();

    let output = tool(dir.path(), &["--spec", "api.yaml", "--out", "api"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("warning: api.yaml#/paths/~1d/get: left out of the workspace: #/paths/~1d/get: "),
        "{stderr}"
    );
    assert_eq!(stderr.matches("left out of the workspace").count(), 1, "{stderr}");
    let client = std::fs::read_to_string(dir.path().join("api/api-client/src/generated.rs")).unwrap();
    for name in ["a", "b", "c", "e"] {
        assert!(client.contains(&format!("pub fn get_{name}(")), "get_{name} is there");
    }
    assert!(!client.contains("pub fn get_d("), "get_d is left out");
}

/// Operations the model cannot take (here, multipart bodies of an array) are all found by one
/// attempt and left out together: the document is read twice, not once per failure.
#[test]
fn operations_the_model_cannot_take_are_left_out_in_one_pass() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n".to_owned();
    for name in ["a", "b", "c"] {
        let body = match name {
            "b" => "",
            _ => {
                "      requestBody:\n        content:\n          multipart/form-data:\n            schema: {type: array, items: {type: string}}\n"
            }
        };
        text += &format!(
            "  /{name}:\n    post:\n      operationId: post_{name}\n{body}      responses: {{'204': {{description: ok}}}}\n"
        );
    }
    std::fs::write(dir.path().join("api.yaml"), text).unwrap();

    let output = Command::new(env!("CARGO_BIN_EXE_openapi-workspace"))
        .args(["--spec", "api.yaml", "--out", "api"])
        .env("OPENAPI_WORKSPACE_TIMINGS", "1")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.matches("left out of the workspace").count(), 2, "{stderr}");
    assert_eq!(stderr.lines().filter(|l| l.starts_with("timing: read ")).count(), 2, "{stderr}");
    let client = std::fs::read_to_string(dir.path().join("api/api-client/src/generated.rs")).unwrap();
    assert!(
        client.contains("pub fn post_b(") && !client.contains("pub fn post_a(") && !client.contains("pub fn post_c(")
    );
}

/// `--message-format json`, as CI reads it: each warning and error one JSON object a line on
/// stdout, with the file, the pointer and the operation it is in; `--quiet` says nothing but
/// errors.
#[test]
fn messages_are_json_lines_with_their_pointer_and_operation_when_asked() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(root.join("crates/openapi-workspace/tests/samples/repairs.yaml"), dir.path().join("api.yaml"))
        .unwrap();
    let output = tool(dir.path(), &["generate", "--spec", "api.yaml", "--out", "api", "--message-format", "json"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(output.stderr.is_empty(), "everything is on stdout: {}", String::from_utf8_lossy(&output.stderr));
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&output.stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    let warnings: Vec<&serde_json::Value> = lines.iter().filter(|line| line["kind"] == "warning").collect();
    assert_eq!(warnings.len(), 10, "{lines:?}");
    let lang = warnings.iter().find(|w| w["message"] == "parameter lang has no schema: read as a string").unwrap();
    assert_eq!(lang["file"], "api.yaml");
    assert_eq!(lang["pointer"], "/paths/~1shelves~1{shelf}~1books~1{book}/get/parameters/0");
    assert_eq!(lang["operation"], "GET /shelves/{shelf}/books/{book}");
    let rating = warnings.iter().find(|w| w["pointer"].as_str().unwrap().contains("rating")).unwrap();
    assert_eq!(rating["operation"], serde_json::Value::Null, "a component is in no operation");
    let last = lines.last().unwrap();
    assert_eq!(last["kind"], "written");
    assert_eq!(last["crates"], serde_json::json!(["api-types", "api-client", "api-server"]));

    let refused = tool(dir.path(), &["--spec", "api.yaml", "--out", "strict", "--strict", "--message-format", "json"]);
    assert_eq!(refused.status.code(), Some(2));
    let error: serde_json::Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert_eq!(error["kind"], "error");
    assert_eq!(error["file"], "api.yaml");
    assert!(error["message"].as_str().unwrap().contains("refused (--strict)"), "{error}");

    let quiet = tool(dir.path(), &["--spec", "api.yaml", "--out", "api", "--quiet"]);
    assert!(quiet.status.success());
    assert!(quiet.stdout.is_empty() && quiet.stderr.is_empty(), "--quiet said something");
    let version = tool(dir.path(), &["--version"]);
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("openapi-workspace {}", openapi_workspace::VERSION)
    );
}

/// A team's workspace is regenerated the way ours is: `cargo xtask codegen [--check]` in it runs
/// the installed tool (here the one this test builds, named by `OPENAPI_WORKSPACE`), and refuses,
/// with the install command, a tool of another version or none.
#[test]
fn the_workspace_regenerates_itself_with_its_own_xtask() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = tempfile::tempdir().unwrap();
    let document = std::fs::read_to_string(root.join("crates/openapi-workspace/tests/samples/security.yaml")).unwrap();
    std::fs::write(dir.path().join("api.yaml"), &document).unwrap();
    assert!(tool(dir.path(), &["--spec", "api.yaml", "--out", "shop", "--quiet"]).status.success());
    let shop = dir.path().join("shop");
    // Offline, with our lock file and a target directory shared between runs: xtask has no
    // dependencies, but cargo resolves the whole workspace.
    std::fs::copy(root.join("Cargo.lock"), shop.join("Cargo.lock")).unwrap();
    let xtask = |tool: &Path, args: &[&str]| {
        Command::new("cargo")
            .arg("xtask")
            .args(args)
            .current_dir(&shop)
            .env("OPENAPI_WORKSPACE", tool)
            .env("CARGO_NET_OFFLINE", "true")
            .env("CARGO_TARGET_DIR", Path::new(env!("CARGO_TARGET_TMPDIR")).join("team-xtask"))
            .output()
            .unwrap()
    };
    let ours = Path::new(env!("CARGO_BIN_EXE_openapi-workspace"));
    let said = |output: &std::process::Output| {
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
    };

    let fresh = xtask(ours, &["codegen", "--check"]);
    assert_eq!(fresh.status.code(), Some(0), "{}", said(&fresh));
    std::fs::write(
        dir.path().join("api.yaml"),
        document.replacen("title: Security sample", "title: Security sample changed", 1),
    )
    .unwrap();
    let stale = xtask(ours, &["codegen", "--check"]);
    assert_eq!(stale.status.code(), Some(1), "{}", said(&stale));
    assert!(said(&stale).contains("+# Security sample changed"), "{}", said(&stale));
    let written = xtask(ours, &["codegen", "--quiet"]);
    assert_eq!(written.status.code(), Some(0), "{}", said(&written));
    assert_eq!(xtask(ours, &["codegen", "--check"]).status.code(), Some(0), "written again, it is fresh");

    let other = dir.path().join("other-version");
    std::fs::write(&other, "#!/bin/sh\necho openapi-workspace 9.9.9\n").unwrap();
    std::fs::set_permissions(&other, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let refused = xtask(&other, &["codegen", "--check"]);
    assert_eq!(refused.status.code(), Some(2), "{}", said(&refused));
    let expected = format!("written by openapi-workspace {}", openapi_workspace::VERSION);
    assert!(said(&refused).contains(&expected) && said(&refused).contains("cargo install"), "{}", said(&refused));
    let missing = xtask(&dir.path().join("nowhere"), &["codegen"]);
    assert_eq!(missing.status.code(), Some(2), "{}", said(&missing));
    assert!(said(&missing).contains("cargo install"), "{}", said(&missing));
}
