//! The part of a record a field transform works on (its key or its value), read as JSON, and
//! the record sent on with that part replaced and everything else kept.

use std::fmt;

use serde::Deserialize;
use serde_json::Value;
use turnpike_sdk::{NewRecord, Output, Record, RecordError};

/// Which part a field transform works on: Kafka Connect's `$Value` / `$Key` variants.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum On {
    #[default]
    Value,
    Key,
}

impl fmt::Display for On {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            On::Value => "value",
            On::Key => "key",
        })
    }
}

/// What to do with a part that is not JSON.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NonJson {
    /// A record error, so nothing slips through untransformed unnoticed.
    #[default]
    Error,
    /// Forward the record unchanged.
    Pass,
}

/// The config of a transform that works on one field of the key or value (`extract-field`,
/// `hoist-field`): `field`, `on`, `on_non_json`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OneFieldConfig {
    pub field: String,
    #[serde(default)]
    pub on: On,
    #[serde(default)]
    pub on_non_json: NonJson,
}

/// That config with its path parsed (a single place: no `[*]`).
pub struct OneField {
    pub field: crate::path::Path,
    pub on: On,
    pub on_non_json: NonJson,
}

impl OneField {
    /// Parses `config.field` for a transform that `verb` it (for the refusal of `[*]`).
    pub fn new(config: OneFieldConfig, verb: &str) -> Result<Self, turnpike_sdk::ConfigError> {
        let field = crate::path::Path::single(&config.field, "field", verb)?;
        Ok(Self { field, on: config.on, on_non_json: config.on_non_json })
    }
}

/// A part as read.
pub enum Part {
    Json(Value),
    /// A null key or a tombstone value (no bytes at all).
    Null,
    /// Not JSON, and `on_non_json: pass` says to let it through.
    NotJson,
}

/// The raw bytes of the part.
pub fn bytes<'a>(record: &Record<'a>, on: On) -> Option<&'a [u8]> {
    match on {
        On::Value => record.value(),
        On::Key => record.key(),
    }
}

/// Reads the part as JSON.
pub fn read(record: &Record<'_>, on: On, non_json: NonJson) -> Result<Part, RecordError> {
    let Some(bytes) = bytes(record, on) else { return Ok(Part::Null) };
    match serde_json::from_slice::<Value>(bytes) {
        Ok(v) => Ok(Part::Json(v)),
        Err(e) => match non_json {
            NonJson::Pass => Ok(Part::NotJson),
            NonJson::Error => Err(RecordError::invalid(format!(
                "the {on} is not JSON ({e}); set on_non_json: pass to let such records through unchanged"
            ))),
        },
    }
}

/// Reads the part as JSON for a transform that leaves null alone: a null part, a JSON `null`
/// and a non-JSON part let through by `on_non_json: pass` forward the record unchanged and
/// give `None` (Kafka Connect passes null keys and values through its field transforms).
pub fn json_or_forward(record: &Record<'_>, out: &mut Output<'_>, on: On, non_json: NonJson) -> Result<Option<Value>, RecordError> {
    match read(record, on, non_json)? {
        Part::Json(v) if !v.is_null() => Ok(Some(v)),
        _ => {
            out.forward(record);
            Ok(None)
        }
    }
}

/// Sends the record on with the part replaced by `value`, keeping the other part, the headers
/// and the timestamp. A JSON `null` becomes a null part (a tombstone for a value), as Kafka
/// Connect's JsonConverter writes a null.
pub fn emit(record: &Record<'_>, out: &mut Output<'_>, on: On, value: &Value) {
    let text = (!value.is_null()).then(|| value.to_string());
    match (on, text) {
        (On::Value, Some(text)) => out.forward_with_value(record, text),
        (On::Value, None) => out.emit(copy_without_value(record)),
        (On::Key, text) => {
            let mut rebuilt = copy_without_key(record);
            if let Some(text) = text {
                rebuilt = rebuilt.key(text);
            }
            out.emit(rebuilt);
        }
    }
}

/// A copy of the record (key, value, headers, timestamp) to change and emit; the topic is left
/// unset, so it goes where an unchanged record would.
pub fn copy(record: &Record<'_>) -> NewRecord {
    let mut rebuilt = copy_without_value(record);
    if let Some(value) = record.value() {
        rebuilt = rebuilt.value(value);
    }
    rebuilt
}

/// [`copy`] with the headers left for the caller to add.
pub fn copy_without_headers(record: &Record<'_>) -> NewRecord {
    let mut rebuilt = NewRecord::new();
    if let Some(key) = record.key() {
        rebuilt = rebuilt.key(key);
    }
    if let Some(value) = record.value() {
        rebuilt = rebuilt.value(value);
    }
    if let Some(ts) = record.timestamp() {
        rebuilt = rebuilt.timestamp(ts);
    }
    rebuilt
}

fn copy_without_value(record: &Record<'_>) -> NewRecord {
    let mut rebuilt = NewRecord::new();
    if let Some(key) = record.key() {
        rebuilt = rebuilt.key(key);
    }
    with_headers_and_timestamp(record, rebuilt)
}

fn copy_without_key(record: &Record<'_>) -> NewRecord {
    let mut rebuilt = NewRecord::new();
    if let Some(value) = record.value() {
        rebuilt = rebuilt.value(value);
    }
    with_headers_and_timestamp(record, rebuilt)
}

fn with_headers_and_timestamp(record: &Record<'_>, mut rebuilt: NewRecord) -> NewRecord {
    for (name, value) in record.headers() {
        rebuilt = rebuilt.header(name, value);
    }
    if let Some(ts) = record.timestamp() {
        rebuilt = rebuilt.timestamp(ts);
    }
    rebuilt
}

/// Refuses a part that is not a JSON object, saying what it is instead.
pub fn require_object(value: &Value, on: On, purpose: &str) -> Result<(), RecordError> {
    match value {
        Value::Object(_) => Ok(()),
        other => Err(RecordError::invalid(format!("the {on} must be a JSON object {purpose}, but it is {}", describe(other)))),
    }
}

/// Refuses a part that is neither an object nor an array (nothing a path could reach into).
pub fn require_container(value: &Value, on: On, purpose: &str) -> Result<(), RecordError> {
    match value {
        Value::Object(_) | Value::Array(_) => Ok(()),
        other => Err(RecordError::invalid(format!("the {on} must be a JSON object {purpose}, but it is {}", describe(other)))),
    }
}

/// A value's JSON type and, for scalars, the value itself, for messages: `the text "x"`,
/// `the number 5`, `an object`. Long texts are cut, so a message never carries a whole field.
pub fn describe(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.chars().count() > 40 => {
            let cut: String = s.chars().take(40).collect();
            format!("the text {:?}…", cut)
        }
        Value::String(s) => format!("the text {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}

/// Sends the record, unchanged, to `topic`. A name Kafka would refuse is a record error that
/// says which topic the record came from and what was computed, not an invalid output (which
/// the host treats as a plugin fault).
pub fn route(record: &Record<'_>, out: &mut Output<'_>, topic: String) -> Result<(), RecordError> {
    if !turnpike_sdk::is_valid_topic_name(&topic) {
        return Err(RecordError::invalid(format!(
            "topic {:?} would be renamed to {topic:?}, which is not a valid Kafka topic name (1 to 249 of a-z A-Z 0-9 . _ -)",
            record.topic()
        )));
    }
    out.emit(copy(record).topic(topic));
    Ok(())
}
