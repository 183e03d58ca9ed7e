//! The schemas the models' generator cannot type (`samples/untypable.yaml`), served over real
//! HTTP through the generated client: their models hold any JSON value, and the values travel
//! both ways as they are; the server still refuses, by the document's schemas, what those schemas
//! refuse — only the Rust type is looser.

mod support;

use std::sync::Arc;

use openapi_workspace_output::untypable::{client, server, types};
use openapi_workspace_runtime::{ApiError, RequestContext};
use serde_json::json;

struct Service;

impl server::Api<()> for Service {
    async fn create_reading(
        &self,
        _: RequestContext<()>,
        body: types::Reading,
    ) -> Result<server::CreateReadingResponse, ApiError> {
        Ok(server::CreateReadingResponse::Created(body))
    }

    async fn get_layout(&self, _: RequestContext<()>, id: String) -> Result<server::GetLayoutResponse, ApiError> {
        Ok(server::GetLayoutResponse::Ok(types::Layout(json!({"id": id, "margin": 4, "border": 1}))))
    }
}

#[tokio::test]
async fn what_cannot_be_typed_travels_as_any_value_and_is_still_validated_by_the_document() {
    let url = support::serve(server::router(Arc::new(Service))).await;
    let client = client::Client::new(&url, client::Config::new());

    let reading = types::Reading {
        sensor: "s1".into(),
        calibration: Some(json!({"scale": 1})),
        raw: Some(json!(17)),
        weight: Some(json!(2.5)),
        unit: Some(json!("kg")),
        // An object whose `format` (`uri-map`) cannot apply: the format is ignored, a map.
        links: [("self".to_owned(), json!("https://example.com/r/1"))].into_iter().collect(),
    };
    let kept = client.create_reading().body(reading.clone()).send().await.unwrap().into_inner();
    assert_eq!(kept, reading);

    let layout = client.get_layout().id("box").send().await.unwrap().into_inner();
    assert_eq!(layout.0, json!({"id": "box", "margin": 4, "border": 1}));

    // Each of these breaks the document's schema, which the server validates against.
    let http = reqwest::Client::new();
    for (field, value) in
        [("raw", json!("a string")), ("calibration", json!(4)), ("weight", json!(0)), ("unit", json!("stone"))]
    {
        let mut body = json!({"sensor": "s1"});
        body[field] = value.clone();
        let response = http.post(format!("{url}/readings")).json(&body).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 400, "{field}: {value}");
        let error: serde_json::Value = response.json().await.unwrap();
        assert!(error.to_string().contains(field), "{field}: {error}");
    }
}
