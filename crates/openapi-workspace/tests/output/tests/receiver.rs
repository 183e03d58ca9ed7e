//! The webhooks sample's receiver (`samples/webhooks.yaml`, its `x-webhooks`) served over real
//! HTTP: a notification that matches the document reaches the method typed, with its header;
//! one that does not is refused with the error object before any method runs.

mod support;

use std::sync::{Arc, Mutex};

use openapi_workspace_output::webhooks::{server::receiver, types};
use openapi_workspace_runtime::{ApiError, RequestContext};
use serde_json::json;

#[derive(Default)]
struct Inbox(Mutex<Vec<(String, types::PingNotification)>>);

impl receiver::Api for Inbox {
    async fn webhook_ping(
        &self,
        _: RequestContext<()>,
        signature: String,
        body: types::PingNotification,
    ) -> Result<receiver::WebhookPingResponse, ApiError> {
        self.0.lock().unwrap().push((signature, body));
        Ok(receiver::WebhookPingResponse::Ok)
    }
}

#[tokio::test]
async fn a_receiver_takes_the_webhooks_the_document_describes_and_refuses_the_rest() {
    let inbox = Arc::new(Inbox::default());
    let url = support::serve(receiver::router(inbox.clone())).await;
    let http = reqwest::Client::new();
    let signature = "ab".repeat(64);
    let ping = json!({
        "id": "5d1b2f7e-8c8a-4d5e-9a39-2f1f0b5f4c11",
        "event": "ping",
        "created": "2026-11-26T03:00:00Z",
        "data": {"message": "ping"}
    });

    let sent =
        http.post(format!("{url}/ping")).header("x-service-signature", &signature).json(&ping).send().await.unwrap();
    assert_eq!(sent.status().as_u16(), 200);
    {
        let received = inbox.0.lock().unwrap();
        assert_eq!(received.len(), 1);
        assert_eq!(received[0].0, signature);
        assert_eq!(serde_json::to_value(&received[0].1).unwrap(), ping);
    }

    // At the receiver's own URL, where senders post every notification: the same.
    let sent = http.post(format!("{url}/")).header("x-service-signature", &signature).json(&ping).send().await.unwrap();
    assert_eq!(sent.status().as_u16(), 200);
    assert_eq!(inbox.0.lock().unwrap().len(), 2);

    // Refused before the method: a payload off its schema, a missing or malformed header, an
    // unknown webhook.
    let mut wrong = ping.clone();
    wrong["data"]["message"] = json!("pong");
    for (request, status, says) in [
        (http.post(format!("{url}/ping")).header("x-service-signature", &signature).json(&wrong), 400, "data.message"),
        (http.post(format!("{url}/ping")).json(&ping), 400, "x-service-signature"),
        // A header off its schema's pattern (lowercase hex, 128 characters).
        (
            http.post(format!("{url}/ping")).header("x-service-signature", "AB".repeat(64)).json(&ping),
            400,
            "parameter x-service-signature",
        ),
        (http.post(format!("{url}/pong")).json(&ping), 404, "/pong"),
        (http.get(format!("{url}/ping")), 405, "POST"),
        (http.post(format!("{url}/")).json(&wrong), 400, "none of the 1 notifications this receiver takes"),
    ] {
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), status);
        let body: serde_json::Value = response.json().await.unwrap();
        assert!(body.to_string().contains(says), "{status}: {body}");
    }
    assert_eq!(inbox.0.lock().unwrap().len(), 2, "nothing refused reached the receiver");
}
