//! The errors sample (`samples/errors.yaml`) served over real HTTP through its generated client:
//! an operation whose error statuses carry different bodies gets an enum with a variant per
//! status, each holding its own body (a model, text, or nothing), and `Unexpected` for a status
//! the document does not list; one with a `default` gets a `Default` variant instead; one whose
//! error statuses share one body keeps that one model as its error.

mod support;

use std::sync::Arc;

use openapi_workspace_output::errors::{client, server, types};
use openapi_workspace_runtime::{ApiError, Raw, RequestContext};

struct Service;

/// Answers each status its repository's name asks for.
impl server::Api<()> for Service {
    async fn get_repo(&self, _: RequestContext<()>, name: String) -> Result<server::GetRepoResponse, ApiError> {
        let message = |text: &str| types::BasicError { message: text.into(), documentation_url: None };
        Ok(match name.as_str() {
            "missing" => server::GetRepoResponse::NotFound(message("no such repository")),
            "deleted" => server::GetRepoResponse::Gone,
            "bad name!" => server::GetRepoResponse::UnprocessableEntity(types::ValidationError {
                message: "invalid".into(),
                errors: vec![types::ValidationErrorErrorsItem { field: "name".into(), code: "pattern".into() }],
            }),
            "busy" => server::GetRepoResponse::TooManyRequests(types::GetRepoResponse { retry_after: 30 }),
            "broken" => server::GetRepoResponse::ServerError {
                status: axum::http::StatusCode::BAD_GATEWAY,
                body: Raw::new("upstream failed"),
            },
            // Outside the documented class: the router answers 500 instead.
            "misclassed" => server::GetRepoResponse::ServerError {
                status: axum::http::StatusCode::OK,
                body: Raw::new("not a server error"),
            },
            "secret" => return Err(ApiError::new(axum::http::StatusCode::FORBIDDEN, "not yours")),
            "invalid" => return Err(ApiError::new(axum::http::StatusCode::UNPROCESSABLE_ENTITY, "not a name")),
            "refused" => return Err(ApiError::bad_request("refused")),
            _ => server::GetRepoResponse::Ok(types::Repo { name, stars: 7 }),
        })
    }

    async fn delete_repo(&self, _: RequestContext<()>, name: String) -> Result<server::DeleteRepoResponse, ApiError> {
        Ok(match name.as_str() {
            "theirs" => server::DeleteRepoResponse::Forbidden(types::BasicError {
                message: "not yours".into(),
                documentation_url: None,
            }),
            _ => server::DeleteRepoResponse::NoContent,
        })
    }

    async fn star_repo(&self, _: RequestContext<()>, name: String) -> Result<server::StarRepoResponse, ApiError> {
        Ok(match name.as_str() {
            "missing" => server::StarRepoResponse::NotFound(types::BasicError {
                message: "no such repository".into(),
                documentation_url: None,
            }),
            "locked" => server::StarRepoResponse::Default {
                status: axum::http::StatusCode::LOCKED,
                body: types::Problem { title: "locked".into(), status: 423, detail: None },
            },
            "starred" => return Err(ApiError::new(axum::http::StatusCode::CONFLICT, "starred already")),
            _ => server::StarRepoResponse::NoContent,
        })
    }
}

/// The error `send` answered, as the enum's variant and the status it came with.
fn documented<T: std::fmt::Debug, E: std::fmt::Debug>(result: Result<T, client::Error<E>>) -> (u16, E) {
    match result {
        Err(client::Error::ErrorResponse(error)) => (error.status().as_u16(), error.into_inner()),
        Err(other) => panic!("not a documented error: {other:?}"),
        Ok(value) => panic!("not an error: {value:?}"),
    }
}

