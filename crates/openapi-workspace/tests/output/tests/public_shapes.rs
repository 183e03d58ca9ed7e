//! What the biggest public documents write (`samples/public_shapes.yaml`), served over real HTTP
//! through its generated client: a body offered as `*/*` travels as JSON; a patch offered only in
//! JSON's other forms is sent as a merge patch and labelled so, and the server reads it as that
//! form; a body offered as JSON and multipart is JSON; the models named after components and
//! titles that would have clashed — at a component's properties or deeper — hold what the server
//! sent.

mod support;

use std::sync::Arc;

use openapi_workspace_output::public_shapes::{client, server, types};
use openapi_workspace_runtime::{ApiError, RequestContext};

struct Service;

impl server::Api<()> for Service {
    async fn replace_deployment(
        &self,
        _: RequestContext<()>,
        name: String,
        query: server::ReplaceDeploymentQuery,
        body: types::Deployment,
    ) -> Result<server::ReplaceDeploymentResponse, ApiError> {
        assert_eq!(query.dry_run, Some(true));
        Ok(server::ReplaceDeploymentResponse::Ok(types::Deployment { name, ..body }))
    }

    async fn patch_deployment(
        &self,
        _: RequestContext<()>,
        name: String,
        _: server::PatchDeploymentQuery,
        body: server::PatchDeploymentBody,
    ) -> Result<server::PatchDeploymentResponse, ApiError> {
        // The form the request said it is, in the name.
        let (form, patch) = match body {
            server::PatchDeploymentBody::ApplicationMergePatchJson(patch) => ("merge", patch),
            server::PatchDeploymentBody::ApplicationJsonPatchJson(patch) => ("json-patch", patch),
            server::PatchDeploymentBody::ApplicationApplyPatchYaml(_) => return Err(ApiError::bad_request("yaml")),
        };
        Ok(server::PatchDeploymentResponse::Ok(types::Deployment { name: format!("{name} ({form})"), ..patch }))
    }

    async fn create_image(
        &self,
        _: RequestContext<()>,
        body: types::ImageRequest,
    ) -> Result<server::CreateImageResponse, ApiError> {
        let login = body.prompt.clone();
        Ok(server::CreateImageResponse::Ok(types::Image {
            url: format!("https://images.example/{}", body.prompt),
            author: Some(types::NullableUser(Some(types::NullableUserInner { login: login.clone() }))),
            origin: Some(types::NullableOrigin(Some(types::NullableOriginValue::User(types::User { login })))),
        }))
    }
}

#[tokio::test]
async fn public_shapes_are_served_as_their_authors_meant_them() {
    let url = support::serve(server::router(Arc::new(Service))).await;
    let client = client::Client::new(&url, client::Config::new());
    // The inline shapes typify would have named like components (`RolloutSurge`,
    // `DeploymentLimitsCpuItem`) have names of their own, and travel as the document says.
    let deployment = types::Deployment {
        name: "ignored".into(),
        spec: None,
        status: Some(types::DeploymentStatus2::Available),
        rollout: Some(types::Rollout { surge: Some(types::RolloutSurge2 { percent: Some(25) }) }),
        limits: Some(types::DeploymentLimits { cpu: vec![types::DeploymentLimitsCpuItem2 { millis: Some(500) }] }),
    };

    // What a request carries has builders without the types crate's `builders` feature: the
    // bodies and the models inside them, which is how a nested value is written.
    let spec: types::DeploymentSpec = types::DeploymentSpec::builder().replicas(2).try_into().unwrap();
    assert_eq!(spec.replicas, 2);

    let replaced = client.replace_deployment().name("web").dry_run(true).body(deployment.clone()).send().await.unwrap();
    assert_eq!((replaced.name.as_str(), replaced.status), ("web", Some(types::DeploymentStatus2::Available)));
    assert_eq!(
        (replaced.rollout.as_ref(), replaced.limits.as_ref()),
        (deployment.rollout.as_ref(), deployment.limits.as_ref())
    );

    let patched = client.patch_deployment().name("web").body(deployment).send().await.unwrap();
    assert_eq!(patched.name, "web (merge)", "sent as application/merge-patch+json, read as that form");

    let image = client.create_image().body(types::ImageRequest { prompt: "cat".into(), size: None }).send().await;
    let image = image.unwrap().into_inner();
    assert_eq!(image.url, "https://images.example/cat");
    assert_eq!(image.author.and_then(|a| a.0).map(|a| a.login).as_deref(), Some("cat"));
    assert!(matches!(image.origin.and_then(|o| o.0), Some(types::NullableOriginValue::User(_))));

    // Plain JSON is taken as the first of JSON's forms the patch offers; the body the document
    // offered as any media type is read as JSON, and only JSON.
    let http = reqwest::Client::new();
    let patch = |content_type: &'static str| {
        http.patch(format!("{url}/deployments/web")).header("content-type", content_type).body(r#"{"name": "x"}"#)
    };
    let plain: types::Deployment = patch("application/json").send().await.unwrap().json().await.unwrap();
    assert_eq!(plain.name, "web (json-patch)");
    let text = http
        .put(format!("{url}/deployments/web"))
        .header("content-type", "text/plain")
        .body(r#"{"name": "x"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(text.status().as_u16(), 415);
}
