//! Path parameters in the default style (`simple`, one scalar each), read as axum's `Path`
//! deserializes the route's parameters: in place, where `RawPathParams` copies their list for
//! every request (*Why, measured: The generated handlers*). A segment that does not read keeps
//! its text, so that it is refused after the caller is authenticated, in the words it always was.

use std::fmt;

use axum::extract::RawPathParams;
use axum::extract::rejection::PathRejection;
use serde::de::{DeserializeOwned, Deserializer, Visitor, value::BorrowedStrDeserializer};
use serde::{Deserialize, de};

use super::{ApiError, canonical_uuid, parse_text};

/// A path parameter read as its schema's type `T`, or its text when it does not read as one.
pub struct Segment<T>(Reading<T>);

/// A segment read as what it stands for, or the text that did not read as one (refused once
/// the caller is known, with that text).
enum Reading<T> {
    Read(T),
    Unread(String),
}

impl<T: DeserializeOwned> Segment<T> {
    /// Parameter `name` of a route read whole (one of its parameters has a style).
    pub fn of(path: &RawPathParams, name: &str) -> Result<Self, ApiError> {
        Ok(Self::from_text(text(path, name)?))
    }

    fn from_text(text: &str) -> Self {
        Segment(read(text).map_or_else(|| Reading::Unread(text.to_owned()), Reading::Read))
    }

    /// The value, or `400` naming parameter `name` and the text given.
    pub fn read(self, name: &str) -> Result<T, ApiError> {
        match self.0 {
            Reading::Read(value) => Ok(value),
            Reading::Unread(raw) => parse_text(&raw)
                .map_err(|e| ApiError::bad_request(format!("path parameter `{name}`: {raw:?} is not valid ({e})"))),
        }
    }
}

/// A path parameter that is an id: a UUID in its one canonical spelling, lower-case and
/// hyphenated, or its text when it is not one.
pub struct Id(Reading<uuid::Uuid>);

impl Id {
    /// Parameter `name` of a route read whole (one of its parameters has a style).
    pub fn of(path: &RawPathParams, name: &str) -> Result<Self, ApiError> {
        Ok(Self::from_text(text(path, name)?))
    }

    fn from_text(text: &str) -> Self {
        Id(canonical_uuid(text).map_or_else(|| Reading::Unread(text.to_owned()), Reading::Read))
    }

    /// The id. Any other text names nothing here, so it is `404`, as an unknown id is.
    pub fn read(self) -> Result<uuid::Uuid, ApiError> {
        match self.0 {
            Reading::Read(id) => Ok(id),
            Reading::Unread(raw) => {
                Err(ApiError::names_nothing(format!("{raw:?} is not an id here (ids are lower-case hyphenated UUIDs)")))
            }
        }
    }
}

/// The route's parameters could not be read at all: one was not UTF-8 once percent-decoded
/// (`400`, as `RawPathParams` said it), or the route and the handler disagree (a bug: `500`).
pub fn refused(rejection: PathRejection) -> ApiError {
    // No `let` chains: this file is copied into workspaces of edition 2021.
    match &rejection {
        PathRejection::FailedToDeserializePathParams(failed) => match failed.kind() {
            axum::extract::path::ErrorKind::InvalidUtf8InPathParam { key } => {
                ApiError::bad_request(format!("Invalid UTF-8 in `{key}`"))
            }
            _ => ApiError::new(rejection.status(), rejection.body_text()),
        },
        _ => ApiError::new(rejection.status(), rejection.body_text()),
    }
}

/// The text of path parameter `name`, as the route matched it.
pub(crate) fn text<'a>(path: &'a RawPathParams, name: &str) -> Result<&'a str, ApiError> {
    path.iter()
        .find_map(|(key, value)| (key == name).then_some(value))
        .ok_or_else(|| ApiError::bad_request(format!("path parameter `{name}` is missing")))
}

/// A failure that says nothing, so that trying a reading costs no allocation.
#[derive(Debug)]
struct Unread;

impl fmt::Display for Unread {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unread")
    }
}

impl std::error::Error for Unread {}

impl de::Error for Unread {
    fn custom<M: fmt::Display>(_: M) -> Self {
        Unread
    }
}

/// `text` as `T`, as [`parse_text`] reads it: as a string first, then as the JSON literal it spells.
fn read<T: DeserializeOwned>(text: &str) -> Option<T> {
    T::deserialize(BorrowedStrDeserializer::<Unread>::new(text)).ok().or_else(|| serde_json::from_str(text).ok())
}

/// Reads a segment's text with the function it holds.
struct Text<F>(F);

impl<'de, V, F: FnOnce(&str) -> V> Visitor<'de> for Text<F> {
    type Value = V;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a path segment")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<V, E> {
        Ok((self.0)(text))
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Segment<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(Text(Segment::from_text))
    }
}

impl<'de> Deserialize<'de> for Id {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(Text(Id::from_text))
    }
}
