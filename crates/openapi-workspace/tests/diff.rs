//! `openapi-workspace diff`: a case for each rule, in both directions, and the misses other
//! tools' users have reported (a schema wrapped into a `oneOf`, an object become an array,
//! `oneOf` arms changed, `readOnly` properties judged on the request side), each held to the
//! level a client would feel.

use openapi_workspace::{Diff, Level, Rule, diff_texts};

/// A document with `POST /things` taking `request` and answering `response` (JSON schemas
/// written inline), `extra` added at the top level (components, webhooks…).
fn document(version: &str, request: &str, response: &str, extra: &str) -> String {
    format!(
        r#"{{"openapi": "3.0.3", "info": {{"title": "t", "version": "{version}"}},
"paths": {{"/things": {{"post": {{"operationId": "make",
  "requestBody": {{"required": true, "content": {{"application/json": {{"schema": {request}}}}}}},
  "responses": {{"200": {{"description": "made", "content": {{"application/json": {{"schema": {response}}}}}}}}}}}}}}}{extra}}}"#
    )
}

fn diff(base: &str, head: &str) -> Diff {
    diff_texts(base, head).unwrap()
}

/// The (level, rule) of each change.
fn found(diff: &Diff) -> Vec<(Level, Rule)> {
    diff.changes.iter().map(|change| (change.level, change.rule)).collect()
}

/// The changes of a diff, by level and rule.
type Found = Vec<(Level, Rule)>;

/// The same schema change on the request side and on the response side.
fn both_ways(base: &str, head: &str) -> (Found, Found) {
    let same = r#"{"type": "object"}"#;
    let sent = diff(&document("1.0.0", base, same, ""), &document("1.0.0", head, same, ""));
    let received = diff(&document("1.0.0", same, base, ""), &document("1.0.0", same, head, ""));
    (found(&sent), found(&received))
}

const OBJECT: &str = r#"{"type": "object", "properties": {"name": {"type": "string"}}}"#;

#[test]
fn nothing_changed_is_no_change_and_a_patch() {
    let doc = document("1.0.0", OBJECT, OBJECT, "");
    let diff = diff(&doc, &doc);
    assert!(diff.changes.is_empty(), "{:?}", diff.changes);
    assert_eq!(serde_json::to_value(&diff.verdict).unwrap()["needed"], "patch");
}

#[test]
fn a_required_property_added_breaks_senders_and_not_receivers() {
    let head = r#"{"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}"#;
    let (sent, received) = both_ways(OBJECT, head);
    assert_eq!(sent, [(Level::Breaking, Rule::PropertyNowRequired)]);
    assert!(received.is_empty(), "{received:?}");
    // And the other way: a promised property that may now be missing breaks receivers only.
    let (sent, received) = both_ways(head, OBJECT);
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(received, [(Level::Breaking, Rule::PropertyNoLongerRequired)]);
}

