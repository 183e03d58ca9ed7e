//! What a generated client sets on each request beyond the operation's own parameters: a timeout
//! of its own and headers of the caller's. Set on the client's `Config` they apply to every call;
//! through `Client::with_timeout` and `Client::with_header` (a clone sharing the connections) to
//! the calls made with that clone — one call, or a few.

use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// A client's per-call options.
#[derive(Clone, Debug, Default)]
pub struct CallOptions {
    timeout: Option<Duration>,
    headers: HeaderMap,
}

impl CallOptions {
    /// Each attempt's time from sending to the last byte of the answer. Without one, the HTTP
    /// client's own applies (15 s for the client `Client::new` builds); the retry policy's
    /// deadline bounds all attempts together.
    pub fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = Some(timeout);
    }

    /// A header every request carries, replacing any of that name the operation would send.
    pub fn set_header(&mut self, name: HeaderName, value: HeaderValue) {
        self.headers.insert(name, value);
    }

    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// Puts the options on `request`, before it is sent (and cloned for each attempt).
    pub fn apply(&self, request: &mut reqwest::Request) {
        if let Some(timeout) = self.timeout {
            *request.timeout_mut() = Some(timeout);
        }
        for (name, value) in &self.headers {
            request.headers_mut().insert(name.clone(), value.clone());
        }
    }
}
