//! What the APIs.guru collection (`cargo xtask corpus --directory`) found in real documents,
//! each served: repaired with a note, or typed looser with one, never the document refused.

use openapi_workspace::{Config, Generated, generate};
use serde_json::{Value, json};

fn generated(document: &Value) -> Generated {
    match generate(&document.to_string(), &Config::sibling_modules("api.json")) {
        Ok(generated) => generated,
        Err(error) => panic!("refused: {}", error.chain()),
    }
}

/// A 3.0 document with `paths` and `components`, answering each operation with `schema`.
fn document(paths: Value, components: Value) -> Value {
    json!({"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": paths, "components": components})
}

fn answering(schema: Value) -> Value {
    json!({"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}})
}

fn note<'a>(generated: &'a Generated, pointer: &str) -> &'a str {
    match generated.notes.iter().find(|n| n.pointer == pointer) {
        Some(note) => &note.message,
        None => panic!("no note at {pointer}: {:?}", generated.notes),
    }
}

/// `allOf` over `anyOf` of `allOf`…, `depth` times: each level's union is merged with the
/// level around it, which typify does in time and memory exponential in the depth.
fn nested(depth: usize) -> Value {
    let own = |k: usize| json!({"type": "object", "properties": {format!("b{k}"): {"type": "string"}}});
    (1..=depth).fold(own(0), |inner, k| {
        json!({"allOf": [
            {"anyOf": [inner, {"type": "object", "properties": {format!("a{k}"): {"type": "integer"}}}]},
            own(k),
        ]})
    })
}

#[test]
fn a_deep_nesting_of_merged_unions_is_any_value_and_a_shallow_one_is_typed() {
    for depth in [8, 16] {
        let generated = generated(&document(
            json!({"/x": {"get": answering(json!({"$ref": "#/components/schemas/Nested"}))}}),
            json!({"schemas": {"Nested": nested(depth)}}),
        ));
        let message = note(&generated, "/components/schemas/Nested");
        assert!(
            message.starts_with(&format!("typed as serde_json::Value: its allOf merges {depth} unions")),
            "{message}"
        );
        assert!(generated.types.contains("pub struct Nested(pub ::serde_json::Value);"), "depth {depth}");
    }
    let generated = generated(&document(
        json!({"/x": {"get": answering(json!({"$ref": "#/components/schemas/Nested"}))}}),
        json!({"schemas": {"Nested": nested(2)}}),
    ));
    assert!(generated.notes.is_empty(), "{:?}", generated.notes);
    assert!(!generated.types.contains("pub struct Nested(pub ::serde_json::Value);"));
}

#[test]
fn names_that_begin_with_no_letter_are_given_one() {
    let generated = generated(&document(
        json!({
            "/a": {"get": answering(json!({"$ref": "#/components/schemas/2FAinfo"}))},
            "/b": {"get": {"responses": {"400": {"$ref": "#/components/responses/400Error"}, "200": {"description": "ok"}}}},
            "/c": {"get": answering(json!({"$ref": "#/components/schemas/_401"}))},
        }),
        json!({
            "schemas": {
                "2FAinfo": {"type": "object", "properties": {"code": {"type": "string"}}},
                "_401": {"type": "object", "properties": {"why": {"type": "string"}}},
            },
            "responses": {"400Error": {"description": "bad", "content": {"application/json": {"schema": {
                "type": "object", "properties": {"message": {"type": "string"}}
            }}}}},
        }),
    ));
    assert!(note(&generated, "/components/schemas/2FAinfo").contains("named Schema2fAinfo"));
    assert!(note(&generated, "/components/schemas/_401").contains("named Schema401"));
    for model in ["pub struct Schema2fAinfo", "pub struct Schema401", "pub struct Schema400error"] {
        assert!(generated.types.contains(model), "{model}: {}", generated.types);
    }
}

