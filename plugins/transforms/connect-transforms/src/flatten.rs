//! `flatten` (Kafka Connect's `Flatten`): nested objects become top-level members whose names
//! join the path with a delimiter. Arrays are kept as they are; an empty object is kept as
//! `{}` under its flattened name, so no member silently disappears.

use serde::Deserialize;
use serde_json::{Map, Value};
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part::{self, NonJson, On};
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default = "default_delimiter")]
    delimiter: String,
    #[serde(default)]
    on: On,
    #[serde(default)]
    on_non_json: NonJson,
}

fn default_delimiter() -> String {
    ".".to_owned()
}

pub struct Flatten {
    delimiter: String,
    on: On,
    on_non_json: NonJson,
}

impl Smt for Flatten {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        Ok(Self { delimiter: config.delimiter, on: config.on, on_non_json: config.on_non_json })
    }
}

impl Step for Flatten {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let Some(value) = part::json_or_forward(record, out, self.on, self.on_non_json)? else { return Ok(()) };
        let Value::Object(members) = value else {
            return part::require_object(&value, self.on, "to flatten");
        };
        let mut flat = Map::new();
        self.flatten_into(&mut flat, None, members);
        part::emit(record, out, self.on, &Value::Object(flat));
        Ok(())
    }
}

impl Flatten {
    /// The recursion is bounded: serde_json refuses documents nested deeper than 128 levels.
    /// Two names that flatten alike (`{"a.b":1,"a":{"b":2}}`) keep the later value.
    fn flatten_into(&self, flat: &mut Map<String, Value>, prefix: Option<&str>, members: Map<String, Value>) {
        for (name, value) in members {
            let name = match prefix {
                Some(prefix) => format!("{prefix}{}{name}", self.delimiter),
                None => name,
            };
            match value {
                Value::Object(inner) if !inner.is_empty() => self.flatten_into(flat, Some(&name), inner),
                other => {
                    flat.insert(name, other);
                }
            }
        }
    }
}
