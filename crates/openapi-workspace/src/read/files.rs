//! A document split across files (DigitalOcean's: a path's operation, a response, a schema each
//! in a file of its own) made one document before anything else reads it. A `$ref` to another
//! file (`models/droplet.yml`, `shared/parameters.yml#/per_page`) is resolved from the directory
//! of the file that holds it, never from the network. What it names becomes:
//!
//! - where a schema stands, a component of `components/schemas` (named after the fragment's last
//!   segment, or the file's name), referred to by every `$ref` that names it — one model, however
//!   many places use it, and recursion stays a reference;
//! - anywhere else (an operation, a parameter, a response, a description), the value itself, in
//!   place.
//!
//! A `#/…` reference inside another file means that file's own fragment and is read so. The
//! entry file's own `#/…` references are left as they are.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{Error, Result, bail};
use crate::read::document::{escape, rust_name, unescape};

/// The document at `path`, every reference to another file resolved (see the module's
/// documentation); the text itself when it names no other file.
pub(crate) fn bundle(path: &Path) -> Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    if !text.contains("$ref") {
        return Ok(text);
    }
    let root = super::text::document_text(&text)?;
    if !names_other_files(&root) {
        return Ok(text);
    }
    let taken = root.pointer("/components/schemas").and_then(Value::as_object).into_iter().flatten();
    let taken = taken.map(|(name, _)| rust_name(name, true)).collect();
    let mut bundler = Bundler { files: BTreeMap::new(), components: BTreeMap::new(), taken };
    let entry = path.to_owned();
    let mut root = root;
    bundler.walk(&mut root, &entry, true, Place::Other, 0, "")?;
    let schemas = root
        .as_object_mut()
        .ok_or_else(|| Error::at(path.display(), "the document is not an object"))?
        .entry("components")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| Error::at("#/components", "must be an object"))?
        .entry("schemas")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(schemas) = schemas.as_object_mut() else {
        bail!(String::from("#/components/schemas"), "must be an object")
    };
    for (_, (name, schema)) in std::mem::take(&mut bundler.components) {
        schemas.insert(name, schema.expect("every component is read before the bundle is written"));
    }
    Ok(serde_json::to_string(&root).expect("JSON values serialise"))
}

/// Whether any `$ref` in `value` names another file.
fn names_other_files(value: &Value) -> bool {
    match value {
        Value::Object(map) => {
            map.get("$ref").and_then(Value::as_str).is_some_and(|r| !r.starts_with('#'))
                || map.values().any(names_other_files)
        }
        Value::Array(items) => items.iter().any(names_other_files),
        _ => false,
    }
}

/// Whether a value stands where a schema does: what a reference there becomes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    Schema,
    Other,
}

/// What a key makes of the value under it, in a value at `place`.
fn child_place(place: Place, key: &str) -> Place {
    match (place, key) {
        (_, "schema") => Place::Schema,
        (
            Place::Schema,
            "items"
            | "additionalProperties"
            | "not"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "allOf"
            | "anyOf"
            | "oneOf"
            | "prefixItems",
        ) => Place::Schema,
        _ => Place::Other,
    }
}

/// Keys whose value is a map of names to schemas.
fn names_schemas(place: Place, key: &str) -> bool {
    place == Place::Schema && matches!(key, "properties" | "patternProperties" | "$defs" | "definitions")
}

struct Bundler {
    /// Files read, by canonical path.
    files: BTreeMap<PathBuf, Value>,
    /// Components made of references to other files: (file, fragment) → name and schema
    /// (`None` while it is being read, so a schema that refers to itself stays a reference).
    components: BTreeMap<(PathBuf, String), (String, Option<Value>)>,
    /// Rust names of `components/schemas`, taken.
    taken: BTreeSet<String>,
}