#[tokio::test]
async fn each_error_status_is_its_own_variant_with_its_own_body() {
    let url = support::serve(server::router(Arc::new(Service))).await;
    // No retries: a 429 and a 502 are answered at once, as they come.
    let client = client::Client::new(&url, client::Config::new().retry(client::retry::RetryPolicy::none()));
    let get = |name: &'static str| client.get_repo().name(name).send();

    assert_eq!(get("ours").await.unwrap().into_inner(), types::Repo { name: "ours".into(), stars: 7 });
    use types::GetRepoError as E;
    match documented(get("missing").await) {
        (404, E::NotFound(body)) => assert_eq!(body.message, "no such repository"),
        other => panic!("{other:?}"),
    }
    assert_eq!(documented(get("deleted").await), (410, E::Gone));
    match documented(get("bad name!").await) {
        (422, E::UnprocessableEntity(body)) => {
            assert_eq!((body.errors[0].field.as_str(), body.message.as_str()), ("name", "invalid"))
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(documented(get("busy").await), (429, E::TooManyRequests(types::GetRepoResponse { retry_after: 30 })));
    assert_eq!(documented(get("broken").await), (502, E::ServerError("upstream failed".into())));
    // 403 is not a status `getRepo` lists: the status and its body as sent.
    match documented(get("secret").await) {
        (403, E::Unexpected { status: 403, body }) => assert!(body.contains("not yours"), "{body}"),
        other => panic!("{other:?}"),
    }

    // One body for every error status: the error is that model, not an enum.
    let refused: (u16, types::BasicError) = documented(client.delete_repo().name("theirs").send().await);
    assert_eq!((refused.0, refused.1.message.as_str()), (403, "not yours"));

    // A `default` of its own shape: every status not listed is read as it.
    use types::StarRepoError as S;
    match documented(client.star_repo().name("missing").send().await) {
        (404, S::NotFound(body)) => assert_eq!(body.message, "no such repository"),
        other => panic!("{other:?}"),
    }
    match documented(client.star_repo().name("locked").send().await) {
        (423, S::Default(problem)) => assert_eq!((problem.title.as_str(), problem.status), ("locked", 423)),
        other => panic!("{other:?}"),
    }
    client.star_repo().name("ours").send().await.unwrap();
}

/// A body that is not the status's documented shape is reported as such, with the bytes, rather
/// than read as another status's variant.
#[tokio::test]
async fn a_body_not_of_its_status_shape_is_an_invalid_payload() {
    let app = axum::Router::new().route(
        "/repos/{name}",
        axum::routing::get(|| async {
            (axum::http::StatusCode::NOT_FOUND, [("content-type", "application/json")], r#"{"errors":[]}"#)
        }),
    );
    let url = support::serve(app).await;
    let client = client::Client::new(&url, client::Config::new());
    match client.get_repo().name("x").send().await {
        Err(client::Error::InvalidResponsePayload(bytes, _)) => assert_eq!(&bytes[..], br#"{"errors":[]}"#),
        other => panic!("{other:?}"),
    }
}

/// The router's own refusals and an implementation's `ApiError` are written in the document's
/// error object, the schema most of its error responses share (`BasicError`, GitHub's
/// `basic-error`): `{"message": …}` as `application/json`, never another document's shape.
#[tokio::test]
async fn refusals_are_written_in_the_documents_error_object() {
    let url = support::serve(server::router(Arc::new(Service))).await;
    let http = reqwest::Client::new();
    let refused = [
        (http.get(format!("{url}/nowhere")), 404, "Not found"),
        (http.put(format!("{url}/repos/ours")), 405, "Method not allowed"),
        (http.get(format!("{url}/repos/secret")), 403, "not yours"),
        (http.get(format!("{url}/repos/misclassed")), 500, "Internal error"),
        (http.put(format!("{url}/repos/ours/stars")).header("content-length", "999999999"), 413, "larger"),
    ];
    for (request, status, says) in refused {
        let answer = request.send().await.unwrap();
        assert_eq!(answer.status().as_u16(), status, "{says}");
        assert_eq!(answer.headers()["content-type"], "application/json", "{says}");
        let body: serde_json::Value = answer.json().await.unwrap();
        let keys: Vec<&String> = body.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["message"], "{body}");
        assert!(body["message"].as_str().unwrap().contains(says), "{says:?} not in {body}");
        // And it is the document's model.
        let _: types::BasicError = serde_json::from_value(body).unwrap();
    }
}

/// Where an operation's own response gives a status another schema, an `ApiError` of that
/// status is written in it: `getRepo`'s `422` is a `ValidationError` (its required `errors` a
/// value the schema allows), `starRepo`'s `default` a `Problem`; its `404` stays `BasicError`.
#[tokio::test]
async fn an_operations_own_error_schema_is_written_for_its_status() {
    let url = support::serve(server::router(Arc::new(Service))).await;
    let http = reqwest::Client::new();
    let read = |request: reqwest::RequestBuilder| async move {
        let answer = request.send().await.unwrap();
        (answer.status().as_u16(), answer.json::<serde_json::Value>().await.unwrap())
    };
    let (status, body) = read(http.get(format!("{url}/repos/invalid"))).await;
    assert_eq!((status, &body["message"]), (422, &serde_json::json!("not a name")));
    let _: types::ValidationError = serde_json::from_value(body).unwrap();
    // A refusal (`400`) is the status `getRepo` documents for one, which is `422` and not `400`
    // (as FastAPI's operations document theirs), in its object.
    let (status, body) = read(http.get(format!("{url}/repos/refused"))).await;
    assert_eq!((status, &body["message"]), (422, &serde_json::json!("Invalid request: refused")));
    let _: types::ValidationError = serde_json::from_value(body).unwrap();
    let (status, body) = read(http.put(format!("{url}/repos/starred/stars"))).await;
    assert_eq!(
        (status, body),
        (409, serde_json::json!({"title": "Conflict", "status": 409, "detail": "starred already"}))
    );
    let (status, body) = read(http.get(format!("{url}/nowhere"))).await;
    assert_eq!(
        (status, body.as_object().unwrap().keys().map(String::as_str).collect::<Vec<_>>()),
        (404, vec!["message"])
    );
}
