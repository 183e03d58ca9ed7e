//! The background rail: one step of the simulated rails for every tenant every `interval` (the
//! same step as `POST /sandbox/advance`), until shutdown.

use std::time::Duration;

use crate::domain::{Sandbox, outages};

pub async fn run(sandbox: Sandbox, interval: Duration, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks.tick().await;
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = shutdown.changed() => return,
        }
        match sandbox.advance(None).await {
            Ok(moved) if moved.virtual_accounts_activated + moved.transactions_advanced > 0 => tracing::info!(
                virtual_accounts_activated = moved.virtual_accounts_activated,
                transactions_advanced = moved.transactions_advanced,
                "rails advanced"
            ),
            Ok(_) => {}
            Err(error) if outages::report(&error, "the rails") => {}
            Err(error) => tracing::warn!(%error, "rails could not advance"),
        }
    }
}
