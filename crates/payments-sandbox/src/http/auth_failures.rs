//! Failed authentications, limited per client address: guessing tokens costs the guesser time,
//! and costs the sandbox no lookup once the address is over its limit.
//!
//! Every `401` an address receives adds one to what it owes; what it owes drains at
//! `per_minute` a minute. Once it owes `per_minute`, its requests answer `429` with
//! `Retry-After` until one more failure fits — before any handler runs, so before the token is
//! looked up — unless they carry a token this process already knows (from memory), so a client
//! that shares an address with a guesser keeps working.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use payments_server::ApiError;
use payments_server::runtime::bearer_token;

use crate::domain::Sandbox;

/// Addresses tracked before those that owe nothing are forgotten.
const TRACKED: usize = 10_000;

pub struct AuthFailures {
    sandbox: Sandbox,
    /// Failures an address may owe before it waits; they drain at this many a minute too.
    limit: f64,
    owed: Mutex<HashMap<IpAddr, Owed>>,
}

/// Failures owed by one address, as of an instant.
#[derive(Clone, Copy)]
struct Owed {
    failures: f64,
    at: Instant,
}

impl Owed {
    fn now(self, limit: f64, now: Instant) -> f64 {
        (self.failures - now.saturating_duration_since(self.at).as_secs_f64() * limit / 60.0).max(0.0)
    }
}

impl AuthFailures {
    pub fn new(sandbox: Sandbox, per_minute: NonZeroU32) -> Self {
        Self { sandbox, limit: f64::from(per_minute.get()), owed: Mutex::default() }
    }

    /// `429` for a request from `address` while it owes its limit, unless the request carries a
    /// token this process already knows.
    pub fn refusal(&self, address: IpAddr, request: &Request) -> Option<Response> {
        let wait = self.blocked_for(address)?;
        if bearer_token(request.headers()).is_ok_and(|token| self.sandbox.knows_token(token)) {
            return None;
        }
        let seconds = wait.as_secs_f64().ceil().max(1.0) as u64;
        Some(
            ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!("Too many failed authentications from this address: retry after {seconds} seconds"),
            )
            .retry_after(seconds)
            .into_response(),
        )
    }

    /// How long `address` must still wait before another failure fits, if it must.
    fn blocked_for(&self, address: IpAddr) -> Option<Duration> {
        let owed = *self.owed.lock().unwrap_or_else(|p| p.into_inner()).get(&address)?;
        let over = owed.now(self.limit, Instant::now()) + 1.0 - self.limit;
        (over > 0.0).then(|| Duration::from_secs_f64(over * 60.0 / self.limit))
    }

    /// Counts a `401` answered to `address`.
    pub fn failed(&self, address: IpAddr) {
        let now = Instant::now();
        let mut owed = self.owed.lock().unwrap_or_else(|p| p.into_inner());
        if owed.len() >= TRACKED {
            owed.retain(|_, owed| owed.now(self.limit, now) > 0.0);
        }
        let before = owed.get(&address).map_or(0.0, |owed| owed.now(self.limit, now));
        owed.insert(address, Owed { failures: before + 1.0, at: now });
    }
}
