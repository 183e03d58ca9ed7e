//! The documentation written from the document: the Markdown reference and the 3.1 rendition.

pub(crate) mod markdown;
pub(crate) mod rendition;
