//! The grammar of a connector's `http.allow` entries: which hosts (and ports) its plugins may
//! call. Parsed here so that every configuration path reports a bad entry with its key; the
//! runtime enforces the parsed entries.

use std::net::IpAddr;

/// One allowlist entry: `api.example.com`, `*.example.com`, `10.0.0.7`, `[::1]`, each with an
/// optional `:port` (or `:*` for any port; no port means 80 and 443).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHost {
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

impl AllowedHost {
    /// Parses one entry; the error names it and says what is wrong.
    pub fn parse(entry: &str) -> Result<Self, String> {
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
        Ok(Self { host: pattern, port })
    }

    /// Whether a request to `host:port` matches. `host` is lower-case, without IPv6 brackets.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let port_ok = match self.port {
            PortRule::Standard => port == 80 || port == 443,
            PortRule::Any => true,
            PortRule::Exactly(p) => p == port,
        };
        port_ok
            && match &self.host {
                HostPattern::Name(name) => host == name,
                HostPattern::Suffix(suffix) => host.len() > suffix.len() + 1 && host.ends_with(suffix.as_str()) && host.as_bytes()[host.len() - suffix.len() - 1] == b'.',
                HostPattern::Ip(ip) => host.parse::<IpAddr>().is_ok_and(|h| h == *ip),
            }
    }

    /// Whether the entry names the address `ip` itself.
    pub fn names_address(&self, ip: IpAddr) -> bool {
        self.host == HostPattern::Ip(ip)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(e: &str) -> AllowedHost {
        AllowedHost::parse(e).unwrap()
    }

    #[test]
    fn names_wildcards_and_ports() {
        assert!(entry("api.example.com").allows("api.example.com", 443));
        assert!(!entry("api.example.com").allows("api.example.com", 8080), "no port means 80 and 443 only");
        assert!(!entry("api.example.com").allows("evil-api.example.com", 443));
        let wild = entry("*.corp.example:8443");
        assert!(wild.allows("a.b.corp.example", 8443));
        assert!(!wild.allows("corp.example", 8443), "the wildcard needs a label before the suffix");
        assert!(!wild.allows("xcorp.example", 8443));
        assert!(entry("127.0.0.1:*").allows("127.0.0.1", 1234));
        assert!(entry("[::1]:9000").allows("::1", 9000));
        assert!(entry("127.0.0.1:*").names_address("127.0.0.1".parse().unwrap()));
        assert!(!entry("127.0.0.1:*").names_address("10.0.0.1".parse().unwrap()));
    }

    #[test]
    fn bad_entries_say_what_is_wrong() {
        for (e, expected) in [("https://x.com", "without scheme"), ("x.com:0", "port"), ("x..com", "host name"), ("", "host name")] {
            let why = AllowedHost::parse(e).unwrap_err();
            assert!(why.contains(expected), "{e}: {why}");
        }
    }
}
