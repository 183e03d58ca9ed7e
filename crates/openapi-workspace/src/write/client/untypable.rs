//! Schemas typify cannot type become `serde_json::Value` in the models, each with a note at its
//! pointer, instead of costing the document:
//!
//! - an `allOf` that merges more unions than typify's merging bears: it distributes each union
//!   over the rest and clones every arm with the negation of its siblings, so three unions of two
//!   arms, or two of five, already exhaust a machine (`merge_budget` says where the line is);
//! - a schema typify refuses or panics on, found only when generation fails: the component is
//!   found by bisection (the others stood in for by `{}`), then, within it, each smallest part
//!   that still fails with its siblings standing in.
//!
//! Only the Rust type is looser: the server still validates against the document's schema and
//! the mock answers with it, since both read the read stage's document, not progenitor's view.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::read::Note;
use crate::read::document::escape;

/// How many schemas may be retyped before the document is refused: past this, the cause is not
/// one schema.
const AT_MOST: usize = 64;

/// Whether typify can merge an `allOf` whose merged unions have these numbers of arms in time and
/// memory. One union of any width is cheap; two, while the product of their widths is at most 16
/// (two of four arms still merge quickly, two of five no longer do); three or more never.
fn merge_budget(unions: &[usize]) -> bool {
    match unions {
        [] | [_] => true,
        [a, b] => a * b <= 16,
        _ => false,
    }
}

/// Retypes every `allOf` of `doc` (progenitor's view) typify could not merge within its budget,
/// in document order, each judged by the document as the ones before it left it (a schema that
/// merged one retyped merges fewer unions).
pub(crate) fn bound_merges(doc: &mut Value) -> Vec<Note> {
    let mut merging = Vec::new();
    crate::read::repair::schemas(doc, "", &mut |schema, at| {
        if schema.contains_key("allOf") {
            merging.push(at.to_owned());
        }
    });
    let mut notes = Vec::new();
    for at in merging {
        let Some(schema) = doc.pointer(&at).and_then(Value::as_object) else { continue };
        let mut unions = Vec::new();
        merged_unions(schema, doc.get("components").unwrap_or(&Value::Null), &mut BTreeSet::new(), &mut unions);
        if merge_budget(&unions) {
            continue;
        }
        let replaced = stand_in(schema);
        let widths: Vec<String> = unions.iter().map(usize::to_string).collect();
        notes.push(Note {
            message: format!(
                "typed as serde_json::Value: its allOf merges {} unions (of {} arms), more than the \
                 models' generator can merge in time and memory",
                unions.len(),
                widths.join(", ")
            ),
            pointer: at.clone(),
        });
        if let Some(schema) = doc.pointer_mut(&at) {
            *schema = Value::Object(replaced);
        }
    }
    notes
}

/// The widths of the unions (`anyOf`/`oneOf` of two arms or more) that merging `schema`'s
/// `allOf` distributes: its own, and those of its arms, through `$ref`s and nested `allOf`s.
fn merged_unions(schema: &Map<String, Value>, components: &Value, seen: &mut BTreeSet<String>, out: &mut Vec<usize>) {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let Some(name) = reference.strip_prefix("#/components/schemas/") else { return };
        if !seen.insert(name.to_owned()) {
            return;
        }
        if let Some(target) = components.get("schemas").and_then(|s| s.get(name)).and_then(Value::as_object) {
            merged_unions(target, components, seen, out);
        }
        return;
    }
    for union in ["anyOf", "oneOf"] {
        if let Some(arms) = schema.get(union).and_then(Value::as_array).filter(|arms| arms.len() > 1) {
            out.push(arms.len());
            // Each arm is merged with the rest: an arm that is itself an `allOf` merges its own
            // unions once per arm around it, so a nesting of them (allOf over anyOf of allOf…)
            // multiplies like siblings do.
            for arm in arms.iter().filter_map(Value::as_object) {
                if merges(arm, components) {
                    merged_unions(arm, components, seen, out);
                }
            }
        }
    }
    for arm in schema.get("allOf").and_then(Value::as_array).into_iter().flatten() {
        if let Some(arm) = arm.as_object() {
            merged_unions(arm, components, seen, out);
        }
    }
}

/// Whether `schema` (through one `$ref`) is an `allOf`, which typify merges.
fn merges(schema: &Map<String, Value>, components: &Value) -> bool {
    let target = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix("#/components/schemas/")
            .and_then(|name| components.get("schemas")?.get(name)?.as_object()),
        None => Some(schema),
    };
    target.is_some_and(|target| target.contains_key("allOf"))
}

/// What stands in for a schema typify cannot type: any value, with the schema's description.
fn stand_in(schema: &Map<String, Value>) -> Map<String, Value> {
    let mut any = Map::new();
    if let Some(description) = schema.get("description") {
        any.insert("description".into(), description.clone());
    }
    any
}

