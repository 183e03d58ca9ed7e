//! Who the client is: the address every per-address limit counts and the access log names.
//!
//! A connection's peer is the client, unless the peer is a trusted proxy (`--trusted-proxy`, a
//! load balancer in front of several instances): then the client is the right-most address of
//! the forwarding header that is not itself a trusted proxy. Each proxy appends the address it
//! saw, so everything to the right of that hop was written by proxies we trust, and everything
//! to its left was sent by the client, who can write anything there. A peer that is not a
//! trusted proxy is never asked: its forwarding headers are ignored.
//!
//! Only one forwarding header is read, the one the proxy writes (`--client-address-header`): a
//! proxy that appends to `X-Forwarded-For` passes a `Forwarded` header from the client on
//! untouched, and reading that one would let the client name its own address.
//!
//! IPv6 clients are counted per /64 ([`bucket`]): one host is routinely given a whole /64, so
//! counting each /128 would give it 2^64 addresses.

use std::borrow::Cow;
use std::net::{IpAddr, Ipv6Addr};

use axum::http::HeaderMap;
use ipnet::IpNet;

/// The forwarding header a trusted proxy writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ForwardingHeader {
    /// `X-Forwarded-For: client, proxy1, proxy2` (nginx's `$proxy_add_x_forwarded_for`,
    /// HAProxy's `option forwardfor`, cloud load balancers).
    #[default]
    XForwardedFor,
    /// RFC 7239's `Forwarded: for=client, for=proxy1`.
    Forwarded,
}

/// The proxies whose forwarding headers are believed, and which header they write.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies {
    pub networks: Vec<IpNet>,
    pub header: ForwardingHeader,
}

/// `address` as text, as `Display` writes it: an IPv4 address digit by digit into `buffer`
/// (`Display` goes through `core::fmt` and its padding, a cost of every access-log line:
/// instructions per request, BENCHMARKS.md), an IPv6 one by `Display`.
pub fn text(address: IpAddr, buffer: &mut [u8; 15]) -> Cow<'_, str> {
    let IpAddr::V4(v4) = address else { return Cow::Owned(address.to_string()) };
    let mut len = 0;
    for (i, octet) in v4.octets().into_iter().enumerate() {
        if i > 0 {
            buffer[len] = b'.';
            len += 1;
        }
        let digits = match octet {
            100.. => 3,
            10.. => 2,
            _ => 1,
        };
        let mut rest = octet;
        for at in (len..len + digits).rev() {
            buffer[at] = b'0' + rest % 10;
            rest /= 10;
        }
        len += digits;
    }
    Cow::Borrowed(std::str::from_utf8(&buffer[..len]).expect("digits and dots"))
}

impl TrustedProxies {
    /// Whether `address` is one of the trusted proxies.
    pub fn trusts(&self, address: IpAddr) -> bool {
        let address = canonical(address);
        self.networks.iter().any(|network| network.contains(&address))
    }

    /// The client behind a request that arrived from `peer` (see the module's documentation).
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = canonical(peer);
        if !self.trusts(peer) {
            return peer;
        }
        let mut client = peer;
        // Right to left: the last hop is the one the nearest proxy appended.
        for hop in self.hops(headers).into_iter().rev() {
            // A hop that is not an address (`unknown`, an obfuscated name) ends the walk: what
            // lies left of it cannot be told apart from what the client wrote.
            let Some(address) = hop else { break };
            client = address;
            if !self.trusts(address) {
                break;
            }
        }
        client
    }

    /// The hops of the forwarding header, left to right, each header line in order; `None` for
    /// a hop that is not an address.
    fn hops(&self, headers: &HeaderMap) -> Vec<Option<IpAddr>> {
        let name = match self.header {
            ForwardingHeader::XForwardedFor => "x-forwarded-for",
            ForwardingHeader::Forwarded => "forwarded",
        };
        let mut hops = Vec::new();
        for line in headers.get_all(name) {
            let Ok(line) = line.to_str() else {
                hops.push(None);
                continue;
            };
            for element in line.split(',') {
                hops.push(match self.header {
                    ForwardingHeader::XForwardedFor => node(element.trim()),
                    ForwardingHeader::Forwarded => forwarded_for(element),
                });
            }
        }
        hops
    }
}

/// The `for=` of one element of a `Forwarded` header (`for=192.0.2.60;proto=http`,
/// `for="[2001:db8::1]:4711"`).
fn forwarded_for(element: &str) -> Option<IpAddr> {
    element.split(';').find_map(|pair| {
        let (name, value) = pair.trim().split_once('=')?;
        name.trim().eq_ignore_ascii_case("for").then(|| node(value.trim().trim_matches('"')))?
    })
}

