//! The gate's verdicts on small documents: what breaks, what is additive, how versions compare.

use super::*;

#[test]
fn breaking_changes_are_counted_by_rule() {
    let report = "x Payments API base.yaml\nOperations: 1 operation added, 2 changed, 1 removed\n\
            x  Checks: 8/38 passed \n\n✔ GET /ping2: added\n  \nx DELETE /paymentrequests/{id}: removed\n  \
            x [prevent operation removal] cannot remove an operation. This is a breaking change.\n  \
            at base.yaml:298:16681\nx GET /paymentrequests: \n  - /summary changed\n  - query parameter must: added\n    \
            x [prevent new required query parameters] cannot add required query parameter must to an existing operation. This is a breaking change.\n    \
            x [prevent new required query parameters] cannot add required query parameter other. This is a breaking change.\n";
    assert_eq!(
        Summary::read(report),
        Some(Summary {
            operations: "Operations: 1 operation added, 2 changed, 1 removed".into(),
            breaking: 3,
            rules: vec![("prevent operation removal".into(), 1), ("prevent new required query parameters".into(), 2)],
            allowed: 0,
        })
    );
}

#[test]
fn a_value_added_to_a_response_enum_is_additive_and_one_removed_from_a_request_is_not() {
    let report = "Operations: 2 operations changed\n\
            x [request and response property enums] cannot add enum option 'on_hold' from 'status' property. \
            This is a breaking change.\n\
            x [request and response property enums] cannot remove enum option 'failed' from 'status' property. \
            This is a breaking change.\n";
    let summary = Summary::read(report).unwrap();
    assert_eq!((summary.breaking, summary.allowed), (1, 1));
    assert_eq!(summary.rules, vec![("request and response property enums".into(), 1)]);
}

#[test]
fn a_report_without_breaking_changes_counts_none_and_no_report_is_no_summary() {
    let report = "✔ Payments API base.yaml\nOperations: 6 operations changed\n✔  Checks: 150/150 passed \n";
    assert_eq!(Summary::read(report).map(|s| s.breaking), Some(0));
    assert_eq!(Summary::read("Error: cannot read file"), None);
}

/// A document with `GET /things` (query `status`, bounded) answering a `Thing`, and
/// `POST /things` taking a `ThingCreate`; `edit` changes its YAML text.
fn document(edit: impl Fn(String) -> String) -> Value {
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
    serde_norway::from_str(&edit(text.to_owned())).unwrap()
}

fn findings(edit: impl Fn(String) -> String) -> Vec<(&'static str, String, String)> {
    own_rules(&document(|t| t), &document(edit)).into_iter().map(|f| (f.rule, f.operation, f.at)).collect()
}

#[test]
fn an_unchanged_or_widened_document_breaks_nothing() {
    assert_eq!(findings(|t| t), []);
    // Wider bounds and a new optional parameter.
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
fn a_removed_parameter_breaks() {
    let removed = |t: String| {
        t.replace(
            "        - {name: status, in: query, schema: {type: string, maxLength: 20}}
",
            "",
        )
    };
    assert_eq!(findings(removed), [(PARAMETER_REMOVED, "GET /things".into(), "query parameter status".into())]);
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
    assert_eq!(
        findings(one_of),
        [
            (BECOMES_NULLABLE, "GET /things".into(), "200 /items/amount".into()),
            (BECOMES_NULLABLE, "POST /things".into(), "201 /amount".into())
        ]
    );
    let flagged = |t: String| t.replace("note: {type: string}", "note: {type: string, nullable: true}");
    assert_eq!(findings(flagged).len(), 2);
}

#[test]
fn a_narrowed_request_bound_breaks() {
    let cases: [(&str, &str, &str); 4] = [
        ("maxLength: 50", "maxLength: 10", "request body /name"),
        ("minimum: 0}", "minimum: 1}", "request body /count"),
        (
            "name: {type: string, maxLength: 50}",
            "name: {type: string, maxLength: 50, pattern: '^[a-z]+$'}",
            "request body /name",
        ),
        ("maxLength: 20}", "maxLength: 5}", "query parameter status"),
    ];
    for (from, to, at) in cases {
        let found = findings(|t| t.replace(from, to));
        assert_eq!(found.iter().map(|(r, _, a)| (*r, a.as_str())).collect::<Vec<_>>(), [(BOUND_NARROWED, at)], "{to}");
    }
}

#[test]
fn versions_are_semantic() {
    let document = parse("openapi: 3.0.3\ninfo: {title: t, version: 2.1.0}\n").unwrap();
    assert_eq!(version(&document).unwrap(), "2.1.0");
    assert_eq!(major("2.1.0").unwrap(), 2);
    assert!(major("2.1").is_err() && major("v2.0.0").is_err());
}
