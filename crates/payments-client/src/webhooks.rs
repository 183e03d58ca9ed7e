//! Receiving notifications: verify the signature, parse the event, drop duplicates and stale
//! ones — what the document's *Notification delivery* section asks of a receiver.
//!
//! ```
//! use payments_client::webhooks::{self, Inbox, Verdict};
//!
//! let secret = "whsec_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
//! let body = br#"{"id":"7b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9","event":"ping","created":"2026-11-21T10:15:30.123Z","data":{"message":"ping","endpoint_id":"2f1e0d9c-8b7a-4655-9433-2211a0b9c8d7"}}"#;
//! // What the service sends in X-Service-Signature:
//! let signature = webhooks::sign(secret, body);
//!
//! let notification = webhooks::verify_and_parse(&[secret], body, &signature).expect("a genuine notification");
//! assert!(matches!(notification.event, webhooks::Event::Ping(_)));
//!
//! let mut inbox = Inbox::new(10_000);
//! assert_eq!(inbox.accept(&notification), Verdict::New);
//! assert_eq!(inbox.accept(&notification), Verdict::Duplicate);
//!
//! // A body changed in transit fails verification.
//! let tampered = String::from_utf8_lossy(body).replace(r#""message":"ping""#, r#""message":"pong""#);
//! assert_ne!(tampered.as_bytes(), body);
//! assert!(webhooks::verify(&[secret], tampered.as_bytes(), &signature).is_err());
//! ```
//!
//! With the `axum` feature, [`Verified`] is an extractor that does the first two
//! steps for a handler; see its documentation.

use std::collections::{HashMap, HashSet, VecDeque};

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha512;
use uuid::Uuid;

use crate::types;

/// The header carrying the signature.
pub const SIGNATURE_HEADER: &str = "X-Service-Signature";
/// The header carrying the number of redeliveries before this one.
pub const RETRY_COUNT_HEADER: &str = "X-Service-Retry-Count";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WebhookError {
    /// No signature, a signature that is not hex, or one no secret produces.
    BadSignature,
    /// A verified body that is not a notification.
    Malformed(String),
}

impl std::fmt::Display for WebhookError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WebhookError::BadSignature => write!(f, "the signature does not match the body"),
            WebhookError::Malformed(why) => write!(f, "not a notification: {why}"),
        }
    }
}

impl std::error::Error for WebhookError {}

/// The signature of `body` with `secret`: lowercase hex HMAC-SHA512 (what the service sends).
pub fn sign(secret: &str, body: &[u8]) -> String {
    hex::encode(mac(secret, body).finalize().into_bytes())
}

fn mac(secret: &str, body: &[u8]) -> Hmac<Sha512> {
    let mut mac = Hmac::<Sha512>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key length");
    mac.update(body);
    mac
}

/// Checks `signature` (the header's value) over the raw `body` against each of `secrets` — more
/// than one while a rotated secret is being rolled out — in constant time.
pub fn verify(secrets: &[&str], body: &[u8], signature: &str) -> Result<(), WebhookError> {
    let expected = hex::decode(signature.trim()).map_err(|_| WebhookError::BadSignature)?;
    let mut matched = false;
    for secret in secrets {
        // `verify_slice` compares in constant time; every secret is tried, match or not.
        matched |= mac(secret, body).verify_slice(&expected).is_ok();
    }
    if matched { Ok(()) } else { Err(WebhookError::BadSignature) }
}

/// A notification with its `data` typed by event.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub id: Uuid,
    /// The event name as sent; names this version does not know are kept, as [`Event::Unknown`].
    pub event_name: String,
    pub created: DateTime<Utc>,
    pub event: Event,
}

#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // one per request; boxing would only add indirection
pub enum Event {
    Ping(types::Ping),
    Recipient(types::Recipient),
    Transaction(types::Transaction),
    VirtualAccount(types::VirtualAccount),
    PaymentRequest(types::PaymentRequest),
    /// An event added after this client was generated: ignore it, as the document asks.
    Unknown(serde_json::Value),
}

impl Notification {
    /// The id of the resource the event concerns (the endpoint, for a ping).
    pub fn resource_id(&self) -> Option<Uuid> {
        match &self.event {
            Event::Ping(ping) => Some(ping.endpoint_id),
            Event::Recipient(r) => Some(r.id),
            Event::Transaction(t) => Some(t.id),
            Event::VirtualAccount(v) => Some(v.id),
            Event::PaymentRequest(p) => Some(p.id),
            Event::Unknown(data) => data.get("id").and_then(|id| id.as_str()).and_then(|id| id.parse().ok()),
        }
    }
}

