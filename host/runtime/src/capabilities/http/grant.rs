//! Which hosts a connector lets its plugins call (entries parsed by `turnpike_config`), and
//! which resolved addresses are safe.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

use turnpike_config::{AllowedHost, HttpGrantSpec};

/// Outgoing HTTP a connector grants its plugins. The default grants nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpGrant {
    allow: Vec<AllowedHost>,
    /// Longest a plugin may wait to connect (its own option is clamped to this).
    pub connect_timeout: Duration,
    /// Longest a plugin may wait for the response head, and for each next body chunk (its
    /// own first-byte and between-bytes options are clamped to this).
    pub response_timeout: Duration,
}

impl Default for HttpGrant {
    fn default() -> Self {
        Self { allow: Vec::new(), connect_timeout: Duration::from_secs(5), response_timeout: Duration::from_secs(30) }
    }
}

impl HttpGrant {
    /// Parses allowlist entries; the error names the entry and what is wrong with it.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        let allow = entries.iter().map(|e| AllowedHost::parse(e)).collect::<Result<_, _>>()?;
        Ok(Self { allow, ..Self::default() })
    }

    /// The grant of a validated connector: its entries, parsed once by
    /// `turnpike_config::Connector::validate`, and its timeouts.
    pub fn granted(spec: &HttpGrantSpec) -> Self {
        Self { allow: spec.allow.clone(), connect_timeout: spec.connect_timeout, response_timeout: spec.timeout }
    }

    /// With these timeouts instead of the defaults.
    pub fn with_timeouts(mut self, connect: Duration, response: Duration) -> Self {
        self.connect_timeout = connect;
        self.response_timeout = response;
        self
    }

    /// Whether nothing is granted.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty()
    }

    /// Whether a request to `host:port` is allowed by name. `host` is lower-case, without
    /// IPv6 brackets.
    pub(crate) fn allows(&self, host: &str, port: u16) -> bool {
        self.allow.iter().any(|a| a.allows(host, port))
    }

    /// Whether a request to `host:port` may connect to `ip`, one of the addresses `host`
    /// resolved to. A public address always may. An internal one ([`is_internal`]) only when
    /// the request names that address literally (`host` is `ip` itself) and an entry that
    /// names the same address allows the port: an entry such as `10.0.0.5:8080` opens
    /// `10.0.0.5:8080` and nothing else, never a name (`api.example.com`) that happens to
    /// resolve, or be made to resolve, to 10.0.0.5, on any port.
    pub(crate) fn may_reach(&self, host: &str, port: u16, ip: IpAddr) -> bool {
        !is_internal(ip) || (host.parse::<IpAddr>().is_ok_and(|h| h == ip) && self.allow.iter().any(|a| a.names_address(ip) && a.allows(host, port)))
    }
}

/// Whether `ip` is somewhere a plugin must not reach by name alone.
///
/// IPv4: "this network" `0.0.0.0/8`, private `10/8`, `172.16/12`, `192.168/16`, carrier-grade
/// NAT `100.64/10`, loopback `127/8`, link-local `169.254/16`, IETF protocol assignments
/// `192.0.0.0/24`, documentation `192.0.2/24`, `198.51.100/24`, `203.0.113/24`, benchmarking
/// `198.18/15`, multicast `224/4`, and reserved `240/4` (which holds the broadcast address).
///
/// IPv6: unspecified, loopback, multicast, unique-local `fc00::/7`, link-local `fe80::/10`,
/// site-local `fec0::/10` (deprecated, still routed inside some networks), discard `100::/64`,
/// IETF protocol assignments `2001::/23` (which holds Teredo `2001::/32` and benchmarking
/// `2001:2::/48`), documentation `2001:db8::/32` and `3fff::/20`, and SRv6 `5f00::/16`.
///
/// IPv6 forms that carry an IPv4 address a translator or tunnel will deliver to are judged
/// by that IPv4 address: IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d`,
/// IPv4-compatible `::a.b.c.d` (deprecated; `::` and `::1` stay internal), the NAT64
/// well-known prefix `64:ff9b::/96`, and 6to4 `2002:AABB:CCDD::/48`. The rest of
/// `64:ff9b::/32`, including the local-use NAT64 prefix `64:ff9b:1::/48`, is internal as a
/// whole: that prefix is not globally reachable, and where a network puts the IPv4 address
/// inside it depends on the prefix length it chose (RFC 6052 allows /48 to /96), so decoding
/// it one way could read a private address as a public one. Teredo is internal with the rest
/// of `2001::/23` rather than decoded: the protocol is obsolete and its client address is
/// obfuscated and NAT-relative, so nothing a plugin should call lives there.
pub(crate) fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => is_internal_v6(v6),
    }
}

fn is_internal_v4(v4: Ipv4Addr) -> bool {
    let [a, b, c, _] = v4.octets();
    v4.is_loopback()
        || v4.is_private()
        || v4.is_link_local()
        || v4.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
        // Multicast 224/4 and reserved 240/4, 255.255.255.255 included.
        || a >= 224
}

