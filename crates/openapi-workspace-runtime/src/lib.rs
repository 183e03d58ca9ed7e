//! openapi-workspace's runtime: what the servers and clients it generates share beyond their
//! own code. [`wire`] says how each parameter is written (for the generator too). With the
//! `server` feature (the default): the error every operation returns ([`ApiError`]), what an
//! operation knows of its request ([`RequestContext`]), and the helpers the generated routers
//! call to authenticate, parse and validate a request and to write its answer. With `client`:
//! the hooks progenitor's clients are given ([`client`]). Both read and write nested form bodies
//! as [`forms`] says. Nothing here knows a document: the
//! generated code passes in what it needs (its schemas, each parameter's wire form, each
//! operation's challenge). Every workspace `openapi-workspace` generates depends on this crate
//! (by path here; a standalone workspace carries it as a crate of its own).

pub mod wire;

#[cfg(feature = "forms")]
pub mod forms;

#[cfg(feature = "client")]
pub mod client;

#[cfg(feature = "server")]
mod server;
#[cfg(feature = "server")]
pub use server::*;
