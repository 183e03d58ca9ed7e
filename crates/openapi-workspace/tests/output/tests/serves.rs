//! The server generated for `samples/generality.yaml`, implemented and served over real HTTP:
//! what compiles must also answer as the document says — header parameters (typed, defaulted,
//! required), a body in two media types chosen by `Content-Type`, text and bytes bodies, integer
//! path parameters, a status class the implementation must keep to, `default`, response headers
//! and raw responses; and progenitor's client reads the unified success type.

mod support;

use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode};
use openapi_workspace_output::generality::{client, server, types};
use openapi_workspace_runtime::{ApiError, Raw, RequestContext};
use serde_json::{Value, json};

struct Pets;

/// The idempotency keys `pets_create` was sent for a pet named `flaky`, in order.
static FLAKY_KEYS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

fn pet(name: &str) -> types::Pet {
    serde_json::from_value(json!({"id": 7, "name": name})).unwrap()
}

impl server::Api<String> for Pets {
    async fn authenticate(&self, credentials: &[server::Credential<'_>]) -> Result<String, ApiError> {
        match credentials {
            [server::Credential::Token("secret")] => Ok("alice".into()),
            _ => Err(ApiError::unauthorized()),
        }
    }

    async fn get_pets(
        &self,
        context: RequestContext<String>,
        x_trace: Option<String>,
        accept_language: Option<types::GetPetsAcceptLanguage>,
        x_limit: i32,
        query: server::GetPetsQuery,
    ) -> Result<server::GetPetsResponse, ApiError> {
        let _ = query;
        if x_limit < 1 {
            // Its `4XX` is the document's error object (`Problem`): an `ApiError` writes it.
            return Err(ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "x-limit must be positive"));
        }
        let name = format!("{}-{:?}-{}", context.caller, accept_language, x_trace.unwrap_or_default());
        Ok(server::GetPetsResponse::Ok { body: vec![pet(&name)], x_next: Some("page-2".into()) })
    }

    async fn pets_create(
        &self,
        _: RequestContext<String>,
        _: Option<String>,
        idempotency_key: Option<String>,
        body: server::PetsCreateBody,
    ) -> Result<server::PetsCreateResponse, ApiError> {
        let name = match &body {
            server::PetsCreateBody::Json(new) => new.name.to_string(),
            server::PetsCreateBody::Form(form) => format!("{}:{}", *form.name, form.age.unwrap_or_default()),
        };
        if name == "flaky" {
            // Refused once per key, as a server that cannot serve now would.
            let (mut keys, key) = (FLAKY_KEYS.lock().unwrap(), idempotency_key.unwrap_or_default());
            keys.push(key.clone());
            if keys.iter().filter(|seen| **seen == key).count() == 1 {
                return Err(ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "not now").retry_after(0));
            }
        }
        Ok(match name.as_str() {
            "teapot" => return Err(ApiError::new(StatusCode::IM_A_TEAPOT, "short and stout")),
            "old" => server::PetsCreateResponse::Ok(pet("old")),
            "nothing" => server::PetsCreateResponse::UnprocessableEntity(Raw::new("not a pet")),
            _ => server::PetsCreateResponse::Created(types::PetsCreateResponse { pet: pet(&name), created: true }),
        })
    }

    async fn put_photo(
        &self,
        _: RequestContext<String>,
        id: i64,
        body: Option<axum::body::Bytes>,
    ) -> Result<server::PutPhotoResponse, ApiError> {
        match body {
            Some(bytes) if id == 7 && bytes.as_ref() == b"\x89PNG" => Ok(server::PutPhotoResponse::NoContent),
            other => Err(ApiError::bad_request(format!("photo {id}: {other:?}"))),
        }
    }

    async fn _2get_photo(&self, _: RequestContext<String>, id: i64) -> Result<server::_2getPhotoResponse, ApiError> {
        if id == 7 {
            Ok(server::_2getPhotoResponse::Ok(Raw::new(&b"\x89PNG"[..])))
        } else {
            Ok(server::_2getPhotoResponse::Found { location: format!("/pets/{}/photo", id - 1) })
        }
    }

    async fn post_offer(
        &self,
        _: RequestContext<String>,
        id: i64,
        body: axum::body::Bytes,
    ) -> Result<server::PostOfferResponse, ApiError> {
        let offer = String::from_utf8_lossy(&body);
        Ok(server::PostOfferResponse::Created(Raw::new(format!("v=0 answer {id} to {offer}"))))
    }

    async fn put_note(&self, context: RequestContext<()>, body: String) -> Result<server::PutNoteResponse, ApiError> {
        let () = context.caller;
        Ok(server::PutNoteResponse::Ok(types::PutNoteResponse::String(body.to_uppercase())))
    }
}

