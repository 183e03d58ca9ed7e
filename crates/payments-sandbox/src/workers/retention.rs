//! Retention: notifications that are over (delivered, or discarded after their last retry or
//! with their endpoint) are deleted once older than the retention, with the events no
//! notification refers to any more. Notifications still being retried are never deleted.
//! Events that no endpoint subscribes to are not stored in the first place.

use std::sync::Arc;
use std::time::Duration;

use payments_store::Store;

use crate::domain::outages;

/// The default retention: the 24 hours of retries, then six days to browse what happened.
pub const RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// Prunes at start, then every hour (or every half retention, when that is shorter), until
/// shutdown.
pub async fn run(store: Arc<dyn Store>, retention: Duration, mut shutdown: tokio::sync::watch::Receiver<bool>) {
    let every = (retention / 2).clamp(Duration::from_secs(1), Duration::from_secs(3600));
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticks.tick() => {}
            _ = shutdown.changed() => return,
        }
        let Ok(retention) = chrono::Duration::from_std(retention) else { return };
        match store.prune(chrono::Utc::now() - retention).await {
            Ok(pruned) if pruned.notifications + pruned.events > 0 => {
                tracing::info!(notifications = pruned.notifications, events = pruned.events, "pruned past retention")
            }
            Ok(_) => {}
            Err(error) if outages::report(&error.clone().into(), "pruning past retention") => {}
            Err(error) => tracing::warn!(%error, "pruning past retention failed"),
        }
    }
}
