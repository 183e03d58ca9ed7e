//! Snapshot tests of the generator (insta): the full output for small sample documents that
//! each exercise a hard case, and the implementer-facing surface for the real document. The
//! sample outputs also compile: `tests/output` builds them (see its build script).
//!
//! Review changes with `cargo insta review` (or `INSTA_UPDATE=always cargo test` then `git diff`).

use openapi_workspace::{Config, cli, generate, markdown_reference};

const SAMPLES: &[&str] = &[
    "bounds",
    "discriminated",
    "errors",
    "events",
    "forms",
    "generality",
    "long_tail",
    "multipart",
    "nullable_and_enums",
    "openapi_3_1",
    "openapi_3_2",
    "pagination",
    "parameter_styles",
    "parameters_and_responses",
    "pet_store",
    "public_shapes",
    "query_arrays",
    "repairs",
    "security",
    "shop",
    "untypable",
    "webhooks",
];

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
        let spec = openapi_workspace::Spec::parse(&text).unwrap();
        let markdown = markdown_reference(&spec, &format!("tests/samples/{sample}.yaml"), &[], None).unwrap();
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
    let refused = |paths: &str| {
        let spec = format!(
            "openapi: 3.0.3\ninfo: {{title: Bad, version: '1'}}\ncomponents:\n  securitySchemes:\n    digest: {{type: http, scheme: digest}}\npaths:\n{paths}"
        );
        generate(&spec, &Config::sibling_modules("bad.yaml")).unwrap_err().to_string()
    };
    let cases = [
        (
            "  /x:\n    get:\n      operationId: getX\n      security: [{digest: []}]\n      responses:\n        '200': {description: ok}\n",
            "getX (GET /x) at #/paths/~1x/get asks for it: #/components/securitySchemes/digest: the http scheme \"digest\" is not supported",
        ),
        (
            "  /x:\n    get:\n      operationId: getX\n      parameters:\n        - {name: ids, in: query, explode: false, schema: {type: array, items: {type: object}}}\n      responses:\n        '200': {description: ok}\n",
            "#/paths/~1x/get/parameters/0: parameter ids: in this place and style only a scalar, an array of scalars or an object of scalar properties can be written",
        ),
        (
            "  /x:\n    post:\n      operationId: postX\n      requestBody:\n        content:\n          image/*:\n            schema: {type: string, format: binary}\n      responses:\n        '200': {description: ok}\n",
            "#/paths/~1x/post/requestBody: offered as [\"image/*\"]; the client sends a body in a media type it can name",
        ),
    ];
    for (paths, expected) in cases {
        let error = refused(paths);
        assert!(error.contains(expected), "expected {expected:?} in: {error}");
    }

    // Swagger 2.0 and a 3.1 document in another JSON Schema dialect: refused with a pointer.
    let swagger = "swagger: '2.0'\ninfo: {title: Old, version: '1'}\npaths: {}\n";
    let error = generate(swagger, &Config::sibling_modules("old.yaml")).unwrap_err().to_string();
    assert!(error.contains("/openapi: the document must be OpenAPI 3.0.x, 3.1.x or 3.2.x"), "{error}");
    let dialect = "openapi: 3.1.0\njsonSchemaDialect: https://json-schema.org/draft-07/schema\ninfo: {title: New, version: '1'}\npaths: {}\n";
    let error = generate(dialect, &Config::sibling_modules("new.yaml")).unwrap_err().to_string();
    assert!(error.starts_with("/jsonSchemaDialect: "), "{error}");
}

/// The public documents of `tests/corpus` (progenitor's samples; utoipa's, FastAPI's and
/// Adyen's 3.1 documents): what an implementer of each meets, the server trait.
/// `cargo xtask corpus` compiles all three crates of each.
#[test]
fn corpus_server_traits() {
    for (name, file) in [
        ("keeper", "keeper.json"),
        ("buildomat", "buildomat.json"),
        ("propolis-server", "propolis-server.json"),
        ("nexus", "nexus.json"),
        ("crates-io", "openapi-3.1/crates-io.json"),
        ("prefect", "openapi-3.1/prefect.json"),
        ("adyen-transfers", "openapi-3.1/adyen-transfers.json"),
    ] {
        let path = format!("{}/tests/corpus/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let config = Config { types_path: format!("{}_types", name.replace('-', "_")), ..Config::workspace(&path) };
        let out = generate(&text, &config).unwrap_or_else(|e| panic!("{name}: {e}"));
        let server: syn::File = syn::parse_file(&out.server).unwrap();
        let mut surface = server.clone();
        surface.items.retain(|item| matches!(item, syn::Item::Trait(t) if t.ident == "Api"));
        insta::assert_snapshot!(format!("corpus__{name}__server_trait"), prettyplease::unparse(&surface));
    }
}

/// progenitor's clap CLI as the generator writes it (ours, `crates/payments-cli/src/generated.rs`,
/// is committed and held by `cargo xtask codegen --check`; `tests/cli.rs` drives it), and as it
/// completes progenitor's: bodies of bytes sent from a file and answered to stdout (`generality`),
/// arrays read as JSON (`query_arrays`).
#[test]
fn cli_output() {
    for sample in ["parameters_and_responses", "generality", "query_arrays"] {
        let path = format!("{}/tests/samples/{sample}.yaml", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap();
        let config = Config::sibling_modules(&format!("tests/samples/{sample}.yaml"));
        let generated = generate(&text, &config).unwrap();
        let out = cli(&text, "sample_client", &generated.builders, &config).unwrap();
        insta::assert_snapshot!(format!("{sample}__cli"), out);
    }
}
