//! The second stage: what the writers read of the document, built from the read view — each
//! operation with its route, parameters and their wire form, bodies by media kind, replies,
//! security and the mock's answer; the document's schemas as JSON Schema. Nothing here writes a
//! file; nothing here knows a writer.

pub(crate) mod discriminator;
pub(crate) mod error_object;
pub(crate) mod groups;
pub(crate) mod idempotency;
pub(crate) mod json_schema;
pub(crate) mod methods;
pub(crate) mod mock;
pub(crate) mod names;
pub(crate) mod operation;
mod operations;
pub(crate) mod pagination;
pub(crate) mod security;

pub(crate) use operations::operations;