fn is_internal_v6(v6: Ipv6Addr) -> bool {
    if v6.is_loopback() || v6.is_unspecified() {
        return true;
    }
    let o = v6.octets();
    let embedded = |at: usize| Ipv4Addr::new(o[at], o[at + 1], o[at + 2], o[at + 3]);
    match v6.segments() {
        // IPv4-compatible ::a.b.c.d, IPv4-mapped ::ffff:a.b.c.d, IPv4-translated ::ffff:0:a.b.c.d.
        [0, 0, 0, 0, 0, 0, _, _] | [0, 0, 0, 0, 0, 0xffff, _, _] | [0, 0, 0, 0, 0xffff, 0, _, _] => is_internal_v4(embedded(12)),
        // NAT64 well-known prefix 64:ff9b::/96.
        [0x64, 0xff9b, 0, 0, 0, 0, _, _] => is_internal_v4(embedded(12)),
        // Local-use NAT64 64:ff9b:1::/48 and the rest of 64:ff9b::/32 (see above).
        [0x64, 0xff9b, ..] => true,
        // 6to4 2002:AABB:CCDD::/48 carries AA.BB.CC.DD.
        [0x2002, ..] => is_internal_v4(embedded(2)),
        [first, second, ..] => {
            v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || (first & 0xffc0) == 0xfec0
                || matches!(v6.segments(), [0x100, 0, 0, 0, _, _, _, _])
                || (first == 0x2001 && second < 0x200)
                || (first == 0x2001 && second == 0xdb8)
                || (first == 0x3fff && (second & 0xf000) == 0)
                || first == 0x5f00
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(entries: &[&str]) -> HttpGrant {
        HttpGrant::parse(&entries.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>()).unwrap()
    }

    /// Whether a request to `host:port` whose name resolved to `ip` would be sent to `ip`: the
    /// two checks `send` makes.
    fn sent(g: &HttpGrant, host: &str, port: u16, ip: &str) -> bool {
        g.allows(host, port) && g.may_reach(host, port, ip.parse().unwrap())
    }

    #[test]
    fn a_grant_is_its_entries() {
        let g = grant(&["api.example.com", "127.0.0.1:*"]);
        assert!(g.allows("api.example.com", 443) && g.allows("127.0.0.1", 9));
        assert!(!g.allows("other.example.com", 443));
        assert!(g.may_reach("127.0.0.1", 9, "127.0.0.1".parse().unwrap()));
        assert!(HttpGrant::parse(&["https://x".to_owned()]).is_err());
        assert!(HttpGrant::default().is_empty());
    }

    #[test]
    fn a_validated_grant_keeps_its_entries_and_timeouts() {
        let spec = HttpGrantSpec {
            allow: vec![AllowedHost::parse("api.example.com").unwrap()],
            connect_timeout: Duration::from_millis(7),
            timeout: Duration::from_millis(9),
        };
        let g = HttpGrant::granted(&spec);
        assert!(g.allows("api.example.com", 443) && !g.allows("other.example.com", 443));
        assert_eq!((g.connect_timeout, g.response_timeout), (Duration::from_millis(7), Duration::from_millis(9)));
    }

    #[test]
    fn an_internal_address_is_reached_only_through_its_own_entry() {
        let g = grant(&["api.example.com", "api.example.com:8080", "10.0.0.5:8080"]);
        assert!(sent(&g, "10.0.0.5", 8080, "10.0.0.5"), "the address itself, on its entry's port");
        assert!(!sent(&g, "api.example.com", 8080, "10.0.0.5"), "a name resolving to the named address");
        assert!(!sent(&g, "api.example.com", 443, "10.0.0.5"), "a name resolving to it, on the name's port");
        assert!(!sent(&g, "10.0.0.5", 443, "10.0.0.5"), "the address on a port its entry does not allow");
        assert!(sent(&g, "api.example.com", 443, "93.184.216.34"), "a name resolving to a public address");

        // A wildcard entry can match an address literal by its last labels; it does not name
        // the address, so it does not open it.
        let g = grant(&["*.0.0.5:*", "10.0.0.9:*"]);
        assert!(g.allows("10.0.0.5", 80));
        assert!(!sent(&g, "10.0.0.5", 80, "10.0.0.5"));
        // An entry for one internal address does not open another the request resolved to.
        assert!(!g.may_reach("10.0.0.9", 80, "10.0.0.5".parse().unwrap()));
    }

    #[test]
    fn internal_ranges_are_recognised() {
        let internal = [
            "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "0.1.2.3",
            "192.0.0.1", "192.0.0.170", "192.0.2.1", "198.18.0.1", "198.19.255.255", "224.0.0.1", "240.0.0.1", "250.1.2.3",
            "255.255.255.255",
            "::", "::1", "fd00::1", "fe80::1", "fec0::1", "ff02::1", "100::1", "2001::1", "2001:0:4136:e378:8000:63bf:3fff:fdd2",
            "2001:2::1", "2001:db8::1", "3fff::1", "3fff:fff::1", "5f00::1",
            // IPv4 carried in IPv6.
            "::ffff:10.0.0.1", "::ffff:0:127.0.0.1", "::10.0.0.1", "::127.0.0.1", "::169.254.169.254",
            "64:ff9b::10.0.0.1", "64:ff9b::127.0.0.1", "64:ff9b::169.254.169.254", "64:ff9b::255.255.255.255",
            "64:ff9b:1::a00:1", "64:ff9b:1::5db8:d822", "64:ff9b:1:0:0a00:0:500::",
            "2002:a00:1::", "2002:7f00:1::1", "2002:a9fe:a9fe::1", "2002:c0a8:101::",
        ];
        for ip in internal {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        let public = [
            "93.184.216.34", "1.1.1.1", "8.8.8.8", "192.0.1.1", "198.17.255.255", "198.20.0.1", "223.255.255.255", "100.128.0.1",
            "2606:4700::1111", "2a00:1450:4001::1", "2001:200::1", "3fff:1000::1",
            "::ffff:93.184.216.34", "::93.184.216.34", "64:ff9b::93.184.216.34", "2002:5db8:d822::1",
        ];
        for ip in public {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }
}
