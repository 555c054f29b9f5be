//! `value-to-key` (Kafka Connect's `ValueToKey`): the key becomes a JSON object made of some
//! fields of the value, nested paths keeping their nesting (`a.b` gives `{"a":{"b":…}}`).

use serde::Deserialize;
use serde_json::{Map, Value};
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part::{self, NonJson, On};
use crate::path::Path;
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    fields: Vec<String>,
    #[serde(default)]
    on_non_json: NonJson,
}

pub struct ValueToKey {
    fields: Vec<Path>,
    on_non_json: NonJson,
}

impl Smt for ValueToKey {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        if config.fields.is_empty() {
            return Err(ConfigError::at("fields", "name at least one field of the value to put in the key"));
        }
        let fields = config
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| Path::single(f, &format!("fields[{i}]"), "each key field takes the value of"))
            .collect::<Result<_, _>>()?;
        Ok(Self { fields, on_non_json: config.on_non_json })
    }
}

impl Step for ValueToKey {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let Some(value) = part::json_or_forward(record, out, On::Value, self.on_non_json)? else { return Ok(()) };
        part::require_object(&value, On::Value, "to take key fields from")?;
        let mut key = Value::Object(Map::new());
        for path in &self.fields {
            // A missing field is null in the key, as in Kafka Connect.
            let field = path.get(&value).cloned().unwrap_or(Value::Null);
            path.set(&mut key, field).map_err(RecordError::invalid)?;
        }
        let mut rebuilt = part::copy(record);
        rebuilt = rebuilt.key(key.to_string());
        out.emit(rebuilt);
        Ok(())
    }
}
