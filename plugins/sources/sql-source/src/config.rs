//! The configuration, in the option names of Confluent's JDBC source connector, and its
//! validation into [`Settings`]. Numbers and booleans are taken as JSON or as text (`"5000"`),
//! lists as arrays or comma-separated text; every problem is reported at once, under the key
//! to fix. Nothing here reads the database (the host may call `create` only to validate).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use turnpike_sdk::ConfigError;

mod checks;

use checks::{unknown_key, Problems};

/// The configuration as written. Defaults are in the README and in [`Config::validate`].
#[derive(Debug, Deserialize)]
pub struct Config {
    mode: Option<Value>,
    query: Option<Value>,
    #[serde(rename = "incrementing.column.name")]
    incrementing_column: Option<Value>,
    #[serde(rename = "timestamp.column.name")]
    timestamp_column: Option<Value>,
    #[serde(rename = "table.whitelist")]
    whitelist: Option<Value>,
    #[serde(rename = "table.blacklist")]
    blacklist: Option<Value>,
    #[serde(rename = "poll.interval.ms")]
    poll_interval_ms: Option<Value>,
    #[serde(rename = "table.poll.interval.ms")]
    table_poll_interval_ms: Option<Value>,
    #[serde(rename = "batch.max.rows")]
    batch_max_rows: Option<Value>,
    #[serde(rename = "timestamp.delay.interval.ms")]
    delay_ms: Option<Value>,
    #[serde(rename = "timestamp.initial")]
    initial: Option<Value>,
    #[serde(rename = "topic.prefix")]
    topic_prefix: Option<Value>,
    #[serde(rename = "validate.non.null")]
    validate_non_null: Option<Value>,
    #[serde(rename = "numeric.mapping")]
    numeric_mapping: Option<Value>,
    #[serde(rename = "timestamp.mapping")]
    timestamp_mapping: Option<Value>,
    #[serde(rename = "key.columns")]
    key_columns: Option<Value>,
    /// Every other key: each is reported, with where it belongs if it is Kafka Connect's.
    #[serde(flatten)]
    unknown: BTreeMap<String, Value>,
}

/// How new rows are found (Kafka Connect's `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The whole table every cycle.
    Bulk,
    /// Rows whose strictly increasing column is above the last one read.
    Incrementing,
    /// Rows whose timestamp is after the last one read.
    Timestamp,
    /// Rows after the last (timestamp, incrementing) pair read.
    TimestampIncrementing,
}

impl Mode {
    /// The names, in the order the messages list them.
    pub const NAMES: [&'static str; 4] = ["bulk", "incrementing", "timestamp", "timestamp+incrementing"];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Bulk => "bulk",
            Mode::Incrementing => "incrementing",
            Mode::Timestamp => "timestamp",
            Mode::TimestampIncrementing => "timestamp+incrementing",
        }
    }

    pub fn parse(name: &str) -> Option<Mode> {
        [Mode::Bulk, Mode::Incrementing, Mode::Timestamp, Mode::TimestampIncrementing].into_iter().find(|m| m.name().eq_ignore_ascii_case(name.trim()))
    }

    pub fn uses_incrementing(self) -> bool {
        matches!(self, Mode::Incrementing | Mode::TimestampIncrementing)
    }

    pub fn uses_timestamp(self) -> bool {
        matches!(self, Mode::Timestamp | Mode::TimestampIncrementing)
    }
}

/// Which granted tables are read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableFilter {
    /// Every table the grant gives.
    All,
    /// Only tables matching one of these names or globs.
    Include(Vec<String>),
    /// Every table but those matching one of these.
    Exclude(Vec<String>),
}

/// Where timestamp modes start without a stored position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Initial {
    /// The database's clock at the first query.
    Now,
    /// Milliseconds since the epoch.
    At(i64),
}

/// How `NUMERIC` / `DECIMAL` values are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumericMapping {
    /// As JSON strings holding the exact digits.
    None,
    /// As JSON numbers written with the exact digits.
    BestFit,
}

/// How timestamps are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampMapping {
    /// ISO-8601 text in UTC, `…Z`.
    Iso8601,
    /// Milliseconds since the epoch.
    EpochMs,
}