#[derive(serde::Deserialize)]
struct Envelope {
    id: Uuid,
    event: String,
    created: DateTime<Utc>,
    data: serde_json::Value,
}

/// Parses a body (verify it first: [`verify_and_parse`]).
pub fn parse(body: &[u8]) -> Result<Notification, WebhookError> {
    let envelope: Envelope = serde_json::from_slice(body).map_err(|e| WebhookError::Malformed(e.to_string()))?;
    let typed = |data: serde_json::Value| -> Result<Event, WebhookError> {
        let family = envelope.event.split('.').next().unwrap_or_default();
        let malformed = |e: serde_json::Error| WebhookError::Malformed(format!("{} data: {e}", envelope.event));
        Ok(match (envelope.event.as_str(), family) {
            ("ping", _) => Event::Ping(serde_json::from_value(data).map_err(malformed)?),
            (_, "recipient") => Event::Recipient(serde_json::from_value(data).map_err(malformed)?),
            (_, "transaction") => Event::Transaction(serde_json::from_value(data).map_err(malformed)?),
            (_, "virtualaccount") => Event::VirtualAccount(serde_json::from_value(data).map_err(malformed)?),
            (_, "paymentrequest") => Event::PaymentRequest(serde_json::from_value(data).map_err(malformed)?),
            _ => Event::Unknown(data),
        })
    };
    let event = typed(envelope.data.clone())?;
    Ok(Notification { id: envelope.id, event_name: envelope.event, created: envelope.created, event })
}

/// [`verify`], then [`parse`].
pub fn verify_and_parse(secrets: &[&str], body: &[u8], signature: &str) -> Result<Notification, WebhookError> {
    verify(secrets, body, signature)?;
    parse(body)
}

/// What [`Inbox::accept`] decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Act on it.
    New,
    /// Seen before (a redelivery): acknowledge and ignore.
    Duplicate,
    /// Older than a notification already accepted for the same resource: acknowledge and ignore.
    Stale,
}

/// Remembers the last `capacity` notification ids and, per resource, the newest `created`
/// accepted — the receiver's half of "order is not guaranteed and duplicates can occur".
/// Keep one per endpoint; wrap it in a mutex to share it between handlers.
#[derive(Debug)]
pub struct Inbox {
    capacity: usize,
    seen: HashSet<Uuid>,
    order: VecDeque<Uuid>,
    newest: HashMap<Uuid, DateTime<Utc>>,
}

impl Inbox {
    pub fn new(capacity: usize) -> Self {
        Self { capacity: capacity.max(1), seen: HashSet::new(), order: VecDeque::new(), newest: HashMap::new() }
    }

    pub fn accept(&mut self, notification: &Notification) -> Verdict {
        if self.seen.contains(&notification.id) {
            return Verdict::Duplicate;
        }
        self.seen.insert(notification.id);
        self.order.push_back(notification.id);
        if self.order.len() > self.capacity
            && let Some(evicted) = self.order.pop_front()
        {
            self.seen.remove(&evicted);
        }
        let Some(resource) = notification.resource_id() else { return Verdict::New };
        match self.newest.get(&resource) {
            Some(newest) if *newest > notification.created => Verdict::Stale,
            _ => {
                self.newest.insert(resource, notification.created);
                Verdict::New
            }
        }
    }
}

#[cfg(feature = "axum")]
pub use self::receiver::{Verified, WebhookSecrets};

#[cfg(feature = "axum")]
mod receiver {
    use std::sync::Arc;

    use axum::body::Bytes;
    use axum::extract::{FromRef, FromRequest, Request};
    use axum::http::StatusCode;
    use axum::response::{IntoResponse, Response};

    use super::{Notification, SIGNATURE_HEADER, WebhookError, verify_and_parse};

    /// The signing secrets a receiver accepts (the current one, and the previous one while a
    /// rotation rolls out). Put it in your router's state.
    #[derive(Clone, Debug)]
    pub struct WebhookSecrets(pub Arc<Vec<String>>);

    impl WebhookSecrets {
        pub fn new(secrets: impl IntoIterator<Item = impl Into<String>>) -> Self {
            Self(Arc::new(secrets.into_iter().map(Into::into).collect()))
        }
    }

