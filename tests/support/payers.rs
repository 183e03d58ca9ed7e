//! Clients paying while something goes wrong (an outage, a backup, a kill), and what the money
//! must look like after: every payment acknowledged is stored once, every one refused as not
//! made is not stored, and every one that was not acknowledged is safe to retry with its
//! `order_id` — made exactly once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use payments_client::retry::RetryPolicy;
use payments_client::{Client, types};
use uuid::Uuid;

use crate::sandbox::{balance_of, code, every_page, funded_with_recipient, limit, payment};

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
    /// `clients` payers against the sandbox at `url`, with order ids `{prefix}-{client}-{n}`,
    /// until stopped; retries off, since these payers are there to see what the server answers.
    pub fn start(url: &str, token: &str, balance: Uuid, recipient: Uuid, clients: usize, prefix: &str) -> Self {
        let client = payments_client::with_token(url, token).with_retry(RetryPolicy::none());
        Self::paying(client, balance, recipient, clients, prefix, None)
    }

    /// `clients` payers sharing `client` (and so its retry budget), making `total` payments in
    /// all, with order ids `{prefix}-{n}`; [`Payers::finish`] waits for them.
    pub fn counted(client: Client, balance: Uuid, recipient: Uuid, clients: usize, prefix: &str, total: usize) -> Self {
        Self::paying(client, balance, recipient, clients, prefix, Some(total))
    }

    fn paying(
        client: Client,
        balance: Uuid,
        recipient: Uuid,
        clients: usize,
        prefix: &str,
        total: Option<usize>,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let outcomes = Arc::new(Mutex::new(Vec::new()));
        let next = Arc::new(AtomicUsize::new(0));
        let tasks = (0..clients)
            .map(|client_number| {
                let (client, stop, outcomes, next) = (client.clone(), stop.clone(), outcomes.clone(), next.clone());
                let prefix = prefix.to_owned();
                tokio::spawn(async move {
                    let mut n = 0;
                    while !stop.load(Ordering::Relaxed) {
                        let order_id = match total {
                            None => format!("{prefix}-{client_number}-{n}"),
                            Some(total) => match next.fetch_add(1, Ordering::Relaxed) {
                                taken if taken < total => format!("{prefix}-{taken}"),
                                _ => break,
                            },
                        };
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

    /// How many payments were answered `201` so far.
    pub fn made(&self) -> usize {
        self.outcomes.lock().unwrap().iter().filter(|o| o.status == 201).count()
    }

    /// Waits for counted payers to make every payment, and gives every outcome.
    pub async fn finish(self) -> Vec<Outcome> {
        for task in self.tasks {
            task.await.expect("a payer ends");
        }
        self.outcomes.lock().unwrap().clone()
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
    // Longer than a retrying client's deadline (which may wait out a `Retry-After: 30`).
    let sent = tokio::time::timeout(Duration::from_secs(90), client.create_transaction().body(body).send()).await;
    let (status, message) = match sent {
        Ok(Ok(created)) => (created.status().as_u16(), String::new()),
        Ok(Err(payments_client::Error::ErrorResponse(error))) => (error.status().as_u16(), error.into_inner().message),
        // With its sources: a transport error's own text names no cause ("error sending
        // request for url …"); the one under it does (a timeout, a reset, a closed connection).
        Ok(Err(other)) => (other.status().map_or(0, |s| s.as_u16()), payments_sandbox::chain(&other)),
        Err(_) => (0, "no answer within 90 s".into()),
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
    let all =
        every_page(client, 100, move |list| list.balance_id(balance).transaction_type(types::TransactionType::Payment))
            .await
            .len();
    assert_eq!(all, outcomes.len(), "every payment tried is stored once in the end, and no other");
    all
}

/// An outage the payers go through: `begin` starts it (and says what `end` needs to end it).
pub struct Outage<B, E> {
    /// Says what it is, for the report (`a full disk for 3 s`).
    pub what: &'static str,
    pub begin: B,
    pub end: E,
    pub lasting: Duration,
    /// The statuses a payment may be answered, and those of them that mean "not made".
    pub allowed: &'static [u16],
    pub not_made: &'static [u16],
}

/// [`THROUGH`] payments through `outage` twice, each run on a balance of its own: with the
/// client's default retries, then with retries off. Each run is held to the money (every
/// payment made exactly once in the end, the balance exact); answers how many calls failed to
/// their caller in each.
pub async fn with_retries_and_without<S>(
    url: &str,
    token: &str,
    outage: Outage<impl Fn() -> S, impl Fn(S)>,
) -> [usize; 2] {
    let client = payments_client::with_token(url, token);
    let mut failed = [0; 2];
    for (run, (policy, prefix)) in
        [(RetryPolicy::default(), "retried"), (RetryPolicy::none(), "unretried")].into_iter().enumerate()
    {
        let (balance, recipient) = funded_with_recipient(&client, "GBP", FUNDS).await;
        let started = Instant::now();
        let (retries, outcomes) = through(url, token, (balance.id, recipient.id), policy, prefix, &outage).await;
        failed[run] = outcomes.iter().filter(|o| o.status != 201).count();
        eprintln!(
            "{}, {prefix}: {THROUGH} payments in {:.1} s, {retries} retries, {} failed to their caller: {:?}",
            outage.what,
            started.elapsed().as_secs_f64(),
            failed[run],
            tally(&outcomes)
        );
        let made = check_outcomes(&client, balance.id, recipient.id, &outcomes, outage.allowed, outage.not_made).await;
        assert_eq!(made, THROUGH);
        let any = client.list_transactions().balance_id(balance.id).limit(limit(1)).send().await.unwrap().into_inner();
        let spent = made as i64 * (AMOUNT as i64 + any[0].fees);
        assert_eq!(balance_of(&client, balance.id).await, FUNDS as i64 - spent);
    }
    failed
}

/// How many payments each run of [`with_retries_and_without`] makes, and from how much.
pub const THROUGH: usize = 1_000;
const FUNDS: u64 = 100_000_000;

/// One run: four payers sharing one client with `policy` (and so one retry budget), the outage
/// begun once a fifth of the payments are made. Answers the retries made (the policy's observer
/// counts them) and every outcome.
async fn through<S>(
    url: &str,
    token: &str,
    (balance, recipient): (Uuid, Uuid),
    policy: RetryPolicy,
    prefix: &str,
    outage: &Outage<impl Fn() -> S, impl Fn(S)>,
) -> (usize, Vec<Outcome>) {
    let retries = Arc::new(AtomicUsize::new(0));
    let counted = retries.clone();
    let policy = policy.on_retry(move |_| {
        counted.fetch_add(1, Ordering::Relaxed);
    });
    let client = payments_client::with_token(url, token).with_retry(policy);
    let payers = Payers::counted(client, balance, recipient, 4, prefix, THROUGH);
    while payers.made() < THROUGH / 5 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let begun = (outage.begin)();
    tokio::time::sleep(outage.lasting).await;
    (outage.end)(begun);
    let outcomes = payers.finish().await;
    (retries.load(Ordering::Relaxed), outcomes)
}
