//! Where and how an operation is sent: the method and path it is served at (a moved
//! operation's real ones, see `read::marks`) and its method as the request line has it.

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

#[cfg(test)]
mod tests {
    use super::unroutable;

    #[test]
    fn a_path_the_router_cannot_serve_says_why() {
        assert_eq!(unroutable("/responses/{id}"), None);
        assert!(unroutable("/responses?beta=true").unwrap().contains("`?beta=true`"));
        assert!(unroutable("/responses/{id}?beta=true").unwrap().contains("`?beta=true`"));
        assert!(unroutable("/files/{id}{ext}").unwrap().contains("axum's router cannot serve"));
    }
}
