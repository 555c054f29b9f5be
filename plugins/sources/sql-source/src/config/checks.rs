//! Checks shared by the options: problems collected under their keys, numbers and booleans
//! given as JSON or as text (as a pasted Kafka Connect config writes them), lists given as
//! arrays or comma-separated text, and where Kafka Connect's other options belong.

use serde_json::Value;
use turnpike_sdk::ConfigError;

/// The options this plugin knows, for the unknown-key message.
const KNOWN: &str = "mode, query, incrementing.column.name, timestamp.column.name, table.whitelist, table.blacklist, \
poll.interval.ms, table.poll.interval.ms, batch.max.rows, timestamp.delay.interval.ms, timestamp.initial, topic.prefix, \
validate.non.null, numeric.mapping, timestamp.mapping, key.columns";

/// Collects problems, each under its key.
#[derive(Default)]
pub(crate) struct Problems(Vec<ConfigError>);

impl Problems {
    pub(crate) fn add(&mut self, key: &str, message: impl Into<String>) {
        self.0.push(ConfigError::at(key, message));
    }

    /// The first problem under its key, the others appended to its message.
    pub(crate) fn finish(mut self) -> Result<(), ConfigError> {
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

    /// An integer option within `range`, or `default` when absent (or wrong, after saying so).
    pub(crate) fn ranged(&mut self, key: &str, value: Option<&Value>, range: std::ops::RangeInclusive<i64>, default: i64) -> i64 {
        match self.int(key, value) {
            None => default,
            Some(n) if range.contains(&n) => n,
            Some(n) => {
                self.add(key, format!("{n} is out of range: {} to {}", range.start(), range.end()));
                default
            }
        }
    }

    /// An integer option: a JSON integer or its text.
    pub(crate) fn int(&mut self, key: &str, value: Option<&Value>) -> Option<i64> {
        let v = value?;
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

    /// A boolean option: a JSON boolean or `"true"` / `"false"`; `default` when absent.
    pub(crate) fn flag(&mut self, key: &str, value: Option<&Value>, default: bool) -> bool {
        match value {
            None => default,
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("true") => true,
            Some(Value::String(s)) if s.trim().eq_ignore_ascii_case("false") => false,
            Some(v) => {
                self.add(key, format!("{v} is not true or false"));
                default
            }
        }
    }

    /// A text option, trimmed; an empty text is a problem.
    pub(crate) fn text(&mut self, key: &str, value: Option<&Value>) -> Option<String> {
        match value? {
            Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Value::String(_) => {
                self.add(key, "is empty; remove it or give a value");
                None
            }
            v => {
                self.add(key, format!("{v} is not text"));
                None
            }
        }
    }

    /// One of `names` (case-insensitive), or `default` when absent.
    pub(crate) fn choice<'a>(&mut self, key: &str, value: Option<&Value>, names: &[&'a str], default: &'a str) -> &'a str {
        let Some(v) = value else { return default };
        match v.as_str().and_then(|s| names.iter().copied().find(|n| s.trim().eq_ignore_ascii_case(n))) {
            Some(name) => name,
            None => {
                self.add(key, format!("{v} is not one of {}", names.join(", ")));
                default
            }
        }
    }

    /// A list option: a JSON array of texts or comma-separated text; entries trimmed. An
    /// empty list is a problem (`what` says what to list).
    pub(crate) fn list(&mut self, key: &str, value: Option<&Value>, what: &str) -> Option<Vec<String>> {
        let v = value?;
        let items: Option<Vec<String>> = match v {
            Value::String(s) => Some(s.split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned).collect()),
            Value::Array(items) => items.iter().map(|i| i.as_str().map(|s| s.trim().to_owned())).collect(),
            _ => None,
        };
        match items {
            None => {
                self.add(key, format!("{v} is not a list of {what}: write an array or comma-separated text"));
                None
            }
            Some(items) if items.is_empty() || items.iter().any(String::is_empty) => {
                self.add(key, format!("has an empty entry or none at all; list {what}"));
                None
            }
            Some(items) => Some(items),
        }
    }

    /// An option given where it has no effect.
    pub(crate) fn unused(&mut self, key: &str, value: Option<&Value>, only: &str) {
        if value.is_some() {
            self.add(key, format!("only used with {only}; remove it"));
        }
    }
}

/// Why `key` is refused: where it belongs if it is one of Kafka Connect's.
pub(crate) fn unknown_key(key: &str) -> String {
    let reason = match key {
        "table.include.list" | "table.exclude.list" => "use table.whitelist / table.blacklist (names or globs with `*`)",
        "db.timezone" => "timestamps without a zone are taken as UTC (set the columns' zone in the database, or use timestamptz / TIMESTAMP columns)",
        "quote.sql.identifiers" => "identifiers are always quoted",
        "query.retry.attempts" | "connection.attempts" | "connection.backoff.ms" => {
            "the host retries an unreachable database with backoff within the connector's errors.retry_timeout_ms"
        }
        "timestamp.granularity" => "timestamps are written as ISO-8601 text with every digit the database gives, or as epoch_ms (timestamp.mapping)",
        "numeric.precision.mapping" => "use numeric.mapping",
        "schema.pattern" | "catalog.pattern" | "table.types" => "the connector's `database.tables` grant says which tables the plugin sees",
        "query.suffix" | "query.masked" | "timestamp.columns.mapping" | "incrementing.column.mapping" | "transaction.isolation.mode" | "poll.linger.ms" | "max.buffer.size" => {
            "a JDBC source option this plugin does not support"
        }
        _ => "",
    };
    if !reason.is_empty() {
        return format!("not supported: {reason}");
    }
    if key.starts_with("connection.") || key == "dialect.name" {
        return "the database, its user and password are the connector's `database` grant (url, user, password, tables), not plugin options".into();
    }
    let connect = ["connector.class", "tasks.max", "name", "key.converter", "value.converter", "header.converter", "transforms", "predicates"];
    if connect.contains(&key) || ["errors.", "key.converter.", "value.converter.", "transforms.", "topic.creation."].iter().any(|p| key.starts_with(*p)) {
        return "a Kafka Connect setting: in Turnpike the connector itself holds the topics, transforms and error policy".into();
    }
    format!("unknown option; the options are {KNOWN}")
}
