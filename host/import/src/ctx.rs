//! The bookkeeping of one import: the input's options, and for each whether it was mapped
//! (and to what) or left out (and why), plus the notes for the user. Every option ends in one
//! of the two lists: [`Ctx::finish`] gives each one nobody claimed a reason.

use std::collections::BTreeSet;

use crate::{Mapped, Unmapped};

/// What the Kafka Connect connector is, which decides where records go and what some options
/// mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Reads topics and writes elsewhere (`*SinkConnector`): routed topics need no `routes`.
    Sink,
    /// Writes topics: every topic a plugin routes to must be in `routes`.
    Source,
    /// No or an unknown connector class: treated as a source for routing rules.
    Unknown,
}

pub(crate) struct Ctx {
    /// The options in input order, each key once (the last value of a repeated key).
    entries: Vec<(String, String)>,
    handled: BTreeSet<String>,
    /// Options whose value must not be read (see [`Ctx::withhold_provider_references`]).
    withheld: BTreeSet<String>,
    pub(crate) mapped: Vec<Mapped>,
    pub(crate) unmapped: Vec<Unmapped>,
    pub(crate) notes: Vec<String>,
    /// The start of every secret name this import writes (the connector's name, as a secret
    /// name allows).
    secret_base: String,
}

impl Ctx {
    pub(crate) fn new(entries: Vec<(String, String)>, connector_name: &str) -> Self {
        Self { entries, handled: BTreeSet::new(), withheld: BTreeSet::new(), mapped: Vec::new(), unmapped: Vec::new(), notes: Vec::new(), secret_base: secret_base(connector_name) }
    }

    /// The raw value of `key`, if given (and not withheld).
    pub(crate) fn raw(&self, key: &str) -> Option<String> {
        if self.withheld.contains(key) {
            return None;
        }
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }

    /// Leaves out every option whose value is a Kafka Connect config provider reference
    /// (`${vault:path:key}`, `${file:/p:key}`), except `credentials` (which become Turnpike
    /// references): Turnpike cannot resolve it, and copying it would make it a literal. Its
    /// value is hidden from everything that reads options afterwards.
    pub(crate) fn withhold_provider_references(&mut self, credentials: &[&str]) {
        let found: Vec<(String, String)> =
            self.entries.iter().filter(|(k, _)| !credentials.contains(&k.as_str())).filter_map(|(k, v)| provider_reference(v).map(|p| (k.clone(), p.to_owned()))).collect();
        for (key, provider) in found {
            self.skip(
                &key,
                format!(
                    "its value is a Kafka Connect config provider reference (${{{provider}:…}}), which Turnpike cannot resolve: write the value itself, \
or, where the field is a plugin option, a Turnpike reference (${{secret:NAME}}, ${{env:NAME}})"
                ),
            );
            self.withheld.insert(key);
        }
    }

    /// The trimmed value of `key`, if given and not empty.
    pub(crate) fn value(&self, key: &str) -> Option<String> {
        self.raw(key).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// Whether `key` has been mapped or left out already.
    pub(crate) fn is_handled(&self, key: &str) -> bool {
        self.handled.contains(key)
    }

    /// The keys not handled yet that start with `prefix`, in input order.
    pub(crate) fn open_keys(&self, prefix: &str) -> Vec<String> {
        self.entries.iter().map(|(k, _)| k).filter(|k| k.starts_with(prefix) && !self.handled.contains(*k)).cloned().collect()
    }

    /// `key` was carried over to `to` (a path in the Turnpike connector, or what made it
    /// unnecessary). A key that is not in the input is ignored.
    pub(crate) fn map(&mut self, key: &str, to: impl Into<String>) {
        if self.has(key) && self.handled.insert(key.to_owned()) {
            self.mapped.push(Mapped { option: key.to_owned(), to: to.into() });
        }
    }

    /// `key` was not carried over, for `reason`. A key that is not in the input is ignored.
    pub(crate) fn skip(&mut self, key: &str, reason: impl Into<String>) {
        if self.has(key) && self.handled.insert(key.to_owned()) {
            self.unmapped.push(Unmapped { option: key.to_owned(), reason: reason.into() });
        }
    }

    /// Something the input did not name as an option of its own (a parameter inside the JDBC
    /// URL), left out for `reason`.
    pub(crate) fn skip_part(&mut self, option: String, reason: impl Into<String>) {
        self.unmapped.push(Unmapped { option, reason: reason.into() });
    }

    pub(crate) fn note(&mut self, note: impl Into<String>) {
        let note = note.into();
        if !self.notes.contains(&note) {
            self.notes.push(note);
        }
    }

    /// Every option nobody claimed, left out with `reason(key)`; then the lists in input order.
    pub(crate) fn finish(&mut self, reason: impl Fn(&str) -> String) {
        for key in self.open_keys("") {
            let value = self.raw(&key).unwrap_or_default();
            let why = if value.trim().is_empty() { "is empty, so it sets nothing".to_owned() } else { reason(&key) };
            self.skip(&key, why);
        }
        let position = |option: &str| {
            let key = option.split_once('?').map_or(option, |(k, _)| k);
            self.entries.iter().position(|(k, _)| k == key).unwrap_or(usize::MAX)
        };
        self.mapped.sort_by_key(|m| position(&m.option));
        self.unmapped.sort_by_key(|u| position(&u.option));
    }

    /// A reference to write instead of the credential `value` of option `key`: `${env:NAME}`
    /// if Kafka Connect read it from the environment too (its `EnvVarConfigProvider`), else
    /// `${secret:<connector>-<suffix>}` with a note saying to store it. `what` names it for
    /// the user ("the database password"). The value itself is never written anywhere.
    pub(crate) fn credential(&mut self, key: &str, value: &str, suffix: &str, what: &str) -> String {
        if let Some(var) = whole_env_reference(value) {
            self.note(format!("{what} ({key}) is read from the environment variable {var} of the Turnpike host, as Kafka Connect read it from its worker's: set it there"));
            return format!("${{env:{var}}}");
        }
        let name = self.secret_name(suffix);
        let origin = match provider_reference(value) {
            Some(provider) => format!("Kafka Connect read it through its `{provider}` config provider"),
            None => format!("it was written in {key}"),
        };
        self.note(format!("store {what} as a Turnpike secret before applying ({origin}; it is not copied here): turnpike secret put {name} --value-stdin"));
        format!("${{secret:{name}}}")
    }

    fn secret_name(&self, suffix: &str) -> String {
        let room = 63 - suffix.len() - 1;
        let base: String = self.secret_base.chars().take(room).collect();
        format!("{}-{suffix}", base.trim_end_matches(['-', '.', '_']))
    }
}

/// `name` as the start of a secret name: lower-case letters, digits, `.`, `_`, `-`, starting
/// with a letter or digit.
fn secret_base(name: &str) -> String {
    let lowered: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c.to_ascii_lowercase() } else { '-' }).collect();
    let trimmed = lowered.trim_start_matches(['-', '.', '_']);
    if trimmed.is_empty() {
        "connector".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// `NAME` when `value` is exactly `${env:NAME}` with a name Turnpike's `${env:…}` accepts.
fn whole_env_reference(value: &str) -> Option<&str> {
    let name = value.trim().strip_prefix("${env:")?.strip_suffix('}')?;
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then_some(name)
}

/// The provider of the first Kafka config provider reference (`${file:/p:key}`,
/// `${vault:path:key}`, `${env:NAME}`) in `value`.
pub(crate) fn provider_reference(value: &str) -> Option<&str> {
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        let after = &rest[at + 2..];
        let provider_len = after.find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))).unwrap_or(after.len());
        if provider_len > 0 && after[provider_len..].starts_with(':') && after[provider_len..].contains('}') {
            return Some(&after[..provider_len]);
        }
        rest = after;
    }
    None
}

