//! Unions told apart by a `discriminator` (`samples/discriminated.yaml`), served over real HTTP
//! through the generated client: a dog's value fits the cat's schema too, yet the server accepts
//! it (its tag says which arm it is, where a plain `oneOf` would refuse a value of two arms), the
//! models read the arm the tag names (where an untagged union takes the first that fits), a tag
//! that names no arm is refused (a value without one is read as the first arm it fits), and the
//! mock answers a value whose tag names its arm. A parent that children extend by `allOf` is a
//! union of its children and its own fields, read by the tag the same way.

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

    async fn register_vehicle(
        &self,
        _: RequestContext<()>,
        body: types::Vehicle,
    ) -> Result<server::RegisterVehicleResponse, ApiError> {
        Ok(server::RegisterVehicleResponse::Created(body))
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

#[tokio::test]
async fn a_parent_extended_by_all_of_is_read_as_the_child_its_tag_names() {
    let url = support::serve(server::mock_router(Arc::new(Service))).await;
    let client = client::Client::new(&url, client::Config::new());

    // A car given the parent's schema keeps what makes it a car, both ways.
    let car = types::Car { kind: "car".into(), wheels: 4, doors: 5 };
    let kept = client.register_vehicle().body(types::Vehicle::Car(car.clone())).send().await.unwrap().into_inner();
    assert_eq!(kept, types::Vehicle::Car(car));

    let http = reqwest::Client::new();
    let register = |body: serde_json::Value| {
        let http = http.clone();
        let url = url.clone();
        async move { http.post(format!("{url}/vehicles")).json(&body).send().await.unwrap() }
    };
    // Unmapped, the bike's tag is its component's name.
    let response = register(json!({"kind": "Bike", "wheels": 2, "bell": true})).await;
    assert_eq!(response.status().as_u16(), 201);
    let bike: types::Vehicle = response.json().await.unwrap();
    assert_eq!(bike, types::Vehicle::Bike(types::Bike { kind: "Bike".into(), wheels: 2, bell: Some(true) }));
    // A tag no child has is the parent's own fields, as the document reads it.
    let response = register(json!({"kind": "truck", "wheels": 18})).await;
    assert_eq!(response.status().as_u16(), 201);
    let truck: types::Vehicle = response.json().await.unwrap();
    assert!(matches!(&truck, types::Vehicle::VehicleBase(base) if base.wheels == 18), "{truck:?}");
    // The car's tag asks for a car: without its doors, refused, not read as a plain vehicle.
    for body in [json!({"kind": "car", "wheels": 4}), json!({"kind": "Bike"})] {
        let response = register(body.clone()).await;
        assert_eq!(response.status().as_u16(), 400, "{body}");
    }
    assert!(serde_json::from_value::<types::Vehicle>(json!({"kind": "car", "wheels": 4})).is_err());

    // The mock answers a child, tagged as its arm.
    let answered = client.get_vehicle().id("v").send().await.unwrap().into_inner();
    assert!(matches!(&answered, types::Vehicle::Bike(bike) if bike.kind == "Bike"), "{answered:?}");
}