async fn start() -> String {
    support::serve(server::router(Arc::new(Pets))).await
}

/// The status, headers and body (as text: a binary body is checked through [`bytes`]).
async fn send(request: reqwest::RequestBuilder) -> (u16, reqwest::header::HeaderMap, String) {
    let (status, headers, body) = bytes(request).await;
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

async fn bytes(request: reqwest::RequestBuilder) -> (u16, reqwest::header::HeaderMap, Vec<u8>) {
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.bytes().await.unwrap().to_vec())
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test]
async fn the_generated_server_answers_as_the_document_says() {
    let url = start().await;
    let http = reqwest::Client::new();
    let get_pets = || http.get(format!("{url}/pets")).bearer_auth("secret");

    // Header parameters: typed, the absent one `None`, the required one required.
    let (status, headers, body) = send(get_pets().header("x-limit", "2").header("x-trace", "t1")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["x-next"], "page-2");
    assert_eq!(json_of(&body)[0]["name"], "alice-None-t1");
    let (_, _, body) = send(get_pets().header("x-limit", "2").header("accept-language", "de")).await;
    assert_eq!(json_of(&body)[0]["name"], "alice-Some(De)-");
    let (status, _, body) = send(get_pets()).await;
    assert_eq!(
        (status, json_of(&body)["detail"].as_str()),
        (400, Some("Invalid request: header `x-limit` is required"))
    );
    let (status, _, body) = send(get_pets().header("x-limit", "two")).await;
    assert_eq!(status, 400, "{body}");
    assert!(
        json_of(&body)["detail"].as_str().unwrap().starts_with("Invalid request: header `x-limit`: \"two\""),
        "{body}"
    );
    let (status, _, _) = send(http.get(format!("{url}/pets")).header("x-limit", "2")).await;
    assert_eq!(status, 401);

    // An implementation's error in the document's error object, `Problem`: `{"detail": …}`.
    let (status, _, body) = send(get_pets().header("x-limit", "0")).await;
    assert_eq!((status, json_of(&body)), (422, json!({"detail": "x-limit must be positive"})));

    // One body, two media types, chosen by Content-Type; validated either way.
    let post = || http.post(format!("{url}/pets")).bearer_auth("secret");
    let (status, _, body) = send(post().json(&json!({"name": "Rex"}))).await;
    assert_eq!((status, json_of(&body)["pet"]["name"].as_str()), (201, Some("Rex")));
    let form = "application/x-www-form-urlencoded";
    let (status, _, body) = send(post().header("content-type", form).body("name=Rex&age=3")).await;
    assert_eq!((status, json_of(&body)["pet"]["name"].as_str()), (201, Some("Rex:3")));
    let (status, _, body) = send(post().header("content-type", form).body("name=thisnameiswaytoolongforapet")).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("name"), "{body}");
    let (status, _, body) = send(post().header("content-type", "text/plain").body("Rex")).await;
    assert_eq!(status, 415);
    assert!(body.contains("application/json, application/x-www-form-urlencoded"), "{body}");
    // `default` carries any status; a raw response its documented media type.
    let (status, _, body) = send(post().json(&json!({"name": "teapot"}))).await;
    assert_eq!((status, json_of(&body)["detail"].as_str()), (418, Some("short and stout")));
    let (status, headers, body) = send(post().json(&json!({"name": "nothing"}))).await;
    assert_eq!((status, headers["content-type"].to_str().unwrap(), body.as_str()), (422, "text/plain", "not a pet"));

    // Bytes in and out, an integer path parameter, a redirect with its Location.
    let photo = |id: &str| format!("{url}/pets/{id}/photo");
    let (status, _, body) = send(http.put(photo("7")).bearer_auth("secret").body(&b"\x89PNG"[..])).await;
    assert_eq!(status, 204, "{body}");
    let (status, _, body) = send(http.put(photo("seven")).bearer_auth("secret").body(&b"\x89PNG"[..])).await;
    assert_eq!(status, 400, "{body}");
    let (status, headers, body) = bytes(http.get(photo("7")).bearer_auth("secret")).await;
    assert_eq!(
        (status, &headers["content-type"], body.as_slice()),
        (200, &HeaderValue::from_static("image/png"), &b"\x89PNG"[..])
    );
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let (status, headers, _) = send(no_redirects.get(photo("8")).bearer_auth("secret")).await;
    assert_eq!((status, headers["location"].to_str().unwrap()), (302, "/pets/7/photo"));

    // An operation the document leaves unsecured: no token needed, a text body.
    let (status, _, body) =
        send(http.put(format!("{url}/notes")).header("content-type", "text/plain").body("hi")).await;
    assert_eq!((status, json_of(&body)), (200, json!("HI")));
}

