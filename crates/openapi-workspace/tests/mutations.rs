//! No document panics the generator: every sample and corpus document, mutated many ways (a
//! node removed, or replaced by a value of another kind), is either generated or refused with an
//! error — never a panic. The mutations come from a fixed seed, so a failure is reproduced by
//! running the test again; it names the document, the node and the mutation.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use openapi_workspace::{Config, generate};
use serde_json::{Value, json};

/// A small deterministic generator (xorshift64*), so every run mutates alike.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Every node's JSON pointer.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, child) in map {
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                out.push(here.clone());
                pointers(child, here, out);
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                let here = format!("{at}/{i}");
                out.push(here.clone());
                pointers(child, here, out);
            }
        }
        _ => {}
    }
}

/// What a mutation puts in a node's place (`None`: the node is removed).
fn replacements() -> Vec<(&'static str, Option<Value>)> {
    vec![
        ("removed", None),
        ("null", Some(Value::Null)),
        ("zero", Some(json!(0))),
        ("a negative number", Some(json!(-1.5))),
        ("a string", Some(json!("x"))),
        ("an empty string", Some(json!(""))),
        ("a name no identifier has", Some(json!("ids[]"))),
        ("a keyword that cannot be raw", Some(json!("crate"))),
        ("true", Some(json!(true))),
        ("an empty object", Some(json!({}))),
        ("an empty array", Some(json!([]))),
        ("a type list", Some(json!(["string", "null"]))),
        ("a reference to nothing", Some(json!({"$ref": "#/components/schemas/Nowhere"}))),
        ("a self-reference", Some(json!({"$ref": "#"}))),
        // Another place or style for a parameter (as `in` or `style`), or anything it names.
        ("a place", Some(json!("cookie"))),
        ("a style", Some(json!("deepObject"))),
        ("another style", Some(json!("matrix"))),
        ("an odd schema", Some(json!({"type": "array", "items": {"oneOf": [], "enum": []}}))),
    ]
}

fn mutate(document: &Value, pointer: &str, replacement: Option<&Value>) -> Option<Value> {
    let mut mutated = document.clone();
    let (parent, last) = pointer.rsplit_once('/')?;
    let key = last.replace("~1", "/").replace("~0", "~");
    let parent = if parent.is_empty() { Some(&mut mutated) } else { mutated.pointer_mut(parent) }?;
    match (parent, replacement) {
        (Value::Object(map), None) => {
            map.remove(&key);
        }
        (Value::Object(map), Some(value)) => {
            map.insert(key, value.clone());
        }
        (Value::Array(items), None) => {
            items.remove(key.parse::<usize>().ok()?);
        }
        (Value::Array(items), Some(value)) => {
            *items.get_mut(key.parse::<usize>().ok()?)? = value.clone();
        }
        _ => return None,
    }
    Some(mutated)
}

#[test]
fn no_mutated_document_panics_the_generator() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let documents = [
        "samples/bounds.yaml",
        "samples/discriminated.yaml",
        "samples/events.yaml",
        "samples/generality.yaml",
        "samples/multipart.yaml",
        "samples/nullable_and_enums.yaml",
        "samples/openapi_3_1.yaml",
        "samples/openapi_3_2.yaml",
        "samples/parameter_styles.yaml",
        "samples/parameters_and_responses.yaml",
        "samples/query_arrays.yaml",
        "samples/repairs.yaml",
        "samples/security.yaml",
        "samples/untypable.yaml",
        "samples/webhooks.yaml",
        "corpus/keeper.json",
        "corpus/propolis-server.json",
        "corpus/openapi-3.1/tictactoe.yaml",
        "corpus/openapi-3.1/webhook-example.yaml",
    ];
    // Quiet: the panics looked for are caught, and reported below.
    std::panic::set_hook(Box::new(|_| {}));
    // Each document on a worker of its own (the generator is single-threaded), each with a seed
    // of its own, so the mutations do not depend on the order the workers take them in.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut outcome = Outcome::default();
                    loop {
                        let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(name) = documents.get(index) else { return outcome };
                        mutate_document(&root, name, 0x05ee_d0f9_a7e5_u64 ^ (index as u64 + 1), &mut outcome);
                    }
                })
            })
            .collect();
        handles.into_iter().map(|handle| handle.join().expect("a worker ends")).collect()
    });
    let _ = std::panic::take_hook();
    let (generated, refused) =
        (outcomes.iter().map(|o| o.generated).sum::<usize>(), outcomes.iter().map(|o| o.refused).sum::<usize>());
    let panicked: Vec<String> = outcomes.iter().flat_map(|o| o.panicked.clone()).collect();
    let unplaced: Vec<String> = outcomes.iter().flat_map(|o| o.unplaced.clone()).collect();
    eprintln!("{generated} mutated documents generated, {refused} refused, {} panicked", panicked.len());
    assert!(panicked.is_empty(), "the generator panicked on:\n{}", panicked.join("\n"));
    assert!(unplaced.is_empty(), "refusals that do not say where:\n{}", unplaced.join("\n"));
    assert!(generated > 0 && refused > 0, "the mutations both keep documents readable and break them");
}

/// What the mutations of some documents came to.
#[derive(Default)]
struct Outcome {
    generated: usize,
    refused: usize,
    panicked: Vec<String>,
    unplaced: Vec<String>,
}

/// Sixty mutations of the document `name` (under `root`), drawn from `seed`, generated.
fn mutate_document(root: &Path, name: &str, seed: u64, outcome: &mut Outcome) {
    let mut rng = Rng(seed);
    let replacements = replacements();
    let text = std::fs::read_to_string(root.join(name)).unwrap();
    let document: Value = serde_norway::from_str(&text).unwrap();
    let mut nodes = Vec::new();
    pointers(&document, String::new(), &mut nodes);
    for _ in 0..60 {
        let pointer = &nodes[rng.below(nodes.len())];
        let (what, replacement) = &replacements[rng.below(replacements.len())];
        let Some(mutated) = mutate(&document, pointer, replacement.as_ref()) else { continue };
        let text = serde_json::to_string(&mutated).unwrap();
        match catch_unwind(AssertUnwindSafe(|| generate(&text, &Config::sibling_modules(name)))) {
            Ok(Ok(_)) => outcome.generated += 1,
            Ok(Err(error)) => {
                outcome.refused += 1;
                let said = error.to_string();
                // A refusal says where: a JSON pointer (`#/paths/…`, `/components/…`).
                if !said.contains("#/") && !said.starts_with('/') && !said.starts_with("#:") {
                    outcome.unplaced.push(format!("{name}: {pointer} {what}: {said}"));
                }
            }
            Err(panic) => {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                outcome.panicked.push(format!("{name}: {pointer} {what}: {message}"));
            }
        }
    }
}
