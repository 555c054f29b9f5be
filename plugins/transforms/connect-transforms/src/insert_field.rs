//! `insert-field` (Kafka Connect's `InsertField`): sets fields from the record's topic,
//! partition, offset and timestamp, and a static value.

use serde::{Deserialize, Deserializer};
use serde_json::Value;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part::{self, NonJson, On};
use crate::path::Path;
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    topic_field: Option<String>,
    partition_field: Option<String>,
    offset_field: Option<String>,
    timestamp_field: Option<String>,
    static_field: Option<String>,
    /// Any JSON, `null` included (so an explicit null is not mistaken for "absent").
    #[serde(default, deserialize_with = "present")]
    static_value: Option<Value>,
    #[serde(default)]
    on: On,
    #[serde(default)]
    on_non_json: NonJson,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Where each value comes from.
enum Source {
    Topic,
    Partition,
    Offset,
    Timestamp,
    Static(Value),
}

pub struct InsertField {
    /// In Kafka Connect's order: topic, partition, offset, timestamp, static.
    fields: Vec<(Path, Source)>,
    on: On,
    on_non_json: NonJson,
}

impl Smt for InsertField {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        let what = "insert-field writes each value to";
        let static_source = match (config.static_field, config.static_value) {
            (Some(field), Some(value)) => Some((field, Source::Static(value))),
            (None, None) => None,
            (Some(_), None) => return Err(ConfigError::at("static_value", "static_field needs a static_value to insert")),
            (None, Some(_)) => return Err(ConfigError::at("static_field", "static_value needs a static_field to insert it into")),
        };
        let named = [
            ("topic_field", config.topic_field.map(|f| (f, Source::Topic))),
            ("partition_field", config.partition_field.map(|f| (f, Source::Partition))),
            ("offset_field", config.offset_field.map(|f| (f, Source::Offset))),
            ("timestamp_field", config.timestamp_field.map(|f| (f, Source::Timestamp))),
            ("static_field", static_source),
        ];
        let fields: Vec<(Path, Source)> = named
            .into_iter()
            .filter_map(|(key, field)| field.map(|(text, source)| Path::single(&text, key, what).map(|path| (path, source))))
            .collect::<Result<_, _>>()?;
        if fields.is_empty() {
            return Err(ConfigError::new(
                "name at least one field to insert: topic_field, partition_field, offset_field, timestamp_field, or static_field with static_value",
            ));
        }
        Ok(Self { fields, on: config.on, on_non_json: config.on_non_json })
    }
}

impl Step for InsertField {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let Some(mut value) = part::json_or_forward(record, out, self.on, self.on_non_json)? else { return Ok(()) };
        part::require_object(&value, self.on, "to insert fields into")?;
        for (path, source) in &self.fields {
            let inserted = match source {
                Source::Topic => Value::String(record.topic().to_owned()),
                Source::Partition => record.partition().into(),
                Source::Offset => record.offset().into(),
                Source::Timestamp => record.timestamp().map_or(Value::Null, Value::from),
                Source::Static(v) => v.clone(),
            };
            path.set(&mut value, inserted).map_err(RecordError::invalid)?;
        }
        part::emit(record, out, self.on, &value);
        Ok(())
    }
}