/// progenitor's client takes one success type: the document's 200 (`Pet`) and 201
/// (`PetsCreateResponse`) reach it as the `oneOf` the generator made of them.
#[tokio::test]
async fn the_client_reads_either_success() {
    let url = start().await;
    // The client sends the scheme's credential to the operations that ask for it.
    let client = client::Client::new(&url, client::Credentials::new().token("secret").into());
    let new = |name: &str| types::NewPet { name: name.parse().unwrap(), tag: None };
    let created = client.pets_create().body(new("Rex")).send().await.unwrap();
    assert_eq!(created.status(), 201);
    match created.into_inner() {
        types::PetsCreateSuccess::PetsCreateResponse(r) => assert!(r.created && *r.pet.name == "Rex"),
        other => panic!("{other:?}"),
    }
    let existing = client.pets_create().body(new("old")).send().await.unwrap();
    assert_eq!(existing.status(), 200);
    assert!(matches!(existing.into_inner(), types::PetsCreateSuccess::Pet(p) if *p.name == "old"));
}

/// A body in a media type progenitor does not know (OpenAI's `application/sdp`): the client
/// takes it as bytes and sends it labelled as the document says, which the server requires.
#[tokio::test]
async fn a_body_in_a_media_type_progenitor_does_not_know_is_sent_as_the_document_says() {
    let url = start().await;
    let client = client::Client::new(&url, client::Credentials::new().token("secret").into());
    let answer = client.post_offer().id(3).body("v=0 offer").send().await.unwrap();
    assert_eq!(answer.status(), 201);
    let mut text = Vec::new();
    let mut stream = answer.into_inner().into_inner();
    while let Some(chunk) = futures::StreamExt::next(&mut stream).await {
        text.extend_from_slice(&chunk.unwrap());
    }
    assert_eq!(String::from_utf8(text).unwrap(), "v=0 answer 3 to v=0 offer");
    // Labelled as anything else, the server refuses it: the label is the hook's doing.
    let http = reqwest::Client::new();
    let request = http.post(format!("{url}/pets/3/offer")).bearer_auth("secret");
    let (status, _, _) = send(request.header("content-type", "application/octet-stream").body("v=0")).await;
    assert_eq!(status, 415);
}

/// The document's `Idempotency-Key` header parameter makes the POST retryable: the client fills
/// it with a UUID when the caller gives none, and the retry after a `503` carries the same one.
#[tokio::test]
async fn a_post_with_an_idempotency_key_header_is_retried_with_the_same_key() {
    let url = start().await;
    let client = client::Client::new(&url, client::Credentials::new().token("secret").into());
    let flaky = types::NewPet { name: "flaky".parse().unwrap(), tag: None };
    let created = client.pets_create().body(flaky.clone()).send().await.unwrap();
    assert_eq!(created.status(), 201);
    let given = client.pets_create().idempotency_key("mine").body(flaky).send().await.unwrap();
    assert_eq!(given.status(), 201);
    let keys = FLAKY_KEYS.lock().unwrap().clone();
    assert_eq!(keys.len(), 4, "{keys:?}");
    assert_eq!(keys[0], keys[1]);
    assert!(uuid::Uuid::parse_str(&keys[0]).is_ok(), "{keys:?}");
    assert_eq!(keys[2..], ["mine", "mine"]);
}
