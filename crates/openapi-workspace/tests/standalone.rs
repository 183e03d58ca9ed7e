//! The standalone workspace's own rules, quickly: names it refuses and the versions its manifests
//! ask for. Each corpus document generated as a workspace of its own and compiled, as its users
//! build it, is `cargo xtask corpus` (those compiles take minutes; `.ci/run` runs it).

use std::path::Path;

#[test]
fn crate_names_are_checked() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/samples/bounds.yaml")).unwrap();
    for bad in ["", "Upper", "9lives", "under_score", "trailing-"] {
        let error = openapi_workspace::standalone(&text, bad, "bounds.yaml").unwrap_err().to_string();
        assert!(error.contains("cannot name crates"), "{bad:?}: {error}");
    }
}

/// The version a manifest line asks for: `name = "1"` or `name = { version = "1", .. }`.
fn requirement(line: &str) -> Option<(&str, &str)> {
    let (name, rest) = line.split_once(" = ")?;
    let rest = rest.strip_prefix("{ version = ").unwrap_or(rest);
    let version = rest.strip_prefix('"')?.split('"').next()?;
    Some((name.trim(), version))
}

#[test]
fn standalone_manifests_ask_for_the_versions_our_crates_build_with() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let ours = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let ours: Vec<(&str, &str)> = ours.lines().filter_map(requirement).collect();
    let text = std::fs::read_to_string(root.join("crates/openapi-workspace/tests/samples/bounds.yaml")).unwrap();
    let files = openapi_workspace::standalone(&text, "sample", "bounds.yaml").unwrap().files;
    let mut checked = 0;
    for file in files.iter().filter(|f| f.path.ends_with("/Cargo.toml")) {
        let dependencies = file.contents.split("[dependencies]").nth(1).unwrap().split("\n[").next().unwrap();
        for (name, version) in dependencies.lines().filter_map(requirement) {
            let workspace = ours.iter().find(|(n, _)| *n == name).map(|(_, v)| *v);
            assert_eq!(workspace, Some(version), "{}: {name}", file.path);
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} dependencies read");
}
