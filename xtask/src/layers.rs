//! The layer rules, held on the source (see ARCHITECTURE.md), as rust-analyzer's tidy holds its
//! own: each crate's modules read with `syn`, every path they name resolved to the module it
//! reaches (a parent and its children are one unit).
//!
//! - The sandbox: `http` may use `domain`; `workers` may use `domain`; `domain` uses neither;
//!   `http` and `workers` do not use each other; `http` writes its access log through `logs`,
//!   which lays lines out by `log_format`. `lib.rs` and the binary's `command_line.rs` wire them
//!   together. The store crate is named only by `domain`, `workers` (the outbox) and
//!   `lib.rs` (opening it). No SQL text, JSON path or database crate anywhere in the sandbox:
//!   that is the store's.
//! - The generator: its stages flow one way, `write` → `model` → `read`, each using only those
//!   below it, `error` and `timings` (`diff`, beside `write`, likewise); `lib.rs` and the binary
//!   wire them together.
//! - No crate of the workspace has modules importing each other in a circle.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use syn::visit::Visit;

const SANDBOX: &str = "crates/payments-sandbox/src";
const GENERATOR: &str = "crates/openapi-workspace/src";

/// A module, as its path from the crate root (`["domain", "transactions"]`).
type Module = Vec<String>;

fn source_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
}

fn module_of(src: &Path, file: &Path) -> Module {
    let relative = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Module = relative.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib" | "main")) {
        parts.pop();
    }
    parts
}

/// Every path a file names (in `use` trees and in code), as written.
#[derive(Default)]
struct Paths {
    found: Vec<Vec<String>>,
    strings: Vec<String>,
}

impl Paths {
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => self.found.push([prefix.clone(), vec![n.ident.to_string()]].concat()),
            syn::UseTree::Rename(r) => self.found.push([prefix.clone(), vec![r.ident.to_string()]].concat()),
            syn::UseTree::Glob(_) => self.found.push(prefix.clone()),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| self.use_tree(prefix, t)),
        }
    }
}

impl<'ast> Visit<'ast> for Paths {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    /// A unit test module may reach across layers (a mechanism's test holding every user of it
    /// to it); the rules are on the code that ships.
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let test_only = item
            .attrs
            .iter()
            .any(|a| a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|word| word == "test"));
        if !test_only {
            syn::visit::visit_item_mod(self, item);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.found.push(path.segments.iter().map(|s| s.ident.to_string()).collect());
        syn::visit::visit_path(self, path);
    }

    fn visit_lit_str(&mut self, literal: &'ast syn::LitStr) {
        self.strings.push(literal.value());
    }
}

/// `path` as written in `module`, as the module it reaches (the longest known prefix), when it
/// reaches one of this crate's modules.
fn resolve(module: &Module, path: &[String], modules: &BTreeSet<Module>) -> Option<Module> {
    let mut absolute: Module = match path.first().map(String::as_str) {
        Some("crate") => path[1..].to_vec(),
        Some("super") => {
            let mut base = module.clone();
            let mut rest = path;
            while rest.first().map(String::as_str) == Some("super") {
                base.pop();
                rest = &rest[1..];
            }
            [base, rest.to_vec()].concat()
        }
        Some("self") => [module.clone(), path[1..].to_vec()].concat(),
        // A sibling of a root file's modules (`domain::Sandbox` written in lib.rs or main.rs).
        Some(first) if module.is_empty() && modules.contains(&vec![first.to_owned()]) => path.to_vec(),
        _ => return None,
    };
    while !absolute.is_empty() && !modules.contains(&absolute) {
        absolute.pop();
    }
    (!absolute.is_empty()).then_some(absolute)
}

struct Crate {
    /// For each module, the modules it uses, and the external crates it names.
    uses: BTreeMap<Module, BTreeSet<Module>>,
    crates: BTreeMap<Module, BTreeSet<String>>,
    strings: BTreeMap<Module, Vec<String>>,
}

/// The crate whose sources are in `src` (a path from the repository's root).
fn read_crate(src: &str) -> Crate {
    let src = crate::workspace_root().join(src);
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let parsed: Vec<(Module, Paths)> = files
        .iter()
        .map(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            let syntax = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            let mut paths = Paths::default();
            paths.visit_file(&syntax);
            (module_of(&src, file), paths)
        })
        .collect();
    let modules: BTreeSet<Module> = parsed.iter().map(|(m, _)| m.clone()).collect();
    let mut uses = BTreeMap::new();
    let mut crates = BTreeMap::new();
    let mut strings = BTreeMap::new();
    for (module, paths) in parsed {
        let used: BTreeSet<Module> = paths
            .found
            .iter()
            .filter_map(|p| resolve(&module, p, &modules))
            .filter(|target| !target.starts_with(&module) && !module.starts_with(target))
            .collect();
        let named: BTreeSet<String> = paths.found.iter().filter_map(|p| p.first().cloned()).collect();
        uses.entry(module.clone()).or_insert_with(BTreeSet::new).extend(used);
        crates.entry(module.clone()).or_insert_with(BTreeSet::new).extend(named);
        strings.entry(module).or_insert_with(Vec::new).extend(paths.strings);
    }
    Crate { uses, crates, strings }
}

fn layer(module: &Module) -> &str {
    module.first().map_or("root", String::as_str)
}

