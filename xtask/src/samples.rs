//! What the payments document's samples are written with: its client, CLI, environment
//! variables and webhook kit (`flavour`), and the "Getting started" walk-through (`guide`), the
//! README's, as steps of operations' curl samples. `tests/docs_samples` runs both.

use openapi_workspace::{Flavour, GettingStarted, Step, WebhookKit};

pub(crate) fn flavour() -> Flavour {
    Flavour {
        client_crate: "payments_client".into(),
        types: "payments_client::types".into(),
        prelude: None,
        connect: Some("payments_client::with_token(&base_url, &token)".into()),
        cli: Some("payments".into()),
        base_url_variable: "PAYMENTS_BASE_URL".into(),
        token_variable: "PAYMENTS_TOKEN".into(),
        webhooks: Some(WebhookKit {
            module: "payments_client::webhooks".into(),
            signature_header: "X-Service-Signature".into(),
            sign_shell:
                r#"printf '%s' "$BODY" | openssl dgst -sha512 -hmac "$PAYMENTS_WEBHOOK_SECRET" | sed 's/^.*= //'"#
                    .into(),
            secret_variable: "PAYMENTS_WEBHOOK_SECRET".into(),
            receiver_variable: "RECEIVER_URL".into(),
        }),
    }
}

pub(crate) fn guide() -> GettingStarted {
    let step = |says: &str, operation_id: &str, uses: &[(&str, &str)], keeps: Option<&str>| Step {
        says: says.into(),
        operation_id: operation_id.into(),
        uses: uses.iter().map(|(binding, variable)| (binding.to_string(), variable.to_string())).collect(),
        keeps: keeps.map(str::to_owned),
    };
    GettingStarted {
        intro: "Start the sandbox with a token of your choosing, letting it post notifications to a receiver on \
                your own machine (a sandbox started without a token prints one), and point the shell at it. \
                Every step below is a command to paste, in order; `jq` keeps the ids the later steps need.\n\n\
                ```sh\n\
                PAYMENTS_SANDBOX_TOKENS=tok_demo cargo run -p payments-sandbox -- --webhook-allow-loopback\n\
                export PAYMENTS_BASE_URL=http://127.0.0.1:8080 PAYMENTS_TOKEN=tok_demo\n\
                export RECEIVER_URL=http://127.0.0.1:3000/   # your webhook receiver\n\
                ```\n"
            .into(),
        steps: vec![
            step("Open a balance in pounds: money paid to you lands here.", "createBalance", &[], Some("BALANCE_ID")),
            step(
                "Ask a payer for £25.00. The answer's `payment_url` is the hosted payment page (with its QR code): \
                 open it in a browser and pay there, or let the next step pay as a payer would.",
                "createPaymentRequest",
                &[],
                Some("REQUEST_ID"),
            ),
            step("Pay the request, as a payer does on the page.", "simulatePayment", &[("id", "REQUEST_ID")], None),
            step(
                "See the balance credited with the payment: `balance` is now 2500.",
                "getBalance",
                &[("id", "BALANCE_ID")],
                None,
            ),
            step(
                "Register your receiver for notifications. Keep the `secret` the answer shows (once): every \
                 notification is signed with it, and the receiver kit (`payments_client::webhooks`) checks it.",
                "createWebhookEndpoint",
                &[("body.url", "RECEIVER_URL")],
                Some("ENDPOINT_ID"),
            ),
            step(
                "Have a signed `ping` posted to it now; the answer says how the delivery went.",
                "sendTestWebhook",
                &[("body.endpoint_id", "ENDPOINT_ID")],
                None,
            ),
        ],
    }
}

/// Every operation and webhook of the document has its samples: the generator leaves out what it
/// cannot write, which for our own document is a fault to fix, not a gap to publish.
pub(crate) fn complete(
    spec: &openapi_workspace::Spec,
    samples: &[openapi_workspace::Sample],
    flavour: &Flavour,
) -> anyhow::Result<()> {
    let missing = openapi_workspace::unsampled(spec, samples, flavour);
    if !missing.is_empty() {
        anyhow::bail!("no samples could be written for {missing:?}");
    }
    Ok(())
}
