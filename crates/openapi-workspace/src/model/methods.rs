//! Where and how an operation is sent: the method and path it is served at (a moved
//! operation's real ones, see `read::marks`) and its method as the request line has it.

use std::collections::HashMap;

use crate::read::document::METHODS;
use crate::read::marks::view_path;

/// `method` (the view's or [`route`]'s) as the request line has it: 3.0's eight upper case,
/// others as the document writes them.
pub(crate) fn on_the_wire(method: &str) -> String {
    match METHODS.contains(&method) {
        true => method.to_uppercase(),
        false => method.to_owned(),
    }
}

/// The method and path the operation at `path` and `method` (the view's) is served at; `marked`:
/// its [`EXTENSION`].
pub(crate) fn route<'a>(path: &'a str, method: &'a str, marked: Option<&'a str>) -> (&'a str, &'a str) {
    match marked {
        Some(real) => (real, path.strip_suffix(&view_path("", real)).unwrap_or(path)),
        None => (method, path),
    }
}

/// Why axum's router cannot serve `path`, if it cannot: a query string in it (which no
/// request's path holds: OpenAI's `/responses?beta=true`, AWS's `/?Action=…`), or a template its
/// matcher refuses (and would refuse as the server starts, a panic: `/{id}?beta=true`,
/// `/{name}:seek` beside another parameter). Asked of matchit, axum's own matcher, at axum's
/// version. The client calls such an operation; the server leaves it out.
pub(crate) fn unroutable(path: &str) -> Option<String> {
    if let Some(at) = path.find(['?', '#']) {
        return Some(format!("its path carries `{}`, which no request's path holds", &path[at..]));
    }
    matchit::Router::new().insert(path, ()).err().map(|error| format!("axum's router cannot serve its path: {error}"))
}

/// Where each of `paths` is served, in their order: its route, or why axum's router cannot serve
/// it. A path that is another's template but for its parameters' names (GitHub's
/// `/attestations/{subject_digest}` beside `/attestations/{attestation_id}`, which OpenAPI says
/// are one path) is served at the first one's route, its parameters renamed by position; one the
/// matcher refuses beside those before it (a conflict) is not served, and neither is one
/// [`unroutable`] alone. Asked of matchit, as axum's router would be when the server starts.
pub(crate) fn routes<'a>(paths: impl IntoIterator<Item = &'a str>) -> HashMap<String, Result<String, String>> {
    let mut matcher = matchit::Router::new();
    // Each template served, and the path whose route it is.
    let mut seen: HashMap<String, &str> = HashMap::new();
    let mut routes = HashMap::new();
    for path in paths {
        if routes.contains_key(path) {
            continue;
        }
        let template = crate::read::document::template(path);
        let route = match seen.get(&template) {
            Some(first) => Ok((*first).to_owned()),
            None => match unroutable(path) {
                Some(why) => Err(why),
                None => match matcher.insert(path, ()) {
                    Ok(()) => {
                        seen.insert(template, path);
                        Ok(path.to_owned())
                    }
                    Err(error) => Err(format!("axum's router cannot serve its path beside the others: {error}")),
                },
            },
        };
        routes.insert(path.to_owned(), route);
    }
    routes
}

#[cfg(test)]
mod tests {
    use super::{routes, unroutable};

    #[test]
    fn paths_alike_but_for_their_names_share_a_route() {
        let found = routes([
            "/orgs/{org}/attestations/{attestation_id}",
            "/orgs/{org}/attestations/{subject_digest}",
            "/files/{id}",
            "/files/{name}/versions",
            "/responses?beta=true",
        ]);
        let route = |path: &str| found[path].clone();
        let first = "/orgs/{org}/attestations/{attestation_id}";
        assert_eq!(route(first), Ok(first.to_owned()));
        assert_eq!(route("/orgs/{org}/attestations/{subject_digest}"), Ok(first.to_owned()));
        assert_eq!(route("/files/{id}"), Ok("/files/{id}".to_owned()));
        // Another template, though its parameter is named otherwise: a route of its own.
        assert_eq!(route("/files/{name}/versions"), Ok("/files/{name}/versions".to_owned()));
        assert!(route("/responses?beta=true").unwrap_err().contains("`?beta=true`"));
    }

    #[test]
    fn a_path_the_router_cannot_serve_says_why() {
        assert_eq!(unroutable("/responses/{id}"), None);
        assert!(unroutable("/responses?beta=true").unwrap().contains("`?beta=true`"));
        assert!(unroutable("/responses/{id}?beta=true").unwrap().contains("`?beta=true`"));
        assert!(unroutable("/files/{id}{ext}").unwrap().contains("axum's router cannot serve"));
    }
}
