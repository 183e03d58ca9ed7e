//! Operations in groups, each a cargo feature of the standalone client and types crates, so a
//! team using a few operations of a large document compiles only those and the models they
//! reach. An operation's groups are its tags; an operation without tags is grouped by the first
//! segment of its path that is neither a version (`v1`, `v2beta`) nor a parameter
//! (`/v1/customers/{customer}` → `customers`), the way documents without tags name their resources.

use std::collections::{BTreeMap, BTreeSet};

use heck::ToKebabCase;

use crate::read::document::rust_name;

/// Names the generated crates already give features; a group spelled like one gets `tag-` before.
const TAKEN: [&str; 4] = ["default", "tls", "schemars", UNREACHED];

/// The feature of the models no operation reaches (webhook payloads, unreferenced components).
pub(crate) const UNREACHED: &str = "unreached-models";

/// The operations' groups, by the name of the client's method for each (progenitor's, see
/// [`rust_name`]).
#[derive(Debug, Default)]
pub(crate) struct Groups {
    /// Every group, as a cargo feature name.
    pub names: BTreeSet<String>,
    /// Each operation's groups, by its method's name.
    pub of: BTreeMap<String, BTreeSet<String>>,
}

/// The groups of `document`'s operations (the view progenitor reads, so its twins too).
pub(crate) fn of(document: &openapiv3::OpenAPI) -> Groups {
    let mut groups = Groups::default();
    for (path, _, operation) in document.operations() {
        let Some(id) = &operation.operation_id else { continue };
        let mut names: BTreeSet<String> = operation.tags.iter().map(|tag| feature(tag)).collect();
        if names.is_empty() {
            names.insert(feature(resource(path)));
        }
        groups.names.extend(names.iter().cloned());
        groups.of.entry(rust_name(id, false)).or_default().extend(names);
    }
    groups
}

/// The first segment of `path` naming a resource: `other` when there is none (`/`, `/v1`).
fn resource(path: &str) -> &str {
    let version = |segment: &str| {
        segment.strip_prefix(['v', 'V']).is_some_and(|rest| {
            rest.starts_with(|c: char| c.is_ascii_digit())
                && rest.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
        })
    };
    path.split('/')
        .find(|segment| !segment.is_empty() && !segment.starts_with('{') && !version(segment) && *segment != "api")
        .unwrap_or("other")
}

/// A tag as a cargo feature name: kebab-case ASCII letters, digits and dashes.
fn feature(tag: &str) -> String {
    let ascii: String = tag.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { ' ' }).collect();
    let name = ascii.to_kebab_case();
    if name.is_empty() {
        "other".into()
    } else if TAKEN.contains(&name.as_str()) {
        format!("tag-{name}")
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_skip_versions_and_parameters() {
        assert_eq!(resource("/v1/customers/{customer}"), "customers");
        assert_eq!(resource("/api/v2beta/teams"), "teams");
        assert_eq!(resource("/{id}/items"), "items");
        assert_eq!(resource("/v1"), "other");
        assert_eq!(resource("/"), "other");
    }

    #[test]
    fn features_are_cargo_names_and_never_ours() {
        assert_eq!(feature("Code Scanning"), "code-scanning");
        assert_eq!(feature("payment_intents"), "payment-intents");
        assert_eq!(feature("Payment Requests"), "payment-requests");
        assert_eq!(feature("schemars"), "tag-schemars");
        assert_eq!(feature("✓"), "other");
    }
}
