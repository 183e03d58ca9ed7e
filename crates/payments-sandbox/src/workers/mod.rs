//! What runs beside the requests: the webhook delivery worker and the background rail.

pub mod delivery;
pub mod rails;
