//! Which hosts a connector lets its plugins call (entries parsed by `turnpike_config`), and
//! which resolved addresses are safe.

use std::net::IpAddr;
use std::time::Duration;

use turnpike_config::AllowedHost;

/// Outgoing HTTP a connector grants its plugins. The default grants nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpGrant {
    allow: Vec<AllowedHost>,
    /// Longest a plugin may wait to connect (its own option is clamped to this).
    pub connect_timeout: Duration,
    /// Longest a plugin may wait for the first response byte, and between two body chunks.
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

    /// Whether the grant names `ip` itself, which is what it takes to reach an internal
    /// address.
    pub(crate) fn names_address(&self, ip: IpAddr) -> bool {
        self.allow.iter().any(|a| a.names_address(ip))
    }
}

/// Whether `ip` is somewhere a plugin must not reach by name alone: loopback, private,
/// link-local, carrier-grade NAT, unspecified, multicast, broadcast, documentation or
/// unique-local ranges (IPv4-mapped IPv6 checked as IPv4).
pub(crate) fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_internal(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback() || v6.is_unspecified() || v6.is_multicast() || (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_is_its_entries() {
        let g = HttpGrant::parse(&["api.example.com".to_owned(), "127.0.0.1:*".to_owned()]).unwrap();
        assert!(g.allows("api.example.com", 443) && g.allows("127.0.0.1", 9));
        assert!(!g.allows("other.example.com", 443));
        assert!(g.names_address("127.0.0.1".parse().unwrap()));
        assert!(HttpGrant::parse(&["https://x".to_owned()]).is_err());
        assert!(HttpGrant::default().is_empty());
    }

    #[test]
    fn internal_ranges_are_recognised() {
        for ip in ["127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "::1", "fd00::1", "fe80::1", "::ffff:10.0.0.1"] {
            assert!(is_internal(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["93.184.216.34", "1.1.1.1", "2606:4700::1111"] {
            assert!(!is_internal(ip.parse().unwrap()), "{ip}");
        }
    }
}
