//! The mock engine (`openapi_workspace_runtime::mock`, what `openapi-workspace mock` serves) and
//! the generated mock (`mock_router` with `MockApi`) answer alike: for every operation of every
//! sample document, the same requests — without a credential, with one, with a query parameter
//! the operation does not take, with a body that is not JSON or not of a media type it takes,
//! with a method its path does not serve, and at a path the document does not have — get the
//! same status, content type and body from both, over HTTP; a refusal's error object the same
//! but for the words of its message where the generated server's typed readers word a type
//! error their way (serde's "expected i64" for the engine's validator's "is not of type
//! \"integer\""). (`samples.rs` runs every sample's valid request through both, byte for byte.)

mod support;

use std::sync::Arc;

use openapi_workspace_runtime::mock::{CredentialPlan, OperationPlan, Plan};

/// A request: method, path and query, headers, body.
type Sent = (String, String, Vec<(String, String)>, Option<String>);

/// The requests sent to both servers for `plan`'s operations.
fn requests(plan: &Plan) -> Vec<Sent> {
    let mut sent: Vec<Sent> = Vec::new();
    let any = |method: &str, path: &str, headers: &[(String, String)], body: Option<&str>| {
        (method.to_owned(), path.to_owned(), headers.to_vec(), body.map(str::to_owned))
    };
    for operation in &plan.operations {
        let path = filled(&operation.path);
        let credentials = credentials(operation);
        let json = vec![("content-type".to_owned(), "application/json".to_owned())];
        let with = |extra: &[(String, String)]| credentials.iter().chain(extra).cloned().collect::<Vec<_>>();
        sent.push(any(&operation.method, &path, &[], None));
        sent.push(any(&operation.method, &path, &credentials, None));
        let query = if path.contains('?') { format!("{path}&zz=1") } else { format!("{path}?zz=1") };
        sent.push(any(&operation.method, &query, &credentials, None));
        if operation.body.is_some() {
            sent.push(any(&operation.method, &path, &with(&json), Some("{")));
            sent.push(any(&operation.method, &path, &with(&json), Some("{}")));
            sent.push(any(
                &operation.method,
                &path,
                &with(&[("content-type".to_owned(), "application/x-unknown".to_owned())]),
                Some("x"),
            ));
        }
        sent.push(any("TRACE", &path, &credentials, None));
        sent.push(any(&operation.method, "/zz/unknown/path", &credentials, None));
    }
    sent.push(("GET".into(), "/zz/unknown/path".into(), Vec::new(), None));
    sent
}

/// `path` with each `{param}` given a text no schema of these documents takes as a number.
fn filled(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').map_or(rest.len(), |end| start + end + 1);
        out.push_str("x1");
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// Every credential of the operation's first alternative, as headers (a query api key is in
/// the query, so it is left out: the request then lacks it, as a caller's would).
fn credentials(operation: &OperationPlan) -> Vec<(String, String)> {
    let Some(requirement) = &operation.requirement else { return Vec::new() };
    let mut headers = Vec::new();
    for credential in requirement.alternatives.first().into_iter().flatten() {
        match credential {
            CredentialPlan::Bearer => headers.push(("authorization".into(), "Bearer any".into())),
            CredentialPlan::Basic => headers.push(("authorization".into(), "Basic YW55OmFueQ==".into())),
            CredentialPlan::Header(name) => headers.push((name.clone(), "any".into())),
            CredentialPlan::Cookie(name) => headers.push(("cookie".into(), format!("{name}=any"))),
            CredentialPlan::Query(_) => {}
        }
    }
    headers
}

/// What `url` answers `sent`: status, content type, body.
async fn answer(client: &reqwest::Client, url: &str, (method, path, headers, body): &Sent) -> String {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a method");
    let mut request = client.request(method, format!("{url}{path}"));
    for (name, value) in headers {
        request = request.header(name, value);
    }
    if let Some(body) = body {
        request = request.body(body.clone());
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status().as_u16();
    let content_type = response.headers().get("content-type").map(|v| v.to_str().unwrap_or("?").to_owned());
    let body = response.text().await.unwrap_or_default();
    let body = match (status >= 400, serde_json::from_str::<serde_json::Value>(&body)) {
        (true, Ok(object)) => worded(object).to_string(),
        _ => body,
    };
    format!("{status} {content_type:?} {body}")
}

/// An error object with each text that is a sentence (the message) replaced by `…`: the
/// object's shape, its fixed values and its status stay.
fn worded(value: serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Value::String(text) if text.contains(' ') => Value::String("…".into()),
        Value::Object(fields) => Value::Object(fields.into_iter().map(|(key, value)| (key, worded(value))).collect()),
        Value::Array(items) => Value::Array(items.into_iter().map(worded).collect()),
        other => other,
    }
}

macro_rules! alike {
    ($($name:ident),* $(,)?) => {$(
        #[tokio::test]
        async fn $name() {
            let plan: Plan = serde_json::from_str(include_str!(concat!(env!("OUT_DIR"), "/", stringify!($name), "/mock.json")))
                .expect("the build script's plan");
            let sent = requests(&plan);
            let generated = support::serve(openapi_workspace_output::$name::server::mock_router(Arc::new(
                openapi_workspace_output::$name::server::MockApi,
            )))
            .await;
            let engine = support::serve(openapi_workspace_runtime::mock::router(plan)).await;
            let client = reqwest::Client::new();
            let mut differences = Vec::new();
            for request in &sent {
                let (from_generated, from_engine) =
                    (answer(&client, &generated, request).await, answer(&client, &engine, request).await);
                if from_generated != from_engine {
                    differences.push(format!("{request:?}\n  generated: {from_generated}\n  engine:    {from_engine}"));
                }
            }
            assert!(
                differences.is_empty(),
                "{} of {} requests answered differently:\n{}",
                differences.len(),
                sent.len(),
                differences.join("\n")
            );
        }
    )*};
}

alike!(
    bounds,
    discriminated,
    errors,
    events,
    forms,
    generality,
    long_tail,
    multipart,
    nullable_and_enums,
    openapi_3_1,
    openapi_3_2,
    pagination,
    parameter_styles,
    parameters_and_responses,
    pet_store,
    public_shapes,
    query_arrays,
    repairs,
    security,
    shop,
    untypable,
    webhooks,
);
