//! The mock (`mock_router`) over real HTTP, for `samples/parameters_and_responses.yaml` with one
//! operation implemented: the implemented one answers itself, every other one its first success
//! status and a body the generated client reads as the document's type; requests are still
//! authenticated and validated first; and `router` answers `501` where `mock_router` mocks.

mod support;

use std::sync::Arc;

use openapi_workspace_output::parameters_and_responses::{client, server, types};
use openapi_workspace_runtime::{ApiError, RequestContext};

struct OneWritten;

impl server::Api<()> for OneWritten {
    async fn authenticate(&self, _: &[server::Credential<'_>]) -> Result<(), ApiError> {
        Ok(())
    }

    async fn list_items(
        &self,
        _: RequestContext<()>,
        _: server::ListItemsQuery,
    ) -> Result<server::ListItemsResponse, ApiError> {
        Ok(server::ListItemsResponse::Ok(Vec::new()))
    }
}

#[tokio::test]
async fn what_is_not_written_answers_its_documented_success() {
    let url = support::serve(server::mock_router(Arc::new(OneWritten))).await;
    let client = client::Client::new(&url, client::Credentials::new().bearer("any").into());
    let id = uuid::Uuid::new_v4();

    // Written: its own answer, not the mock's one-item page.
    let page = client.list_items().kind("k").send().await.unwrap();
    assert_eq!(page.into_inner(), Vec::<types::Item>::new());

    // Not written: the first success, typed as the document says.
    let copy = client.copy_item().id(id).send().await.unwrap();
    assert_eq!(copy.status().as_u16(), 200);
    let copy: types::Item = copy.into_inner();
    assert!(!copy.kind.is_empty());
    let deleted = client.delete_item().id(id).send().await.unwrap();
    assert_eq!(deleted.into_inner().result, types::ResultOkResult::Ok);
    let touched = client.touch_item().id(id).send().await.unwrap();
    assert_eq!(touched.status().as_u16(), 204);
    assert_eq!(client.health().send().await.unwrap().status().as_u16(), 200);

    // Still authenticated and validated before anything answers.
    let http = reqwest::Client::new();
    let copies = format!("{url}/items/{id}/copies");
    assert_eq!(http.put(&copies).send().await.unwrap().status().as_u16(), 401);
    let bad = http.put(format!("{url}/items/not-an-id/copies")).bearer_auth("any").send().await.unwrap();
    assert_eq!(bad.status().as_u16(), 404);
    let bad = http.get(format!("{url}/items?kind=k&limit=0")).bearer_auth("any").send().await.unwrap();
    assert_eq!(bad.status().as_u16(), 400);
}

#[tokio::test]
async fn the_router_without_mock_answers_501() {
    let url = support::serve(server::router(Arc::new(OneWritten))).await;
    let response = reqwest::Client::new()
        .put(format!("{url}/items/{}/copies", uuid::Uuid::new_v4()))
        .bearer_auth("any")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 501);
    let body: serde_json::Value = response.json().await.unwrap();
    assert_eq!(body["message"], "Not implemented: copyItem");
}
