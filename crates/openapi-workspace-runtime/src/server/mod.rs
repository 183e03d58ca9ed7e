//! The server's half: what the generated axum routers call.

mod bodies;
mod context;
mod credentials;
mod error;
mod error_object;
mod finish;
mod params;
mod prepared;
mod responses;
mod schemas;

pub use bodies::*;
pub use context::*;
pub use credentials::*;
pub use error::*;
pub use error_object::*;
pub use finish::*;
pub use params::*;
pub use prepared::*;
pub use responses::*;
pub use schemas::*;

pub mod events;
pub mod items;
pub mod json_tape;
pub mod json_writer;
pub mod mock;
pub mod multipart;
pub mod path;
pub mod styles;

/// The largest request body accepted; larger ones are refused with `413`.
pub const BODY_LIMIT: usize = 64 * 1024;
