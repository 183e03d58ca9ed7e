//! Clients paying while something goes wrong (an outage, a backup, a kill), and what the money
//! must look like after: every payment acknowledged is stored once, every one refused as not
//! made is not stored, and every one that was not acknowledged is safe to retry with its
//! `order_id` — made exactly once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use payments_client::{Client, types};
use uuid::Uuid;

use crate::sandbox::{code, limit, payment};

/// The amount of each payment.
pub const AMOUNT: u64 = 100;

/// What one payment was answered.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub order_id: String,
    /// `201`, the error's status, or `0` when no answer came (the server went away).
    pub status: u16,
    pub message: String,
    pub at: Instant,
}

/// Clients paying from one balance, each payment with an `order_id` of its own, until stopped.
pub struct Payers {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    outcomes: Arc<Mutex<Vec<Outcome>>>,
}

impl Payers {
    /// `clients` payers against the sandbox at `url`, with order ids `{prefix}-{client}-{n}`.
    pub fn start(url: &str, token: &str, balance: Uuid, recipient: Uuid, clients: usize, prefix: &str) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let outcomes = Arc::new(Mutex::new(Vec::new()));
        let tasks = (0..clients)
            .map(|client_number| {
                let client = payments_client::with_token(url, token);
                let (stop, outcomes, prefix) = (stop.clone(), outcomes.clone(), prefix.to_owned());
                tokio::spawn(async move {
                    let mut n = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let order_id = format!("{prefix}-{client_number}-{n}");
                        n += 1;
                        let outcome = pay(&client, balance, recipient, &order_id).await;
                        let failed = outcome.status != 201;
                        outcomes.lock().unwrap().push(outcome);
                        if failed {
                            // As a client told to retry later would: not in a tight loop.
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                })
            })
            .collect();
        Self { stop, tasks, outcomes }
    }

    /// What was answered so far.
    pub fn outcomes(&self) -> Vec<Outcome> {
        self.outcomes.lock().unwrap().clone()
    }

    /// Stops them and gives every outcome.
    pub async fn stop(self) -> Vec<Outcome> {
        self.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            task.await.expect("a payer ends");
        }
        self.outcomes.lock().unwrap().clone()
    }
}

/// One payment of [`AMOUNT`] with `order_id`, and what it was answered.
pub async fn pay(client: &Client, balance: Uuid, recipient: Uuid, order_id: &str) -> Outcome {
    let body = payment(balance, recipient, AMOUNT).order_id(Some(code(order_id)));
    let sent = tokio::time::timeout(Duration::from_secs(30), client.create_transaction().body(body).send()).await;
    let (status, message) = match sent {
        Ok(Ok(created)) => (created.status().as_u16(), String::new()),
        Ok(Err(payments_client::Error::ErrorResponse(error))) => (error.status().as_u16(), error.into_inner().message),
        Ok(Err(other)) => (other.status().map_or(0, |s| s.as_u16()), other.to_string()),
        Err(_) => (0, "no answer within 30 s".into()),
    };
    Outcome { order_id: order_id.to_owned(), status, message, at: Instant::now() }
}

/// How many payments with `order_id` are stored.
pub async fn stored(client: &Client, order_id: &str) -> usize {
    let found = client.list_transactions().order_id(order_id).limit(limit(100)).send().await;
    found.expect("the list is read").into_inner().len()
}

/// The outcomes' statuses and how many of each.
pub fn tally(outcomes: &[Outcome]) -> BTreeMap<u16, usize> {
    let mut tally = BTreeMap::new();
    for outcome in outcomes {
        *tally.entry(outcome.status).or_default() += 1;
    }
    tally
}

/// Holds the money to what the payers were told, then makes every payment that was not
/// acknowledged again with its `order_id` and holds each to being made exactly once:
/// - `201`: stored exactly once;
/// - one of `not_made` (`503`, `507`: "nothing was changed"): not stored;
/// - anything else (`504`, no answer): in doubt, stored at most once.
///
/// `allowed` are the statuses the payers may have got at all (never `500`). Returns how many
/// payments are stored in the end.
pub async fn check_outcomes(
    client: &Client,
    balance: Uuid,
    recipient: Uuid,
    outcomes: &[Outcome],
    allowed: &[u16],
    not_made: &[u16],
) -> usize {
    for outcome in outcomes {
        assert!(allowed.contains(&outcome.status), "a payment was answered {}: {}", outcome.status, outcome.message);
        let count = stored(client, &outcome.order_id).await;
        match outcome.status {
            201 => assert_eq!(count, 1, "acknowledged {} is stored once", outcome.order_id),
            status if not_made.contains(&status) => {
                assert_eq!(count, 0, "{} was answered {status}, nothing changed, yet it is stored", outcome.order_id)
            }
            _ => assert!(count <= 1, "{} in doubt is stored {count} times", outcome.order_id),
        }
    }
    for outcome in outcomes.iter().filter(|o| o.status != 201) {
        let again = pay(client, balance, recipient, &outcome.order_id).await;
        assert_eq!(again.status, 201, "retrying {} with its order_id: {}", outcome.order_id, again.message);
        assert_eq!(stored(client, &outcome.order_id).await, 1, "{} made once", outcome.order_id);
    }
    let mut all = 0;
    let mut after = None;
    loop {
        let mut page = client
            .list_transactions()
            .balance_id(balance)
            .transaction_type(types::TransactionType::Payment)
            .limit(limit(100));
        if let Some(id) = after {
            page = page.starting_after(id);
        }
        let page = page.send().await.expect("a page").into_inner();
        all += page.len();
        after = page.last().map(|t: &types::Transaction| t.id);
        if page.len() < 100 {
            break;
        }
    }
    assert_eq!(all, outcomes.len(), "every payment tried is stored once in the end, and no other");
    all
}
