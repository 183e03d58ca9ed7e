//! The two servers `cargo xtask bench` holds against each other (`xtask/src/server_bench.rs`):
//! the generated server of `samples/pet_store.yaml`, implemented with fixed answers, and a
//! hand-written axum server doing the same work as a careful engineer would write it — the same
//! bearer check, the same parsing and validation of parameters and body, the same JSON answers,
//! the same error object on a bad request. Neither has anything else in it (no logging, no
//! layers), so what differs between them is the generated router's own cost.
//!
//! - `router-bench serve generated|hand-written [PORT]` prints its address, then serves until
//!   killed.
//! - `router-bench allocations` sends each of [`ROUTES`] to both routers in this process (no
//!   sockets) and prints, per route, a JSON line: the request, the status both answered it with
//!   (checked to be the route's), and the heap allocations and nanoseconds one request costs
//!   each. `cargo xtask bench` measures the routes it reads there.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query};
use axum::http::{HeaderMap, Request, StatusCode, header};
use axum::response::{IntoResponse, Response};
use openapi_workspace_output::pet_store::{server, types};
use openapi_workspace_runtime::{ApiError, RequestContext};
use serde::{Deserialize, Serialize};
use tower::ServiceExt;

/// The token both servers let in.
pub const TOKEN: &str = "tok_router_bench";

