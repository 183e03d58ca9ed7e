//! OpenAPI 3.1 input: our own 3.1 rendition (`docs/openapi-3.1.json`, generated from the 3.0.3
//! source) generates exactly what the source does — the types, the client, the server and its
//! validation schemas — since both take the one road after reading.

use payments_codegen::{Config, generate};

#[test]
fn our_3_1_rendition_generates_what_our_3_0_source_does() {
    let source = include_str!("../../../openapi/payments.yaml");
    let rendition = include_str!("../../../docs/openapi-3.1.json");
    let config = Config::workspace("openapi/payments.yaml");
    let (from_30, from_31) = (generate(source, &config).unwrap(), generate(rendition, &config).unwrap());
    for (what, ours, theirs) in [
        ("types", &from_30.types, &from_31.types),
        ("client", &from_30.client, &from_31.client),
        ("server", &from_30.server, &from_31.server),
        ("server schemas", &from_30.server_schemas, &from_31.server_schemas),
    ] {
        if ours != theirs {
            let diff = similar::TextDiff::from_lines(ours.as_str(), theirs.as_str());
            let shown: String = diff.unified_diff().context_radius(2).to_string().chars().take(6000).collect();
            panic!("the {what} differ between the 3.0 source and its 3.1 rendition:\n{shown}");
        }
    }
}
