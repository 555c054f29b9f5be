//! `timestamp-router` (Kafka Connect's `TimestampRouter`): routes each record to a topic named
//! from its topic and its timestamp (UTC), such as `orders-20240305`.

use chrono::DateTime;
use serde::Deserialize;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::javatime::Pattern;
use crate::part;
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default = "default_topic_format")]
    topic_format: String,
    #[serde(default = "default_timestamp_format")]
    timestamp_format: String,
}

fn default_topic_format() -> String {
    "${topic}-${timestamp}".to_owned()
}

fn default_timestamp_format() -> String {
    "yyyyMMdd".to_owned()
}

#[derive(Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Topic,
    Timestamp,
}

pub struct TimestampRouter {
    topic_format: Vec<Piece>,
    timestamp_format: Pattern,
}

impl Smt for TimestampRouter {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        let topic_format = pieces(&config.topic_format).map_err(|e| ConfigError::at("topic_format", e))?;
        let timestamp_format = Pattern::parse(&config.timestamp_format).map_err(|e| ConfigError::at("timestamp_format", e))?;
        Ok(Self { topic_format, timestamp_format })
    }
}

impl Step for TimestampRouter {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let millis = record.timestamp().ok_or_else(|| RecordError::invalid("the record has no timestamp to name its topic by"))?;
        let at = DateTime::from_timestamp_millis(millis)
            .ok_or_else(|| RecordError::invalid(format!("the record's timestamp {millis} is out of the range of dates")))?;
        let mut topic = String::new();
        for piece in &self.topic_format {
            match piece {
                Piece::Text(t) => topic.push_str(t),
                Piece::Topic => topic.push_str(record.topic()),
                Piece::Timestamp => topic.push_str(&self.timestamp_format.format(&at)),
            }
        }
        part::route(record, out, topic)
    }
}

/// Splits the topic format at `${topic}` and `${timestamp}`. Any other `${…}` is refused:
/// Kafka Connect would leave it in the name, where the broker then rejects the `$`.
fn pieces(format: &str) -> Result<Vec<Piece>, String> {
    let mut out = Vec::new();
    let mut rest = format;
    while let Some(start) = rest.find("${") {
        if start > 0 {
            out.push(Piece::Text(rest[..start].to_owned()));
        }
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or("a ${ is not closed with }")?;
        out.push(match &after[..end] {
            "topic" => Piece::Topic,
            "timestamp" => Piece::Timestamp,
            other => return Err(format!("unknown placeholder ${{{other}}}; the placeholders are ${{topic}} and ${{timestamp}}")),
        });
        rest = &after[end + 1..];
    }
    if !rest.is_empty() {
        out.push(Piece::Text(rest.to_owned()));
    }
    if out.is_empty() {
        return Err("the topic format is empty".into());
    }
    Ok(out)
}