/// An address as forwarding headers write it: `192.0.2.1`, `192.0.2.1:80`, `2001:db8::1`,
/// `[2001:db8::1]`, `[2001:db8::1]:80`.
fn node(text: &str) -> Option<IpAddr> {
    if let Ok(address) = text.parse::<IpAddr>() {
        return Some(canonical(address));
    }
    if let Some(rest) = text.strip_prefix('[') {
        return rest
            .split_once(']')
            .and_then(|(inside, _)| inside.parse::<Ipv6Addr>().ok())
            .map(|a| canonical(a.into()));
    }
    let (host, port) = text.rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    host.parse::<std::net::Ipv4Addr>().ok().map(IpAddr::V4)
}

/// An IPv4 address written as IPv6 (`::ffff:192.0.2.1`, what a dual-stack socket reports) as
/// the IPv4 address it is.
fn canonical(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

/// What the per-address limits count: an IPv4 address, or an IPv6 address's /64.
pub fn bucket(address: IpAddr) -> IpAddr {
    match canonical(address) {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u128::MAX >> 64))),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_written_as_display_writes_them() {
        for address in
            ["0.0.0.0", "127.0.0.1", "10.20.30.40", "255.255.255.255", "9.99.100.199", "::1", "2001:db8::8a2e:370:7334"]
        {
            let address: IpAddr = address.parse().unwrap();
            assert_eq!(text(address, &mut [0; 15]), address.to_string());
        }
    }

    fn proxies(networks: &[&str], header: ForwardingHeader) -> TrustedProxies {
        TrustedProxies { networks: networks.iter().map(|n| n.parse().unwrap()).collect(), header }
    }

    fn headers(name: &str, lines: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for line in lines {
            headers.append(axum::http::HeaderName::from_bytes(name.as_bytes()).unwrap(), line.parse().unwrap());
        }
        headers
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn the_client_is_the_right_most_untrusted_hop() {
        let trusted = proxies(&["10.0.0.0/8", "::1/128"], ForwardingHeader::XForwardedFor);
        let forged = headers("x-forwarded-for", &["1.2.3.4, 203.0.113.7, 10.0.0.2"]);
        // Through two trusted proxies: the hop left of them; what the client wrote is ignored.
        assert_eq!(trusted.client(ip("10.0.0.1"), &forged), ip("203.0.113.7"));
        // From a peer that is not trusted, the header is not read at all.
        assert_eq!(trusted.client(ip("198.51.100.9"), &forged), ip("198.51.100.9"));
        // Several header lines are one list; ports and brackets are read.
        let lines = headers("x-forwarded-for", &["1.2.3.4", "203.0.113.8:5000, [::1]:80"]);
        assert_eq!(trusted.client(ip("::ffff:10.0.0.1"), &lines), ip("203.0.113.8"));
        // No header: the proxy itself. Only proxies: the left-most of them.
        assert_eq!(trusted.client(ip("10.0.0.1"), &HeaderMap::new()), ip("10.0.0.1"));
        assert_eq!(trusted.client(ip("10.0.0.1"), &headers("x-forwarded-for", &["10.9.9.9"])), ip("10.9.9.9"));
        // A hop that is not an address ends the walk at the last one read.
        let unknown = headers("x-forwarded-for", &["1.2.3.4, unknown, 10.0.0.3"]);
        assert_eq!(trusted.client(ip("10.0.0.1"), &unknown), ip("10.0.0.3"));
        // The other header is the client's to forge, so it is not read.
        let other = headers("forwarded", &["for=1.2.3.4"]);
        assert_eq!(trusted.client(ip("10.0.0.1"), &other), ip("10.0.0.1"));
    }

    #[test]
    fn forwarded_is_read_as_rfc_7239_writes_it() {
        let trusted = proxies(&["10.0.0.0/8"], ForwardingHeader::Forwarded);
        let forwarded =
            headers("forwarded", &[r#"for=1.2.3.4, for="[2001:db8:cafe::17]:4711";proto=https, For=10.0.0.5"#]);
        assert_eq!(trusted.client(ip("10.0.0.1"), &forwarded), ip("2001:db8:cafe::17"));
        let obfuscated = headers("forwarded", &["for=1.2.3.4, for=_hidden, for=10.0.0.5"]);
        assert_eq!(trusted.client(ip("10.0.0.1"), &obfuscated), ip("10.0.0.5"));
    }

    #[test]
    fn ipv6_clients_are_counted_per_64() {
        assert_eq!(bucket(ip("2001:db8:1:2:aaaa::1")), ip("2001:db8:1:2::"));
        assert_eq!(bucket(ip("2001:db8:1:2:ffff:ffff:ffff:ffff")), ip("2001:db8:1:2::"));
        assert_ne!(bucket(ip("2001:db8:1:3::1")), bucket(ip("2001:db8:1:2::1")));
        assert_eq!(bucket(ip("::ffff:192.0.2.1")), ip("192.0.2.1"));
        assert_eq!(bucket(ip("192.0.2.1")), ip("192.0.2.1"));
    }
}
