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
