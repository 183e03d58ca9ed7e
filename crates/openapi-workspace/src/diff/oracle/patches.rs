//! Cases written as JSON Patches on one document (`tests/diff`): drift's (Oxide's engine behind
//! dropshot-api-manager; Apache-2.0, its notice beside them) and the misses other tools' users
//! reported (`named`). On every case the oracle must find no break the engine missed; the
//! engine's verdict for old clients must be drift's — or one of the disagreements below, each
//! with the reason ours is right — and a named case's its file gives. drift's table is a snapshot.

use std::fmt::Write;
use std::path::Path;

use serde_json::Value;

use super::{Proof, prove};
use crate::diff::{Level, diff};
use crate::read::Spec;

/// Where drift's verdict and ours differ, and why ours is the client's view.
const DISAGREEMENTS: &[(&str, &str)] = &[
    (
        "add-response-code",
        "a 500 newly documented: an old client reads a status it was not told of as an error (the \
         generated one as UnexpectedResponse), as it read the server's errors before; info (a new \
         success status would be a warning)",
    ),
    (
        "remove-header-parameter",
        "a server that no longer reads a parameter ignores it unless it refuses unknown ones, which \
         a document cannot say; a warning (our own gate counts it breaking: our servers refuse them)",
    ),
    ("remove-operation-parameter", "as remove-header-parameter"),
    (
        "remove-response-code",
        "the operation's only success gone (the default stays): what an old client was written to \
         read is no longer answered, so its calls end in the default, an error to it; breaking",
    ),
];

/// Lines of a case list (`classes.txt`, `verdicts.txt`): the case and the rest of the line.
fn listed(file: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .map(|line| {
            let (case, rest) = line.split_once(' ').unwrap();
            (case.to_owned(), rest.to_owned())
        })
        .collect()
}

fn spec(document: &Value) -> Spec {
    crate::as_written(&document.to_string()).unwrap()
}

fn read_json(file: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// One case judged: the engine's highest level and rules, and the oracle's proof.
struct Judged {
    level: Option<Level>,
    rules: Vec<String>,
    proof: Proof,
}

fn judge_patch(base: &Value, base_spec: &Spec, patch: &Path) -> Judged {
    let patch: json_patch::Patch = serde_json::from_value(read_json(patch)).unwrap();
    let mut head = base.clone();
    json_patch::patch(&mut head, &patch).unwrap();
    let head_spec = spec(&head);
    let ours = diff(base_spec, &head_spec);
    let level = ours.changes.iter().map(|change| change.level).max();
    let rules = ours
        .changes
        .iter()
        .map(|change| serde_json::to_value(change.rule).unwrap().as_str().unwrap().to_owned())
        .collect();
    Judged { level, rules, proof: prove(base_spec, &head_spec) }
}

fn cases_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/diff")
}

#[test]
fn drifts_cases_agree_or_are_explained_and_the_oracle_finds_no_miss() {
    let dir = cases_dir().join("drift");
    let base = read_json(&dir.join("base.json"));
    let base_spec = spec(&base);
    assert!(diff(&base_spec, &base_spec).changes.is_empty(), "the base against itself");
    let (mut table, mut misses, mut disagreements) = (String::new(), Vec::new(), Vec::new());
    let (mut judged, mut unshown) = (0, 0);
    let cases = listed(&dir.join("classes.txt"));
    assert_eq!(cases.len(), 79, "drift's cases");
    for (case, classes) in &cases {
        let Judged { level, rules, proof } = judge_patch(&base, &base_spec, &dir.join(format!("patch/{case}.json")));
        judged += proof.judged;
        unshown += proof.unshown.len();
        misses.extend(proof.misses.iter().map(|miss| format!("{case}: {miss}")));
        let classes: Vec<&str> = classes.split(',').filter(|class| *class != "none").collect();
        let drift_breaks = classes.iter().any(|class| matches!(*class, "BackwardIncompatible" | "Incompatible"));
        let unhandled = classes.contains(&"Unhandled");
        let ours_breaks = level == Some(Level::Breaking);
        if !unhandled && drift_breaks != ours_breaks {
            disagreements.push(case.as_str());
        }
        let level = level.map_or("none".to_owned(), |level| format!("{level:?}").to_lowercase());
        let drift = if classes.is_empty() { "none".to_owned() } else { classes.join(", ") };
        let shown = if proof.unshown.is_empty() { String::new() } else { format!(", {} unshown", proof.unshown.len()) };
        writeln!(
            table,
            "{case}: drift {drift}; ours {level} [{}]; oracle {} pairs{shown}",
            rules.join(" "),
            proof.judged
        )
        .unwrap();
    }
    writeln!(
        table,
        "\n{} cases; oracle: {judged} pairs judged, {} misses, {unshown} unshown",
        cases.len(),
        misses.len()
    )
    .unwrap();
    insta::assert_snapshot!(table);
    assert!(misses.is_empty(), "the oracle found breaks the engine missed:\n{}", misses.join("\n"));
    let explained: Vec<&str> = DISAGREEMENTS.iter().map(|(case, _)| *case).collect();
    assert_eq!(disagreements, explained, "cases where drift and the engine differ");
}

#[test]
fn the_misses_other_tools_users_reported_are_judged_as_their_list_says() {
    let dir = cases_dir();
    let base = read_json(&dir.join("drift/base.json"));
    let base_spec = spec(&base);
    let cases = listed(&dir.join("named/verdicts.txt"));
    assert!(cases.len() >= 5, "the named cases");
    for (case, rest) in &cases {
        let Judged { level, rules, proof } = judge_patch(&base, &base_spec, &dir.join(format!("named/{case}.json")));
        assert!(proof.misses.is_empty(), "{case}: the oracle found breaks the engine missed: {:?}", proof.misses);
        let breaks = rest.starts_with("breaking ");
        assert!(breaks || rest.starts_with("compatible "), "{case}: breaking or compatible, then why");
        assert_eq!(level == Some(Level::Breaking), breaks, "{case} ({rules:?}): {rest}");
    }
}
