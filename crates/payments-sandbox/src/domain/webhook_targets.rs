//! Who may receive webhooks: `https://` targets on public addresses. Loopback, private,
//! link-local, metadata and other special-purpose addresses are refused, so the sandbox cannot
//! be pointed at its own network — at registration, and again for every address a name
//! resolves to when a delivery connects (`workers::delivery`).

use std::net::IpAddr;

/// Who may be a delivery target.
#[derive(Debug, Clone, Copy, Default)]
pub struct TargetPolicy {
    /// Admit loopback addresses, and plain `http://` to them (local development and tests).
    pub allow_loopback: bool,
}

/// Why an address may not be a target: loopback, private, link-local, metadata and the other
/// special-purpose ranges, so the sandbox can't be pointed at its own network. An IPv6 address
/// that carries an IPv4 address (mapped, compatible, NAT64, 6to4) is judged as the IPv4
/// address it leads to.
pub fn forbidden_address(ip: IpAddr, policy: TargetPolicy) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => match embedded_ipv4(v6) {
            Embedded::V4(v4) => IpAddr::V4(v4),
            Embedded::Opaque(reason) => return Some(reason),
            Embedded::None => IpAddr::V6(v6),
        },
        v4 => v4,
    };
    if ip.is_loopback() {
        return (!policy.allow_loopback).then_some("a loopback address");
    }
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            if v4.is_private() {
                Some("a private address")
            } else if v4.is_link_local() {
                Some("a link-local or metadata address")
            } else if v4.is_unspecified() || v4.is_broadcast() || v4.is_multicast() || a == 0 || a >= 240 {
                Some("a reserved address")
            } else if a == 100 && (64..128).contains(&b) {
                Some("a shared (carrier-grade NAT) address")
            } else {
                None
            }
        }
        IpAddr::V6(v6) => {
            let [first, second, ..] = v6.segments();
            if v6.is_unspecified() || v6.is_multicast() {
                Some("a reserved address")
            } else if first & 0xfe00 == 0xfc00 {
                Some("a private (unique local) address")
            } else if first & 0xffc0 == 0xfe80 || first & 0xffc0 == 0xfec0 {
                Some("a link-local address")
            } else if (first, second) == (0x2001, 0x0db8) || v6.segments()[..4] == [0x0100, 0, 0, 0] {
                Some("a reserved address")
            } else {
                None
            }
        }
    }
}

/// What an IPv6 address says of IPv4.
enum Embedded {
    /// It leads to this IPv4 address.
    V4(std::net::Ipv4Addr),
    /// It leads to an IPv4 address that cannot be read off it (Teredo's is obfuscated; a
    /// local-use NAT64 prefix may put it anywhere): refused whole.
    Opaque(&'static str),
    /// A plain IPv6 address.
    None,
}

fn embedded_ipv4(v6: std::net::Ipv6Addr) -> Embedded {
    let (s, bytes) = (v6.segments(), v6.octets());
    let at = |i: usize| std::net::Ipv4Addr::new(bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]);
    let last32 = || at(12);
    if let Some(v4) = v6.to_ipv4_mapped() {
        // ::ffff:a.b.c.d
        Embedded::V4(v4)
    } else if s[..6] == [0; 6] && !v6.is_unspecified() && !v6.is_loopback() {
        // ::a.b.c.d, the deprecated IPv4-compatible form
        Embedded::V4(last32())
    } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        // 64:ff9b::a.b.c.d, NAT64's well-known prefix (RFC 6052)
        Embedded::V4(last32())
    } else if s[..3] == [0x64, 0xff9b, 1] {
        Embedded::Opaque("a NAT64 (local-use prefix) address")
    } else if s[0] == 0x2002 {
        // 2002:aabb:ccdd::/48, 6to4 (RFC 3056)
        Embedded::V4(at(2))
    } else if s[..2] == [0x2001, 0] {
        Embedded::Opaque("a Teredo address")
    } else {
        Embedded::None
    }
}

