//! Retries: what a generated client's `exec` hook does with every request it sends. An attempt
//! that failed in a way worth repeating (a connection error, a status of the policy's) is sent
//! again after a jittered, growing wait — or the server's `Retry-After` — while the call's
//! deadline and the client's [`RetryBudget`] allow, and only when sending it again cannot make
//! a second change: the method is idempotent, the request carries its idempotency [`Key`], or
//! nothing was sent (the connection was never made).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tracing::Instrument;

pub use super::retry_budget::RetryBudget;
use super::tokens::Authorize;

/// Where an operation's idempotency key goes, as the document says (`x-idempotency-key`, or an
/// `Idempotency-Key` header parameter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A header: filled with a fresh UUID when the caller gave none ([`Key::fill`]), once per
    /// call, so every attempt carries the same one.
    Header(&'static str),
    /// A top-level property of the JSON body: the caller's to give (an order's own reference).
    Body(&'static str),
}

impl Key {
    /// Puts a fresh UUID in the key's header when the request has none.
    pub fn fill(&self, request: &mut reqwest::Request) {
        let Key::Header(name) = self else { return };
        let Ok(name) = reqwest::header::HeaderName::try_from(*name) else { return };
        if !request.headers().contains_key(&name) {
            let value = reqwest::header::HeaderValue::try_from(uuid::Uuid::new_v4().to_string())
                .expect("a UUID is a header value");
            request.headers_mut().insert(name, value);
        }
    }

    /// Whether `request` carries the key: a header that is not empty, or a body property that is
    /// neither `null` nor empty text.
    pub fn carried(&self, request: &reqwest::Request) -> bool {
        match self {
            Key::Header(name) => request.headers().get(*name).is_some_and(|value| !value.is_empty()),
            Key::Body(property) => {
                let Some(bytes) = request.body().and_then(reqwest::Body::as_bytes) else { return false };
                let Ok(serde_json::Value::Object(body)) = serde_json::from_slice(bytes) else { return false };
                match body.get(*property) {
                    None | Some(serde_json::Value::Null) => false,
                    Some(serde_json::Value::String(text)) => !text.is_empty(),
                    Some(_) => true,
                }
            }
        }
    }
}

/// Why an attempt is being repeated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The server answered with this status (one of the policy's).
    Status(u16),
    /// No connection could be made: nothing was sent.
    Connect,
    /// A kept-alive connection closed before any of an answer came: what a server does to a
    /// connection it has kept idle as long as it keeps one, racing a request sent on it. A
    /// request safe to repeat is sent again at once on a new connection, once a call, without
    /// counting as an attempt (as browsers do, RFC 9112 §9.3.1); when retries are on.
    Closed,
    /// The connection failed after the request may have been sent (reset, timeout).
    Transport,
}

/// One retry about to happen, as the policy's observer ([`RetryPolicy::on_retry`]) sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retrying {
    /// The operation, as the client names its method.
    pub operation: &'static str,
    /// The attempt about to be made (2 for the first retry).
    pub attempt: u32,
    /// The wait before it.
    pub delay: Duration,
    pub cause: Cause,
}

type Observer = Arc<dyn Fn(&Retrying) + Send + Sync>;

/// When and how a call is retried. [`RetryPolicy::default`] is on; the README of a generated
/// client gives the defaults and the reason for each.
#[derive(Clone)]
pub struct RetryPolicy {
    max_attempts: u32,
    base: Duration,
    cap: Duration,
    retry_after_cap: Duration,
    deadline: Duration,
    statuses: Vec<u16>,
    observer: Option<Observer>,
}

impl Default for RetryPolicy {
    /// Three attempts (two retries, as Stripe's SDKs make; AWS's make three attempts); waits of
    /// full jitter from 0.5 s doubling to at most 5 s (Stripe's range); `Retry-After` obeyed up
    /// to 30 s, longer than a busy server asks for (one asking for more is down for longer than
    /// a caller should hang); 60 s for the whole call; statuses `408`, `429`,
    /// `502`, `503`, `504` and `507`, those that say "not now" rather than "not this".
    fn default() -> Self {
        Self {
            max_attempts: 3,
            base: Duration::from_millis(500),
            cap: Duration::from_secs(5),
            retry_after_cap: Duration::from_secs(30),
            deadline: Duration::from_secs(60),
            statuses: vec![408, 429, 502, 503, 504, 507],
            observer: None,
        }
    }
}

