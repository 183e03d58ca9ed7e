//! The payer's side: the hosted payment page behind `payment_url` and the QR code behind
//! `qr_code_url`. No bearer token here: the request's random id is what the payer is given.

use std::sync::LazyLock;

use axum::extract::{Path, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::get;
use payments_types as types;

use crate::domain::{Sandbox, reference};

pub fn routes(sandbox: Sandbox) -> axum::Router {
    axum::Router::new()
        .route("/pay/{id}", get(page).post(submit))
        .route("/pay/{id}/qr.svg", get(qr_code))
        .with_state(sandbox)
}

/// The payment request behind `/pay/{id}`; `None` for an id that is not one, or not spelt
/// as the API spells ids (or a failure, which is logged: the payer is shown "not found" either
/// way).
async fn find(sandbox: &Sandbox, id: &str) -> Option<types::PaymentRequest> {
    let id = payments_server::runtime::canonical_uuid(id)?;
    sandbox.payment_request_for_payer(id).await.unwrap_or_else(|error| {
        let request_id = super::edge::request_id_answered();
        tracing::error!(id = request_id, %error, "cannot read a payment request for the payment page");
        None
    })
}

async fn page(State(sandbox): State<Sandbox>, Path(id): Path<String>) -> Response {
    match find(&sandbox, &id).await {
        Some(request) => secured(Html(render(&request, None)).into_response(), Some(&request)),
        None => not_found(),
    }
}

#[derive(Default, serde::Deserialize)]
struct PayForm {
    #[serde(default)]
    payer_name: String,
    /// What the payer typed for an open request, in major units (`25.00`).
    #[serde(default)]
    amount: String,
}

async fn submit(
    State(sandbox): State<Sandbox>,
    Path(id): Path<String>,
    form: Result<axum::Form<PayForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Some(request) = find(&sandbox, &id).await else { return not_found() };
    // A form that cannot be read is taken as an empty one: the page says what is missing.
    let form = form.map(|f| f.0).unwrap_or_default();
    let payment = match payment(&form, &request) {
        Ok(payment) => payment,
        Err(message) => {
            let page = (StatusCode::BAD_REQUEST, Html(render(&request, Some(&message.to_string())))).into_response();
            return secured(page, Some(&request));
        }
    };
    let payer_name = payment.payer_name.map(|name| name.to_string());
    match sandbox.pay_as_payer(request.id, payer_name, payment.amount).await {
        Ok(request) => {
            let to = match &request.return_url {
                Some(url) => Redirect::to(url),
                None => Redirect::to(&format!("/pay/{}", request.id)),
            };
            secured(to.into_response(), Some(&request))
        }
        Err(error) => {
            let error = payments_server::runtime::ApiError::from(error);
            let current = find(&sandbox, &id).await.unwrap_or(request);
            let page = (error.status(), Html(render(&current, Some(error.message())))).into_response();
            secured(page, Some(&current))
        }
    }
}

/// The API's `SimulatePayment` validator: what the page takes is bounded exactly as the API
/// bounds `POST /sandbox/paymentrequests/{id}/pay` (the amount's range, the name's length).
static SIMULATE_PAYMENT: LazyLock<payments_server::runtime::Validator> =
    LazyLock::new(|| payments_server::component_validator("SimulatePayment"));

/// Why what the payer typed cannot be paid: said on the page, to the payer.
#[derive(Debug, thiserror::Error)]
enum Refused {
    #[error("{typed:?} is not an amount of {currency}")]
    NotAnAmount { typed: String, currency: String },
    #[error("{typed:?} is not an amount this request can take ({rule}, in minor units)")]
    AmountOutOfBounds { typed: String, rule: String },
    /// Another of the API's rules, in its words.
    #[error("{0}")]
    Rule(String),
    /// The API's validator took it, its model did not.
    #[error("{0}")]
    Model(#[source] serde_json::Error),
}

/// What the payer typed, as the API's `SimulatePayment`, checked by the API's own validator; or
/// what to tell the payer. The name may be left out (the API's default is used); for an open
/// request (no amount) the amount is parsed from what was typed.
fn payment(form: &PayForm, request: &types::PaymentRequest) -> Result<types::SimulatePayment, Refused> {
    // Control characters (NUL among them, which PostgreSQL cannot store) are dropped: a name
    // typed into a form has none.
    let name: String = form.payer_name.chars().filter(|c| !c.is_control()).collect();
    let mut body = serde_json::Map::new();
    if !name.trim().is_empty() {
        body.insert("payer_name".into(), name.trim().into());
    }
    let typed = form.amount.trim();
    if request.amount.is_none() && !typed.is_empty() {
        let not_an_amount =
            || Refused::NotAnAmount { typed: typed.to_owned(), currency: request.currency.as_str().to_owned() };
        body.insert("amount".into(), parse_amount(typed, &request.currency).ok_or_else(not_an_amount)?.into());
    }
    let body = serde_json::Value::Object(body);
    SIMULATE_PAYMENT.check(&body, "").map_err(|refused| {
        let message = refused.message();
        if message.starts_with("amount") {
            Refused::AmountOutOfBounds { typed: typed.to_owned(), rule: message.to_owned() }
        } else {
            Refused::Rule(message.to_owned())
        }
    })?;
    serde_json::from_value(body).map_err(Refused::Model)
}

async fn qr_code(State(sandbox): State<Sandbox>, Path(id): Path<String>) -> Response {
    let Some(request) = find(&sandbox, &id).await else { return not_found() };
    let Ok(code) = qrcode::QrCode::new(request.payment_url.as_bytes()) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    let svg = code.render::<qrcode::render::svg::Color>().min_dimensions(240, 240).quiet_zone(true).build();
    let image = ([(header::CONTENT_TYPE, "image/svg+xml"), (header::CACHE_CONTROL, "public, max-age=86400")], svg)
        .into_response();
    secured(image, None)
}

fn not_found() -> Response {
    let page = shell("Payment not found", "<p class=\"muted\">This payment link is not valid.</p>");
    secured((StatusCode::NOT_FOUND, Html(page)).into_response(), None)
}

/// What a payer typed (`25`, `25.5`, `1,250.00`, with or without the currency's symbol) as minor
/// units of `currency`: `None` for anything else (signs, exponents, digits other than ASCII's),
/// more decimals than the currency has, or more digits than any amount has. The bounds of an
/// amount are the document's, checked by the caller.
pub fn parse_amount(text: &str, currency: &str) -> Option<u64> {
    let decimals = reference::currency(currency).map_or(2, |c| c.minor_units) as usize;
    let digits: String = text.trim().trim_start_matches(['£', '€', '$', '₦', '₹']).replace(',', "");
    let (whole, fraction) = digits.split_once('.').unwrap_or((&digits, ""));
    let all_digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if whole.is_empty() || whole.len() > 15 || fraction.len() > decimals || !all_digits(whole) || !all_digits(fraction)
    {
        return None;
    }
    format!("{whole}{fraction:0<decimals$}").parse().ok()
}

/// `amount` minor units of `currency` for people: symbol, thousands separators and exactly the
/// currency's decimals (`2500` GBP is `£25.00`).
pub fn format_amount(amount: u64, currency: &str) -> String {
    let decimals = reference::currency(currency).map_or(2, |c| c.minor_units);
    let scale = 10u64.pow(decimals);
    let whole = (amount / scale).to_string();
    let mut grouped = String::new();
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    let fraction =
        if decimals > 0 { format!(".{:0width$}", amount % scale, width = decimals as usize) } else { String::new() };
    let symbol = match currency {
        "GBP" => "£",
        "EUR" => "€",
        "USD" => "$",
        "NGN" => "₦",
        "INR" => "₹",
        _ => "",
    };
    if symbol.is_empty() { format!("{grouped}{fraction} {currency}") } else { format!("{symbol}{grouped}{fraction}") }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

fn render(request: &types::PaymentRequest, error: Option<&str>) -> String {
    // An open request (no amount) asks the payer how much to pay.
    let amount = request.amount.as_ref().map(|a| format_amount(a.get(), &request.currency));
    let shown = amount.clone().unwrap_or_else(|| format!("Any amount ({})", request.currency.as_str()));
    let reference = request.reference.as_ref().map(|r| r.to_string()).unwrap_or_default();
    let status = request.status.to_string();
    let action = match request.status {
        types::PaymentRequestStatus::Initiated => {
            let (amount_field, button) = match &amount {
                Some(amount) => (String::new(), format!("Pay {amount}")),
                None => (
                    format!(
                        r#"
  <label for="amount_input">Amount ({currency})</label>
  <input id="amount_input" name="amount" inputmode="decimal" required maxlength="20" placeholder="0.00">"#,
                        currency = escape(request.currency.as_str())
                    ),
                    "Pay".to_owned(),
                ),
            };
            format!(
                r#"<form method="post" action="/pay/{id}">{amount_field}
  <label for="payer_name">Your name</label>
  <input id="payer_name" name="payer_name" autocomplete="name" maxlength="140" placeholder="Name on your account">
  <button type="submit" id="pay">{button}</button>
</form>"#,
                id = request.id
            )
        }
        types::PaymentRequestStatus::Processed => r#"<p class="done" id="outcome">Paid. Thank you.</p>"#.to_owned(),
        _ => format!(r#"<p class="muted" id="outcome">This payment request is {status}.</p>"#),
    };
    let error = error.map(|e| format!(r#"<p class="error" role="alert">{}</p>"#, escape(e))).unwrap_or_default();
    let body = format!(
        r#"<p class="muted">Payment request</p>
<p class="amount" id="amount">{shown}</p>
<p class="reference" id="reference">{reference}</p>
<p class="status status-{status}" id="status">{status}</p>
{error}
{action}
<figure>
  <img src="/pay/{id}/qr.svg" width="200" height="200" alt="QR code of this payment link">
  <figcaption>Scan to pay on another device</figcaption>
</figure>"#,
        reference = escape(&reference),
        id = request.id,
    );
    shell(&format!("Pay {shown}"), &body)
}

/// The page's one style sheet, inline, so the page is one request; the Content-Security-Policy
/// allows exactly it, by its hash.
const STYLE: &str = r#"
  :root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
  body { margin: 0; background: #f3f4f7; color: #1c1e26; }
  main { max-width: 420px; margin: 0 auto; padding: 24px 16px; }
  .card { background: #fff; border-radius: 16px; box-shadow: 0 4px 24px rgba(20, 24, 40, .08); padding: 28px 24px; text-align: center; }
  .brand { font-weight: 600; letter-spacing: .02em; color: #4b5bdc; margin: 0 0 20px; }
  .muted { color: #6b6f80; margin: 0; }
  .amount { font-size: 2.6rem; font-weight: 700; margin: 4px 0; font-variant-numeric: tabular-nums; }
  .reference { margin: 0 0 12px; color: #3a3d4a; word-wrap: break-word; }
  .status { display: inline-block; padding: 2px 10px; border-radius: 999px; background: #eef0fb; color: #4b5bdc; font-size: .85rem; margin: 0 0 20px; }
  .status-processed { background: #e5f6ec; color: #1d7a45; }
  .status-failed, .status-cancelled { background: #fdecec; color: #b42323; }
  form { display: grid; gap: 8px; text-align: left; }
  label { font-size: .9rem; color: #3a3d4a; }
  input { font: inherit; padding: 12px; border: 1px solid #c9ccd8; border-radius: 10px; }
  button { font: inherit; font-weight: 600; padding: 14px; border: 0; border-radius: 10px; background: #4b5bdc; color: #fff; cursor: pointer; margin-top: 8px; }
  button:hover { background: #3a49c4; }
  .done { font-weight: 600; color: #1d7a45; }
  .error { color: #b42323; }
  figure { margin: 24px 0 0; }
  figure img { width: 200px; height: 200px; }
  figcaption { color: #6b6f80; font-size: .85rem; }
  footer { text-align: center; color: #8a8ea0; font-size: .8rem; margin-top: 16px; }
"#;

/// `'sha256-…'` of [`STYLE`], as a Content-Security-Policy source.
static STYLE_SOURCE: LazyLock<String> = LazyLock::new(|| {
    use base64::Engine;
    use sha2::Digest;
    format!("'sha256-{}'", base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(STYLE)))
});

/// What every answer of the payment page carries. The page runs no script, shows only its own
/// style and images, posts its form only to this sandbox (which then sends the payer on to the
/// request's `return_url`, whose origin the form may therefore reach), and may not be framed:
/// a payer must not be made to click "Pay" inside another site. The page's address is what lets
/// anyone pay, so it is never sent on as a referrer.
fn secured(mut response: Response, request: Option<&types::PaymentRequest>) -> Response {
    let return_origin = request
        .and_then(|r| r.return_url.as_deref())
        .and_then(|url| url::Url::parse(url).ok())
        .map(|url| url.origin())
        .filter(url::Origin::is_tuple)
        .map(|origin| format!(" {}", origin.ascii_serialization()))
        .unwrap_or_default();
    let policy = format!(
        "default-src 'none'; style-src {}; img-src 'self'; form-action 'self'{return_origin}; \
         frame-ancestors 'none'; base-uri 'none'",
        *STYLE_SOURCE
    );
    let headers = response.headers_mut();
    if let Ok(policy) = HeaderValue::from_str(&policy) {
        headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    }
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response
}

fn shell(title: &str, body: &str) -> String {
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{STYLE}</style>
</head>
<body>
<main>
<div class="card">
<p class="brand">Payments sandbox</p>
{body}
</div>
<footer>Sandbox checkout: no real money moves.</footer>
</main>
</body>
</html>
"#
    )
}

#[cfg(test)]
mod tests {
    use super::{format_amount, parse_amount};

    #[test]
    fn amounts_show_minor_units() {
        assert_eq!(format_amount(2500, "GBP"), "£25.00");
        assert_eq!(format_amount(5, "USD"), "$0.05");
        assert_eq!(format_amount(123_456_789, "NGN"), "₦1,234,567.89");
    }

    #[test]
    fn typed_amounts_become_minor_units() {
        let parsed = parse_amount;
        assert_eq!(parsed("25", "GBP"), Some(2_500));
        assert_eq!(parsed("25.5", "GBP"), Some(2_550));
        assert_eq!(parsed(" £1,250.05 ", "GBP"), Some(125_005));
        assert_eq!(parsed("0.01", "USD"), Some(1));
        // Zero and amounts past the maximum are numbers: the document's bounds refuse them.
        assert_eq!(parsed("0.00", "GBP"), Some(0));
        assert_eq!(parsed("999999999999", "GBP"), Some(99_999_999_999_900));
        for refused in ["", "1.234", "-5", "+5", "1e3", "abc", "1.2.3", ".5", "١٢", "0x10", "9999999999999999"] {
            assert_eq!(parsed(refused, "GBP"), None, "{refused:?}");
        }
    }
}
