//! Generates every sample of `../samples` into `OUT_DIR`, exactly as the snapshot test does;
//! `src/lib.rs` includes the result, so a snapshot that would not compile fails the build.

use std::path::Path;

fn main() {
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../samples");
    println!("cargo::rerun-if-changed={}", samples.display());
    let out = Path::new(&std::env::var("OUT_DIR").unwrap()).to_path_buf();
    for entry in std::fs::read_dir(&samples).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        let config = openapi_workspace::Config::sibling_modules(&format!("tests/samples/{name}.yaml"));
        let generated = openapi_workspace::generate(&text, &config).unwrap_or_else(|e| panic!("{name}: {e}"));
        let dir = out.join(&name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("types.rs"), generated.types).unwrap();
        std::fs::write(dir.join("client.rs"), generated.client).unwrap();
        std::fs::write(dir.join("server.rs"), generated.server).unwrap();
        std::fs::write(dir.join("schemas.json"), generated.server_schemas).unwrap();
        // The mock engine's plan (`openapi-workspace mock`'s), served beside the generated mock.
        let (plan, _) = openapi_workspace::mock_plan(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        std::fs::write(dir.join("mock.json"), serde_json::to_string(&plan).unwrap()).unwrap();
        // The samples a standalone workspace's README shows, as `tests/samples.rs` runs them
        // (the test file's inner doc comment made an outer comment: it is included into a module).
        let spec = openapi_workspace::Spec::parse(&text).unwrap();
        let variables = name.to_ascii_uppercase();
        let flavour = openapi_workspace::Flavour {
            client_crate: format!("openapi_workspace_output::{name}::client"),
            types: format!("openapi_workspace_output::{name}::types"),
            prelude: None,
            connect: None,
            cli: None,
            base_url_variable: format!("{variables}_BASE_URL"),
            token_variable: format!("{variables}_TOKEN"),
            webhooks: None,
        };
        let samples = openapi_workspace::samples(&spec, &generated.builders, None, &flavour)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let test = openapi_workspace::samples_test_file(&samples, &format!("tests/samples/{name}.yaml"), None);
        std::fs::write(dir.join("samples.rs"), test.replace("\n//! ", "\n// ")).unwrap();
    }
}
