//! The standalone workspace's own rules, quickly: names it refuses and the versions its manifests
//! ask for. Each corpus document generated as a workspace of its own and compiled, as its users
//! build it, is `cargo xtask corpus` (those compiles take minutes; `.ci/run` runs it).

use std::path::Path;

#[test]
fn crate_names_are_checked() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples/bounds.yaml")).unwrap();
    for bad in ["", "Upper", "9lives", "under_score", "trailing-"] {
        let error = openapi_workspace::standalone(&text, bad, "bounds.yaml").unwrap_err().to_string();
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
    let text = std::fs::read_to_string(root.join("crates/openapi-workspace/tests/samples/bounds.yaml")).unwrap();
    let files = openapi_workspace::standalone(&text, "sample", "bounds.yaml").unwrap().files;
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

/// A document of three tags and an untagged operation: the methods and the models behind each
/// group's feature, a model two groups share behind either, a webhook's payload (no operation
/// reaches it) behind `unreached-models`, and all of them on by default.
#[test]
fn operations_and_the_models_they_reach_are_behind_their_groups_features() {
    let document = r##"
openapi: 3.1.0
info: {title: Groups, version: "1"}
paths:
  /v1/pets:
    get:
      operationId: listPets
      tags: [pets]
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Pet"}}}}
  /v1/stores/{id}:
    get:
      operationId: getStore
      tags: [Store Front]
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Store"}}}}
  /health:
    get:
      operationId: health
      tags: [health]
      responses: {"204": {description: up}}
  /v1/files:
    post:
      operationId: uploadFile
      tags: [files]
      requestBody:
        required: true
        content:
          multipart/form-data:
            schema:
              type: object
              required: [file]
              properties: {file: {type: string, format: binary}, label: {$ref: "#/components/schemas/Label"}}
      responses: {"204": {description: stored}}
  /v2/owners:
    get:
      operationId: listOwners
      responses:
        "200": {description: ok, content: {application/json: {schema: {$ref: "#/components/schemas/Owner"}}}}
webhooks:
  adopted:
    post:
      requestBody: {content: {application/json: {schema: {$ref: "#/components/schemas/Adopted"}}}}
      responses: {"200": {description: ok}}
components:
  schemas:
    Owner: {type: object, properties: {name: {type: string}}}
    Pet: {type: object, properties: {owner: {$ref: "#/components/schemas/Owner"}, kind: {$ref: "#/components/schemas/Kind"}}}
    Kind: {type: string, enum: [cat, dog]}
    Label: {type: string, maxLength: 10}
    Store: {type: object, properties: {owner: {$ref: "#/components/schemas/Owner"}}}
    Adopted: {type: object, properties: {pet: {$ref: "#/components/schemas/Pet"}}}
    Error: {type: object, properties: {message: {type: string}}}
"##;
    let files = openapi_workspace::standalone(document, "zoo", "zoo.yaml").unwrap().files;
    let file = |path: &str| &files.iter().find(|f| f.path == path).unwrap_or_else(|| panic!("no {path}")).contents;
    // `health` reaches no model: its feature gates its method alone.
    let groups = r#""files", "health", "owners", "pets", "store-front", "unreached-models""#;
    assert!(
        file("zoo-types/Cargo.toml").contains(&format!("default = [{groups}]")),
        "{}",
        file("zoo-types/Cargo.toml")
    );
    let client = file("zoo-client/Cargo.toml");
    assert!(client.contains(&format!("default = [\"tls\", {groups}]")), "{client}");
    assert!(client.contains("zoo-types = { path = \"../zoo-types\", default-features = false }"), "{client}");
    assert!(client.contains("store-front = [\"zoo-types/store-front\"]"), "{client}");
    // Each declaration's gate, without spaces: the attribute right above it (after its docs and
    // derives).
    let gate = |code: &str, declaration: &str| -> String {
        let at = code.find(declaration).unwrap_or_else(|| panic!("no {declaration}"));
        let gate = code[..at].rsplit("#[cfg").next().unwrap().split(']').next().unwrap();
        gate.split_whitespace().collect::<String>().replace(",)", ")")
    };
    let types = file("zoo-types/src/generated.rs");
    assert_eq!(gate(types, "pub struct Store {"), r#"(feature="store-front")"#);
    assert_eq!(gate(types, "pub enum Kind {"), r#"(any(feature="pets",feature="unreached-models"))"#);
    assert_eq!(gate(types, "pub struct Adopted {"), r#"(feature="unreached-models")"#);
    // A model named `Error` is not what `std::fmt::Error` names: the conversion error's impls,
    // which every group's client needs, are not that model's and stay ungated.
    let error_module = &types[types.find("pub mod error {").expect("the error module")..];
    let error_module = &error_module[..error_module.find("\n}\n").expect("its end")];
    assert!(!error_module.contains("#[cfg"), "{error_module}");
    // Reached by more than three groups: gated by the feature of that set of groups, which each
    // of them turns on (and no other group).
    assert_eq!(gate(types, "pub struct Owner {"), r#"(feature="_models-1")"#);
    let manifest = file("zoo-types/Cargo.toml");
    for group in ["owners", "pets", "store-front", "unreached-models"] {
        assert!(manifest.contains(&format!("\n{group} = [\"_models-1\"]\n")), "{manifest}");
    }
    for group in ["files", "health"] {
        assert!(manifest.contains(&format!("\n{group} = []\n")), "{manifest}");
    }
    assert!(manifest.contains("\n_models-1 = []\n"), "{manifest}");
    let client = file("zoo-client/src/generated.rs");
    assert_eq!(gate(client, "pub fn list_owners("), r#"(feature="owners")"#);
    assert_eq!(gate(client, "pub fn health("), r#"(feature="health")"#);
    // The multipart body's parts struct names no builder, but goes with one: its group, and so
    // is the model among its fields (which the body's own model, unnamed by the client, reaches).
    assert_eq!(gate(client, "pub struct UploadFileParts {"), r#"(feature="files")"#);
    assert_eq!(gate(types, "pub struct Label("), r#"(any(feature="files",feature="unreached-models"))"#);
    assert_eq!(gate(client, "pub struct GetStore<"), r#"(feature="store-front")"#);
}
