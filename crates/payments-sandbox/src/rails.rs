//! The simulated payment rails: what banks would do with time, done every `interval` for every
//! tenant (the same step as `POST /sandbox/advance`).

use std::time::Duration;

use crate::service::{Now, advance};
use crate::store::Store;

pub async fn run(store: Store, interval: Duration) {
    let mut ticks = tokio::time::interval(interval);
    ticks.tick().await;
    loop {
        ticks.tick().await;
        match store.run(|tx| advance(tx, Now::new(), None)).await {
            Ok(moved) if moved.virtual_accounts_activated + moved.transactions_advanced > 0 => tracing::info!(
                virtual_accounts_activated = moved.virtual_accounts_activated,
                transactions_advanced = moved.transactions_advanced,
                "rails advanced"
            ),
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "rails could not advance"),
        }
    }
}