/// A run of the models' generator: its refusal, if it refuses.
pub(crate) type Passes = Result<(), String>;

/// Finds the component schemas of `doc` (progenitor's view, as JSON) that keep `passes` (a run of
/// the models' generator over a document) from passing and retypes the least of each it must,
/// with a note each (none when they pass as they are: what fails is then an operation). Answers
/// `None` when the components still fail: no one schema's failure, or more than `AT_MOST`.
pub(crate) fn retype(doc: &mut Value, passes: &impl Fn(&Value) -> Passes) -> Option<Vec<Note>> {
    // The operations are left to `leave_out`: only the components are tried here.
    let mut trial = doc.clone();
    trial["paths"] = json!({});
    if let Some(object) = trial.as_object_mut() {
        object.remove("x-webhooks");
    }
    let mut notes = Vec::new();
    while passes(&trial).is_err() {
        let names: Vec<String> = trial["components"]["schemas"].as_object()?.keys().cloned().collect();
        let everything: Vec<usize> = (0..names.len()).collect();
        let culprits = culprits(&trial, &names, &everything, true, passes);
        if culprits.is_empty() || notes.len() + culprits.len() > AT_MOST {
            return None;
        }
        let mut found = Vec::new();
        for (culprit, context) in culprits {
            let component = format!("/components/schemas/{}", escape(&names[culprit]));
            let base = with_only(&trial, &names, &context);
            let why = passes(&base).err().unwrap_or_default();
            narrowed(base, &component, why, passes, &mut found);
        }
        for (at, why) in found {
            for document in [&mut trial, &mut *doc] {
                let schema = document.pointer_mut(&at)?;
                *schema = Value::Object(schema.as_object().map(stand_in).unwrap_or_default());
            }
            // typify's messages go on with the schema on the lines after; the first says what.
            let why = why.lines().next().unwrap_or_default().trim_end_matches([':', '(', '{', ' ']);
            let message = format!("typed as serde_json::Value: the models' generator cannot type it ({why})");
            notes.push(Note { pointer: at, message });
        }
    }
    Some(notes)
}

/// `trial` with only the components `real` as they are, the rest standing in as `{}`.
fn with_only(trial: &Value, names: &[String], real: &[usize]) -> Value {
    let mut document = trial.clone();
    let keep: BTreeSet<&str> = real.iter().map(|i| names[*i].as_str()).collect();
    if let Some(schemas) = document.pointer_mut("/components/schemas").and_then(Value::as_object_mut) {
        for (name, schema) in schemas.iter_mut() {
            if !keep.contains(name.as_str()) {
                *schema = json!({});
            }
        }
    }
    document
}

/// The components of `set` that fail (found by bisection), each with the components it fails
/// with: itself alone, or, when a failure needs several together, the least such set. `failing`:
/// whether `set` is known to fail already (then it is not tried again).
fn culprits(
    trial: &Value,
    names: &[String],
    set: &[usize],
    failing: bool,
    passes: &impl Fn(&Value) -> Passes,
) -> Vec<(usize, Vec<usize>)> {
    let fails = |real: &[usize]| passes(&with_only(trial, names, real)).is_err();
    if set.is_empty() || !(failing || fails(set)) {
        return Vec::new();
    }
    if set.len() == 1 {
        return vec![(set[0], set.to_vec())];
    }
    let (first, second) = set.split_at(set.len() / 2);
    let mut found = culprits(trial, names, first, false, passes);
    found.extend(culprits(trial, names, second, false, passes));
    if !found.is_empty() {
        // A failure that needs members of both halves is found on the next round.
        return found;
    }
    // Neither half fails alone: drop every member the failure does not need.
    let mut least = set.to_vec();
    for i in (0..least.len()).rev() {
        let mut without = least.clone();
        without.remove(i);
        if fails(&without) {
            least = without;
        }
    }
    // The member that refers to another is the one whose merging fails.
    let refers = |i: usize| {
        let text = trial["components"]["schemas"][&names[i]].to_string();
        least.iter().any(|j| *j != i && text.contains(&format!("\"#/components/schemas/{}\"", names[*j])))
    };
    let culprit = least.iter().copied().find(|i| refers(*i)).unwrap_or(least[0]);
    vec![(culprit, least)]
}

