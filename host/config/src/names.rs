//! Validated names. Each rejects a bad value when parsed, with a message that says what is
//! allowed, so no other code needs to re-check.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind} {value:?} is not valid: {rule}")]
pub struct NameError {
    kind: &'static str,
    value: String,
    rule: &'static str,
}

/// Whether a name may start with `.`.
///
/// Names that become file names in the state directory (`connectors/<name>.json`,
/// `plugins/<name>/<version>.wasm`) refuse it: a leading-dot file is hidden, is where the
/// state store's own temporaries live (`.tmp-*`), and was skipped at restart by earlier
/// versions, so such a name was accepted and then lost. Topic names keep Kafka's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LeadingDot {
    Allowed,
    Refused,
}

fn check(
    kind: &'static str,
    value: &str,
    max_len: usize,
    allowed: fn(char) -> bool,
    leading_dot: LeadingDot,
    rule: &'static str,
) -> Result<(), NameError> {
    let ok = !value.is_empty()
        && value.len() <= max_len
        && value.chars().all(allowed)
        && (leading_dot == LeadingDot::Allowed || !value.starts_with('.'))
        && value != "."
        && value != "..";
    if ok {
        Ok(())
    } else {
        Err(NameError { kind, value: value.to_owned(), rule })
    }
}

macro_rules! name_type {
    ($(#[$doc:meta])* $name:ident, $kind:literal, $max:expr, $allowed:expr, $leading_dot:expr, $rule:literal, $pattern:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        /// In the API document: the same rule as [`check`], as a pattern, so generated
        /// clients and fuzzers send names the API accepts.
        impl utoipa::PartialSchema for $name {
            fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
                utoipa::openapi::ObjectBuilder::new()
                    .schema_type(utoipa::openapi::schema::Type::String)
                    .pattern(Some($pattern))
                    .max_length(Some($max))
                    .min_length(Some(1))
                    .description(Some($rule))
                    .into()
            }
        }

        impl utoipa::ToSchema for $name {}

        impl $name {
            /// Parses and checks a name.
            pub fn parse(value: impl Into<String>) -> Result<Self, NameError> {
                let value = value.into();
                check($kind, &value, $max, $allowed, $leading_dot, $rule)?;
                Ok(Self(value))
            }

            /// The name as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = NameError;
            fn try_from(value: String) -> Result<Self, NameError> {
                Self::parse(value)
            }
        }

        impl From<$name> for String {
            fn from(name: $name) -> String {
                name.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

name_type!(
    /// A Kafka topic name: what the broker itself accepts (a leading `.` included).
    TopicName, "topic name", 249,
    |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'),
    LeadingDot::Allowed,
    "use 1-249 characters from a-z, A-Z, 0-9, '.', '_' and '-'",
    "^[a-zA-Z0-9._-]+$"
);

name_type!(
    /// A connector name. It appears in URLs, metrics and consumer group ids, and is the file
    /// name of its saved state, so it may not start with `.`.
    ConnectorName, "connector name", 128,
    |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'),
    LeadingDot::Refused,
    "use 1-128 characters from a-z, A-Z, 0-9, '.', '_' and '-', not starting with '.'",
    "^[a-zA-Z0-9_-][a-zA-Z0-9._-]*$"
);

name_type!(
    /// A plugin name, without a version. It is a directory name in the state directory; `.`
    /// is not allowed anywhere.
    PluginName, "plugin name", 64,
    |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_',
    LeadingDot::Refused,
    "use 1-64 characters from a-z, 0-9, '-' and '_'",
    "^[a-z0-9_-]+$"
);

name_type!(
    /// A team: who owns connectors, plugins and secrets on a shared host, and whose topic
    /// patterns bound them. It appears in tokens, events and file names.
    TeamName, "team name", 63,
    |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_',
    LeadingDot::Refused,
    "use 1-63 characters from a-z, 0-9, '-' and '_'",
    "^[a-z0-9_-]+$"
);

/// A reference to a plugin from a connector: `name`, `name@latest` or `name@VERSION`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct PluginRef {
    /// The plugin's name.
    pub name: PluginName,
    /// A specific version, or `None` for the latest.
    pub version: Option<String>,
}

impl utoipa::PartialSchema for PluginRef {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .description(Some("A plugin: `name`, `name@latest` or `name@VERSION`"))
            .examples(["pii-mask@latest"])
            .into()
    }
}

impl utoipa::ToSchema for PluginRef {}

impl TryFrom<String> for PluginRef {
    type Error = NameError;
    fn try_from(value: String) -> Result<Self, NameError> {
        let (name, version) = match value.split_once('@') {
            None => (value.as_str(), None),
            Some((name, "latest")) => (name, None),
            Some((name, version)) => {
                // A version is a file name in the state directory (`<version>.wasm`).
                check(
                    "plugin version",
                    version,
                    64,
                    |c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '_'),
                    LeadingDot::Refused,
                    "use 1-64 characters from a-z, A-Z, 0-9, '.', '-', '+' and '_', not starting with '.'",
                )?;
                (name, Some(version.to_owned()))
            }
        };
        Ok(Self { name: PluginName::parse(name)?, version })
    }
}

impl From<PluginRef> for String {
    fn from(r: PluginRef) -> String {
        r.to_string()
    }
}

impl fmt::Display for PluginRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.version {
            Some(v) => write!(f, "{}@{v}", self.name),
            None => write!(f, "{}@latest", self.name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_names_follow_kafka_rules() {
        assert!(TopicName::parse("customers.masked").is_ok());
        assert!(TopicName::parse("a_b-C9").is_ok());
        for bad in ["", ".", "..", "has space", "ümlaut", &"x".repeat(250)] {
            let err = TopicName::parse(bad).unwrap_err().to_string();
            assert!(err.contains("topic name"), "{err}");
        }
    }

    #[test]
    fn plugin_refs_parse_name_and_version() {
        let r = PluginRef::try_from("pii-mask@1.2.0".to_owned()).unwrap();
        assert_eq!((r.name.as_str(), r.version.as_deref()), ("pii-mask", Some("1.2.0")));
        let r = PluginRef::try_from("pii-mask@latest".to_owned()).unwrap();
        assert_eq!(r.version, None);
        assert_eq!(r.to_string(), "pii-mask@latest");
        assert!(PluginRef::try_from("Pii".to_owned()).is_err());
        assert!(PluginRef::try_from("pii@".to_owned()).is_err());
    }

    #[test]
    fn names_that_become_file_names_refuse_a_leading_dot() {
        assert!(ConnectorName::parse("orders.v2").is_ok(), "a dot inside is fine");
        for bad in [".hidden", "...", ".tmp-x"] {
            let err = ConnectorName::parse(bad).unwrap_err().to_string();
            assert!(err.contains("connector name") && err.contains("not starting with '.'"), "{err}");
        }
        assert!(PluginName::parse(".hidden").is_err());
        assert!(PluginRef::try_from("pii@1.0.0-rc.1".to_owned()).is_ok());
        for bad in ["pii@.hidden", "pii@...", "pii@.1.0"] {
            let err = PluginRef::try_from(bad.to_owned()).unwrap_err().to_string();
            assert!(err.contains("plugin version") && err.contains("not starting with '.'"), "{err}");
        }
        // Kafka accepts a leading dot in topic names; so do we.
        assert!(TopicName::parse(".internal").is_ok());
    }
}