    /// An axum extractor for a verified, parsed notification. A request whose signature does
    /// not match is answered `401` and one that is not a notification `400`; the handler runs
    /// only for genuine ones.
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use axum::{Router, extract::{FromRef, State}, routing::post, http::StatusCode};
    /// use payments_client::webhooks::{Inbox, Verdict, Verified, WebhookSecrets, Event};
    ///
    /// #[derive(Clone, FromRef)]
    /// struct App { secrets: WebhookSecrets, inbox: Arc<Mutex<Inbox>> }
    ///
    /// async fn receive(State(app): State<App>, Verified(notification): Verified) -> StatusCode {
    ///     if app.inbox.lock().unwrap().accept(&notification) == Verdict::New {
    ///         if let Event::Transaction(transaction) = &notification.event {
    ///             println!("{} is now {}", transaction.id, transaction.status);
    ///         }
    ///     }
    ///     StatusCode::NO_CONTENT // acknowledge quickly; duplicates and stale ones too
    /// }
    ///
    /// let app = App { secrets: WebhookSecrets::new(["whsec_..."]), inbox: Arc::new(Mutex::new(Inbox::new(100_000))) };
    /// let router: Router = Router::new().route("/payments/webhooks", post(receive)).with_state(app);
    /// ```
    #[derive(Debug, Clone)]
    pub struct Verified(pub Notification);

    impl<S> FromRequest<S> for Verified
    where
        WebhookSecrets: FromRef<S>,
        S: Send + Sync,
    {
        type Rejection = Response;

        async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
            let secrets = WebhookSecrets::from_ref(state);
            let signature =
                request.headers().get(SIGNATURE_HEADER).and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
            let body = Bytes::from_request(request, state).await.map_err(IntoResponse::into_response)?;
            let secrets: Vec<&str> = secrets.0.iter().map(String::as_str).collect();
            match verify_and_parse(&secrets, &body, &signature) {
                Ok(notification) => Ok(Verified(notification)),
                Err(error @ WebhookError::BadSignature) => {
                    Err((StatusCode::UNAUTHORIZED, error.to_string()).into_response())
                }
                Err(error) => Err((StatusCode::BAD_REQUEST, error.to_string()).into_response()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notification(id: u128, resource: &str, created: &str) -> Notification {
        let body = format!(
            r#"{{"id":"{}","event":"ping","created":"{created}","data":{{"message":"ping","endpoint_id":"{resource}"}}}}"#,
            Uuid::from_u128(id)
        );
        parse(body.as_bytes()).unwrap()
    }

    #[test]
    fn inbox_drops_duplicates_and_older_news() {
        let resource = "2f1e0d9c-8b7a-4655-9433-2211a0b9c8d7";
        let mut inbox = Inbox::new(2);
        assert_eq!(inbox.accept(&notification(1, resource, "2026-11-21T10:00:01Z")), Verdict::New);
        assert_eq!(inbox.accept(&notification(1, resource, "2026-11-21T10:00:01Z")), Verdict::Duplicate);
        assert_eq!(inbox.accept(&notification(2, resource, "2026-11-21T10:00:00Z")), Verdict::Stale);
        assert_eq!(inbox.accept(&notification(3, resource, "2026-11-21T10:00:02Z")), Verdict::New);
        // Capacity 2: id 1 has been forgotten, but it is still older than the newest.
        assert_eq!(inbox.accept(&notification(1, resource, "2026-11-21T10:00:01Z")), Verdict::Stale);
    }

    #[test]
    fn unknown_events_are_kept_not_refused() {
        let body = br#"{"id":"7b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9","event":"refund.created","created":"2026-11-21T10:15:30Z","data":{"id":"3b8e5c5e-3f43-4b8e-9a43-7d1b0f1f9c2a"}}"#;
        let parsed = parse(body).unwrap();
        assert!(matches!(parsed.event, Event::Unknown(_)));
        assert_eq!(parsed.resource_id(), Some("3b8e5c5e-3f43-4b8e-9a43-7d1b0f1f9c2a".parse().unwrap()));
    }

    #[test]
    fn signature_is_lowercase_hex_hmac_sha512() {
        // RFC 4231 test case 2.
        assert_eq!(
            sign("Jefe", b"what do ya want for nothing?"),
            "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"
        );
    }

    #[test]
    fn a_signature_from_another_secret_or_not_hex_fails() {
        let body = b"{}";
        let signature = sign("whsec_a", body);
        assert!(verify(&["whsec_a"], body, &signature).is_ok());
        assert!(verify(&["whsec_old", "whsec_a"], body, &signature).is_ok(), "any of the secrets");
        assert_eq!(verify(&["whsec_b"], body, &signature), Err(WebhookError::BadSignature));
        assert_eq!(verify(&["whsec_a"], body, "zz"), Err(WebhookError::BadSignature));
        assert_eq!(verify(&["whsec_a"], body, ""), Err(WebhookError::BadSignature));
    }
}
