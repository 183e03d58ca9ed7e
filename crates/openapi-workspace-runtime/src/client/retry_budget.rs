//! The retry budget: a token bucket one client (and its clones) shares, so that during an outage
//! retries cannot multiply the load on a server that is already failing. Each retry spends a
//! token; each call that ends in an answer not worth retrying gives back a fraction of one. Past
//! the tokens in hand, failures are returned at once.

use std::sync::{Arc, Mutex};

/// A share of retries. Clones share one bucket.
#[derive(Debug, Clone)]
pub struct RetryBudget {
    bucket: Option<Arc<Mutex<Bucket>>>,
}

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    capacity: f64,
    refill: f64,
}

impl Default for RetryBudget {
    /// Ten retries in hand, and a tenth of one back per success (gRPC's retry throttling uses the
    /// same pair): under a long outage a client sends at most ten requests more than its callers
    /// make, and in normal running a retry for one call in ten.
    fn default() -> Self {
        Self::new(10.0, 0.1)
    }
}

impl RetryBudget {
    /// A full bucket of `capacity` tokens; each success adds `refill`.
    pub fn new(capacity: f64, refill: f64) -> Self {
        let bucket = Bucket { tokens: capacity.max(0.0), capacity: capacity.max(0.0), refill: refill.max(0.0) };
        Self { bucket: Some(Arc::new(Mutex::new(bucket))) }
    }

    /// No limit: every retry the policy allows is made.
    pub fn unlimited() -> Self {
        Self { bucket: None }
    }

    /// Takes a token for a retry; `false` when none is left.
    pub fn withdraw(&self) -> bool {
        let Some(bucket) = &self.bucket else { return true };
        let mut bucket = bucket.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if bucket.tokens < 1.0 {
            return false;
        }
        bucket.tokens -= 1.0;
        true
    }

    /// Gives back the refill for a call that succeeded.
    pub fn deposit(&self) {
        let Some(bucket) = &self.bucket else { return };
        let mut bucket = bucket.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        bucket.tokens = (bucket.tokens + bucket.refill).min(bucket.capacity);
    }

    /// The tokens in hand (`None` without a limit).
    pub fn tokens(&self) -> Option<f64> {
        let bucket = self.bucket.as_ref()?;
        Some(bucket.lock().unwrap_or_else(std::sync::PoisonError::into_inner).tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_spend_and_successes_refill_up_to_the_capacity() {
        let budget = RetryBudget::new(2.0, 0.5);
        assert!(budget.withdraw() && budget.withdraw());
        assert!(!budget.withdraw(), "the bucket is empty");
        budget.deposit();
        assert!(!budget.withdraw(), "half a token is not a retry");
        budget.deposit();
        assert!(budget.withdraw());
        for _ in 0..10 {
            budget.deposit();
        }
        assert_eq!(budget.tokens(), Some(2.0));
        let shared = budget.clone();
        assert!(shared.withdraw());
        assert_eq!(budget.tokens(), Some(1.0), "clones share one bucket");
        assert!(RetryBudget::unlimited().withdraw());
    }
}
