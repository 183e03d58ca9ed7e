//! Fair shares: how much of the server one client address may hold at once, so one address
//! cannot starve the others — its connections (counted per peer at accept) and, for requests
//! that come through a trusted proxy, its requests in flight (counted per forwarded client,
//! since a proxy's connections carry many clients).
//!
//! A direct client's requests in flight need no count of their own: HTTP/1.1 answers one
//! request at a time per connection, so its connections bound them. A trusted proxy's
//! connections are not counted: they are shared by its clients, and the proxy is where their
//! connections are held (see the README's load balancer recipe).
//!
//! The counts are maps of the addresses holding something now, so they are as large as what is
//! open (at most `--max-connections` entries), and an address is gone from them with its last
//! connection or request.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use super::client_address::bucket;

/// Counts what each address holds, up to `share` each.
#[derive(Clone)]
pub struct Shares {
    share: usize,
    held: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl Shares {
    pub fn new(share: usize) -> Self {
        Self { share: share.max(1), held: Arc::default() }
    }

    /// One more for `address`, held until the [`Held`] is dropped; `None` when the address
    /// already holds its share, unless `spare` (there is room to spare beyond the shares).
    pub fn take(&self, address: IpAddr, spare: bool) -> Option<Held> {
        let address = bucket(address);
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let count = held.entry(address).or_insert(0);
        if *count >= self.share && !spare {
            return None;
        }
        *count += 1;
        Some(Held { shares: self.clone(), address })
    }

    /// What each address may hold.
    pub fn share(&self) -> usize {
        self.share
    }
}

/// One connection or request of an address, given back when dropped.
pub struct Held {
    shares: Shares,
    address: IpAddr,
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = self.shares.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = held.get_mut(&self.address) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.address);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_address_holds_its_share_and_gets_it_back() {
        let shares = Shares::new(2);
        let one: IpAddr = "192.0.2.1".parse().unwrap();
        let (first, _second) = (shares.take(one, false).unwrap(), shares.take(one, false).unwrap());
        assert!(shares.take(one, false).is_none());
        assert!(shares.take("192.0.2.2".parse().unwrap(), false).is_some(), "another address is not held back");
        // Room to spare: past the share.
        let third = shares.take(one, true).expect("past its share while there is room");
        assert!(shares.take(one, false).is_none());
        drop(third);
        // IPv6 per /64: a host's other addresses are the same client.
        let v6: IpAddr = "2001:db8::1".parse().unwrap();
        let _held = (shares.take(v6, false).unwrap(), shares.take("2001:db8::2".parse().unwrap(), false).unwrap());
        assert!(shares.take("2001:db8::ffff".parse().unwrap(), false).is_none());
        drop(first);
        assert!(shares.take(one, false).is_some());
        drop(_held);
        assert!(shares.held.lock().unwrap().get(&bucket(v6)).is_none(), "nothing kept for an address holding nothing");
    }
}
