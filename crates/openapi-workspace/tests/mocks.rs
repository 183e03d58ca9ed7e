//! The mock answers every operation of every document here with a body its response schema
//! accepts: each sample, each corpus document and our own, every operation's mock checked by a
//! JSON Schema validator (with formats) against the document's schema for that response.

use std::path::Path;

#[test]
fn every_mock_answer_meets_its_response_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut documents: Vec<_> = ["tests/samples", "tests/corpus", "tests/corpus/openapi-3.1"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json" || e == "yaml"))
        .collect();
    documents.push(root.join("../../openapi/payments.yaml"));
    documents.sort();
    let (mut checked, mut without_body, mut unsatisfiable, mut wrong) = (0, 0, 0, Vec::new());
    for path in &documents {
        let text = std::fs::read_to_string(path).unwrap();
        let answers = openapi_workspace::mock_answers(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for answer in answers {
            let Some((body, schema)) = answer.json else {
                without_body += 1;
                continue;
            };
            // dropshot's "no content" (`type: string, enum: [null]`) accepts no JSON value at all;
            // the mock answers `null`, which its generated clients read.
            if schema["enum"] == serde_json::json!([null]) && schema["type"].is_string() {
                assert_eq!(body, serde_json::Value::Null);
                unsatisfiable += 1;
                continue;
            }
            checked += 1;
            let validator = jsonschema::draft202012::options()
                .should_validate_formats(true)
                .build(&schema)
                .unwrap_or_else(|e| panic!("{}: {}: {e}", path.display(), answer.operation_id));
            if let Some(error) = validator.iter_errors(&body).next() {
                wrong.push(format!(
                    "{} {} ({}): {error} at {}",
                    path.file_name().unwrap().to_string_lossy(),
                    answer.operation_id,
                    answer.status,
                    error.instance_path()
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {checked} mock bodies do not meet their schema:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert!(checked > 400, "only {checked} JSON mock answers checked ({without_body} without a JSON body)");
    assert!(unsatisfiable <= 1, "{unsatisfiable} schemas accept no value");
    println!("{checked} JSON mock answers valid; {without_body} without a JSON body; {unsatisfiable} unsatisfiable");
}
