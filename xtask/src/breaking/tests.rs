//! The gate's verdicts on small documents, through the engine and our own rule: what breaks,
//! what is additive, how versions compare.

use super::*;

/// A document with `GET /things` (query `status`, bounded) answering a `Thing`, and
/// `POST /things` taking a `ThingCreate`; `edit` changes its YAML text.
fn document(edit: impl Fn(String) -> String) -> String {
    let text = r#"
openapi: 3.0.3
info: {title: t, version: 1.0.0}
paths:
  /things:
    get:
      parameters:
        - {name: status, in: query, schema: {type: string, maxLength: 20}}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {type: array, items: {$ref: '#/components/schemas/Thing'}}
    post:
      requestBody:
        content:
          application/json:
            schema: {$ref: '#/components/schemas/ThingCreate'}
      responses:
        '201':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Thing'}
components:
  schemas:
    Amount: {type: integer, minimum: 1}
    Thing:
      type: object
      properties:
        amount: {$ref: '#/components/schemas/Amount'}
        note: {type: string}
    ThingCreate:
      type: object
      properties:
        name: {type: string, maxLength: 50}
        count: {type: integer, minimum: 0}
"#;
    edit(text.to_owned())
}

/// The breaking changes the gate finds from the fixture to its edit: (rule, where in the head).
fn findings(edit: impl Fn(String) -> String) -> Vec<(Rule, String)> {
    let mut diff = openapi_workspace::diff_texts(&document(|t| t), &document(edit)).unwrap();
    diff.escalate(Rule::ParameterRemoved, OUR_RULE);
    let breaking = diff.changes.into_iter().filter(|change| change.level == Level::Breaking);
    breaking.map(|change| (change.rule, change.head.or(change.base).unwrap_or_default())).collect()
}

#[test]
fn an_unchanged_or_widened_document_breaks_nothing() {
    assert_eq!(findings(|t| t), []);
    // Wider request bounds, a new optional parameter, a value added to a response enum.
    let wider = |t: String| {
        t.replace("maxLength: 50", "maxLength: 80").replace("minimum: 0}", "minimum: -5}").replace(
            "- {name: status",
            "- {name: extra, in: query, schema: {type: string}}
        - {name: status",
        )
    };
    assert_eq!(findings(wider), []);
}

#[test]
fn a_removed_parameter_breaks_by_our_rule() {
    let removed = |t: String| {
        t.replace(
            "      parameters:
        - {name: status, in: query, schema: {type: string, maxLength: 20}}
",
            "",
        )
    };
    assert_eq!(findings(removed), [(Rule::ParameterRemoved, "#/paths/~1things/get/parameters/0".into())]);
}

#[test]
fn a_response_value_that_becomes_nullable_through_one_of_or_nullable_breaks() {
    let one_of = |t: String| {
        t.replace(
            "amount: {$ref: '#/components/schemas/Amount'}",
            "amount:
          oneOf:
            - $ref: '#/components/schemas/Amount'
            - {type: object, nullable: true, enum: [null]}",
        )
    };
    // Found once, at the component both responses reach.
    assert_eq!(
        findings(one_of),
        [(Rule::NullableAdded, "#/components/schemas/Thing/properties/amount/oneOf/1".into())]
    );
    let flagged = |t: String| t.replace("note: {type: string}", "note: {type: string, nullable: true}");
    assert_eq!(findings(flagged), [(Rule::NullableAdded, "#/components/schemas/Thing/properties/note".into())]);
}

#[test]
fn a_narrowed_request_bound_breaks() {
    let cases: [(&str, &str, Rule); 4] = [
        ("maxLength: 50", "maxLength: 10", Rule::BoundNarrowed),
        ("minimum: 0}", "minimum: 1}", Rule::BoundNarrowed),
        (
            "name: {type: string, maxLength: 50}",
            "name: {type: string, maxLength: 50, pattern: '^[a-z]+$'}",
            Rule::PatternChanged,
        ),
        ("maxLength: 20}", "maxLength: 5}", Rule::BoundNarrowed),
    ];
    for (from, to, rule) in cases {
        let found = findings(|t| t.replace(from, to));
        assert_eq!(found.iter().map(|(r, _)| *r).collect::<Vec<_>>(), [rule], "{to}: {found:?}");
    }
}

#[test]
fn a_removed_operation_breaks() {
    let removed = |t: String| {
        let start = t.find("    post:").unwrap();
        let end = t.find("components:").unwrap();
        format!("{}{}", &t[..start], &t[end..])
    };
    assert_eq!(findings(removed), [(Rule::OperationRemoved, "#/paths/~1things/post".into())]);
}

#[test]
fn versions_are_semantic() {
    let document = parse("openapi: 3.0.3\ninfo: {title: t, version: 2.1.0}\n").unwrap();
    assert_eq!(version(&document).unwrap(), "2.1.0");
    assert_eq!(major("2.1.0").unwrap(), 2);
    assert!(major("2.1").is_err() && major("v2.0.0").is_err());
}
