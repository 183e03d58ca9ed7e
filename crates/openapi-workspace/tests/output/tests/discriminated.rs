//! Unions told apart by a `discriminator` (`samples/discriminated.yaml`), served over real HTTP
//! through the generated client: a dog's value fits the cat's schema too, yet the server accepts
//! it (its tag says which arm it is, where a plain `oneOf` would refuse a value of two arms), the
//! models read the arm the tag names (where an untagged union takes the first that fits), a tag
//! that names no arm is refused (a value without one is read as the first arm it fits), and the
//! mock answers a value whose tag names its arm.

mod support;

use std::sync::Arc;

use openapi_workspace_output::discriminated::{client, server, types};
use openapi_workspace_runtime::{ApiError, RequestContext};
use serde_json::json;

struct Service;

impl server::Api<()> for Service {
    async fn create_pet(&self, _: RequestContext<()>, body: types::Pet) -> Result<server::CreatePetResponse, ApiError> {
        Ok(server::CreatePetResponse::Created(body))
    }
}

#[tokio::test]
async fn the_tag_decides_the_arm_for_the_server_the_models_and_the_mock() {
    let url = support::serve(server::mock_router(Arc::new(Service))).await;
    let client = client::Client::new(&url, client::Config::new());

    let dog = types::Dog { pet_type: "dog".into(), name: "Rex".into(), good: Some(true) };
    let kept = client.create_pet().body(types::Pet::Dog(dog.clone())).send().await.unwrap().into_inner();
    assert_eq!(kept, types::Pet::Dog(dog), "the dog came back a dog, not the cat it also fits");

    // Every tag the mapping gives an arm; the values fit both arms' schemas.
    let http = reqwest::Client::new();
    for (tag, cat) in [("dog", false), ("cat", true), ("kitten", true)] {
        let body = json!({"pet_type": tag, "name": "Tom"});
        let response = http.post(format!("{url}/pets")).json(&body).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 201, "{tag}: {}", response.text().await.unwrap());
        let pet: types::Pet = response.json().await.unwrap();
        assert_eq!(matches!(pet, types::Pet::Cat(_)), cat, "{tag}: {pet:?}");
    }
    for body in [json!({"pet_type": "fish", "name": "Nemo"}), json!({"name": "Nemo"})] {
        let response = http.post(format!("{url}/pets")).json(&body).send().await.unwrap();
        assert_eq!(response.status().as_u16(), 400, "{body}");
    }

    // The models alone, as a client reading an answer does.
    let error = serde_json::from_value::<types::Pet>(json!({"pet_type": "fish", "name": "Nemo"})).unwrap_err();
    assert!(error.to_string().contains("pet_type \"fish\" names no arm of Pet (one of cat, kitten, dog)"), "{error}");

    // Unmapped: each arm's tag is its component's name, and the mock's answer carries it.
    let shape = client.get_shape().id("s").send().await.unwrap().into_inner();
    assert!(matches!(&shape, types::Shape::Circle(circle) if circle.kind == "Circle"), "{shape:?}");
    let square: types::Shape = serde_json::from_value(json!({"kind": "Square", "size": 2.0})).unwrap();
    assert!(matches!(square, types::Shape::Square(_)), "{square:?}");
    // Without its tag, which only the square may leave out: the first arm it fits.
    let untagged: types::Shape = serde_json::from_value(json!({"size": 2.0})).unwrap();
    assert!(matches!(untagged, types::Shape::Square(ref square) if square.kind.is_none()), "{untagged:?}");
}
