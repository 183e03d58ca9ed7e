//! The second stage: what the writers read of the document, built from the read view — each
//! operation with its route, parameters and their wire form, bodies by media kind, replies,
//! security and the mock's answer; the document's schemas as JSON Schema. Nothing here writes a
//! file; nothing here knows a writer.

pub mod json_schema;
pub mod methods;
pub mod mock;
pub mod names;
pub mod operation;
mod operations;
pub mod security;

pub use operations::operations;