impl std::fmt::Debug for RetryPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RetryPolicy")
            .field("max_attempts", &self.max_attempts)
            .field("base", &self.base)
            .field("cap", &self.cap)
            .field("retry_after_cap", &self.retry_after_cap)
            .field("deadline", &self.deadline)
            .field("statuses", &self.statuses)
            .field("observer", &self.observer.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl RetryPolicy {
    /// One attempt: nothing is retried.
    pub fn none() -> Self {
        Self { max_attempts: 1, ..Self::default() }
    }

    /// Attempts in all, the first included (at least one).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts.max(1);
        self
    }

    /// The wait before retry `n` is a uniformly random time up to `base × 2ⁿ⁻¹`, at most `cap`
    /// ("full jitter": clients that failed together do not come back together).
    pub fn backoff(mut self, base: Duration, cap: Duration) -> Self {
        self.base = base;
        self.cap = cap.max(base);
        self
    }

    /// The longest `Retry-After` obeyed; an answer asking for longer is returned as it is.
    pub fn retry_after_cap(mut self, cap: Duration) -> Self {
        self.retry_after_cap = cap;
        self
    }

    /// The time a call may take from its first attempt: no wait goes past it and no attempt
    /// starts after it (an attempt under way is bounded by the HTTP client's own timeout).
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// The statuses that are retried (connection errors always are, where safe).
    pub fn statuses(mut self, statuses: &[u16]) -> Self {
        self.statuses = statuses.to_vec();
        self
    }

    /// Called before each retry's wait.
    pub fn on_retry(mut self, observer: impl Fn(&Retrying) + Send + Sync + 'static) -> Self {
        self.observer = Some(Arc::new(observer));
        self
    }

    /// Attempts in all.
    pub fn attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The wait before `attempt` (2 for the first retry) when the server named none.
    pub fn backoff_before(&self, attempt: u32) -> Duration {
        let doubling = 2u32.saturating_pow(attempt.saturating_sub(2));
        let ceiling = self.base.saturating_mul(doubling).min(self.cap);
        ceiling.mul_f64(rand::random_range(0.0..=1.0))
    }
}

/// A client's retry policy and budget, together: what the generated client's configuration
/// holds and its `exec` hook calls.
#[derive(Debug, Clone, Default)]
pub struct Retries {
    pub policy: RetryPolicy,
    pub budget: RetryBudget,
}

impl Retries {
    /// Sends `request` (of `operation`, whose idempotency key is `key`) with `http`, again while
    /// the policy, the deadline and the budget allow and it is safe to, with the credentials
    /// `authorize` gives at each attempt (and renews once after a `401`). The outcome is the last
    /// attempt's: a response (whatever its status) or the error of a connection.
    pub async fn execute(
        &self,
        http: &reqwest::Client,
        request: reqwest::Request,
        operation: &'static str,
        key: Option<Key>,
        authorize: &dyn Authorize,
    ) -> reqwest::Result<reqwest::Response> {
        let policy = &self.policy;
        let deadline = Instant::now() + policy.deadline;
        let repeatable = idempotent(request.method()) || key.is_some_and(|key| key.carried(&request));
        let (mut request, mut attempt, mut renewed) = (request, 1, false);
        // Whether a closed connection's request was sent again (`Cause::Closed`): that attempt
        // is given back.
        let mut resent = false;
        loop {
            // A body that streams cannot be sent twice: such a request has one attempt.
            let mut spare = request.try_clone();
            let span = tracing::info_span!(
                "attempt",
                operation,
                attempt,
                status = tracing::field::Empty,
                delay_ms = tracing::field::Empty
            );
            let outcome = http.execute(request).instrument(span.clone()).await;
            let status = outcome.as_ref().ok().map(|response| response.status().as_u16());
            if let Some(status) = status {
                span.record("status", status);
            }
            // A refused credential is renewed once, and the request sent again at once: the
            // server refused it before doing anything.
            // (No `let` chains here: a standalone workspace's copy is formatted as 2021 code.)
            let again = match (status, renewed) {
                (Some(401), false) => spare.take(),
                _ => None,
            };
            if let Some(mut again) = again {
                let renewable = authorize.renew().await;
                if renewable {
                    tracing::debug!(parent: &span, "credentials renewed");
                    renewed = true;
                    drop(outcome);
                    reauthorize(authorize, operation, &mut again).await;
                    request = again;
                    attempt += 1;
                    continue;
                }
                // Not renewed: the copy goes back for the retry rules below.
                spare = Some(again);
            }
            let cause = match (&outcome, status) {
                (Ok(_), Some(status)) => policy.statuses.contains(&status).then_some(Cause::Status(status)),
                (Err(error), _) if error.is_connect() => Some(Cause::Connect),
                (Err(error), _) if closed_unanswered(error) => Some(Cause::Closed),
                _ => Some(Cause::Transport),
            };
            let Some(cause) = cause else {
                self.budget.deposit();
                return outcome;
            };
            // The server did not fail: it closed a connection it had kept idle. Nothing is
            // waited for nor taken from the budget, and the attempt is given back.
            let free = cause == Cause::Closed && repeatable && !resent && policy.max_attempts > 1;
            resent |= free;
            let safe = repeatable || cause == Cause::Connect;
            let allowed = policy.max_attempts + u32::from(resent);
            let Some(mut next) = spare.filter(|_| safe && attempt < allowed) else { return outcome };
            let asked = outcome.as_ref().ok().and_then(retry_after);
            let delay = match asked {
                _ if free => Duration::ZERO,
                Some(asked) if asked > policy.retry_after_cap => return outcome,
                Some(asked) => asked.max(policy.backoff_before(attempt + 1)),
                None => policy.backoff_before(attempt + 1),
            };
            if Instant::now() + delay >= deadline || !(free || self.budget.withdraw()) {
                return outcome;
            }
            span.record("delay_ms", u64::try_from(delay.as_millis()).unwrap_or(u64::MAX));
            let retrying = Retrying { operation, attempt: attempt + 1, delay, cause };
            tracing::debug!(parent: &span, ?cause, ?delay, "retrying");
            if let Some(observer) = &policy.observer {
                observer(&retrying);
            }
            // The answer is let go before the wait: its connection goes back to the pool.
            drop(outcome);
            tokio::time::sleep(delay).await;
            reauthorize(authorize, operation, &mut next).await;
            request = next;
            attempt += 1;
        }
    }
}