#[test]
fn a_ref_to_another_operations_response_reads_as_a_copy_of_it() {
    let unauthorised = json!({"description": "no", "content": {"application/json": {"schema": {
        "type": "object", "properties": {"error": {"type": "string"}}
    }}}});
    let generated = generated(&document(
        json!({
            "/v1/{id}": {
                "get": {"parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                        "responses": {"200": {"description": "ok"}, "401": unauthorised}},
                "delete": {"parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
                           "responses": {"204": {"description": "gone"},
                                         "401": {"$ref": "#/paths/~1v1~1%7Bid%7D/get/responses/401"}}},
            },
        }),
        json!({}),
    ));
    let message = note(&generated, "/paths/~1v1~1{id}/delete/responses/401");
    assert!(message.contains("not a component: read as a copy of it"), "{message}");
}

#[test]
fn formats_that_cannot_apply_are_ignored_and_an_integer_format_makes_an_integer() {
    let generated = generated(&document(
        json!({"/x": {"get": answering(json!({"$ref": "#/components/schemas/Merge"}))}}),
        json!({"schemas": {"Merge": {"type": "object", "properties": {
            "urls": {"type": "array", "format": "list of urls to pdfs", "items": {"type": "string"}},
            "map": {"type": "object", "format": "uri-map"},
            "limit": {"type": "number", "format": "int32", "default": 25},
            "ratio": {"type": "number", "format": "int32", "default": 2.5},
            // loket.nl: no type, the format says which (typify refused them).
            "key": {"format": "int32", "example": 2, "readOnly": false},
            "threshold": {"format": "double", "maximum": 99999999.99, "pattern": "^(\\d{1,8})$"},
        }}}}),
    ));
    assert!(
        note(&generated, "/components/schemas/Merge/properties/urls/format").contains("does not apply to an array")
    );
    assert!(
        note(&generated, "/components/schemas/Merge/properties/map/format").contains("does not apply to an object")
    );
    assert!(note(&generated, "/components/schemas/Merge/properties/limit/format").contains("read as an integer"));
    assert!(note(&generated, "/components/schemas/Merge/properties/ratio/format").contains("the format is ignored"));
    assert!(generated.types.contains("pub limit: i32"), "{}", generated.types);
    let key = note(&generated, "/components/schemas/Merge/properties/key");
    assert!(key.ends_with("read as an integer"), "{key}");
    let threshold = note(&generated, "/components/schemas/Merge/properties/threshold");
    assert!(threshold.ends_with("read as a number"), "{threshold}");
    assert!(generated.types.contains("pub key: ::std::option::Option<i32>"), "{}", generated.types);
    assert!(generated.types.contains("pub threshold: ::std::option::Option<f64>"), "{}", generated.types);
    assert!(!generated.notes.iter().any(|n| n.message.contains("serde_json::Value")), "{:?}", generated.notes);
}

#[test]
fn a_default_with_a_property_its_schema_does_not_name_is_dropped() {
    let generated = generated(&document(
        json!({"/x": {"get": answering(json!({"$ref": "#/components/schemas/Feed"}))}}),
        json!({"schemas": {"Feed": {"type": "object", "properties": {"phase": {
            "type": "object",
            "required": ["value"],
            "properties": {"label": {"type": "string"}, "value": {"type": "string", "enum": ["single", "three"]}},
            "default": {"id": 1, "label": "Single", "value": "single"},
        }}}}}),
    ));
    let message = note(&generated, "/components/schemas/Feed/properties/phase/default");
    assert!(message.contains(r#"has ["id"], which its schema does not: dropped"#), "{message}");
    assert_eq!(generated.notes.len(), 1, "{:?}", generated.notes);
}

#[test]
fn a_carriage_return_in_a_description_is_a_line_break() {
    let generated = generated(&document(
        json!({"/x": {"get": {"description": "One.\rTwo.", "responses": {"204": {"description": "a\r\nb"}}}}}),
        json!({}),
    ));
    assert!(!generated.client.contains('\r') && !generated.server.contains('\r'));
}

#[test]
fn webhooks_extensions_and_path_item_references_are_read() {
    let hook = json!({"post": {"requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}},
                               "responses": {"200": {"description": "ok"}}}});
    let served = generated(&json!({
        "openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {},
        "x-webhooks": {"made": hook, "x-sdk-exclude": true},
    }));
    assert!(served.server.contains("made"), "the webhook is served");

    let served = generated(&json!({
        "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "webhooks": {"made": {"$ref": "#/components/pathItems/Made"}},
        "components": {"pathItems": {"Made": hook}},
    }));
    assert!(served.server.contains("made"), "the webhook's path item is read through its reference");
}

/// `samples/long_tail.yaml` (compiled with no warning in `tests/output`): what it needed repaired,
/// each with a note, and what it is generated as.
#[test]
fn shapes_that_once_failed_to_compile_are_repaired_with_notes() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/samples/long_tail.yaml")).unwrap();
    let generated = match generate(&text, &Config::sibling_modules("long_tail.yaml")) {
        Ok(generated) => generated,
        Err(error) => panic!("refused: {}", error.chain()),
    };
    assert!(note(&generated, "/components/schemas/String").contains("would be a model named String"));
    assert!(note(&generated, "/components/schemas/String").ends_with("named StringValue"));
    assert!(note(&generated, "/components/schemas/string").ends_with("named StringValue2"));
    assert!(
        note(&generated, "/components/schemas/Board/properties/prefs_background").contains("left out (it is optional)")
    );
    // A path parameter's name is not on the wire: it is renamed apart from a query parameter's.
    let renamed = note(&generated, "/paths/~1instruments~1{instrumentName}");
    assert!(renamed.contains("path parameter instrumentName is `instrument_name` in Rust"), "{renamed}");
    assert!(renamed.ends_with("named instrumentName_path (a path parameter's name is not sent)"), "{renamed}");
    assert!(note(&generated, "/paths/~1instruments~1{instrumentName}/delete/parameters/2").contains(
        "query parameter instrument_name is `instrument_name` in Rust, as query parameter instrument.name is"
    ));
    assert!(generated.client.contains("pub fn instrument_name_path<"), "{}", generated.client);
    // A credential is not a parameter: the path's `{token}` keeps its name.
    assert!(!generated.notes.iter().any(|n| n.message.contains("named token_path")), "{:?}", generated.notes);
    let credential = note(&generated, "/paths/~1tokens~1{token}/get/parameters/2");
    assert!(
        credential.contains("query parameter token is the credential of security scheme api_token"),
        "{credential}"
    );
    let search = "/paths/~1search~1{query}/get";
    assert!(note(&generated, &format!("{search}/parameters/1/content")).contains("read as a string"));
    assert!(note(&generated, &format!("{search}/parameters/2/schema/maximum")).contains("no 64-bit integer: dropped"));
    let form = "/paths/~1engines~1{serial}~1codes/put/requestBody/content/application~1x-www-form-urlencoded";
    assert!(note(&generated, form).contains("is not served: the body is read as [\"application/json\"]"));
    let parts = "/paths/~1images/post/requestBody/content/multipart~1form-data/schema";
    assert_eq!(note(&generated, parts), "properties without a type: read as an object's");
    let file = "/paths/~1documents/post/requestBody/content/multipart~1form-data/schema";
    assert!(note(&generated, file).contains("read as one part named \"file\""));
    assert!(generated.client.contains("pub fn upload_document("), "{}", generated.client);
    assert_eq!(
        note(&generated, "/components/schemas/Scope/enum"),
        "the enum's values are not of type integer: read as the integer values they say"
    );
    assert_eq!(
        note(&generated, "/components/schemas/Tsp/enum"),
        "the enum's values are not of type string: read as the string values they say"
    );
    assert_eq!(
        note(&generated, "/components/schemas/Regions/enum"),
        "an array's enum of single values: read as its items' enum"
    );
    assert_eq!(generated.notes.len(), 20, "{:?}", generated.notes);
    // The path parameter `query` is an argument of its own beside the query's struct.
    assert!(generated.server.contains("query_path: ::std::string::String"), "{}", generated.server);
    // The header component's enum is a model of its own.
    assert!(generated.types.contains("pub enum ApproachHeader"));

    // The credentials are the client's (the operation asks for both schemes), not arguments.
    assert!(!generated.client.contains("pub fn key<"), "{}", generated.client);
    // The body's variants, one a media type.
    for variant in ["ApplicationAnyJson(", "ApplicationJson(", "TextJson("] {
        assert!(generated.server.contains(variant), "no {variant}");
    }
    // A query default is its struct's: two operations' defaults cannot meet.
    assert!(generated.server.contains("\"GetSearchMembersQuery::limit_default\""));
    assert!(generated.server.contains("\"GetSearchQuery::members_limit_default\""));
    assert!(generated.server.contains("fn members_limit_default() -> f64 {\n        1.0"), "a float literal");
    // Two tags of one arm: one match arm.
    assert_eq!(generated.types.matches("Some(\"any\" | \"custom\")").count(), 1);
    // No match arm after a catch-all.
    let catch_all = "_ => Err(Error::ErrorResponse(ResponseValue::empty(response))),";
    let after = generated.client.split_once(catch_all).expect("the default's arm").1;
    assert!(after.trim_start().starts_with('}'), "an arm after the catch-all: {}", &after[..80]);
}

/// Two operation ids that are one Rust method (ndhm.gov.in copies operations whole): the second
/// is numbered, with a note.
#[test]
fn an_operation_id_that_is_another_s_method_is_numbered() {
    let ok = json!({"responses": {"200": {"description": "ok"}}});
    let mut x = ok.clone();
    x["operationId"] = json!("a-b");
    let mut y = ok;
    y["operationId"] = json!("a_b");
    let generated = generated(&document(json!({"/x": {"get": x}, "/y": {"get": y}}), json!({})));
    assert_eq!(
        note(&generated, "/paths/~1y/get/operationId"),
        "operationId \"a_b\" is the Rust method `a_b`, as is the operation at #/paths/~1x/get: named \"a_b_2\""
    );
    assert!(generated.client.contains("pub fn a_b(") && generated.client.contains("pub fn a_b_2("));
}