/// A checked configuration.
#[derive(Debug, Clone)]
pub struct Settings {
    pub mode: Mode,
    /// The custom query (trimmed, without a trailing `;`), instead of tables.
    pub query: Option<String>,
    /// As written; resolved against each table's columns later.
    pub incrementing_column: Option<String>,
    /// Coalesced in this order; empty outside timestamp modes.
    pub timestamp_columns: Vec<String>,
    pub tables: TableFilter,
    pub poll_interval_ms: u64,
    /// 0: the tables are listed once, at the first poll.
    pub table_poll_interval_ms: u64,
    pub batch_max_rows: u32,
    pub delay_ms: u64,
    pub initial: Option<Initial>,
    pub topic_prefix: Option<String>,
    pub validate_non_null: bool,
    pub numeric: NumericMapping,
    pub timestamps: TimestampMapping,
    /// The record key's columns, for a query.
    pub key_columns: Vec<String>,
}

/// The latest `timestamp.initial` accepted: 9999-12-31T23:59:59.999Z.
const MAX_EPOCH_MS: i64 = 253_402_300_799_999;
/// Kafka's longest topic name.
const MAX_TOPIC: usize = 249;

impl Config {
    /// Checks everything; no I/O.
    pub(crate) fn validate(self) -> Result<Settings, ConfigError> {
        let mut p = Problems::default();
        for key in self.unknown.keys() {
            p.add(key, unknown_key(key));
        }
        let mode = match &self.mode {
            None => {
                p.add("mode", format!("required: one of {}", Mode::NAMES.join(", ")));
                Mode::Bulk
            }
            Some(v) => v.as_str().and_then(Mode::parse).unwrap_or_else(|| {
                p.add("mode", format!("{v} is not one of {}", Mode::NAMES.join(", ")));
                Mode::Bulk
            }),
        };
        let query = p.text("query", self.query.as_ref()).map(|q| q.trim_end_matches([';', ' ', '\n', '\r', '\t']).to_owned());
        let tables = self.table_filter(&mut p, query.is_some());
        let (incrementing_column, timestamp_columns) = self.columns(&mut p, mode, query.is_some());
        let poll_interval_ms = p.ranged("poll.interval.ms", self.poll_interval_ms.as_ref(), 0..=86_400_000, 5_000) as u64;
        let table_poll_interval_ms = p.ranged("table.poll.interval.ms", self.table_poll_interval_ms.as_ref(), 0..=86_400_000, 60_000) as u64;
        let batch_max_rows = p.ranged("batch.max.rows", self.batch_max_rows.as_ref(), 1..=1_000_000, 1_000) as u32;
        let delay_ms = p.ranged("timestamp.delay.interval.ms", self.delay_ms.as_ref(), 0..=2_592_000_000, 0) as u64;
        let initial = match p.int("timestamp.initial", self.initial.as_ref()) {
            None => None,
            Some(-1) => Some(Initial::Now),
            Some(ms) if (0..=MAX_EPOCH_MS).contains(&ms) => Some(Initial::At(ms)),
            Some(ms) => {
                p.add("timestamp.initial", format!("{ms} is neither -1 (the database's current time) nor a time in epoch milliseconds"));
                None
            }
        };
        if !mode.uses_timestamp() {
            p.unused("timestamp.delay.interval.ms", self.delay_ms.as_ref(), "mode timestamp or timestamp+incrementing");
            p.unused("timestamp.initial", self.initial.as_ref(), "mode timestamp or timestamp+incrementing");
        }
        if query.is_some() {
            p.unused("table.poll.interval.ms", self.table_poll_interval_ms.as_ref(), "tables (not with query)");
        }
        let topic_prefix = p.text("topic.prefix", self.topic_prefix.as_ref());
        if let Some(prefix) = &topic_prefix {
            if let Some(bad) = prefix.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))) {
                p.add("topic.prefix", format!("{prefix:?} holds {bad:?}; Kafka topic names are letters, digits, `.`, `_` and `-`"));
            } else if prefix.len() > MAX_TOPIC {
                p.add("topic.prefix", format!("is {} characters long; a topic name has at most {MAX_TOPIC}", prefix.len()));
            }
        }
        let validate_non_null = p.flag("validate.non.null", self.validate_non_null.as_ref(), true);
        let numeric = match p.choice("numeric.mapping", self.numeric_mapping.as_ref(), &["none", "best_fit"], "none") {
            "best_fit" => NumericMapping::BestFit,
            _ => NumericMapping::None,
        };
        let timestamps = match p.choice("timestamp.mapping", self.timestamp_mapping.as_ref(), &["iso8601", "epoch_ms"], "iso8601") {
            "epoch_ms" => TimestampMapping::EpochMs,
            _ => TimestampMapping::Iso8601,
        };
        let key_columns = if query.is_some() {
            p.list("key.columns", self.key_columns.as_ref(), "column names").unwrap_or_default()
        } else {
            p.unused("key.columns", self.key_columns.as_ref(), "query (a table's key is its primary key)");
            Vec::new()
        };
        p.finish()?;
        Ok(Settings {
            mode,
            query,
            incrementing_column,
            timestamp_columns,
            tables,
            poll_interval_ms,
            table_poll_interval_ms,
            batch_max_rows,
            delay_ms,
            initial,
            topic_prefix,
            validate_non_null,
            numeric,
            timestamps,
            key_columns,
        })
    }

    fn table_filter(&self, p: &mut Problems, with_query: bool) -> TableFilter {
        if with_query {
            for key in ["table.whitelist", "table.blacklist"] {
                let value = if key == "table.whitelist" { &self.whitelist } else { &self.blacklist };
                if value.is_some() {
                    p.add(key, "not used with query (the query says what to read); remove it");
                }
            }
            return TableFilter::All;
        }
        if self.whitelist.is_some() && self.blacklist.is_some() {
            p.add("table.blacklist", "give table.whitelist or table.blacklist, not both");
            return TableFilter::All;
        }
        let list = |p: &mut Problems, key: &str, v: &Option<Value>| {
            let names = p.list(key, v.as_ref(), "table names or globs (`orders`, `public.customer_*`)")?;
            if let Some(bad) = names.iter().find(|n| n.chars().any(char::is_control)) {
                p.add(key, format!("{bad:?} holds a control character"));
            }
            Some(names)
        };
        if let Some(names) = list(&mut *p, "table.whitelist", &self.whitelist) {
            return TableFilter::Include(names);
        }
        if let Some(names) = list(&mut *p, "table.blacklist", &self.blacklist) {
            return TableFilter::Exclude(names);
        }
        TableFilter::All
    }

    /// The incrementing column and the timestamp columns, checked against the mode.
    fn columns(&self, p: &mut Problems, mode: Mode, with_query: bool) -> (Option<String>, Vec<String>) {
        let incrementing = p.text("incrementing.column.name", self.incrementing_column.as_ref());
        if let Some(name) = &incrementing {
            if name.contains(',') {
                p.add("incrementing.column.name", format!("{name:?} names more than one column; the incrementing column is one column"));
            }
        }
        if mode.uses_incrementing() {
            if incrementing.is_none() && self.incrementing_column.is_none() && with_query {
                p.add("incrementing.column.name", format!("required with mode {} and a query (a query has no primary key to default to)", mode.name()));
            }
        } else {
            p.unused("incrementing.column.name", self.incrementing_column.as_ref(), "mode incrementing or timestamp+incrementing");
        }
        let timestamps = p.list("timestamp.column.name", self.timestamp_column.as_ref(), "column names").unwrap_or_default();
        if mode.uses_timestamp() {
            if self.timestamp_column.is_none() {
                p.add(
                    "timestamp.column.name",
                    format!("required with mode {}: name the column set on every insert and update (several, comma-separated, are COALESCEd in order)", mode.name()),
                );
            }
        } else {
            p.unused("timestamp.column.name", self.timestamp_column.as_ref(), "mode timestamp or timestamp+incrementing");
        }
        let timestamps = if mode.uses_timestamp() { timestamps } else { Vec::new() };
        (incrementing.filter(|_| mode.uses_incrementing()), timestamps)
    }
}