/// `text` as a literal in a plugin config: the host reads `${…}` there as a reference to
/// resolve (`${secret:…}`), so a Kafka Connect `${topic}` is written `$${topic}`.
pub(crate) fn literal(text: &str) -> String {
    text.replace("${", "$${")
}

/// The items of a Kafka Connect list (comma-separated, trimmed, empty items dropped).
pub(crate) fn list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()
}

/// Whether `name` is a topic name Turnpike (and Kafka) accept.
pub(crate) fn is_topic(name: &str) -> bool {
    !name.is_empty() && name.len() <= 249 && name != "." && name != ".." && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

/// A whole number written as Kafka Connect writes them (text, maybe with spaces).
pub(crate) fn int(text: &str) -> Option<i64> {
    text.trim().parse().ok()
}

/// `true` / `false`, any case, as Kafka Connect's booleans.
pub(crate) fn boolean(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// What Java regular expressions have that Turnpike's (Rust `regex`) do not, if `pattern`
/// uses it.
pub(crate) fn java_only_regex(pattern: &str) -> Option<&'static str> {
    if ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|l| pattern.contains(l)) {
        return Some("lookaround");
    }
    let bytes = pattern.as_bytes();
    let backreference = bytes.windows(2).enumerate().any(|(i, w)| w[0] == b'\\' && w[1].is_ascii_digit() && w[1] != b'0' && (i == 0 || bytes[i - 1] != b'\\'));
    if backreference {
        return Some("backreferences");
    }
    if pattern.contains("*+") || pattern.contains("++") || pattern.contains("?+") || pattern.contains("(?>") {
        return Some("possessive or atomic groups");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_fit_the_store_rule() {
        let ctx = Ctx::new(Vec::new(), "Orders S3 Sink (prod)");
        assert_eq!(ctx.secret_name("db-password"), "orders-s3-sink--prod-db-password");
        let long = Ctx::new(Vec::new(), &"x".repeat(100));
        assert_eq!(long.secret_name("aws-secret-access-key").len(), 63);
        assert_eq!(secret_base("..."), "connector");
    }

    #[test]
    fn provider_references() {
        assert_eq!(provider_reference("${file:/etc/kafka/s.properties:pw}"), Some("file"));
        assert_eq!(provider_reference("x ${vault:secret/db:password} y"), Some("vault"));
        assert_eq!(provider_reference("${topic}-${timestamp}"), None);
        assert_eq!(whole_env_reference("${env:DB_PW}"), Some("DB_PW"));
        assert_eq!(whole_env_reference("${env:1X}"), None);
    }

    #[test]
    fn java_only_regex_features() {
        assert_eq!(java_only_regex("(?!tmp).*"), Some("lookaround"));
        assert_eq!(java_only_regex("(a)\\1"), Some("backreferences"));
        assert_eq!(java_only_regex("orders\\.(.*)"), None);
        assert_eq!(java_only_regex("a\\\\1"), None, "an escaped backslash before a digit");
    }
}