/// Why a URL cannot receive notifications; each says so to the caller, naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    #[error("url: has no host")]
    NoHost,
    #[error("url: {raw:?} is not a URL ({error})")]
    NotAUrl { raw: String, error: url::ParseError },
    #[error("url: write the host {0:?} without its trailing dot")]
    TrailingDot(String),
    #[error("url: must be an https:// URL")]
    NotHttps,
    #[error("url: must not carry credentials")]
    Credentials,
    #[error("url: {host} is {reason}, which cannot receive notifications")]
    ForbiddenAddress { host: String, reason: &'static str },
    #[error("url: {name} resolves to {reason}, which cannot receive notifications")]
    ForbiddenName { name: String, reason: &'static str },
}

/// Checks an endpoint URL: `https://` (or `http://` to loopback when allowed), and a host that
/// is not a forbidden literal address. Names are checked again when they are resolved, at each
/// delivery.
pub fn check_url(raw: &str, policy: TargetPolicy) -> Result<url::Url, Refused> {
    // The URL parser reads `https:///x` as the host `x`: a URL must name its host after `//`.
    let after_scheme = raw.split_once("://").map_or("", |(_, rest)| rest);
    if after_scheme.is_empty() || after_scheme.starts_with(['/', '\\', '?', '#']) {
        return Err(Refused::NoHost);
    }
    let url = url::Url::parse(raw).map_err(|error| Refused::NotAUrl { raw: raw.to_owned(), error })?;
    let host = url.host().ok_or(Refused::NoHost)?;
    let literal: Option<IpAddr> = match host {
        url::Host::Ipv4(v4) => Some(v4.into()),
        url::Host::Ipv6(v6) => Some(v6.into()),
        // A trailing dot names the same host (`localhost.`) past a comparison of names.
        url::Host::Domain(name) if name.ends_with('.') => {
            return Err(Refused::TrailingDot(name.to_owned()));
        }
        // `localhost` and every name under it are loopback (RFC 6761).
        url::Host::Domain(name) => {
            let name = name.to_ascii_lowercase();
            (name == "localhost" || name.ends_with(".localhost")).then(|| [127, 0, 0, 1].into())
        }
    };
    let loopback = literal.is_some_and(|ip| ip.is_loopback());
    match url.scheme() {
        "https" => {}
        "http" if loopback && policy.allow_loopback => {}
        _ => return Err(Refused::NotHttps),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(Refused::Credentials);
    }
    if let Some(reason) = literal.and_then(|ip| forbidden_address(ip, policy)) {
        return Err(Refused::ForbiddenAddress { host: host.to_string(), reason });
    }
    Ok(url)
}

/// At registration, a name that resolves only to forbidden addresses is refused at once (the
/// caller learns now, not from failed deliveries). A name that does not resolve (yet) is
/// accepted: deliveries check again, on the address they connect to.
pub async fn check_resolution(raw: &str, policy: TargetPolicy) -> Result<(), Refused> {
    let url = check_url(raw, policy)?;
    let Some(url::Host::Domain(name)) = url.host() else { return Ok(()) };
    let port = url.port_or_known_default().unwrap_or(443);
    let lookup = tokio::time::timeout(std::time::Duration::from_secs(3), tokio::net::lookup_host((name, port))).await;
    let Ok(Ok(addresses)) = lookup else { return Ok(()) };
    let addresses: Vec<IpAddr> = addresses.map(|a| a.ip()).collect();
    match only_forbidden(&addresses, policy) {
        Some(reason) => Err(Refused::ForbiddenName { name: name.to_owned(), reason }),
        None => Ok(()),
    }
}

/// Why none of `addresses` may be a target, or `None` when one may.
fn only_forbidden(addresses: &[IpAddr], policy: TargetPolicy) -> Option<&'static str> {
    let reasons: Vec<_> = addresses.iter().map(|ip| forbidden_address(*ip, policy)).collect();
    if reasons.is_empty() || reasons.iter().any(Option::is_none) { None } else { reasons[0] }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_refused_only_when_every_address_is_forbidden() {
        let strict = TargetPolicy { allow_loopback: false };
        let private: IpAddr = [10, 0, 0, 7].into();
        let public: IpAddr = [93, 184, 215, 14].into();
        let metadata: IpAddr = [169, 254, 169, 254].into();
        assert_eq!(only_forbidden(&[private], strict), Some("a private address"));
        assert_eq!(only_forbidden(&[metadata, private], strict), Some("a link-local or metadata address"));
        assert_eq!(only_forbidden(&[private, public], strict), None, "the public one is used");
        assert_eq!(only_forbidden(&[], strict), None);
        assert_eq!(only_forbidden(&["::1".parse().unwrap()], strict), Some("a loopback address"));
        assert_eq!(only_forbidden(&["::ffff:10.0.0.1".parse().unwrap()], strict), Some("a private address"));
        assert_eq!(
            only_forbidden(&["100.64.0.1".parse().unwrap()], strict),
            Some("a shared (carrier-grade NAT) address")
        );
    }

    #[test]
    fn ipv4_embedded_in_ipv6_is_judged_as_the_ipv4_address() {
        let strict = TargetPolicy { allow_loopback: false };
        let forbidden = |text: &str| forbidden_address(text.parse().unwrap(), strict);
        // Mapped, compatible, NAT64 and 6to4 forms of loopback, private and metadata addresses.
        for (text, reason) in [
            ("::ffff:127.0.0.1", "a loopback address"),
            ("::127.0.0.1", "a loopback address"),
            ("::10.0.0.1", "a private address"),
            ("64:ff9b::7f00:1", "a loopback address"),
            ("64:ff9b::a9fe:a9fe", "a link-local or metadata address"),
            ("64:ff9b::c0a8:1", "a private address"),
            ("2002:7f00:1::", "a loopback address"),
            ("2002:a9fe:a9fe::1", "a link-local or metadata address"),
            ("2002:0a00:0001:1::1", "a private address"),
            ("64:ff9b:1::a00:1", "a NAT64 (local-use prefix) address"),
            ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "a Teredo address"),
            ("fec0::1", "a link-local address"),
            ("2001:db8::1", "a reserved address"),
            ("100::1", "a reserved address"),
        ] {
            assert_eq!(forbidden(text), Some(reason), "{text}");
        }
        // The same forms around public IPv4 addresses, and a public IPv6 address, may receive.
        for text in ["::ffff:93.184.215.14", "64:ff9b::5db8:d70e", "2002:5db8:d70e::1", "2606:4700::1111"] {
            assert_eq!(forbidden(text), None, "{text}");
        }
    }

    #[test]
    fn urls_must_name_a_host_without_a_trailing_dot() {
        let strict = TargetPolicy { allow_loopback: false };
        for url in ["https:///x", "https://", "https:///", "https://?x", "https://\\x/"] {
            assert_eq!(check_url(url, strict).unwrap_err(), Refused::NoHost, "{url}");
        }
        assert!(check_url("https://localhost./x", strict).unwrap_err().to_string().contains("trailing dot"));
        assert!(check_url("https://hooks.example./x", strict).unwrap_err().to_string().contains("trailing dot"));
        assert!(check_url("https://api.localhost/x", strict).unwrap_err().to_string().contains("loopback"));
        assert!(check_url("https://LOCALHOST/x", strict).unwrap_err().to_string().contains("loopback"));
        assert!(check_url("https://[64:ff9b::7f00:1]/", strict).unwrap_err().to_string().contains("loopback"));
        assert!(check_url("https://[::127.0.0.1]/", strict).unwrap_err().to_string().contains("loopback"));
        assert!(check_url("https://hooks.example/x", strict).is_ok());
    }

    #[tokio::test]
    async fn registration_refuses_loopback_and_accepts_names_that_do_not_resolve() {
        let strict = TargetPolicy { allow_loopback: false };
        assert!(check_resolution("https://localhost/x", strict).await.is_err());
        assert!(check_resolution("https://hooks.example/x", strict).await.is_ok(), "`.example` never resolves");
        assert!(check_resolution("https://localhost/x", TargetPolicy { allow_loopback: true }).await.is_ok());
    }
}
