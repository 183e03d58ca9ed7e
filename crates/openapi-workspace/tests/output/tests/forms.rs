//! A form body of nested values (`samples/forms.yaml`), as Stripe writes every request, served
//! over real HTTP: the generated client writes objects, arrays, maps and unions in brackets
//! (where progenitor's serde_urlencoded refused them), and the server reads them back typed by
//! the schema, refusing what does not fit it.

mod support;

use std::sync::Arc;

use openapi_workspace_output::forms::{client, server, types};
use openapi_workspace_runtime::{ApiError, RequestContext};
use serde_json::{Value, json};

struct Echo;

impl server::Api<()> for Echo {
    async fn create_customer(
        &self,
        _: RequestContext<()>,
        body: types::CustomerForm,
    ) -> Result<server::CreateCustomerResponse, ApiError> {
        Ok(server::CreateCustomerResponse::Ok(body))
    }
}

#[tokio::test]
async fn nested_form_bodies_go_in_brackets_and_come_back_typed() {
    let url = support::serve(server::router(Arc::new(Echo))).await;
    let client = client::Client::new(&url, client::Config::new());

    let sent = json!({
        "name": "Ada & co", "balance": -250, "tax_exempt": true,
        "address": {"city": "Paris", "line1": "1 rue de l'Odéon"},
        "items": [{"price": 5, "tax_rates": ["txr_1", "txr_2"]}, {"price": 7, "tax_rates": ""}],
        "expand": ["customer", "invoice.lines"],
        "metadata": {"order": "42", "note": "a=b&c"},
        "created": {"gt": 1_700_000_000},
    });
    let form: types::CustomerForm = serde_json::from_value(sent.clone()).unwrap();
    let read = client.create_customer().body(form.clone()).send().await.unwrap().into_inner();
    assert_eq!(read, form);
    assert_eq!(serde_json::to_value(&read).unwrap(), sent);
    // The other arm of a union, a number.
    let form: types::CustomerForm = serde_json::from_value(json!({"name": "Bo", "created": 5})).unwrap();
    assert_eq!(client.create_customer().body(form.clone()).send().await.unwrap().into_inner(), form);

    // As another client writes it: `a[]` items, and one text where a list is described.
    let http = reqwest::Client::new();
    let post = |body: &'static str| {
        http.post(format!("{url}/customers")).header("content-type", "application/x-www-form-urlencoded").body(body)
    };
    for (body, expected) in [
        (
            "name=Cy&expand[]=a&expand[]=b&items[0][price]=3&items[0][tax_rates][]=txr",
            json!({"name": "Cy", "expand": ["a", "b"], "items": [{"price": 3, "tax_rates": ["txr"]}]}),
        ),
        (
            "name=Cy&expand=solo&items[0][price]=3&items[0][tax_rates]=",
            json!({"name": "Cy", "expand": ["solo"], "items": [{"price": 3, "tax_rates": ""}]}),
        ),
    ] {
        let response = post(body).send().await.unwrap();
        assert_eq!(response.status(), 200, "{body}");
        assert_eq!(response.json::<Value>().await.unwrap(), expected, "{body}");
    }

    // A key whose brackets do not close is a name as written, which this schema's free-form
    // object allows (schemathesis sends such names).
    assert_eq!(post("name=Di&address[city=x").send().await.unwrap().status(), 200);

    // What does not fit the schema is refused, saying where.
    for (body, said) in [
        ("name=Di&items[0][price]=cheap", "items"),
        ("name=Di&items[0][price]=-1", "items"),
        ("name=Di&address=Paris&address[city]=Paris", "a value and properties both"),
    ] {
        let response = post(body).send().await.unwrap();
        assert_eq!(response.status(), 400, "{body}");
        let error: Value = response.json().await.unwrap();
        assert!(error.to_string().contains(said), "{body}: {error}");
    }
}
