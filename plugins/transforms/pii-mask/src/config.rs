//! `pii-mask` configuration: what to mask, and how.

use serde::Deserialize;
use turnpike_sdk::ConfigError;

use crate::detect::Detector;
use crate::path::Path;

/// How a value is masked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Replace with the replacement text (default `***`).
    #[default]
    Redact,
    /// Replace with the SHA-256 hex digest of salt + value, so equal values still join.
    Hash,
    /// Keep the last `keep_last` characters, replace the others with `*`.
    Partial,
}

/// What to do with a value that is not JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum NonJson {
    /// Report a record error (default: nothing unmasked gets through by accident).
    #[default]
    Error,
    /// Pass the record through unchanged.
    Pass,
}

/// A field rule as written: a bare path, or a path with its own mode. Deserialized by hand
/// (not `untagged`) so that a mistake inside a rule is reported at its key in the user's
/// words (`fields[0].mode`), not as "did not match any variant of untagged enum".
#[derive(Debug, Clone)]
pub enum FieldSpec {
    /// `user.email`: masked with `default_mode`.
    Path(String),
    /// `{ path: user.email, mode: hash }`
    Rule(FieldRule),
}

impl<'de> Deserialize<'de> for FieldSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Spec;
        impl<'de> serde::de::Visitor<'de> for Spec {
            type Value = FieldSpec;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a path (`user.email`) or a rule ({ path, mode, keep_last })")
            }
            fn visit_str<E: serde::de::Error>(self, path: &str) -> Result<FieldSpec, E> {
                Ok(FieldSpec::Path(path.to_owned()))
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(self, map: M) -> Result<FieldSpec, M::Error> {
                FieldRule::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(FieldSpec::Rule)
            }
        }
        deserializer.deserialize_any(Spec)
    }
}

/// A field rule with options.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FieldRule {
    /// Dotted path; `[*]` or `[N]` select array elements (`items[*].card`).
    pub path: String,
    /// Overrides `default_mode` for this field.
    pub mode: Option<Mode>,
    /// Overrides `keep_last` for this field (mode `partial`).
    pub keep_last: Option<usize>,
}

/// The configuration as written by the user.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Fields to mask.
    #[serde(default)]
    pub fields: Vec<FieldSpec>,
    /// Mode for fields that do not name one. Default `redact`.
    #[serde(default)]
    pub default_mode: Mode,
    /// Characters kept by `partial`. Default 4.
    #[serde(default = "default_keep_last")]
    pub keep_last: usize,
    /// Text that replaces redacted values. Default `***`.
    #[serde(default = "default_replacement")]
    pub replacement: String,
    /// Salt prepended before hashing. Default empty.
    #[serde(default)]
    pub salt: String,
    /// Detectors run over every string value: `email`, `phone`, `credit_card`, `ssn`.
    #[serde(default)]
    pub detectors: Vec<Detector>,
    /// How detected substrings are masked. Default `redact`.
    #[serde(default)]
    pub detector_mode: Mode,
    /// What to do with a value that is not JSON: `error` (default) or `pass`.
    #[serde(default)]
    pub on_non_json: NonJson,
}

fn default_keep_last() -> usize {
    4
}

fn default_replacement() -> String {
    "***".to_owned()
}

/// A parsed field rule.
#[derive(Debug, Clone)]
pub struct Field {
    pub path: Path,
    pub mode: Mode,
    pub keep_last: usize,
}

impl Config {
    /// Parses the paths and checks the rules serde cannot express.
    pub fn fields(&self) -> Result<Vec<Field>, ConfigError> {
        if self.fields.is_empty() && self.detectors.is_empty() {
            return Err(ConfigError::at("fields", "name at least one field to mask, or enable a detector"));
        }
        self.fields
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let (text, mode, keep_last) = match spec {
                    FieldSpec::Path(p) => (p.as_str(), self.default_mode, self.keep_last),
                    FieldSpec::Rule(r) => (r.path.as_str(), r.mode.unwrap_or(self.default_mode), r.keep_last.unwrap_or(self.keep_last)),
                };
                let path = Path::parse(text).map_err(|e| ConfigError::at(format!("fields[{i}]"), e))?;
                Ok(Field { path, mode, keep_last })
            })
            .collect()
    }
}
