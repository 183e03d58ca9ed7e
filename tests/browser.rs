//! In a real browser: headless Chromium (Debian's package) against a running sandbox, with every
//! destination but loopback unreachable. `/docs` must render the operations, schemas and
//! webhooks from the sandbox's own files and call the API with a token; a payment page must be
//! payable by clicking; the static reference of `cargo xtask docs` must render from disk alone.
//! Needs Chromium: `cargo test -p payments-tests --features browser --test
//! browser` (.ci/run installs it). `UPDATE_SCREENSHOTS=1` rewrites the screenshots in `docs/`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::browser::{Browser, BrowserConfig};
use chromiumoxide::cdp::browser_protocol::emulation::SetDeviceMetricsOverrideParams;
use chromiumoxide::cdp::browser_protocol::network::EventRequestWillBeSent;
use chromiumoxide::handler::viewport::Viewport;
use chromiumoxide::page::ScreenshotParams;
use futures::StreamExt;
use payments_client::types;
use payments_tests::sandbox::*;

struct Chromium {
    browser: Browser,
    _profile: tempfile::TempDir,
}

async fn chromium() -> Chromium {
    let executable = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(
        std::path::Path::new(&executable).exists(),
        "Chromium not found at {executable}: install Debian's `chromium` (.ci/run does) or set CHROMIUM"
    );
    let profile = tempfile::tempdir().unwrap();
    let config = BrowserConfig::builder()
        .chrome_executable(executable)
        .no_sandbox()
        .user_data_dir(profile.path())
        .viewport(Viewport { width: 1280, height: 900, ..Viewport::default() })
        .args([
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            // No internet: names other than localhost do not resolve, and anything that is not
            // loopback goes to a proxy that is not there.
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
            "--proxy-server=http://127.0.0.1:9",
        ])
        .build()
        .unwrap();
    let (browser, mut handler) = Browser::launch(config).await.expect("Chromium starts");
    tokio::spawn(async move { while handler.next().await.is_some() {} });
    Chromium { browser, _profile: profile }
}

/// Every URL the page requests, recorded from the DevTools protocol.
async fn record_requests(page: &Page) -> Arc<Mutex<Vec<String>>> {
    let urls = Arc::new(Mutex::new(Vec::new()));
    let mut events = page.event_listener::<EventRequestWillBeSent>().await.unwrap();
    let sink = urls.clone();
    tokio::spawn(async move {
        while let Some(event) = events.next().await {
            sink.lock().unwrap().push(event.request.url.clone());
        }
    });
    urls
}

fn assert_loopback_only(urls: &[String]) {
    assert!(!urls.is_empty());
    for url in urls {
        let local = url.starts_with("http://127.0.0.1:")
            || url.starts_with("data:")
            || url.starts_with("blob:")
            || url.starts_with("file:");
        assert!(local, "the page fetched {url}, which is not served by the sandbox");
    }
}

