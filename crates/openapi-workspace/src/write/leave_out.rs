//! The tool serves what it can of a document: an operation that makes generation fail (a
//! construct no stage can serve yet) is left out of the workspace with a note naming it and why
//! — which `--strict` refuses — and the rest is generated. One operation of 1,500 no longer costs
//! a team the other 1,499. Our own document (`cargo xtask codegen`) is never served in part: there
//! every failure is an error.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::read::document::METHODS;
use crate::read::{Note, Serving, Spec};
use crate::write::{Config, Generated};

/// How many rounds of leaving out may be run: each leaves out every operation its stage found
/// failing (the client's, all at once; the model's, the first), so a further round is needed only
/// where a later stage finds others. Past this, the cause is the document's.
const ROUNDS: usize = 64;

/// The document `text` read and generated, leaving out each operation that fails (see the
/// module's documentation); what was left out is among the notes.
pub(crate) fn generate(text: &str, config: &Config) -> Result<(Spec, Generated)> {
    let (spec, mut generated, left_out) = leaving_out(text, "the workspace", |spec| super::generate(spec, config))?;
    generated.notes.splice(0..0, left_out);
    Ok((spec, generated))
}

/// `stage` run on the document `text` as read, leaving out each operation it fails on, until it
/// runs through: its output, and a note for each operation left out of `what` (its notes say).
pub(crate) fn leaving_out<T>(
    text: &str,
    what: &str,
    stage: impl Fn(&Spec) -> Result<T>,
) -> Result<(Spec, T, Vec<Note>)> {
    let mut document: Option<Value> = None;
    let mut left_out = Vec::new();
    for _ in 0..ROUNDS {
        let attempt = match &document {
            Some(document) => std::borrow::Cow::Owned(document.to_string()),
            None => std::borrow::Cow::Borrowed(text),
        };
        // The read stage leaves out what it cannot serve in one pass; the writers' failures
        // come back as the operations they were found in (`Error::Operations`, or one pointer).
        let error = match crate::timings::timed("read", || Spec::parse_serving(&attempt, Serving::WhatItCan)) {
            Ok(spec) => match stage(&spec) {
                Ok(output) => return Ok((spec, output, left_out)),
                Err(error) => spec.locate(error),
            },
            Err(error) => error,
        };
        let failing = failing(&error);
        if failing.is_empty() {
            return Err(error);
        }
        // What the failed attempt held is freed: the next starts from the size of the text.
        super::memory::release();
        let document = match &mut document {
            Some(document) => document,
            None => document.insert(crate::read::text::document_text(text)?),
        };
        for (path, method, why) in failing {
            let removed = document
                .get_mut("paths")
                .and_then(|paths| paths.get_mut(&path))
                .and_then(Value::as_object_mut)
                .and_then(|item| item.remove(&method));
            if removed.is_none() {
                return Err(error);
            }
            let pointer = format!("/paths/{}/{method}", crate::read::document::escape(&path));
            left_out.push(Note { pointer, message: format!("left out of {what}: {why}") });
        }
    }
    Err(Error::Document(format!(
        "still failing after {ROUNDS} rounds of leaving operations out ({} left out)",
        left_out.len()
    )))
}

/// The operations `error` says fail (its fields: the operations a writer found, or the one
/// its pointer is in), each with why.
fn failing(error: &Error) -> Vec<(String, String, String)> {
    match error {
        Error::Operations(failing) => {
            failing.iter().map(|f| (f.path.clone(), f.method.clone(), f.error.chain())).collect()
        }
        Error::At { at, .. } => {
            operation_of(at).map(|(path, method)| (path, method, error.chain())).into_iter().collect()
        }
        _ => Vec::new(),
    }
}

/// The path and method of the first operation `pointer` points into (`#/paths/{path}/{method}`,
/// after what names the operation, if anything does).
fn operation_of(pointer: &str) -> Option<(String, String)> {
    let (_, rest) = pointer.split_once("#/paths/")?;
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
