//! `timestamp-converter` (Kafka Connect's `TimestampConverter`): converts a timestamp (the
//! whole key/value, or one field) between Unix numbers, texts and Connect's date, time and
//! timestamp types, which JSON carries as epoch milliseconds. All in UTC.

use chrono::{DateTime, NaiveTime, Timelike, Utc};
use serde::Deserialize;
use serde_json::Value;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::javatime::Pattern;
use crate::part::{self, describe, NonJson, On};
use crate::path::Path;
use crate::{Smt, Step};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Target {
    /// Formatted with `format`.
    String,
    /// A number in `unix_precision`.
    Unix,
    /// Epoch milliseconds of the day's midnight.
    Date,
    /// Milliseconds since midnight.
    Time,
    /// Epoch milliseconds.
    Timestamp,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Precision {
    Seconds,
    #[default]
    Milliseconds,
    Microseconds,
    Nanoseconds,
}

impl Precision {
    /// Nanoseconds per unit.
    fn nanos(self) -> i128 {
        match self {
            Precision::Seconds => 1_000_000_000,
            Precision::Milliseconds => 1_000_000,
            Precision::Microseconds => 1_000,
            Precision::Nanoseconds => 1,
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Absent (or empty, as Kafka Connect writes it): the whole key or value.
    field: Option<String>,
    target_type: Target,
    format: Option<String>,
    #[serde(default)]
    unix_precision: Precision,
    #[serde(default)]
    on: On,
    #[serde(default)]
    on_non_json: NonJson,
}

pub struct TimestampConverter {
    field: Option<Path>,
    target: Target,
    format: Pattern,
    precision: Precision,
    on: On,
    on_non_json: NonJson,
}

impl Smt for TimestampConverter {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        let field = match config.field.as_deref() {
            None | Some("") => None,
            Some(text) => Some(Path::single(text, "field", "timestamp-converter converts")?),
        };
        let format = match config.format.as_deref() {
            None => Pattern::iso(),
            Some(text) => Pattern::parse(text).map_err(|e| ConfigError::at("format", e))?,
        };
        Ok(Self { field, target: config.target_type, format, precision: config.unix_precision, on: config.on, on_non_json: config.on_non_json })
    }
}

impl Step for TimestampConverter {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let Some(mut value) = part::json_or_forward(record, out, self.on, self.on_non_json)? else { return Ok(()) };
        match &self.field {
            None => value = self.convert(&value, &format!("the {}", self.on))?,
            Some(path) => {
                part::require_container(&value, self.on, &format!("to convert {path} in"))?;
                // A missing or null field is left as it is.
                match path.get_mut(&mut value) {
                    Some(v) if !v.is_null() => *v = self.convert(v, &path.to_string())?,
                    _ => {
                        out.forward(record);
                        return Ok(());
                    }
                }
            }
        }
        part::emit(record, out, self.on, &value);
        Ok(())
    }
}

impl TimestampConverter {
    /// Converts one value; `what` names it in errors.
    fn convert(&self, value: &Value, what: &str) -> Result<Value, RecordError> {
        let refuse = |why: String| RecordError::invalid(format!("{what} is {}, {why}", describe(value)));
        let instant = match value {
            Value::Number(n) => {
                let units = n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18).map(|f| f as i64));
                let units = units.ok_or_else(|| refuse("which is not a whole number of units".into()))?;
                let nanos = i128::from(units) * self.precision.nanos();
                let (secs, sub) = (nanos.div_euclid(1_000_000_000), nanos.rem_euclid(1_000_000_000));
                i64::try_from(secs)
                    .ok()
                    .and_then(|s| DateTime::from_timestamp(s, u32::try_from(sub).ok()?))
                    .ok_or_else(|| refuse("which is out of the range of dates".into()))?
            }
            Value::String(s) => self
                .format
                .parse_time(s)
                .map_err(|e| refuse(format!("which does not match the format {:?}: {e}", self.format.text())))?,
            _ => return Err(refuse("which is not a timestamp (a number or a text)".into())),
        };
        let millis = |t: DateTime<Utc>| Value::from(t.timestamp_millis());
        Ok(match self.target {
            Target::String => Value::String(self.format.format(&instant)),
            Target::Timestamp => millis(instant),
            Target::Date => millis(instant.date_naive().and_time(NaiveTime::MIN).and_utc()),
            Target::Time => {
                Value::from(i64::from(instant.num_seconds_from_midnight()) * 1000 + i64::from(instant.nanosecond() % 1_000_000_000) / 1_000_000)
            }
            Target::Unix => {
                let nanos = i128::from(instant.timestamp()) * 1_000_000_000 + i128::from(instant.timestamp_subsec_nanos());
                let units = i64::try_from(nanos.div_euclid(self.precision.nanos()))
                    .map_err(|_| refuse("whose time does not fit a 64-bit number in that precision".into()))?;
                Value::from(units)
            }
        })
    }
}
