//! Where a record goes: its encoded partition (`partition=3`, `region=eu/shop=7`,
//! `year=2024/month=05/day=01/hour=13`) and the timestamp that time partitions and time
//! rotation read.

use serde_json::Value;
use turnpike_sdk::{Record, RecordError};

use crate::time::{parse_rfc3339, PathFormat, Zone};

/// A value field, nested with dots (`customer.address.country`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath {
    /// As written, for messages and for the partition's `name=value`.
    pub name: String,
    parts: Vec<String>,
}

impl FieldPath {
    pub fn parse(name: &str) -> Result<FieldPath, String> {
        let parts: Vec<String> = name.split('.').map(str::to_owned).collect();
        if parts.iter().any(String::is_empty) {
            return Err(format!("{name:?} is not a field name (use dots between nested names: \"customer.id\")"));
        }
        Ok(FieldPath { name: name.to_owned(), parts })
    }

    /// The field in `value`, if it is there (and not null).
    pub fn lookup<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.parts.iter().try_fold(value, |v, part| v.get(part)).filter(|v| !v.is_null())
    }
}

/// `partitioner.class`.
#[derive(Debug)]
pub enum Partitioner {
    /// `partition=<kafka partition>`.
    Default,
    /// `<field>=<value>/…`, from the value.
    Field(Vec<FieldPath>),
    /// `path.format` of the start of the record's `partition.duration.ms`-long period.
    Time { format: PathFormat, duration_ms: i64 },
}

/// `timestamp.extractor`.
#[derive(Debug)]
pub enum Extractor {
    /// The Kafka record's timestamp.
    Record,
    /// A value field: epoch milliseconds or RFC 3339 text.
    RecordField(FieldPath),
    /// The clock when the record is written.
    Wallclock,
}

impl Extractor {
    /// The record's time in UTC ms; `value` is its parsed JSON (for `RecordField`).
    pub fn timestamp(&self, record: &Record<'_>, value: Option<&Value>, now: i64) -> Result<i64, RecordError> {
        match self {
            Extractor::Record => record.timestamp().ok_or_else(|| RecordError::invalid("the record has no timestamp (timestamp.extractor is Record)")),
            Extractor::Wallclock => Ok(now),
            Extractor::RecordField(path) => {
                let field = value.and_then(|v| path.lookup(v)).ok_or_else(|| RecordError::invalid(format!("the value has no field `{}` (timestamp.field)", path.name)))?;
                let ms = match field {
                    Value::Number(n) => n.as_i64().or_else(|| n.as_f64().filter(|f| f.is_finite()).map(|f| f as i64)),
                    Value::String(s) => parse_rfc3339(s),
                    _ => None,
                };
                ms.ok_or_else(|| RecordError::invalid(format!("the field `{}` is {field}: not epoch milliseconds or an RFC 3339 time (timestamp.field)", path.name)))
            }
        }
    }
}

impl Partitioner {
    /// The encoded partition of `record`. `value` is its parsed JSON (for `Field`) and
    /// `timestamp` its time (for `Time`).
    pub fn encode(&self, record: &Record<'_>, value: Option<&Value>, timestamp: Option<i64>, zone: Zone) -> Result<String, RecordError> {
        match self {
            Partitioner::Default => Ok(format!("partition={}", record.partition())),
            Partitioner::Field(fields) => {
                let mut out = String::new();
                for (i, path) in fields.iter().enumerate() {
                    let field = value.and_then(|v| path.lookup(v)).ok_or_else(|| RecordError::invalid(format!("the value has no field `{}` (partition.field.name)", path.name)))?;
                    let text = match field {
                        Value::String(s) => s.clone(),
                        Value::Number(n) => n.to_string(),
                        Value::Bool(b) => b.to_string(),
                        other => {
                            return Err(RecordError::invalid(format!(
                                "the field `{}` is {}, not a string, number or boolean (partition.field.name)",
                                path.name,
                                kind(other)
                            )))
                        }
                    };
                    if i > 0 {
                        out.push('/');
                    }
                    out.push_str(&path.name);
                    out.push('=');
                    escape_into(&mut out, &text);
                }
                Ok(out)
            }
            Partitioner::Time { format, duration_ms } => {
                // `needs_timestamp` holds for a time partitioner, so this is always given.
                let ts = timestamp.ok_or_else(|| RecordError::invalid("the record has no timestamp"))?;
                let local = zone.local(ts);
                Ok(format.format(local - local.rem_euclid(*duration_ms)))
            }
        }
    }
}

/// A JSON value's kind, for messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Appends a field value to a key segment, `%`-escaping what would split the segment or be
/// refused in a key (`/`, `%`, control characters).
fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        if c == '/' || c == '%' || c.is_control() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        } else {
            out.push(c);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_fields_are_found_and_nulls_are_missing() {
        let v: Value = serde_json::json!({"a": {"b": 1, "n": null}});
        assert_eq!(FieldPath::parse("a.b").unwrap().lookup(&v), Some(&serde_json::json!(1)));
        assert_eq!(FieldPath::parse("a.n").unwrap().lookup(&v), None);
        assert_eq!(FieldPath::parse("a.c").unwrap().lookup(&v), None);
        assert!(FieldPath::parse("a..b").is_err());
    }

    #[test]
    fn values_that_would_split_a_key_segment_are_escaped() {
        let mut out = String::new();
        escape_into(&mut out, "eu/west 50%\n");
        assert_eq!(out, "eu%2Fwest 50%25%0A");
    }
}