/// The schemas at or inside `at` in `document` (which fails, saying `why`) that fail by
/// themselves: each part that still fails with its siblings standing in as `{}`, searched the
/// same way; `at` itself when no part does. Each with what the generator said of it.
fn narrowed(
    document: Value,
    at: &str,
    why: String,
    passes: &impl Fn(&Value) -> Passes,
    found: &mut Vec<(String, String)>,
) {
    let parts = document.pointer(at).map(parts).unwrap_or_default();
    let before = found.len();
    // When it fails with every part standing in, what fails is the schema's own keywords (a
    // `format` typify cannot take on an array), not a part.
    let mut without_parts = document.clone();
    for part in &parts {
        if let Some(schema) = without_parts.pointer_mut(&format!("{at}{part}")) {
            *schema = Value::Object(schema.as_object().map(stand_in).unwrap_or_default());
        }
    }
    if parts.is_empty() || passes(&without_parts).is_err() {
        found.push((at.to_owned(), why));
        return;
    }
    for part in &parts {
        let mut alone = document.clone();
        for sibling in parts.iter().filter(|sibling| *sibling != part) {
            if let Some(schema) = alone.pointer_mut(&format!("{at}{sibling}")) {
                *schema = Value::Object(schema.as_object().map(stand_in).unwrap_or_default());
            }
        }
        if let Err(why) = passes(&alone) {
            narrowed(alone, &format!("{at}{part}"), why, passes, found);
        }
    }
    if found.len() == before {
        found.push((at.to_owned(), why));
    }
}

/// The pointers (from `schema`) of the schemas directly inside it.
fn parts(schema: &Value) -> Vec<String> {
    let mut parts = Vec::new();
    let Some(map) = schema.as_object() else { return parts };
    if let Some(properties) = map.get("properties").and_then(Value::as_object) {
        parts.extend(properties.keys().map(|name| format!("/properties/{}", escape(name))));
    }
    // Not `not`: a stand-in there would refuse every value.
    for single in ["items", "additionalProperties"] {
        if map.get(single).is_some_and(Value::is_object) {
            parts.push(format!("/{single}"));
        }
    }
    for list in ["allOf", "anyOf", "oneOf"] {
        let count = map.get(list).and_then(Value::as_array).map_or(0, Vec::len);
        parts.extend((0..count).map(|i| format!("/{list}/{i}")));
    }
    parts
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{bound_merges, merge_budget, retype};

    #[test]
    fn the_budget_takes_one_union_of_any_width_and_two_small_ones() {
        assert!(merge_budget(&[]) && merge_budget(&[40]) && merge_budget(&[4, 4]) && merge_budget(&[2, 8]));
        assert!(!merge_budget(&[5, 4]) && !merge_budget(&[2, 2, 2]));
    }

    #[test]
    fn an_all_of_of_three_unions_through_references_is_any_value() {
        let union = |a: &str, b: &str| json!({"anyOf": [{"$ref": format!("#/components/schemas/{a}")}, {"$ref": format!("#/components/schemas/{b}")}]});
        let mut doc = json!({"components": {"schemas": {
            "A": {"type": "object"}, "B": {"type": "object"},
            "One": union("A", "B"),
            "Two": {"allOf": [{"$ref": "#/components/schemas/One"}, union("A", "B")]},
            "Three": {"description": "d", "allOf": [{"$ref": "#/components/schemas/Two"}, union("A", "B")]},
        }}});
        let notes = bound_merges(&mut doc);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(notes[0].pointer, "/components/schemas/Three");
        assert_eq!(doc["components"]["schemas"]["Three"], json!({"description": "d"}));
        assert!(doc["components"]["schemas"]["Two"].get("allOf").is_some());
    }

    #[test]
    fn the_least_part_that_fails_is_retyped() {
        // A stand-in generator: it fails on any schema with `format: bad`.
        let passes = |doc: &serde_json::Value| match doc.to_string().contains("\"format\":\"bad\"") {
            true => Err("bad: a format it cannot take\nmore".to_owned()),
            false => Ok(()),
        };
        let mut doc = json!({"paths": {"/x": {}}, "components": {"schemas": {
            "Fine": {"type": "string"},
            "Thing": {"type": "object", "properties": {
                "good": {"type": "string"},
                "list": {"type": "array", "items": {"description": "b", "format": "bad"}},
            }},
            "Other": {"anyOf": [{"type": "string"}, {"format": "bad"}]},
        }}});
        let notes = retype(&mut doc, &passes).unwrap();
        let mut pointers: Vec<&str> = notes.iter().map(|n| n.pointer.as_str()).collect();
        pointers.sort_unstable();
        assert_eq!(pointers, ["/components/schemas/Other/anyOf/1", "/components/schemas/Thing/properties/list/items"]);
        assert_eq!(doc["components"]["schemas"]["Thing"]["properties"]["list"]["items"], json!({"description": "b"}));
        assert_eq!(doc["paths"], json!({"/x": {}}));
        assert!(notes.iter().all(|n| n.message.ends_with("(bad: a format it cannot take)")), "{notes:?}");
    }
}
