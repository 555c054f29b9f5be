//! Which hosts a connector lets its plugins call, and which resolved addresses are safe.

use std::net::IpAddr;
use std::time::Duration;

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

/// One allowlist entry: `api.example.com`, `*.example.com`, `10.0.0.7`, `[::1]`, each with an
/// optional `:port` (or `:*` for any port; no port means 80 and 443).
#[derive(Debug, Clone, PartialEq, Eq)]
struct AllowedHost {
    host: HostPattern,
    port: PortRule,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    Name(String),
    /// `*.example.com`: any name ending in `.example.com`.
    Suffix(String),
    Ip(IpAddr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PortRule {
    Standard,
    Any,
    Exactly(u16),
}

impl HttpGrant {
    /// Parses allowlist entries; the error names the entry and what is wrong with it.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        let allow = entries.iter().map(|e| parse_entry(e)).collect::<Result<_, _>>()?;
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
        self.allow.iter().any(|a| a.port.admits(port) && a.host.matches(host))
    }

    /// Whether the grant names `ip` itself, which is what it takes to reach an internal
    /// address.
    pub(crate) fn names_address(&self, ip: IpAddr) -> bool {
        self.allow.iter().any(|a| a.host == HostPattern::Ip(ip))
    }
}

impl PortRule {
    fn admits(self, port: u16) -> bool {
        match self {
            PortRule::Standard => port == 80 || port == 443,
            PortRule::Any => true,
            PortRule::Exactly(p) => p == port,
        }
    }
}

impl HostPattern {
    fn matches(&self, host: &str) -> bool {
        match self {
            HostPattern::Name(name) => host == name,
            HostPattern::Suffix(suffix) => host.len() > suffix.len() + 1 && host.ends_with(suffix.as_str()) && host.as_bytes()[host.len() - suffix.len() - 1] == b'.',
            HostPattern::Ip(ip) => host.parse::<IpAddr>().is_ok_and(|h| h == *ip),
        }
    }
}

fn parse_entry(entry: &str) -> Result<AllowedHost, String> {
    let bad = |why: &str| format!("{entry:?}: {why} (expected a host such as api.example.com, *.example.com or 10.0.0.7, optionally with :PORT or :*)");
    let text = entry.trim().to_ascii_lowercase();
    if text.contains("://") || text.contains('/') {
        return Err(bad("give the host only, without scheme or path"));
    }
    let (host, port) = split_port(&text).ok_or_else(|| bad("unreadable port"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let pattern = if let Ok(ip) = host.parse::<IpAddr>() {
        HostPattern::Ip(ip)
    } else if let Some(suffix) = host.strip_prefix("*.") {
        check_name(suffix).map_err(&bad)?;
        HostPattern::Suffix(suffix.to_owned())
    } else {
        check_name(host).map_err(&bad)?;
        HostPattern::Name(host.to_owned())
    };
    Ok(AllowedHost { host: pattern, port })
}

/// Splits `host[:port]`, minding bracketed IPv6 (`[::1]:8080`) and bare IPv6 (`::1`).
fn split_port(text: &str) -> Option<(&str, PortRule)> {
    let split_at = if text.starts_with('[') {
        text.find("]:").map(|i| i + 1)
    } else if text.matches(':').count() == 1 {
        text.find(':')
    } else {
        None
    };
    let Some(i) = split_at else { return Some((text, PortRule::Standard)) };
    let port = match &text[i + 1..] {
        "*" => PortRule::Any,
        p => PortRule::Exactly(p.parse().ok().filter(|p| *p > 0)?),
    };
    Some((&text[..i], port))
}

fn check_name(name: &str) -> Result<(), &'static str> {
    let ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|l| !l.is_empty() && l.len() <= 63 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    if ok {
        Ok(())
    } else {
        Err("not a valid host name")
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

    fn grant(entries: &[&str]) -> HttpGrant {
        HttpGrant::parse(&entries.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn names_wildcards_and_ports() {
        let g = grant(&["api.example.com", "*.corp.example:8443", "127.0.0.1:*", "[::1]:9000"]);
        assert!(g.allows("api.example.com", 443));
        assert!(!g.allows("api.example.com", 8080), "no port means 80 and 443 only");
        assert!(!g.allows("evil-api.example.com", 443));
        assert!(g.allows("a.b.corp.example", 8443));
        assert!(!g.allows("corp.example", 8443), "the wildcard needs a label before the suffix");
        assert!(!g.allows("xcorp.example", 8443));
        assert!(g.allows("127.0.0.1", 1234));
        assert!(g.allows("::1", 9000));
        assert!(g.names_address("127.0.0.1".parse().unwrap()));
        assert!(!g.names_address("10.0.0.1".parse().unwrap()));
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        for (entry, expected) in [("https://x.com", "without scheme"), ("x.com:0", "port"), ("x..com", "host name"), ("", "host name")] {
            let e = HttpGrant::parse(&[entry.to_owned()]).unwrap_err();
            assert!(e.contains(expected), "{entry}: {e}");
        }
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
