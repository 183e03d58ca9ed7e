//! Health for load balancers and orchestrators, served without a token: `GET /healthz` answers
//! `200` while the process serves at all (live: do not restart it), and `GET /readyz` answers
//! `200` only when the database can be read and written now (ready: send it traffic), and `503`
//! with the error object saying why otherwise. Both answer the same whatever the client, so
//! they are never refused by a per-address limit.
//!
//! A readiness check writes (see `Store::ready`): checks that arrive within [`FRESH`] of the
//! last one share its answer, so probes from many balancers, or a client calling it in a loop,
//! cost one write a second.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use payments_server::ApiError;

use crate::domain::Sandbox;

/// How long a readiness answer is given again.
const FRESH: Duration = Duration::from_secs(1);

/// A readiness answer and when it was found.
type Answer = (Instant, Result<(), ApiError>);

#[derive(Clone)]
struct Health {
    sandbox: Sandbox,
    /// The last readiness answer; the lock also makes checks one at a time.
    last: Arc<tokio::sync::Mutex<Option<Answer>>>,
}

pub fn routes(sandbox: Sandbox) -> axum::Router {
    axum::Router::new()
        .route("/healthz", get(|| async { Json(serde_json::json!({"status": "live"})) }))
        .route("/readyz", get(ready))
        .with_state(Health { sandbox, last: Arc::default() })
}

async fn ready(State(health): State<Health>) -> Response {
    let mut last = health.last.lock().await;
    let answer = match last.as_ref() {
        Some((at, answer)) if at.elapsed() < FRESH => answer.clone(),
        _ => {
            let answer = health.sandbox.ready().await.map_err(super::api::error_object);
            *last = Some((Instant::now(), answer.clone()));
            answer
        }
    };
    match answer {
        Ok(()) => Json(serde_json::json!({"status": "ready"})).into_response(),
        Err(error) => error.into_response(),
    }
}
