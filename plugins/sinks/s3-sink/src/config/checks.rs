//! Checks shared by the options: problems collected under their keys, numbers given as
//! JSON or as text, key paths, and where Confluent's other options belong.

use serde_json::Value;
use turnpike_sdk::ConfigError;

/// The options this plugin knows, for the unknown-key message.
const KNOWN: &str = "topics.dir, flush.size, rotate.interval.ms, rotate.schedule.interval.ms, timezone, partitioner.class, \
partition.field.name, path.format, partition.duration.ms, timestamp.extractor, timestamp.field, filename.offset.zero.pad.width, \
format.class, format.bytearray.separator, s3.compression.type, parquet.codec, parquet.schema, behavior.on.null.values, \
store.kafka.keys, store.kafka.headers";

/// Collects problems, each under its key.
#[derive(Default)]
pub(super) struct Problems(Vec<ConfigError>);

impl Problems {
    pub(super) fn add(&mut self, key: &str, message: impl Into<String>) {
        self.0.push(ConfigError::at(key, message));
    }

    /// The first problem under its key, the others appended to its message.
    pub(super) fn finish(mut self) -> Result<(), ConfigError> {
        if self.0.is_empty() {
            return Ok(());
        }
        let first = self.0.remove(0);
        if self.0.is_empty() {
            return Err(first);
        }
        let rest: Vec<String> = self.0.iter().map(ToString::to_string).collect();
        Err(ConfigError { key: first.key, message: format!("{} (also: {})", first.message, rest.join("; ")) })
    }

    /// An integer option: a JSON integer or its text.
    pub(super) fn int(&mut self, key: &str, value: Option<&Value>) -> Option<i64> {
        let v = value.filter(|v| !v.is_null())?;
        let n = match v {
            Value::Number(n) => n.as_i64(),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        };
        if n.is_none() {
            self.add(key, format!("{v} is not a whole number"));
        }
        n
    }

    /// An integer option within `range`, or `default`.
    pub(super) fn ranged(&mut self, key: &str, value: Option<&Value>, range: std::ops::RangeInclusive<i64>, default: i64) -> i64 {
        match self.int(key, value) {
            None => default,
            Some(n) if range.contains(&n) => n,
            Some(n) => {
                self.add(key, format!("{n} is out of range: {} to {}", range.start(), range.end()));
                default
            }
        }
    }

    /// An interval in ms, off when absent or -1 (Confluent's "none").
    pub(super) fn interval(&mut self, key: &str, value: Option<&Value>) -> Option<i64> {
        match self.int(key, value)? {
            -1 => None,
            n if n > 0 => Some(n),
            n => {
                self.add(key, format!("{n} must be above 0 (or -1 for none)"));
                None
            }
        }
    }

    /// A boolean option: a JSON boolean or `"true"` / `"false"`.
    pub(super) fn flag(&mut self, key: &str, value: Option<&Value>) -> bool {
        match value {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => true,
            Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => false,
            Some(v) => {
                self.add(key, format!("{v} is not true or false"));
                false
            }
        }
    }

    /// An option given where it has no effect.
    pub(super) fn unused<T>(&mut self, key: &str, value: &Option<T>, only: &str) {
        if value.is_some() {
            self.add(key, format!("only used with {only}; remove it"));
        }
    }
}

/// The one of `names` that `given` is (case-insensitive), or whose Confluent class name
/// (`classes`, in the same order) it is.
pub(super) fn choice<'a>(given: &str, names: &[&'a str], classes: &[&str]) -> Option<&'a str> {
    names.iter().enumerate().find(|(i, n)| given.eq_ignore_ascii_case(n) || classes.get(*i) == Some(&given)).map(|(_, n)| *n)
}

/// Checks a path of `/`-separated segments as the host checks keys. `what` is an example
/// folder name for the message about an empty path (none: the path is generated).
pub(super) fn check_path(what: &str, path: &str) -> Result<(), String> {
    if path.is_empty() {
        return Err(if what.is_empty() { "gives an empty path".into() } else { format!("is empty; write a folder name such as {what:?}") });
    }
    if path.chars().any(char::is_control) {
        return Err(format!("{path:?} holds a control character"));
    }
    if let Some(bad) = path.split('/').find(|s| s.is_empty() || *s == "." || *s == "..") {
        return Err(format!("{path:?} has a {bad:?} segment; S3 keys here need plain folder names"));
    }
    Ok(())
}

/// Why `key` is refused: where it belongs if it is one of Confluent's or Kafka Connect's.
pub(super) fn unknown_key(key: &str) -> String {
    if key.starts_with("s3.") || key.starts_with("aws.") || key == "store.url" {
        return "the bucket, region, endpoint and credentials are the connector's `storage` grant (bucket, prefix, region, endpoint, path_style, credentials), not plugin options".into();
    }
    let connect = ["connector.class", "tasks.max", "topics", "topics.regex", "name", "key.converter", "value.converter", "storage.class"];
    if connect.contains(&key) || key.starts_with("errors.") || key.starts_with("key.converter.") || key.starts_with("value.converter.") {
        return "a Kafka Connect setting: in Turnpike the connector itself names its topics and error policy, and the plugin is the storage".into();
    }
    format!("unknown option; the options are {KNOWN}")
}
