//! Array query parameters (`samples/query_arrays.yaml`) over real HTTP: the generated client
//! writes each value as its own pair, the generated server reads them back into the arrays,
//! typed and validated; a single value is an array of one, and what the document forbids is
//! refused with the error object.

mod support;

use std::num::NonZeroU64;
use std::sync::Arc;

use openapi_workspace_output::query_arrays::{client, server, types};
use openapi_workspace_runtime::{ApiError, RequestContext};

struct Echo;

impl server::Api for Echo {
    async fn find_pets(
        &self,
        _: RequestContext<()>,
        query: server::FindPetsQuery,
    ) -> Result<server::FindPetsResponse, ApiError> {
        Ok(server::FindPetsResponse::Ok(types::Found {
            tags: query.tag.unwrap_or_default(),
            ids: query.ids,
            kinds: query.kind.unwrap_or_default().iter().map(ToString::to_string).collect(),
            limit: query.limit,
        }))
    }
}

#[tokio::test]
async fn arrays_go_out_as_repeated_pairs_and_come_back_as_arrays() {
    let url = support::serve(server::router(Arc::new(Echo))).await;

    // Through the generated client.
    let client = client::Client::new(&url, client::Config::new());
    let ids: Vec<NonZeroU64> = [3, 1, 2].into_iter().map(|n| NonZeroU64::new(n).unwrap()).collect();
    let tags: Vec<types::FindPetsTagItem> = ["brown", "small"].iter().map(|t| t.parse().unwrap()).collect();
    let found = client
        .find_pets()
        .ids(ids)
        .tag(tags)
        .kind(vec![types::FindPetsKindItem::Dog, types::FindPetsKindItem::Cat])
        .send()
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (found.tags, found.ids, found.kinds, found.limit),
        (vec!["brown".to_owned(), "small".to_owned()], vec![3, 1, 2], vec!["dog".to_owned(), "cat".to_owned()], 10)
    );

    // As anyone writes them: one value is an array of one, order kept, other parameters beside.
    let http = reqwest::Client::new();
    let get = |query: &str| http.get(format!("{url}/pets?{query}")).send();
    let body: serde_json::Value = get("ids%5B%5D=7&limit=2").await.unwrap().json().await.unwrap();
    assert_eq!(body, serde_json::json!({"tags": [], "ids": [7], "kinds": [], "limit": 2}));

    // Refused, saying what and where.
    for (query, says) in [
        ("ids[]=1&ids[]=x", "`ids[][1]`"),
        ("ids[]=0", "ids[]"),
        ("ids[]=1&ids[]=2&ids[]=3&ids[]=4&ids[]=5&ids[]=6", "ids[]"),
        ("ids[]=1&kind=bird", "bird"),
        ("ids[]=1&tag=much-too-long-a-tag", "tag"),
        ("ids[]=1&limit=1&limit=2", "`limit` is given more than once"),
        ("tag=a", "`ids[]` is required"),
    ] {
        let response = get(query).await.unwrap();
        let status = response.status().as_u16();
        let body: serde_json::Value = response.json().await.unwrap();
        assert_eq!(status, 400, "{query}: {body}");
        assert!(body.to_string().contains(says), "{query}: {says:?} not in {body}");
    }
}