#[test]
fn enums_narrow_for_senders_and_widen_for_receivers() {
    let (two, three) = (r#"{"type": "string", "enum": ["a", "b"]}"#, r#"{"type": "string", "enum": ["a", "b", "c"]}"#);
    let (sent, received) = both_ways(three, two);
    assert_eq!(sent, [(Level::Breaking, Rule::EnumValueRemoved)]);
    assert!(received.is_empty(), "{received:?}");
    let (sent, received) = both_ways(two, three);
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(received, [(Level::Warning, Rule::EnumValueAdded)]);
}

#[test]
fn bounds_lengths_and_patterns_are_judged_by_direction() {
    let (long, short) = (r#"{"type": "string", "maxLength": 50}"#, r#"{"type": "string", "maxLength": 20}"#);
    let (sent, received) = both_ways(long, short);
    assert_eq!(sent, [(Level::Breaking, Rule::BoundNarrowed)]);
    assert!(received.is_empty());
    // A longer answer breaks a client holding values to the bound it was given (the generated
    // models' constrained strings refuse it).
    let (sent, received) = both_ways(short, long);
    assert!(sent.is_empty());
    assert_eq!(received, [(Level::Breaking, Rule::BoundWidened)]);
    let (low, high) = (r#"{"type": "integer", "minimum": 1}"#, r#"{"type": "integer", "minimum": 5}"#);
    assert_eq!(both_ways(low, high).0, [(Level::Breaking, Rule::BoundNarrowed)]);
    let patterned = r#"{"type": "string", "pattern": "^[a-z]+$"}"#;
    let (sent, received) = both_ways(r#"{"type": "string"}"#, patterned);
    assert_eq!(sent, [(Level::Breaking, Rule::PatternChanged)]);
    assert!(received.is_empty());
}

#[test]
fn types_and_nullable_are_judged_by_direction() {
    let (integer, number) = (r#"{"type": "integer"}"#, r#"{"type": "number"}"#);
    let (sent, received) = both_ways(integer, number);
    assert!(sent.is_empty(), "a number takes every integer: {sent:?}");
    assert_eq!(received, [(Level::Breaking, Rule::TypeWidened)]);
    let nullable = r#"{"type": "string", "nullable": true}"#;
    let (sent, received) = both_ways(r#"{"type": "string"}"#, nullable);
    assert!(sent.is_empty());
    assert_eq!(received, [(Level::Breaking, Rule::NullableAdded)]);
    assert_eq!(both_ways(nullable, r#"{"type": "string"}"#).0, [(Level::Breaking, Rule::NullableRemoved)]);
}

/// oasdiff #1090: a property changed from an object to an array was reported as no change.
#[test]
fn an_object_become_an_array_breaks_both_ways() {
    let base = r#"{"type": "object", "properties": {"tags": {"type": "object"}}}"#;
    let head = r#"{"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}"#;
    let (sent, received) = both_ways(base, head);
    assert_eq!(sent, [(Level::Breaking, Rule::TypeNarrowed)]);
    assert_eq!(received, [(Level::Breaking, Rule::TypeWidened)]);
}

/// oasdiff #1037: a schema wrapped into a `oneOf` with another arm. Senders may now send either;
/// receivers may now get the arm they cannot read.
#[test]
fn a_schema_wrapped_into_a_one_of_breaks_receivers() {
    let wrapped = r#"{"oneOf": [{"type": "object", "properties": {"name": {"type": "string"}}}, {"type": "string"}]}"#;
    let (sent, received) = both_ways(OBJECT, wrapped);
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(received, [(Level::Breaking, Rule::UnionArmAdded)]);
    // Unwrapped again: senders lose the string arm; receivers get only what they knew.
    let (sent, received) = both_ways(wrapped, OBJECT);
    assert_eq!(sent, [(Level::Breaking, Rule::UnionArmRemoved)]);
    assert!(received.is_empty(), "{received:?}");
}

/// oasdiff #314 and #610: `oneOf` arms changed.
#[test]
fn one_of_arms_changed_are_found_by_direction() {
    let base = r#"{"oneOf": [{"type": "string"}, {"type": "integer"}]}"#;
    let head = r#"{"oneOf": [{"type": "string"}, {"type": "boolean"}]}"#;
    let (sent, received) = both_ways(base, head);
    assert_eq!(sent, [(Level::Breaking, Rule::UnionArmRemoved)]);
    assert_eq!(received, [(Level::Breaking, Rule::UnionArmAdded)]);
}

/// oasdiff #1211: a `readOnly` property is never sent, so it is not judged on the request side.
#[test]
fn read_only_properties_are_not_judged_on_the_request_side() {
    let base = r#"{"type": "object", "required": ["id"], "properties": {"id": {"type": "string", "readOnly": true}, "name": {"type": "string"}}}"#;
    let head = r#"{"type": "object", "properties": {"name": {"type": "string"}}}"#;
    let (sent, received) = both_ways(base, head);
    assert!(sent.is_empty(), "{sent:?}");
    assert_eq!(received, [(Level::Breaking, Rule::PropertyRemoved)]);
    let write_only = r#"{"type": "object", "properties": {"secret": {"type": "string", "writeOnly": true}}}"#;
    let (sent, received) = both_ways(write_only, r#"{"type": "object", "additionalProperties": false}"#);
    assert_eq!(sent, [(Level::Breaking, Rule::PropertyRemoved), (Level::Breaking, Rule::AdditionalPropertiesRefused)]);
    assert!(received.is_empty(), "{received:?}");
}

#[test]
fn references_are_followed_and_recursive_schemas_end() {
    let components = |extra: &str| {
        format!(
            r##", "components": {{"schemas": {{"Node": {{"type": "object", "properties": {{"name": {{"type": "string"{extra}}}, "children": {{"type": "array", "items": {{"$ref": "#/components/schemas/Node"}}}}}}}}}}}}"##
        )
    };
    let node = r##"{"$ref": "#/components/schemas/Node"}"##;
    let base = document("1.0.0", node, node, &components(""));
    let head = document("1.0.0", node, node, &components(r#", "maxLength": 3"#));
    let diff = diff(&base, &head);
    assert_eq!(found(&diff), [(Level::Breaking, Rule::BoundNarrowed)]);
    assert_eq!(diff.changes[0].base.as_deref(), Some("#/components/schemas/Node/properties/name/maxLength"));
}

#[test]
fn operations_parameters_responses_and_security() {
    let with = |parameters: &str, security: &str, status: &str| {
        format!(
            r#"{{"openapi": "3.0.3", "info": {{"title": "t", "version": "1.0.0"}},
"components": {{"securitySchemes": {{"token": {{"type": "http", "scheme": "bearer"}}}}}},
"paths": {{"/things/{{id}}": {{"get": {{"operationId": "get", "parameters": [{{"name": "id", "in": "path", "required": true, "schema": {{"type": "string"}}}}{parameters}]{security},
  "responses": {{"{status}": {{"description": "it"}}}}}}}},
  "/gone": {{"get": {{"operationId": "gone", "responses": {{"200": {{"description": "it"}}}}}}}}}}}}"#
        )
    };
    let base = with(r#", {"name": "q", "in": "query", "schema": {"type": "string"}}"#, "", "200");
    // The path parameter renamed is the same operation; `q` moved to a header; a required `r`
    // added; credentials asked for; the 200 became a 201.
    let head = with(
        r#", {"name": "q", "in": "header", "schema": {"type": "string"}}, {"name": "r", "in": "query", "required": true, "schema": {"type": "string"}}"#,
        r#", "security": [{"token": []}]"#,
        "201",
    )
    .replace("/things/{id}", "/things/{thing}")
    .replace(r#""name": "id""#, r#""name": "thing""#)
    .replace(r#""/gone": {"get": {"operationId": "gone", "responses": {"200": {"description": "it"}}}}"#, r#""/new": {"get": {"operationId": "new", "responses": {"200": {"description": "it"}}}}"#);
    let mut rules = found(&diff(&base, &head));
    rules.sort_by_key(|(level, rule)| (*level, format!("{rule:?}")));
    assert_eq!(
        rules,
        [
            (Level::Info, Rule::OperationAdded),
            (Level::Warning, Rule::ResponseAdded),
            (Level::Breaking, Rule::OperationRemoved),
            (Level::Breaking, Rule::ParameterAddedRequired),
            (Level::Breaking, Rule::ParameterMoved),
            (Level::Breaking, Rule::ResponseRemoved),
            (Level::Breaking, Rule::SecurityRequirementAdded),
        ]
    );
}

/// A webhook's payload is what the client receives, its answer what it sends.
#[test]
fn webhooks_are_judged_from_the_receiving_side() {
    let hook = |payload: &str| {
        format!(
            r#", "x-webhooks": {{"thing.made": {{"post": {{"operationId": "thingMade", "requestBody": {{"content": {{"application/json": {{"schema": {payload}}}}}}}, "responses": {{"200": {{"description": "taken"}}}}}}}}}}"#
        )
    };
    let required = r#"{"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}"#;
    let base = document("1.0.0", OBJECT, OBJECT, &hook(required));
    let head = document("1.0.0", OBJECT, OBJECT, &hook(OBJECT));
    assert_eq!(found(&diff(&base, &head)), [(Level::Breaking, Rule::PropertyNoLongerRequired)]);
    assert!(diff(&head, &base).changes.is_empty(), "a payload promising more breaks no receiver");
}

#[test]
fn the_verdict_asks_for_the_version_the_changes_need() {
    let (base, head) = (r#"{"type": "string", "maxLength": 50}"#, r#"{"type": "string", "maxLength": 20}"#);
    let verdict = |from: &str, to: &str| {
        let diff = diff(&document(from, base, OBJECT, ""), &document(to, head, OBJECT, ""));
        (serde_json::to_value(&diff.verdict).unwrap()["needed"].clone(), diff.verdict.enough)
    };
    assert_eq!(verdict("1.2.0", "1.3.0"), ("major".into(), false));
    assert_eq!(verdict("1.2.0", "2.0.0"), ("major".into(), true));
    // Below 1.0.0 a minor version may break.
    assert_eq!(verdict("0.2.0", "0.3.0"), ("major".into(), true));
    let added = diff(
        &document("1.2.0", OBJECT, OBJECT, ""),
        &document(
            "1.2.1",
            OBJECT,
            r#"{"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}"#,
            "",
        ),
    );
    assert_eq!(serde_json::to_value(&added.verdict).unwrap()["needed"], "minor");
    assert!(!added.verdict.enough, "an addition in a patch version");
}

#[test]
fn the_command_fails_at_its_level_and_writes_json() {
    let dir = tempfile::tempdir().unwrap();
    let (base, head) = (dir.path().join("base.json"), dir.path().join("head.json"));
    std::fs::write(&base, document("1.0.0", OBJECT, OBJECT, "")).unwrap();
    let narrowed = r#"{"type": "object", "properties": {"name": {"type": "string", "maxLength": 3}}}"#;
    std::fs::write(&head, document("2.0.0", narrowed, OBJECT, "")).unwrap();
    let run = |extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_openapi-workspace"))
            .args(["diff", "--base", base.to_str().unwrap(), "--head", head.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap()
    };
    let text = run(&[]);
    assert_eq!(text.status.code(), Some(1));
    let shown = String::from_utf8_lossy(&text.stdout);
    assert!(shown.contains("BREAKING bound-narrowed") && shown.contains("maxLength"), "{shown}");
    let json = run(&["--format", "json", "--fail-on", "version"]);
    assert_eq!(json.status.code(), Some(0), "the major version went up");
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(report["changes"][0]["rule"], "bound-narrowed");
    assert_eq!(report["verdict"]["enough"], true);
    assert_eq!(run(&["--fail-on", "nonsense"]).status.code(), Some(2));
}

/// A 3.1 document is read as the generator reads it: a type list with `"null"` is nullable.
#[test]
fn a_3_1_type_list_with_null_is_nullable() {
    let as_31 = |response: &str| document("1.0.0", OBJECT, response, "").replace("\"3.0.3\"", "\"3.1.0\"");
    let base = as_31(r#"{"type": "string"}"#);
    let head = as_31(r#"{"type": ["string", "null"]}"#);
    assert_eq!(found(&diff(&base, &head)), [(Level::Breaking, Rule::NullableAdded)]);
    assert!(diff(&head, &base).changes.is_empty(), "a response that is never null any more breaks no one");
}

/// A document whose `GET /things` answers `200` with `headers` (JSON), and whose API key is
/// `scheme` (JSON).
fn with_headers(headers: &str, scheme: &str) -> String {
    format!(
        r#"{{"openapi": "3.0.3", "info": {{"title": "t", "version": "1.0.0"}},
"paths": {{"/things": {{"get": {{"operationId": "list", "security": [{{"key": []}}],
  "responses": {{"200": {{"description": "listed", "headers": {headers}}}}}}}}}}},
"components": {{"securitySchemes": {{"key": {scheme}}}}}}}"#
    )
}

const KEY: &str = r#"{"type": "apiKey", "in": "header", "name": "X-Key"}"#;

#[test]
fn a_response_header_clients_read_may_not_go_or_stop_being_promised() {
    let promised = r#"{"X-Rate": {"required": true, "schema": {"type": "integer"}}}"#;
    let documented = r#"{"X-Rate": {"schema": {"type": "integer"}}}"#;
    let case = |base: &str, head: &str| found(&diff(&with_headers(base, KEY), &with_headers(head, KEY)));
    assert_eq!(case(promised, "{}"), [(Level::Breaking, Rule::ResponseHeaderRemoved)]);
    assert_eq!(case(documented, "{}"), [(Level::Warning, Rule::ResponseHeaderRemoved)]);
    assert_eq!(case(promised, documented), [(Level::Breaking, Rule::ResponseHeaderNoLongerRequired)]);
    assert_eq!(case("{}", promised), [(Level::Info, Rule::ResponseHeaderAdded)]);
    // Names are read case-insensitively; a kept header's schema is a received value's.
    assert!(case(promised, &promised.replace("X-Rate", "x-rate")).is_empty());
    let text = r#"{"x-rate": {"required": true, "schema": {"type": "string"}}}"#;
    assert_eq!(case(promised, text), [(Level::Breaking, Rule::TypeWidened)]);
    let changed = diff(&with_headers(promised, KEY), &with_headers(documented, KEY));
    assert_eq!(changed.changes[0].base.as_deref(), Some("#/paths/~1things/get/responses/200/headers/X-Rate"));
}

#[test]
fn a_security_scheme_written_elsewhere_breaks_its_clients() {
    let case = |head: &str| found(&diff(&with_headers("{}", KEY), &with_headers("{}", head)));
    assert!(case(&KEY.replace("X-Key", "x-key")).is_empty(), "a header's name is case-insensitive");
    assert_eq!(case(&KEY.replace("header", "query")), [(Level::Breaking, Rule::SecuritySchemeChanged)]);
    assert_eq!(case(&KEY.replace("X-Key", "X-Api-Key")), [(Level::Breaking, Rule::SecuritySchemeChanged)]);
    assert_eq!(case(r#"{"type": "http", "scheme": "bearer"}"#), [(Level::Breaking, Rule::SecuritySchemeChanged)]);
    let changed = diff(&with_headers("{}", KEY), &with_headers("{}", &KEY.replace("header", "query")));
    assert!(changed.changes[0].message.contains("now apiKey query X-Key, was apiKey header x-key"), "{changed:?}");
}

/// The diff reads schemas as written: an inline schema's change is pointed at where the document
/// has it (not at a model the generator would name), and an enum no Rust name can hold is judged
/// as an enum (not as the pattern the generator spells it with).
#[test]
fn pointers_are_the_documents_own_and_enums_stay_enums() {
    let head = r#"{"type": "object", "properties": {"name": {"type": "integer"}}}"#;
    let changed = diff(&document("1.0.0", OBJECT, OBJECT, ""), &document("1.0.0", head, OBJECT, ""));
    let at = "#/paths/~1things/post/requestBody/content/application~1json/schema/properties/name";
    assert_eq!(changed.changes.len(), 1, "{changed:?}");
    assert_eq!((changed.changes[0].base.as_deref(), changed.changes[0].head.as_deref()), (Some(at), Some(at)));
    let (sent, _) =
        both_ways(r#"{"type": "string", "enum": ["a-b", "a_b"]}"#, r#"{"type": "string", "enum": ["a-b"]}"#);
    assert_eq!(sent, [(Level::Breaking, Rule::EnumValueRemoved)]);
}

#[test]
fn a_response_link_gone_or_pointed_elsewhere_is_a_warning() {
    let document = |links: &str| {
        format!(
            r#"{{"openapi": "3.0.3", "info": {{"title": "t", "version": "1.0.0"}},
"paths": {{"/things": {{"post": {{"operationId": "make",
  "responses": {{"201": {{"description": "made", "links": {links}}}}}}}}},
  "/things/{{id}}": {{"get": {{"operationId": "get", "parameters": [{{"name": "id", "in": "path", "required": true, "schema": {{"type": "string"}}}}],
  "responses": {{"200": {{"description": "got"}}}}}}}}}}}}"#
        )
    };
    let follow = r#"{"Get": {"operationId": "get", "parameters": {"id": "$response.body#/id"}, "description": "a"}}"#;
    let case = |base: &str, head: &str| found(&diff(&document(base), &document(head)));
    assert!(case(follow, &follow.replace("\"a\"", "\"another\"")).is_empty(), "a description is not where it leads");
    assert_eq!(case(follow, "{}"), [(Level::Warning, Rule::ResponseLinkRemoved)]);
    assert_eq!(case(follow, &follow.replace("#/id", "#/key")), [(Level::Warning, Rule::ResponseLinkChanged)]);
    assert_eq!(case("{}", follow), [(Level::Info, Rule::ResponseLinkAdded)]);
}