/// Whether `error` is a connection that closed before any of an answer came (hyper's
/// "incomplete message"), as a kept-alive connection the server closed while idle does.
fn closed_unanswered(error: &reqwest::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if let Some(hyper) = error.downcast_ref::<hyper::Error>() {
            return hyper.is_incomplete_message();
        }
        cause = error.source();
    }
    false
}

/// Puts the credentials of now on a request about to be sent again; should that fail, it goes
/// with those it carries (the server says whether they still do).
async fn reauthorize(authorize: &dyn Authorize, operation: &'static str, request: &mut reqwest::Request) {
    if let Err(why) = authorize.authorize(operation, request).await {
        tracing::warn!(operation, %why, "credentials could not be renewed for a retry; sending the previous ones");
    }
}

/// The methods HTTP defines as idempotent (RFC 9110, 9.2.2): sending one twice changes no more
/// than sending it once.
fn idempotent(method: &reqwest::Method) -> bool {
    use reqwest::Method;
    [Method::GET, Method::HEAD, Method::PUT, Method::DELETE, Method::OPTIONS, Method::TRACE].contains(method)
}

/// The wait a response's `Retry-After` asks for: seconds, or an HTTP date (a date past is no
/// wait).
pub fn retry_after(response: &reqwest::Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let date = httpdate::parse_http_date(value).ok()?;
    Some(date.duration_since(SystemTime::now()).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jittered_wait_stays_under_its_doubling_ceiling_and_the_cap() {
        let policy = RetryPolicy::default().backoff(Duration::from_millis(100), Duration::from_millis(350));
        for _ in 0..200 {
            assert!(policy.backoff_before(2) <= Duration::from_millis(100));
            assert!(policy.backoff_before(3) <= Duration::from_millis(200));
            assert!(policy.backoff_before(4) <= Duration::from_millis(350));
            assert!(policy.backoff_before(40) <= Duration::from_millis(350));
        }
        let waits: Vec<Duration> = (0..50).map(|_| policy.backoff_before(4)).collect();
        assert!(waits.iter().any(|wait| *wait != waits[0]), "the waits are spread, not one value");
    }

    /// A request built without a `reqwest::Client`, which needs a TLS provider installed.
    fn post(body: &str) -> reqwest::Request {
        let mut request = reqwest::Request::new(reqwest::Method::POST, "http://localhost/".parse().unwrap());
        *request.body_mut() = Some(body.to_owned().into());
        request
    }

    #[test]
    fn a_key_in_the_body_counts_only_when_given() {
        let with = post;
        let key = Key::Body("order_id");
        assert!(key.carried(&with(r#"{"order_id":"o-1","amount":5}"#)));
        assert!(!key.carried(&with(r#"{"order_id":null}"#)));
        assert!(!key.carried(&with(r#"{"order_id":""}"#)));
        assert!(!key.carried(&with(r#"{"amount":5}"#)));
        assert!(!key.carried(&with("not json")));
    }

    #[test]
    fn a_header_key_is_filled_once_and_kept() {
        let key = Key::Header("Idempotency-Key");
        let mut request = post("");
        assert!(!key.carried(&request));
        key.fill(&mut request);
        let first = request.headers()["idempotency-key"].clone();
        key.fill(&mut request);
        assert_eq!(request.headers()["idempotency-key"], first);
        assert!(key.carried(&request));
    }
}