/// The requests measured: name, method, path and query, JSON body, the status both answer.
const ROUTES: [(&str, &str, &str, &str, u16); 5] = [
    ("list", "GET", "/pets?limit=10&tag=dog", "", 200),
    ("get", "GET", "/pets/0b5c6a4e-7c43-4f4e-9a55-52f7a3d1c0de", "", 200),
    ("create", "POST", "/pets", r#"{"name":"Rex","tag":"dog","age":3}"#, 201),
    ("create refused", "POST", "/pets", r#"{"name":"","tag":"dog","age":300}"#, 400),
    ("list refused", "GET", "/pets?limit=500", "", 400),
];

// -- the allocations counted -----------------------------------------------------------------

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: each method hands the call to the system allocator unchanged; only a count is added.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

// -- the answers both servers give -----------------------------------------------------------

/// The pets a list answers: `limit` of them, with `tag` if one was asked for.
fn pet_names(limit: usize) -> impl Iterator<Item = (uuid::Uuid, String, i32)> {
    (0..limit).map(|i| {
        (
            uuid::Uuid::from_u128(0x0b5c_6a4e_7c43_4f4e_9a55_0000_0000_0000 | i as u128),
            format!("Pet {i}"),
            i as i32 % 20,
        )
    })
}

fn created() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp(1_790_000_000, 0).expect("a valid time")
}

// -- the generated server, implemented -------------------------------------------------------

struct Fixed;

impl server::Api for Fixed {
    async fn authenticate(&self, credentials: &[server::Credential<'_>]) -> Result<(), ApiError> {
        match credentials {
            [server::Credential::Bearer(token)] if *token == TOKEN => Ok(()),
            _ => Err(ApiError::unauthorized()),
        }
    }

    async fn list_pets(
        &self,
        _: RequestContext<()>,
        query: server::ListPetsQuery,
    ) -> Result<server::ListPetsResponse, ApiError> {
        let tag = query.tag.unwrap_or_else(|| "cat".to_owned());
        let pets = pet_names(query.limit as usize)
            .map(|(id, name, age)| types::Pet { id, name, tag: Some(tag.clone()), age: Some(age), created: created() })
            .collect::<Vec<_>>();
        Ok(pets.into())
    }

    async fn get_pet(&self, _: RequestContext<()>, id: uuid::Uuid) -> Result<server::GetPetResponse, ApiError> {
        let pet =
            types::Pet { id, name: "Rex".to_owned(), tag: Some("dog".to_owned()), age: Some(3), created: created() };
        Ok(pet.into())
    }

    async fn create_pet(
        &self,
        _: RequestContext<()>,
        body: types::NewPet,
    ) -> Result<server::CreatePetResponse, ApiError> {
        let pet = types::Pet {
            id: uuid::Uuid::from_u128(7),
            name: body.name.into(),
            tag: body.tag.map(Into::into),
            age: body.age,
            created: created(),
        };
        Ok(server::CreatePetResponse::Created(pet))
    }
}

// -- the hand-written server -----------------------------------------------------------------

#[derive(Serialize)]
struct Pet {
    id: uuid::Uuid,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    age: Option<i32>,
    created: chrono::DateTime<chrono::Utc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListQuery {
    limit: Option<i32>,
    tag: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewPet {
    name: String,
    tag: Option<String>,
    age: Option<i32>,
}

/// The error object, as the generated server answers it.
#[derive(Serialize)]
struct Problem<'a> {
    request: &'static str,
    code: u16,
    message: &'a str,
}

fn problem(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(Problem { request: "error", code: status.as_u16(), message })).into_response()
}

fn invalid(problems: &[String]) -> Response {
    problem(StatusCode::BAD_REQUEST, &format!("Invalid request: {}", problems.join("; ")))
}

fn unauthorized() -> Response {
    let mut response =
        problem(StatusCode::UNAUTHORIZED, "Missing or invalid credential: send Authorization: Bearer <token>");
    response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
    response
}

fn authorized(headers: &HeaderMap) -> bool {
    let bearer = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.split_once(' '));
    matches!(bearer, Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") && token.trim() == TOKEN)
}

/// A text's length in characters within `min..=max`, else what is wrong, for `field`.
fn length(problems: &mut Vec<String>, field: &str, text: &str, min: usize, max: usize) {
    let count = text.chars().count();
    if !(min..=max).contains(&count) {
        problems.push(format!("{field}: {text:?} must be {min} to {max} characters long"));
    }
}

fn within(problems: &mut Vec<String>, field: &str, value: i32, min: i32, max: i32) {
    if !(min..=max).contains(&value) {
        problems.push(format!("{field}: {value} must be {min} to {max}"));
    }
}

fn json<T: Serialize>(status: StatusCode, body: &T) -> Response {
    (status, axum::Json(body)).into_response()
}

async fn list(
    headers: HeaderMap,
    query: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    if !authorized(&headers) {
        return unauthorized();
    }
    let Query(query) = match query {
        Ok(query) => query,
        Err(rejection) => return invalid(&[rejection.body_text()]),
    };
    let mut problems = Vec::new();
    let limit = query.limit.unwrap_or(20);
    within(&mut problems, "query parameter `limit`", limit, 1, 100);
    if let Some(tag) = &query.tag {
        length(&mut problems, "query parameter `tag`", tag, 1, 32);
    }
    if !problems.is_empty() {
        return invalid(&problems);
    }
    let tag = query.tag.unwrap_or_else(|| "cat".to_owned());
    let pets = pet_names(limit as usize)
        .map(|(id, name, age)| Pet { id, name, tag: Some(tag.clone()), age: Some(age), created: created() })
        .collect::<Vec<_>>();
    json(StatusCode::OK, &pets)
}

async fn get(headers: HeaderMap, id: Result<Path<uuid::Uuid>, axum::extract::rejection::PathRejection>) -> Response {
    if !authorized(&headers) {
        return unauthorized();
    }
    let Path(id) = match id {
        Ok(id) => id,
        Err(rejection) => return invalid(&[rejection.body_text()]),
    };
    json(
        StatusCode::OK,
        &Pet { id, name: "Rex".to_owned(), tag: Some("dog".to_owned()), age: Some(3), created: created() },
    )
}

async fn create(headers: HeaderMap, body: Body) -> Response {
    if !authorized(&headers) {
        return unauthorized();
    }
    // The limit applied here rather than with axum's `DefaultBodyLimit` layer, which costs
    // every request of the router an extension and a box.
    let Ok(body) = axum::body::to_bytes(body, openapi_workspace_runtime::BODY_LIMIT).await else {
        return problem(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large");
    };
    let new: NewPet = match serde_json::from_slice(&body) {
        Ok(new) => new,
        Err(error) => return invalid(&[format!("the body is not a pet: {error}")]),
    };
    let mut problems = Vec::new();
    length(&mut problems, "name", &new.name, 1, 64);
    if let Some(tag) = &new.tag {
        length(&mut problems, "tag", tag, 1, 32);
    }
    if let Some(age) = new.age {
        within(&mut problems, "age", age, 0, 100);
    }
    if !problems.is_empty() {
        return invalid(&problems);
    }
    let pet = Pet { id: uuid::Uuid::from_u128(7), name: new.name, tag: new.tag, age: new.age, created: created() };
    json(StatusCode::CREATED, &pet)
}

fn hand_written() -> Router {
    Router::new().route("/pets", axum::routing::get(list).post(create)).route("/pets/{id}", axum::routing::get(get))
}

fn generated() -> Router {
    server::router(Arc::new(Fixed))
}

// -- the two modes ---------------------------------------------------------------------------

fn request(method: &str, target: &str, body: &'static str) -> Request<Body> {
    let mut request = Request::builder()
        .method(method)
        .uri(target)
        .header(header::HOST, "bench")
        .header(header::AUTHORIZATION, format!("Bearer {TOKEN}"));
    if !body.is_empty() {
        request = request.header(header::CONTENT_TYPE, "application/json");
    }
    request.body(Body::from(body)).expect("a valid request")
}

/// The allocations `router` makes answering one `request`, its body read to the end; the
/// answer's status.
async fn allocations(router: &Router, request: Request<Body>) -> (u64, u16) {
    let router = router.clone();
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    let response = router.oneshot(request).await.expect("infallible");
    let status = response.status().as_u16();
    let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("a body");
    let after = ALLOCATIONS.load(Ordering::Relaxed);
    drop(body);
    (after - before, status)
}

async fn count() -> std::io::Result<()> {
    const RUNS: u64 = 1000;
    let servers = [("generated", generated()), ("hand-written", hand_written())];
    for (name, method, target, body, expected) in ROUTES {
        let mut allocated = serde_json::Map::new();
        for (server, router) in &servers {
            let mut total = 0;
            for run in 0..=RUNS {
                let (counted, status) = allocations(router, request(method, target, body)).await;
                assert_eq!(status, expected, "{server} answered {method} {target} with {status}");
                // The first request warms what is built once (lazy statics, the router's caches).
                if run > 0 {
                    total += counted;
                }
            }
            allocated.insert(server.to_string(), (total as f64 / RUNS as f64).into());
        }
        // The time a request takes in the router alone, without sockets: the median of five
        // rounds, each alternating the servers.
        let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        for _ in 0..5 {
            for (i, (_, router)) in servers.iter().enumerate() {
                let start = std::time::Instant::now();
                for _ in 0..RUNS * 10 {
                    allocations(router, request(method, target, body)).await;
                }
                times[i].push(start.elapsed().as_nanos() as f64 / (RUNS * 10) as f64);
            }
        }
        let mut nanos = serde_json::Map::new();
        for ((server, _), mut runs) in servers.iter().zip(times) {
            runs.sort_by(f64::total_cmp);
            nanos.insert(server.to_string(), runs[2].round().into());
        }
        let line = serde_json::json!({
            "route": name, "method": method, "target": target, "body": body, "status": expected,
            "allocations": allocated, "nanos": nanos,
        });
        println!("{line}");
    }
    Ok(())
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        // One thread: nothing else allocates while a request is counted.
        ["allocations"] => tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(count()),
        ["serve", which, port @ ..] => {
            let router = match *which {
                "generated" => generated(),
                "hand-written" => hand_written(),
                other => panic!("no server {other:?}: generated or hand-written"),
            };
            let port = port.first().and_then(|p| p.parse().ok()).unwrap_or(0u16);
            tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(async move {
                let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
                println!("{}", listener.local_addr()?);
                axum::serve(listener, router).await
            })
        }
        _ => panic!("usage: router-bench serve generated|hand-written [PORT] | router-bench allocations"),
    }
}