impl Bundler {
    /// Resolves the references in `value`, which is in `file` (`entry`: the document's own).
    fn walk(
        &mut self,
        value: &mut Value,
        file: &Path,
        entry: bool,
        place: Place,
        depth: usize,
        at: &str,
    ) -> Result<()> {
        if depth > 256 {
            bail!(at, "references to other files nest too deep (a reference that leads back to itself?)");
        }
        match value {
            Value::Object(map) => {
                if let Some(reference) = map.get("$ref").and_then(Value::as_str).map(str::to_owned)
                    && (!entry || !reference.starts_with('#'))
                {
                    *value = self.resolved(&reference, file, place, depth, at)?;
                    return Ok(());
                }
                // `components/schemas` of any file holds schemas, as `properties` does.
                let parent_names_schemas = at.ends_with("/components/schemas") || at == "/components/schemas";
                for (key, child) in map.iter_mut() {
                    let here = format!("{at}/{}", escape(key));
                    // Values, not documents: a `$ref` in an example is the example's.
                    // In a schema every key is a keyword (names are under `properties`), so `x-` is
                    // an extension; elsewhere it may be a name (a header's, `x-request-id`).
                    let value_of_schema = place == Place::Schema
                        && (key.starts_with("x-") || matches!(key.as_str(), "enum" | "default" | "const"));
                    if key == "example" || value_of_schema {
                        continue;
                    }
                    let child_place = if parent_names_schemas { Place::Schema } else { child_place(place, key) };
                    if names_schemas(place, key) && child.is_object() {
                        // DigitalOcean refers to a whole `properties` map in another file.
                        let reference = child.get("$ref").and_then(Value::as_str).map(str::to_owned);
                        let (mut named, base, entry) = match reference {
                            Some(reference) if !entry || !reference.starts_with('#') => {
                                let (target, fragment) = target(&reference, file, &here)?;
                                (self.fragment(&target, &fragment, &here)?, target, false)
                            }
                            _ => (child.take(), file.to_owned(), entry),
                        };
                        for (name, schema) in named.as_object_mut().into_iter().flatten() {
                            let there = format!("{here}/{}", escape(name));
                            self.walk(schema, &base, entry, Place::Schema, depth + 1, &there)?;
                        }
                        *child = named;
                        continue;
                    }
                    self.walk(child, file, entry, child_place, depth + 1, &here)?;
                }
            }
            Value::Array(items) => {
                for (index, item) in items.iter_mut().enumerate() {
                    self.walk(item, file, entry, place, depth + 1, &format!("{at}/{index}"))?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// What the reference `reference`, in `file`, becomes at `place`.
    fn resolved(&mut self, reference: &str, file: &Path, place: Place, depth: usize, at: &str) -> Result<Value> {
        let (target_file, fragment) = target(reference, file, at)?;
        let fragment = fragment.as_str();
        let key = (target_file.clone(), fragment.to_owned());
        if place == Place::Schema {
            if let Some((name, _)) = self.components.get(&key) {
                return Ok(Value::Object(reference_to(name)));
            }
            let name = self.claim(&component_name(&target_file, fragment));
            self.components.insert(key.clone(), (name.clone(), None));
            let mut schema = self.fragment(&target_file, fragment, at)?;
            self.walk(&mut schema, &target_file, false, Place::Schema, depth + 1, &format!("{at}→{reference}"))?;
            self.components.insert(key, (name.clone(), Some(schema)));
            return Ok(Value::Object(reference_to(&name)));
        }
        let mut value = self.fragment(&target_file, fragment, at)?;
        self.walk(&mut value, &target_file, false, place, depth + 1, &format!("{at}→{reference}"))?;
        Ok(value)
    }

    /// The value at `fragment` (a JSON pointer, empty for the whole) of `file`.
    fn fragment(&mut self, file: &Path, fragment: &str, at: &str) -> Result<Value> {
        if !self.files.contains_key(file) {
            let text = std::fs::read_to_string(file).map_err(|e| Error::io(file, e))?;
            let value = super::text::document_text(&text)
                .map_err(|e| Error::InFile { path: file.to_owned(), source: Box::new(e) })?;
            self.files.insert(file.to_owned(), value);
        }
        let whole = &self.files[file];
        let found = if fragment.is_empty() { Some(whole) } else { whole.pointer(fragment) };
        found.cloned().ok_or_else(|| Error::at(at, format!("{}#{fragment}: no such fragment", file.display())))
    }

    /// `wanted`, or `wanted2`, `wanted3`… when a schema already has that Rust name.
    fn claim(&mut self, wanted: &str) -> String {
        let mut name = wanted.to_owned();
        let mut n = 1;
        while !self.taken.insert(rust_name(&name, true)) {
            n += 1;
            name = format!("{wanted}{n}");
        }
        name
    }
}

/// The file and fragment `reference`, in `file`, names.
fn target(reference: &str, file: &Path, at: &str) -> Result<(PathBuf, String)> {
    let (target, fragment) = reference.split_once('#').unwrap_or((reference, ""));
    if target.contains("://") {
        bail!(at, "{reference}: a reference to the network is not followed; save the document beside this one");
    }
    if target.is_empty() {
        return Ok((file.to_owned(), fragment.to_owned()));
    }
    let joined = file.parent().unwrap_or(Path::new(".")).join(target);
    let found = joined.canonicalize().map_err(|e| Error::at(at, format!("{reference}: {}: {e}", joined.display())))?;
    Ok((found, fragment.to_owned()))
}

/// `{"$ref": "#/components/schemas/{name}"}`.
fn reference_to(name: &str) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("$ref".into(), Value::String(format!("#/components/schemas/{}", escape(name))));
    map
}

/// A component's name: the fragment's last segment, or the file's name without its extension.
fn component_name(file: &Path, fragment: &str) -> String {
    let last = fragment.rsplit('/').next().filter(|s| !s.is_empty()).map(unescape);
    last.unwrap_or_else(|| file.file_stem().and_then(|s| s.to_str()).unwrap_or("schema").to_owned())
}

#[cfg(test)]
mod tests {
    use super::bundle;

    #[test]
    fn references_to_other_files_are_resolved_from_the_document_directory() {
        let dir = tempfile::tempdir().unwrap();
        let write = |path: &str, text: &str| {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        write(
            "api.yaml",
            "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /things:\n    get:\n      $ref: ops/list.yml\n",
        );
        write(
            "ops/list.yml",
            "operationId: list\nparameters:\n  - $ref: '../shared/params.yml#/per_page'\nresponses:\n  '200':\n    description: ok\n    content:\n      application/json:\n        schema:\n          type: array\n          items:\n            $ref: ../models/thing.yml\n",
        );
        write("shared/params.yml", "per_page:\n  name: per_page\n  in: query\n  schema: {type: integer}\n");
        write(
            "models/thing.yml",
            "type: object\nproperties:\n  parent:\n    $ref: thing.yml\n  meta:\n    $ref: '#/meta'\nmeta:\n  type: string\n",
        );
        let bundled: serde_json::Value = serde_json::from_str(&bundle(&dir.path().join("api.yaml")).unwrap()).unwrap();
        let operation = &bundled["paths"]["/things"]["get"];
        assert_eq!(operation["operationId"], "list");
        assert_eq!(operation["parameters"][0]["name"], "per_page");
        let items = &operation["responses"]["200"]["content"]["application/json"]["schema"]["items"];
        assert_eq!(items["$ref"], "#/components/schemas/thing");
        let thing = &bundled["components"]["schemas"]["thing"];
        assert_eq!(thing["properties"]["parent"]["$ref"], "#/components/schemas/thing", "recursion stays a reference");
        assert_eq!(bundled["components"]["schemas"]["meta"]["type"], "string", "#/… in another file is that file's");
    }

    #[test]
    fn a_reference_to_the_network_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api.yaml");
        std::fs::write(
            &path,
            "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\ncomponents:\n  schemas:\n    a: {$ref: 'https://example.com/a.yaml'}\n",
        )
        .unwrap();
        let error = bundle(&path).unwrap_err().to_string();
        assert!(error.contains("network"), "{error}");
    }
}