/// Evaluates `expression` every 100 ms until it is true, for at most `within`.
async fn until(page: &Page, expression: &str, within: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let value = page.evaluate(expression).await.ok().and_then(|v| v.into_value::<bool>().ok());
        if value == Some(true) {
            return true;
        }
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn text(page: &Page, expression: &str) -> String {
    page.evaluate(expression).await.unwrap().into_value::<String>().unwrap()
}

async fn number(page: &Page, expression: &str) -> i64 {
    page.evaluate(expression).await.unwrap().into_value::<i64>().unwrap()
}

async fn resize(page: &Page, width: i64, height: i64, mobile: bool) {
    page.execute(SetDeviceMetricsOverrideParams::new(width, height, if mobile { 2.0 } else { 1.0 }, mobile))
        .await
        .unwrap();
}

/// A screenshot (of the whole page, or of what the window shows) into `docs/screenshots/` when
/// asked to update them, else `target/screenshots/`.
async fn screenshot(page: &Page, name: &str, full_page: bool) {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = if std::env::var_os("UPDATE_SCREENSHOTS").is_some() {
        root.join("docs/screenshots")
    } else {
        root.join("target/screenshots")
    };
    std::fs::create_dir_all(&dir).unwrap();
    page.save_screenshot(ScreenshotParams::builder().full_page(full_page).build(), dir.join(name)).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docs_render_the_whole_reference_offline_and_try_it_calls_the_sandbox() {
    let sandbox = start_sandbox().await;
    let chromium = chromium().await;
    let page = chromium.browser.new_page("about:blank").await.unwrap();
    let requests = record_requests(&page).await;
    page.goto(format!("{}/docs/", sandbox.url)).await.unwrap();
    assert!(
        until(&page, "document.querySelectorAll('.opblock-tag-section').length >= 9", Duration::from_secs(30)).await,
        "the operations render"
    );

    // Every operation of the document, with its path.
    let paths = text(
        &page,
        "[...document.querySelectorAll('.opblock .opblock-summary-path')].map(e => e.innerText.trim()).join('\\n')",
    )
    .await;
    for path in [
        "/paymentrequests",
        "/paymentrequests/{id}",
        "/recipients/validate",
        "/bankfields",
        "/transactions",
        "/virtualaccounts/{id}",
        "/balances/{id}",
        "/webhook-endpoints/{id}/rotate-secret",
        "/sandbox/advance",
        "/webhooks/{id}",
    ] {
        assert!(paths.lines().any(|p| p == path), "{path} is shown");
    }
    let operations = number(&page, "document.querySelectorAll('#swagger-ui .opblock').length").await;
    assert!(operations >= 38 + 19, "38 operations and 19 webhooks, found {operations}");

    // The webhooks section lists the events with the notification and its signature header.
    let body = text(&page, "document.body.innerText").await;
    // Getting started, first: its steps, the commands to paste.
    for step in
        ["Getting started", "BALANCE_ID=$(echo \"$ANSWER\" | jq -r .id)", "/sandbox/paymentrequests/$REQUEST_ID/pay"]
    {
        assert!(body.contains(step), "Getting started shows {step:?}");
    }
    assert!(body.contains("Webhooks"), "a webhooks section");
    for event in ["transaction.processed", "paymentrequest.settled", "virtualaccount.active", "ping"] {
        assert!(body.contains(event), "the {event} webhook is shown");
    }
    page.find_element("[id^='operations-webhooks-'] .opblock-summary").await.unwrap().click().await.unwrap();
    assert!(
        until(&page, "document.body.innerText.includes('X-Service-Signature')", Duration::from_secs(10)).await,
        "the signature header is shown"
    );

    // Schemas, the error object among them.
    let models = text(&page, "[...document.querySelectorAll('section.models article[data-json-schema-level=\"0\"] .json-schema-2020-12__title')].map(e => e.innerText.trim()).join('\\n')").await;
    for schema in ["Error", "PaymentRequest", "Transaction", "Notification", "WebhookEndpointWithSecret"] {
        assert!(models.lines().any(|m| m == schema), "schema {schema} is shown: {models}");
    }
    assert!(models.lines().count() >= 55, "every schema is listed");

    // An operation opened: parameters, request body example and responses with the error object.
    page.find_element("#operations-Payment_requests-createPaymentRequest .opblock-summary")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert!(
        until(&page, "(document.querySelector('#operations-Payment_requests-createPaymentRequest')?.innerText || '').includes('invoice-2026-0042')", Duration::from_secs(10)).await,
        "the request body example is shown"
    );
    let operation =
        text(&page, "document.querySelector('#operations-Payment_requests-createPaymentRequest').innerText").await;
    for expected in ["201", "409", "413", "429", "Request body"] {
        assert!(operation.contains(expected), "createPaymentRequest shows {expected}");
    }
    // Its samples, beside it: the Rust client's call, the CLI's line and curl's.
    for sample in [
        "client.create_payment_request().body(body).send().await?",
        "payments create-payment-request \\\n  --amount 2500",
        "curl -X POST \"$PAYMENTS_BASE_URL/paymentrequests\"",
    ] {
        assert!(operation.contains(sample), "createPaymentRequest shows the sample {sample:?}: {operation}");
    }
    let samples = number(
        &page,
        "[...document.querySelectorAll('#operations-Payment_requests-createPaymentRequest .opblock-description-wrapper pre')].length",
    )
    .await;
    assert_eq!(samples, 3, "three samples, each in a code block");

    // Try it: authorize with a token, call GET /currencies, see the sandbox's answer.
    page.find_element(".auth-wrapper .authorize").await.unwrap().click().await.unwrap();
    assert!(until(&page, "!!document.querySelector('.modal-ux input')", Duration::from_secs(5)).await);
    page.find_element(".modal-ux input").await.unwrap().click().await.unwrap().type_str(ALICE).await.unwrap();
    page.find_element(".modal-ux .modal-btn.auth.authorize").await.unwrap().click().await.unwrap();
    page.find_element(".modal-ux .btn-done").await.unwrap().click().await.unwrap();
    page.find_element("#operations-Reference_data-listCurrencies .opblock-summary")
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert!(
        until(
            &page,
            "!!document.querySelector('#operations-Reference_data-listCurrencies .execute')",
            Duration::from_secs(5)
        )
        .await
    );
    page.find_element("#operations-Reference_data-listCurrencies .execute").await.unwrap().click().await.unwrap();
    assert!(
        until(&page, "(document.querySelector('#operations-Reference_data-listCurrencies .live-responses-table')?.innerText || '').includes('Nigerian Naira')", Duration::from_secs(10)).await,
        "the live response from the sandbox is shown"
    );
    let live = text(
        &page,
        "document.querySelector('#operations-Reference_data-listCurrencies .live-responses-table').innerText",
    )
    .await;
    assert!(live.contains("200"), "{live}");

    resize(&page, 1280, 900, false).await;
    page.evaluate("document.querySelector('#operations-Payment_requests-createPaymentRequest').scrollIntoView()")
        .await
        .unwrap();
    screenshot(&page, "docs-operation-desktop.png", false).await;
    page.evaluate("window.scrollTo(0, 0)").await.unwrap();
    screenshot(&page, "docs-desktop.png", false).await;
    resize(&page, 390, 844, true).await;
    page.evaluate("window.scrollTo(0, 0)").await.unwrap();
    screenshot(&page, "docs-phone.png", false).await;
    assert_loopback_only(&requests.lock().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payer_pays_on_the_hosted_page_and_the_balance_is_credited() {
    let sandbox = start_sandbox().await;
    let client = sandbox.client(ALICE);
    let balance = open_balance(&client, "NGN").await;
    let request = client
        .create_payment_request()
        .body(
            types::PaymentRequestCreate::builder()
                .amount(amount(1_250_050))
                .settlement_balance_id(Some(balance.id))
                .reference(Some(code("Invoice 2026-0042 · Adaeze Stores"))),
        )
        .send()
        .await
        .unwrap()
        .into_inner();

    let chromium = chromium().await;
    let page = chromium.browser.new_page("about:blank").await.unwrap();
    resize(&page, 390, 844, true).await;
    let requests = record_requests(&page).await;
    page.goto(request.payment_url.as_str()).await.unwrap();
    assert!(
        until(
            &page,
            "!!document.querySelector('#pay') && document.querySelector('img').complete",
            Duration::from_secs(10)
        )
        .await
    );
    assert_eq!(text(&page, "document.querySelector('#amount').innerText").await, "₦12,500.50");
    assert_eq!(
        text(&page, "document.querySelector('#reference').innerText").await,
        "Invoice 2026-0042 · Adaeze Stores"
    );
    assert_eq!(text(&page, "document.querySelector('#pay').innerText").await, "Pay ₦12,500.50");
    assert!(number(&page, "document.querySelector('img').naturalWidth").await > 0, "the QR code image loads");
    // The page's Content-Security-Policy lets its own inline style sheet apply (by its hash).
    assert_eq!(text(&page, "getComputedStyle(document.querySelector('.card')).borderTopLeftRadius").await, "16px");
    // Readable on a phone: nothing wider than the screen.
    assert!(number(&page, "document.documentElement.scrollWidth").await <= 390);
    screenshot(&page, "payment-page-phone.png", true).await;

    page.find_element("#payer_name").await.unwrap().click().await.unwrap().type_str("Grace Hopper").await.unwrap();
    page.find_element("#pay").await.unwrap().click().await.unwrap();
    assert!(
        until(&page, "(document.querySelector('#outcome')?.innerText || '').includes('Paid')", Duration::from_secs(10))
            .await,
        "the page says it is paid"
    );
    assert_eq!(text(&page, "document.querySelector('#status').innerText").await, "processed");
    screenshot(&page, "payment-page-paid-phone.png", true).await;

    let paid = client.get_payment_request().id(request.id).send().await.unwrap().into_inner();
    assert_eq!(paid.status, types::PaymentRequestStatus::Processed);
    assert_eq!(balance_of(&client, balance.id).await, 1_250_050);
    let collection = client.list_transactions().balance_id(balance.id).send().await.unwrap().into_inner();
    assert_eq!(collection[0].payer_name.as_deref(), Some("Grace Hopper"));

    resize(&page, 1280, 900, false).await;
    page.goto(request.payment_url.as_str()).await.unwrap();
    screenshot(&page, "payment-page-desktop.png", true).await;
    assert_loopback_only(&requests.lock().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_static_reference_opens_from_disk() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let built = std::process::Command::new(env!("CARGO"))
        .args(["run", "--quiet", "--package", "xtask", "--", "docs"])
        .current_dir(&root)
        .status()
        .expect("cargo runs");
    assert!(built.success(), "cargo xtask docs");
    let file = root.join("target/api-docs/index.html").canonicalize().unwrap();

    let chromium = chromium().await;
    let page = chromium.browser.new_page("about:blank").await.unwrap();
    let requests = record_requests(&page).await;
    page.goto(format!("file://{}", file.display())).await.unwrap();
    assert!(
        until(&page, "document.querySelectorAll('.opblock-tag-section').length >= 9", Duration::from_secs(30)).await,
        "the operations render from the file alone"
    );
    let body = text(&page, "document.body.innerText").await;
    for expected in ["Payments API", "/paymentrequests", "Webhooks", "transaction.processed", "Schemas"] {
        assert!(body.contains(expected), "{expected} is shown");
    }
    let urls = requests.lock().unwrap().clone();
    assert!(
        urls.iter().all(|u| u.starts_with("file:") || u.starts_with("data:") || u.starts_with("blob:")),
        "nothing fetched: {urls:?}"
    );
}
