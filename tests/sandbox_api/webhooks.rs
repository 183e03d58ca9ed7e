//! Webhook endpoints: their secret kept, unsafe targets refused.

use payments_client::types;
use payments_tests::raw;
use payments_tests::sandbox::*;

payments_tests::on_both_backends! {
    #[tokio::test] webhook_endpoints_keep_their_secret_and_refuse_unsafe_targets,
}

async fn webhook_endpoints_keep_their_secret_and_refuse_unsafe_targets() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let create = |url: &str| {
        let request = client
            .create_webhook_endpoint()
            .body(types::WebhookEndpointCreate::builder().url(code::<types::WebhookEndpointCreateUrl>(url)));
        async move { request.send().await.map(|r| r.into_inner()) }
    };
    let endpoint = create("https://hooks.example/payments").await.unwrap();
    let listed = client.list_webhook_endpoints().send().await.unwrap().into_inner();
    assert_eq!(listed.len(), 1);
    let read = client.get_webhook_endpoint().id(endpoint.id).send().await.unwrap().into_inner();
    assert_eq!(
        (read.id, read.url.as_str(), read.events.clone()),
        (endpoint.id, "https://hooks.example/payments", None)
    );
    let raw_read =
        raw("GET", &format!("{}/webhook-endpoints/{}", sandbox.url, endpoint.id), Some(ALICE), None, "").await;
    assert!(raw_read.body.get("secret").is_none(), "the secret is never listed again");
    let rotated = client.rotate_webhook_endpoint_secret().id(endpoint.id).send().await.unwrap().into_inner();
    assert_ne!(rotated.secret, endpoint.secret);
    assert!(rotated.secret.starts_with("whsec_"));

    for (url, needle) in [
        ("http://hooks.example/x", "https://"),
        ("https://127.0.0.1/x", "loopback"),
        ("https://localhost/x", "loopback"),
        ("https://10.1.2.3/x", "private"),
        ("https://192.168.0.1/x", "private"),
        ("https://169.254.169.254/latest/meta-data", "link-local or metadata"),
        ("https://[::1]/x", "loopback"),
        ("https://[fd00::1]/x", "private"),
        ("https://[64:ff9b::7f00:1]/", "loopback"),
        ("https://[::127.0.0.1]/", "loopback"),
        ("https://[::ffff:169.254.169.254]/", "metadata"),
        ("https://[2002:a00:1::1]/", "private"),
        ("https://localhost./", "trailing dot"),
        ("https:///x", "no host"),
        ("https://user:pw@hooks.example/x", "credentials"),
    ] {
        assert_refused(create(url).await, 400, needle);
    }
    assert_eq!(client.list_webhook_endpoints().send().await.unwrap().into_inner().len(), 1);
    assert_eq!(
        client.delete_webhook_endpoint().id(endpoint.id).send().await.unwrap().into_inner().result,
        types::ResultOkResult::Ok
    );
    assert_refused(client.get_webhook_endpoint().id(endpoint.id).send().await, 404, "webhook endpoint");
    assert!(client.list_webhook_endpoints().send().await.unwrap().into_inner().is_empty());
}
