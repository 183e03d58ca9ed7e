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
/// special-purpose ranges, so the sandbox can't be pointed at its own network.
pub fn forbidden_address(ip: IpAddr, policy: TargetPolicy) -> Option<&'static str> {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
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
            let first = v6.segments()[0];
            if v6.is_unspecified() || v6.is_multicast() {
                Some("a reserved address")
            } else if first & 0xfe00 == 0xfc00 {
                Some("a private (unique local) address")
            } else if first & 0xffc0 == 0xfe80 {
                Some("a link-local address")
            } else {
                None
            }
        }
    }
}

/// Checks an endpoint URL: `https://` (or `http://` to loopback when allowed), and a host that
/// is not a forbidden literal address. Names are checked again when they are resolved, at each
/// delivery.
pub fn check_url(raw: &str, policy: TargetPolicy) -> Result<url::Url, String> {
    let url = url::Url::parse(raw).map_err(|e| format!("url: {raw:?} is not a URL ({e})"))?;
    let host = url.host().ok_or_else(|| "url: has no host".to_owned())?;
    let literal: Option<IpAddr> = match host {
        url::Host::Ipv4(v4) => Some(v4.into()),
        url::Host::Ipv6(v6) => Some(v6.into()),
        url::Host::Domain(name) => (name.eq_ignore_ascii_case("localhost")).then(|| [127, 0, 0, 1].into()),
    };
    let loopback = literal.is_some_and(|ip| ip.is_loopback());
    match url.scheme() {
        "https" => {}
        "http" if loopback && policy.allow_loopback => {}
        _ => return Err("url: must be an https:// URL".into()),
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("url: must not carry credentials".into());
    }
    if let Some(reason) = literal.and_then(|ip| forbidden_address(ip, policy)) {
        return Err(format!("url: {host} is {reason}, which cannot receive notifications"));
    }
    Ok(url)
}

/// At registration, a name that resolves only to forbidden addresses is refused at once (the
/// caller learns now, not from failed deliveries). A name that does not resolve (yet) is
/// accepted: deliveries check again, on the address they connect to.
pub async fn check_resolution(raw: &str, policy: TargetPolicy) -> Result<(), String> {
    let url = check_url(raw, policy)?;
    let Some(url::Host::Domain(name)) = url.host() else { return Ok(()) };
    let port = url.port_or_known_default().unwrap_or(443);
    let lookup = tokio::time::timeout(std::time::Duration::from_secs(3), tokio::net::lookup_host((name, port))).await;
    let Ok(Ok(addresses)) = lookup else { return Ok(()) };
    let addresses: Vec<IpAddr> = addresses.map(|a| a.ip()).collect();
    match only_forbidden(&addresses, policy) {
        Some(reason) => Err(format!("url: {name} resolves to {reason}, which cannot receive notifications")),
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

    #[tokio::test]
    async fn registration_refuses_loopback_and_accepts_names_that_do_not_resolve() {
        let strict = TargetPolicy { allow_loopback: false };
        assert!(check_resolution("https://localhost/x", strict).await.is_err());
        assert!(check_resolution("https://hooks.example/x", strict).await.is_ok(), "`.example` never resolves");
        assert!(check_resolution("https://localhost/x", TargetPolicy { allow_loopback: true }).await.is_ok());
    }
}
