//! OpenAPI 3.1 input: our own 3.1 rendition (`docs/openapi-3.1.json`, generated from the 3.0.3
//! source) generates exactly what the source does — the types, the client, the server and its
//! validation schemas — since both take the one road after reading.

use openapi_workspace::{Config, generate};

#[test]
fn our_3_1_rendition_generates_what_our_3_0_source_does() {
    let source = include_str!("../../../openapi/payments.yaml");
    let rendition = without_samples(include_str!("../../../docs/openapi-3.1.json"));
    let config = Config::workspace("openapi/payments.yaml");
    let (from_30, from_31) = (generate(source, &config).unwrap(), generate(&rendition, &config).unwrap());
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

/// The rendition without what it adds for its readers: each operation's samples, as
/// `x-codeSamples` and after its description, and Getting started after the document's
/// (descriptions the client's doc comments would carry).
fn without_samples(rendition: &str) -> String {
    let mut document: serde_json::Value = serde_json::from_str(rendition).unwrap();
    let mut taken = 0;
    for section in ["paths", "webhooks"] {
        for item in document[section].as_object_mut().unwrap().values_mut() {
            for operation in item.as_object_mut().unwrap().values_mut().filter_map(|o| o.as_object_mut()) {
                if operation.remove("x-codeSamples").is_none() {
                    continue;
                }
                let description = operation["description"].as_str().unwrap().to_owned();
                match description.rsplit_once("\n\n**Rust**\n") {
                    Some((own, _)) => operation.insert("description".into(), own.into()),
                    None => operation.remove("description"),
                };
                taken += 1;
            }
        }
    }
    assert!(taken > 0, "the rendition shows no samples");
    let description = document["info"]["description"].as_str().unwrap().to_owned();
    let start = description.find("## Getting started\n").expect("Getting started in the description");
    let end = description[start..].find("\n## ").map_or(description.len(), |at| start + at + 1);
    let own = format!("{}{}", &description[..start], &description[end..]);
    document["info"]["description"] = own.into();
    document.to_string()
}

/// A 3.2 document using what 3.2 adds that maps (a `$self`, tags with parents and kinds, a named
/// server, a shared media type, a response without a description and with a summary, the device
/// flow) generates what the same document written as 3.1 does.
#[test]
fn a_3_2_document_generates_what_its_3_1_twin_does() {
    let v32 = r##"
openapi: 3.2.0
$self: https://example.com/api/openapi.yaml
info: {title: Shelf, version: '1'}
servers: [{url: 'https://shelf.example.com', name: production}]
tags: [{name: books, summary: Books, kind: nav}, {name: loans, parent: books}]
paths:
  /books/{id}:
    get:
      operationId: getBook
      tags: [books]
      security: [{oauth: []}]
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        '200':
          summary: The book
          content:
            application/json: {$ref: '#/components/mediaTypes/Book'}
        '404': {summary: No such book}
components:
  mediaTypes:
    Book: {schema: {$ref: '#/components/schemas/Book'}}
  securitySchemes:
    oauth:
      type: oauth2
      oauth2MetadataUrl: https://shelf.example.com/.well-known/oauth-authorization-server
      flows:
        deviceAuthorization: {deviceAuthorizationUrl: 'https://shelf.example.com/device', tokenUrl: 'https://shelf.example.com/token', scopes: {}}
        clientCredentials: {tokenUrl: 'https://shelf.example.com/token', scopes: {}}
  schemas:
    Book:
      type: object
      required: [title]
      properties: {title: {type: string}, year: {type: [integer, 'null']}}
"##;
    let v31 = r##"
openapi: 3.1.0
info: {title: Shelf, version: '1'}
servers: [{url: 'https://shelf.example.com'}]
tags: [{name: books}, {name: loans}]
paths:
  /books/{id}:
    get:
      operationId: getBook
      tags: [books]
      security: [{oauth: []}]
      parameters: [{name: id, in: path, required: true, schema: {type: string}}]
      responses:
        '200':
          description: ''
          content:
            application/json: {schema: {$ref: '#/components/schemas/Book'}}
        '404': {description: ''}
components:
  securitySchemes:
    oauth:
      type: oauth2
      flows:
        clientCredentials: {tokenUrl: 'https://shelf.example.com/token', scopes: {}}
  schemas:
    Book:
      type: object
      required: [title]
      properties: {title: {type: string}, year: {type: [integer, 'null']}}
"##;
    let config = Config::sibling_modules("shelf.yaml");
    let (from_32, from_31) = (generate(v32, &config).unwrap(), generate(v31, &config).unwrap());
    assert_eq!(from_32, from_31);
}

/// What 3.2 adds that the generator cannot serve is refused with its pointer.
#[test]
fn what_3_2_adds_and_nothing_serves_is_refused_with_its_pointer() {
    let document =
        |path_item: &str| format!("openapi: 3.2.0\ninfo: {{title: T, version: '1'}}\npaths:\n  /x:\n{path_item}");
    let ok = "responses: {'200': {description: ok}}";
    for (path_item, expected) in [
        (
            format!("    additionalOperations:\n      POST:\n        operationId: purge\n        {ok}\n"),
            "/paths/~1x/additionalOperations/POST: \"POST\" is not an additional method",
        ),
        (
            format!("    additionalOperations:\n      'GET /':\n        operationId: purge\n        {ok}\n"),
            "/paths/~1x/additionalOperations/GET ~1: \"GET /\" is not an additional method",
        ),
        // What is refused in an operation of another method points at it where the document has it.
        (
            format!("    query:\n      operationId: search\n      requestBody: {{$ref: '#/components/requestBodies/Gone'}}\n      {ok}\n"),
            "/paths/~1x/query",
        ),
        (
            format!("    additionalOperations:\n      PURGE:\n        operationId: purge\n        parameters: [{{name: q, in: query, schema: {{$ref: '#/components/schemas/Gone'}}}}]\n        {ok}\n"),
            "/paths/~1x/additionalOperations/PURGE",
        ),
        (
            format!(
                "    get:\n      operationId: find\n      parameters: [{{name: q, in: querystring, content: {{application/json: {{schema: {{type: object}}}}}}}}]\n      {ok}\n"
            ),
            "/paths/~1x/get/parameters/0/content/application~1json: a `querystring` parameter of application/json",
        ),
        (
            "    get:\n      operationId: stream\n      responses:\n        '200':\n          description: parts\n          content:\n            multipart/mixed: {itemSchema: {type: object}}\n".to_owned(),
            "/paths/~1x/get/responses/200/content/multipart~1mixed/itemSchema: OpenAPI 3.2's itemSchema is served on text/event-stream",
        ),
        (
            format!("    post:\n      operationId: upload\n      requestBody:\n        content:\n          application/x-ndjson: {{itemSchema: {{type: object}}}}\n      {ok}\n"),
            "/paths/~1x/post/requestBody/content/application~1x-ndjson/itemSchema: a request body of streamed items",
        ),
    ] {
        let error = generate(&document(&path_item), &Config::sibling_modules("t.yaml")).unwrap_err().to_string();
        assert!(error.contains(expected), "expected {expected:?} in: {error}");
        assert!(!error.contains("~0"), "a pointer into the generator's view, not the document: {error}");
    }
}

/// A webhook of the QUERY method or another is refused: a receiver is posted to.
#[test]
fn a_webhook_of_another_method_is_refused() {
    let document = "openapi: 3.2.0\ninfo: {title: T, version: '1'}\nwebhooks:\n  seen:\n    query:\n      operationId: seen\n      responses: {'200': {description: ok}}\n";
    let error = generate(document, &Config::sibling_modules("t.yaml")).unwrap_err().to_string();
    assert!(error.contains("/webhooks/seen/query: OpenAPI 3.2's the QUERY method is served on paths only"), "{error}");
}

/// A webhook's refusal names it where the document has it: `webhooks` in 3.1, `x-webhooks` in 3.0.
#[test]
fn a_webhook_refusal_points_where_the_document_has_it() {
    for (version, key) in [("3.1.0", "webhooks"), ("3.0.3", "x-webhooks")] {
        let document = format!(
            "openapi: {version}\ninfo: {{title: T, version: '1'}}\npaths: {{}}\n{key}:\n  made:\n    post: just a string\n"
        );
        let error = generate(&document, &Config::sibling_modules("t.yaml")).unwrap_err().to_string();
        assert!(error.starts_with(&format!("#/{key}")) && !error.contains("#/paths"), "{version}: {error}");
    }
}

/// An event stream's `itemSchema` without a `data` property (the form most authors write: the
/// data's own schema) generates what the same stream written with its `data` does, with a note
/// at its pointer.
#[test]
fn an_item_schema_without_data_is_the_data_schema_noted() {
    let document = |stream: &str| {
        format!(
            "openapi: 3.2.0\ninfo: {{title: T, version: '1'}}\npaths:\n  /x:\n    get:\n      operationId: ticks\n      \
             responses:\n        '200':\n          description: ticks\n          content:\n            \
             text/event-stream: {{itemSchema: {stream}}}\ncomponents:\n  schemas:\n    Tick: {{type: object, required: \
             [n], properties: {{n: {{type: integer}}}}}}\n"
        )
    };
    let tick = "{$ref: '#/components/schemas/Tick'}";
    let with_data = format!(
        "{{type: object, properties: {{data: {{type: string, contentMediaType: application/json, contentSchema: {tick}}}}}}}"
    );
    let config = Config::sibling_modules("t.yaml");
    let (bare, written) =
        (generate(&document(tick), &config).unwrap(), generate(&document(&with_data), &config).unwrap());
    assert_eq!((&bare.types, &bare.client, &bare.server), (&written.types, &written.client, &written.server));
    assert!(written.notes.is_empty(), "{:?}", written.notes);
    let [note] = &bare.notes[..] else { panic!("one note: {:?}", bare.notes) };
    assert_eq!(note.pointer, "/paths/~1x/get/responses/200/content/text~1event-stream/itemSchema");
    assert!(note.message.contains("read as the schema of each event's data"), "{}", note.message);
}

/// A discriminator's `defaultMapping` (3.2) that names an arm is the arm a tag naming no other
/// reads as; one that names no arm is dropped with a note.
#[test]
fn a_default_mapping_naming_an_arm_reads_unknown_tags_as_it() {
    let document = |default: &str| {
        format!(
            "openapi: 3.2.0\ninfo: {{title: T, version: '1'}}\npaths:\n  /x:\n    get:\n      operationId: pet\n      \
             responses:\n        '200':\n          description: a pet\n          content:\n            \
             application/json: {{schema: {{$ref: '#/components/schemas/Pet'}}}}\ncomponents:\n  schemas:\n    \
             Pet:\n      oneOf: [{{$ref: '#/components/schemas/Cat'}}, {{$ref: '#/components/schemas/Other'}}]\n      \
             discriminator: {{propertyName: kind, defaultMapping: {default}}}\n    \
             Cat: {{type: object, required: [kind], properties: {{kind: {{type: string}}, purrs: {{type: boolean}}}}}}\n    \
             Other: {{type: object, required: [kind], properties: {{kind: {{type: string}}}}}}\n"
        )
    };
    let config = Config::sibling_modules("t.yaml");
    let named = generate(&document("Other"), &config).unwrap();
    assert!(named.notes.is_empty(), "{:?}", named.notes);
    assert!(named.types.contains("Some(_) => ::serde_json::from_value(value).map(Self::Other)"), "{}", named.types);
    // The server's schema: the default arm takes any tag the others do not name.
    let schemas: serde_json::Value = serde_json::from_str(&named.server_schemas).unwrap();
    let other = &schemas["components"]["schemas"]["Pet"]["oneOf"][1]["allOf"][1];
    assert_eq!(other, &serde_json::json!({"properties": {"kind": {"not": {"enum": ["Cat"]}}}}), "{schemas}");
    let unnamed = generate(&document("Dog"), &config).unwrap();
    let [note] = &unnamed.notes[..] else { panic!("one note: {:?}", unnamed.notes) };
    assert_eq!(note.pointer, "/components/schemas/Pet/discriminator/defaultMapping");
    assert!(unnamed.types.contains("names no arm of Pet"), "{}", unnamed.types);
}
