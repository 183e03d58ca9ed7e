//! The tool serves what it can of a document: an operation that makes generation fail (a
//! construct no stage can serve yet) is left out of the workspace with a note naming it and why
//! — which `--strict` refuses — and the rest is generated. One operation of 1,500 no longer costs
//! a team the other 1,499. Our own document (`cargo xtask codegen`) is never served in part: there
//! every failure is an error.

use serde_json::Value;

use crate::error::Result;
use crate::read::document::METHODS;
use crate::read::{Note, Serving, Spec};
use crate::write::{Config, Generated};

/// How many operations may be left out before the document is refused as a whole: past this,
/// the cause is the document's, not an operation's.
const AT_MOST: usize = 64;

/// The document `text` read and generated, leaving out each operation that fails (see the
/// module's documentation); what was left out is among the notes.
pub(crate) fn generate(text: &str, config: &Config) -> Result<(Spec, Generated)> {
    let mut document: Option<Value> = None;
    let mut left_out = Vec::new();
    loop {
        let attempt = match &document {
            Some(document) => std::borrow::Cow::Owned(document.to_string()),
            None => std::borrow::Cow::Borrowed(text),
        };
        // The read stage leaves out what it cannot serve in one pass; later stages' failures
        // are found one at a time.
        let error = match crate::timings::timed("read", || Spec::parse_serving(&attempt, Serving::WhatItCan)) {
            Ok(spec) => match super::generate(&spec, config) {
                Ok(mut generated) => {
                    generated.notes.splice(0..0, left_out);
                    return Ok((spec, generated));
                }
                Err(error) => spec.locate(error),
            },
            Err(error) => error,
        };
        let Some((path, method)) = operation_of(&error.chain()) else { return Err(error) };
        let document = match &mut document {
            Some(document) => document,
            None => document.insert(crate::read::text::document_text(text)?),
        };
        let removed = document
            .get_mut("paths")
            .and_then(|paths| paths.get_mut(&path))
            .and_then(Value::as_object_mut)
            .and_then(|item| item.remove(&method));
        if removed.is_none() || left_out.len() == AT_MOST {
            return Err(error);
        }
        let pointer = format!("/paths/{}/{method}", crate::read::document::escape(&path));
        left_out.push(Note { pointer, message: format!("left out of the workspace: {}", error.chain()) });
    }
}

/// The path and method of the first operation `message` points into (`#/paths/{path}/{method}`).
fn operation_of(message: &str) -> Option<(String, String)> {
    let (_, rest) = message.split_once("#/paths/")?;
    let (path, rest) = rest.split_once('/')?;
    let method = rest.split(|c: char| !c.is_ascii_alphabetic()).next()?;
    METHODS.contains(&method).then(|| (crate::read::document::unescape(path), method.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::operation_of;

    #[test]
    fn the_operation_is_found_in_the_message() {
        assert_eq!(
            operation_of("x: #/paths/~1v1~1accounts/get/parameters/0: parameter created is deepObject"),
            Some(("/v1/accounts".into(), "get".into()))
        );
        assert_eq!(
            operation_of("list (GET /a) at #/paths/~1a~1{id}/post, parameter p: not here"),
            Some(("/a/{id}".into(), "post".into()))
        );
        assert_eq!(operation_of("#/components/schemas/A: no"), None);
        assert_eq!(operation_of("#/paths/~1a/parameters/0: not an operation"), None);
    }
}
