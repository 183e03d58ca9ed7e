//! What runs beside the requests: the webhook delivery worker, the background rail, and
//! retention.

pub mod delivery;
pub mod rails;
pub mod retention;