#[test]
fn the_sandbox_s_layers_use_only_the_layers_below_them() {
    let krate = read_crate(SANDBOX);
    let allowed: &[(&str, &str)] = &[
        ("http", "domain"),
        ("workers", "domain"),
        ("http", "logs"),
        ("logs", "log_format"),
        ("root", "*"),
        ("command_line", "*"),
    ];
    let mut broken = vec![];
    for (module, used) in &krate.uses {
        for target in used {
            let (from, to) = (layer(module), layer(target));
            let fine = from == to || allowed.iter().any(|(f, t)| *f == from && (*t == to || *t == "*"));
            if !fine {
                broken.push(format!("{} uses {}", module.join("::"), target.join("::")));
            }
        }
    }
    assert!(broken.is_empty(), "layer rule broken:\n{}", broken.join("\n"));
    // The test sees what it checks: the layers exist and use each other as expected.
    assert!(krate.uses[&vec!["http".to_owned(), "api".to_owned()]].contains(&vec!["domain".to_owned()]));
    assert!(krate.uses[&vec!["workers".to_owned(), "rails".to_owned()]].contains(&vec!["domain".to_owned()]));
}

#[test]
fn only_the_domain_and_the_workers_name_the_store() {
    let krate = read_crate(SANDBOX);
    let naming: Vec<String> = krate
        .crates
        .iter()
        .filter(|(_, named)| named.contains("payments_store"))
        .map(|(module, _)| layer(module).to_owned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(naming, ["domain", "root", "workers"]);
}

#[test]
fn no_sql_json_paths_or_database_crates_outside_the_store() {
    let krate = read_crate(SANDBOX);
    let sql = ["SELECT ", "INSERT INTO", "DELETE FROM", "CREATE TABLE", "CREATE INDEX", "json_extract", "PRAGMA "];
    let mut found = vec![];
    for (module, strings) in &krate.strings {
        for text in strings {
            let upper = text.to_uppercase();
            let json_path = text.starts_with("$.") || text.contains("'$.");
            let update = upper.contains("UPDATE ") && upper.contains(" SET ");
            if sql.iter().any(|k| upper.contains(&k.to_uppercase())) || json_path || update {
                found.push(format!("{}: {text:?}", module.join("::")));
            }
        }
    }
    assert!(found.is_empty(), "SQL outside the store:\n{}", found.join("\n"));
    let database_crates =
        ["sqlx", "rusqlite", "libsqlite3_sys", "tokio_postgres", "deadpool_postgres", "postgres", "diesel", "sea_orm"];
    for (module, named) in &krate.crates {
        for name in database_crates {
            assert!(!named.contains(name), "{} names {name}", module.join("::"));
        }
    }
    let manifest = std::fs::read_to_string(crate::workspace_root().join("crates/payments-sandbox/Cargo.toml")).unwrap();
    let dependencies = manifest.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
    for line in dependencies.lines() {
        let name = line.split(['=', '.']).next().unwrap_or_default().trim().replace('-', "_");
        assert!(!database_crates.contains(&name.as_str()), "the sandbox depends on {name}: that is the store's");
    }
}

#[test]
fn the_generator_s_stages_flow_one_way() {
    let krate = read_crate(GENERATOR);
    let below = |stage: &str| -> &[&str] {
        match stage {
            "error" | "timings" => &[],
            "read" => &["error", "timings"],
            "model" => &["read", "error", "timings"],
            "write" => &["model", "read", "error", "timings"],
            // Beside `write`: two documents read as the generator reads one, compared.
            "diff" => &["model", "read", "error", "timings"],
            // lib.rs and the binary wire the stages together.
            _ => &["*"],
        }
    };
    let mut broken = vec![];
    for (module, used) in &krate.uses {
        for target in used {
            let (from, to) = (layer(module), layer(target));
            if from != to && !below(from).iter().any(|t| *t == to || *t == "*") {
                broken.push(format!("{} uses {}", module.join("::"), target.join("::")));
            }
        }
    }
    assert!(broken.is_empty(), "the generator's stages flow write -> model -> read:\n{}", broken.join("\n"));
    let stages: BTreeSet<&str> = krate.uses.keys().map(layer).collect();
    for stage in ["read", "model", "write", "diff", "error"] {
        assert!(stages.contains(stage), "no {stage} stage in {stages:?}");
    }
    let model = krate.uses.iter().filter(|(m, _)| layer(m) == "model").flat_map(|(_, used)| used);
    assert!(model.clone().any(|t| layer(t) == "read"), "the test sees the model use the read stage");
}

/// Depth-first search for a cycle among `graph`'s modules.
fn circle(graph: &BTreeMap<Module, BTreeSet<Module>>) -> Option<Vec<Module>> {
    fn visit(
        node: &Module,
        graph: &BTreeMap<Module, BTreeSet<Module>>,
        path: &mut Vec<Module>,
        done: &mut BTreeSet<Module>,
    ) -> Option<Vec<Module>> {
        if let Some(at) = path.iter().position(|m| m == node) {
            return Some(path[at..].to_vec());
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.clone());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.clone());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|module| visit(module, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_has_modules_importing_each_other_in_a_circle() {
    let root = crate::workspace_root();
    let mut sources: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .unwrap()
        .map(|entry| entry.unwrap().path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    sources.extend([root.join("xtask/src"), root.join("tests/support")]);
    let mut edges = 0;
    for src in &sources {
        let krate = read_crate(src.strip_prefix(&root).unwrap().to_str().unwrap());
        edges += krate.uses.values().map(BTreeSet::len).sum::<usize>();
        if let Some(cycle) = circle(&krate.uses) {
            let names: Vec<String> = cycle.iter().map(|m| m.join("::")).collect();
            panic!("{}: modules import each other in a circle: {}", src.display(), names.join(" -> "));
        }
    }
    assert!(edges > 100, "the graphs were read ({edges} edges in {} crates)", sources.len());
    // The search finds a circle where there is one.
    let m = |name: &str| vec![name.to_owned()];
    let graph = BTreeMap::from([(m("a"), BTreeSet::from([m("b")])), (m("b"), BTreeSet::from([m("a")]))]);
    assert!(circle(&graph).is_some());
}
