//! openapi-workspace's server runtime: the error every operation returns ([`ApiError`]), what
//! an operation knows of its request ([`RequestContext`]), and the helpers the generated
//! routers call to authenticate, parse and validate a request and to write its answer. Nothing
//! here knows a document: the generated code passes in what it needs (its schemas, each
//! parameter's wire form, each operation's challenge). Every server `openapi-workspace`
//! generates depends on this crate (by path here; a standalone workspace carries it as a crate
//! of its own).

mod bodies;
mod context;
mod credentials;
mod error;
mod finish;
mod params;
mod responses;
mod schemas;

pub use bodies::*;
pub use context::*;
pub use credentials::*;
pub use error::*;
pub use finish::*;
pub use params::*;
pub use responses::*;
pub use schemas::*;

pub mod events;
pub mod items;
pub mod json_tape;
pub mod multipart;
pub mod path;
pub mod styles;

/// The largest request body accepted; larger ones are refused with `413`.
pub const BODY_LIMIT: usize = 64 * 1024;
