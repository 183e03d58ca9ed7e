//! The server side of the Payments API. `cargo xtask codegen` generates, from
//! `openapi/payments.yaml`, the [`Api`] trait (one method per operation, typed with the shared
//! `payments-types` models, each answering its own response enum) and [`router`], the axum
//! router around it. Implement what you serve of [`Api`] (every method has a default that answers
//! `501`); the router does the HTTP work: it authenticates every request of a secured operation
//! through [`Api::authenticate`], parses and validates path, query and body against the document,
//! hands the operation a [`RequestContext`] (the caller, the headers, the request id), and
//! answers every failure — its own and yours ([`ApiError`]) — with the error object
//! `{"request":"error","code":<status>,"message":"..."}`.
//!
//! ```no_run
//! use std::sync::Arc;
//! # struct MyService;
//! # fn service() -> MyService { MyService }
//! // impl payments_server::Api<Caller> for MyService { ... }
//! # fn router<A>(_: Arc<A>) -> axum::Router { axum::Router::new() }
//! # async fn demo() {
//! let app: axum::Router = router(Arc::new(service()));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await.unwrap();
//! axum::serve(listener, app).await.unwrap();
//! # }
//! ```

// Generated code names types by their full paths (so that no name in a document shadows
// them) and is written to be included anywhere.
#[allow(clippy::all, clippy::pedantic, unused_qualifications, unreachable_pub)]
// As prettyplease printed it (`cargo xtask codegen`): rustfmt leaves generated code alone.
#[rustfmt::skip]
mod generated;
/// The generated code's runtime (`openapi-workspace-runtime`), where the generated code finds it.
pub use openapi_workspace_runtime as runtime;

pub use generated::*;
pub use payments_types as types;
pub use runtime::{ApiError, RequestContext};

/// A validator for the document's component schema `name` (`"SimulatePayment"`), checking
/// values exactly as the router checks a request body of that schema: for HTTP surfaces beside
/// the router that take the same values (the sandbox's hosted payment page), so both are
/// bounded by the one document. Panics on a name the document does not have.
pub fn component_validator(name: &str) -> runtime::Validator {
    runtime::SchemaSet::parse(include_str!("schemas.json"))
        .validator(&serde_json::json!({ "$ref": format!("#/components/schemas/{name}") }).to_string())
}
