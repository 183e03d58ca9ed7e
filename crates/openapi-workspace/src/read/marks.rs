//! The marks the read view leaves where OpenAPI 3.0's model has no word for what a 3.1 or 3.2
//! document says (`openapi32` writes them; the model reads them): extensions on the view, and
//! the paths moved operations take in it.

use crate::read::document::METHODS;

/// The view's mark on a moved operation: the method it is sent with.
pub(crate) const METHOD: &str = "x-codegen-method";

/// The view's path of the operation of `method` at `path`.
pub(crate) fn view_path(path: &str, method: &str) -> String {
    format!("{path}~{method}")
}

/// Whether `method` is a method name HTTP allows (a token) that none of the path item's fixed
/// fields (3.0's eight and 3.2's `query`) names.
pub(crate) fn is_additional(method: &str) -> bool {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    !method.is_empty()
        && method.chars().all(token)
        && !METHODS.iter().chain(&["query"]).any(|fixed| fixed.eq_ignore_ascii_case(method))
}

/// The view's mark on a media type whose `schema` is its items'.
pub(crate) const ITEMS: &str = "x-codegen-items";

/// Whether `media` (an essence) is a stream of JSON values the generator serves.
pub(crate) fn streamed(media: &str) -> bool {
    ["application/jsonl", "application/x-ndjson", "application/x-jsonlines", "application/json-seq"].contains(&media)
}

/// The extension `openapi32` marks a 3.2 `style: cookie` parameter with (3.0's model has no such
/// style, so the parameter reads as `form`).
pub(crate) const COOKIE_STYLE: &str = "x-openapi-style-cookie";

/// The view's mark on a 3.1 tuple (`prefixItems`), read as an array of any of its item schemas:
/// those schemas in their order, which the mock answers one each of.
pub(crate) const PREFIX_ITEMS: &str = "x-codegen-prefix-items";

/// The view's mark on a discriminated union: the arm (a `$ref`) that a value whose tag names no
/// other arm is (OpenAPI 3.2's `defaultMapping`; `inheritance` writes it for a parent's base).
pub(crate) const DEFAULT_MAPPING: &str = "x-codegen-default-mapping";
