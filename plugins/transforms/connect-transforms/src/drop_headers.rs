//! `drop-headers` (Kafka Connect's `DropHeaders`): removes headers by name; `*` in a name is
//! a wildcard (KIP-991), so `trace-*` drops every tracing header.

use serde::Deserialize;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part;
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    headers: Vec<String>,
}

pub struct DropHeaders {
    patterns: Vec<String>,
}

impl Smt for DropHeaders {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        if config.headers.is_empty() {
            return Err(ConfigError::at("headers", "name at least one header to drop"));
        }
        if let Some(i) = config.headers.iter().position(String::is_empty) {
            return Err(ConfigError::at(format!("headers[{i}]"), "a header name cannot be empty"));
        }
        Ok(Self { patterns: config.headers })
    }
}

impl Step for DropHeaders {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let dropped = |name: &str| self.patterns.iter().any(|p| matches(p, name));
        if !record.headers().any(|(name, _)| dropped(name)) {
            out.forward(record);
            return Ok(());
        }
        let mut rebuilt = part::copy_without_headers(record);
        for (name, value) in record.headers().filter(|(name, _)| !dropped(name)) {
            rebuilt = rebuilt.header(name, value);
        }
        out.emit(rebuilt);
        Ok(())
    }
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters (none
/// included). Greedy with backtracking to the last `*`: linear for the usual one-star names.
fn matches(pattern: &str, name: &str) -> bool {
    let (p, n) = (pattern.as_bytes(), name.as_bytes());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ni));
            pi += 1;
        } else if pi < p.len() && p[pi] == n[ni] {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&b| b == b'*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn wildcards_match_any_run() {
        assert!(matches("app.id", "app.id"));
        assert!(!matches("app.id", "app.ids"));
        assert!(matches("trace-*", "trace-id"));
        assert!(matches("trace-*", "trace-"));
        assert!(matches("*-id", "trace-id"));
        assert!(matches("*", "anything"));
        assert!(matches("a*b*c", "aXbYbZc"));
        assert!(!matches("a*b*c", "aXbYbZ"));
        assert!(matches("é*", "été"));
    }
}
