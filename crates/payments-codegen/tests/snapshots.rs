//! Snapshot tests of the generator (insta): the full output for small sample documents that
//! each exercise a hard case, and the implementer-facing surface for the real document. The
//! sample outputs also compile: `tests/output` builds them (see its build script).
//!
//! Review changes with `cargo insta review` (or `INSTA_UPDATE=always cargo test` then `git diff`).

use payments_codegen::{Config, generate, markdown_reference};

const SAMPLES: &[&str] = &["bounds", "nullable_and_enums", "parameters_and_responses", "webhooks"];

#[test]
fn sample_outputs() {
    for sample in SAMPLES {
        let path = format!("{}/tests/samples/{sample}.yaml", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let out = generate(&text, &Config::sibling_modules(&format!("tests/samples/{sample}.yaml")))
            .unwrap_or_else(|e| panic!("{sample}: {e}"));
        insta::assert_snapshot!(format!("{sample}__types"), out.types);
        insta::assert_snapshot!(format!("{sample}__client"), out.client);
        insta::assert_snapshot!(format!("{sample}__server"), out.server);
        insta::assert_snapshot!(format!("{sample}__server_schemas"), out.server_schemas);
        let markdown = markdown_reference(&text, &format!("tests/samples/{sample}.yaml")).unwrap();
        insta::assert_snapshot!(format!("{sample}__markdown"), markdown);
    }
}

/// The real document's generated files are committed and checked by `cargo xtask codegen
/// --check`; here the part an implementer and a caller meet is pinned: the server trait, the
/// operations' response enums and the models' names.
#[test]
fn payments_surface() {
    let path = format!("{}/../../openapi/payments.yaml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let out = generate(&text, &Config::workspace("openapi/payments.yaml")).unwrap();
    let server: syn::File = syn::parse_file(&out.server).unwrap();
    let mut surface = server.clone();
    surface.items.retain(|item| match item {
        syn::Item::Trait(t) => t.ident == "Api",
        syn::Item::Enum(e) => e.ident.to_string().ends_with("Response"),
        _ => false,
    });
    insta::assert_snapshot!("payments__server_trait", prettyplease::unparse(&surface));

    let types: syn::File = syn::parse_file(&out.types).unwrap();
    let mut names: Vec<String> = types
        .items
        .iter()
        .filter_map(|item| match item {
            syn::Item::Struct(s) => Some(format!("struct {}", s.ident)),
            syn::Item::Enum(e) => Some(format!("enum {}", e.ident)),
            _ => None,
        })
        .collect();
    names.sort();
    insta::assert_snapshot!("payments__models", names.join("\n"));
}

#[test]
fn generation_is_deterministic() {
    let path = format!("{}/../../openapi/payments.yaml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    let config = Config::sibling_modules("openapi/payments.yaml");
    assert_eq!(generate(&text, &config).unwrap(), generate(&text, &config).unwrap());
}

#[test]
fn unsupported_shapes_are_refused_with_a_reason() {
    let spec = r#"
openapi: 3.0.3
info: {title: Bad, version: '1'}
paths:
  /x:
    post:
      operationId: makeX
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {a: {type: string}}}
      responses:
        '201': {description: ok}
"#;
    let error = generate(spec, &Config::sibling_modules("bad.yaml")).unwrap_err().to_string();
    assert!(error.contains("makeX (POST /x) at #/paths/~1x/post: the request body schema must be a $ref"), "{error}");
    let ranges = "openapi: 3.0.3\ninfo: {title: Bad, version: '1'}\npaths:\n  /x:\n    post:\n      operationId: makeX\n      responses:\n        '201': {description: ok}\n        4XX: {description: no}\n";
    let error = generate(ranges, &Config::sibling_modules("bad.yaml")).unwrap_err().to_string();
    assert!(error.contains("makeX at #/paths/~1x/post/responses/4XX: status ranges"), "{error}");

    let v31 = "openapi: 3.1.0\ninfo: {title: New, version: '1'}\npaths: {}\n";
    let error = generate(v31, &Config::sibling_modules("new.yaml")).unwrap_err().to_string();
    assert!(error.contains("must be OpenAPI 3.0.x"), "{error}");
}
