//! `hoist-field` (Kafka Connect's `HoistField`): the key or value becomes `{field: old}`; a
//! nested path builds nested objects (`a.b` gives `{"a":{"b": old}}`).

use serde::Deserialize;
use serde_json::Value;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part::{self, NonJson, On, Part};
use crate::path::Path;
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    field: String,
    #[serde(default)]
    on: On,
    #[serde(default)]
    on_non_json: NonJson,
}

pub struct HoistField {
    field: Path,
    on: On,
    on_non_json: NonJson,
}

impl Smt for HoistField {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        let field = Path::single(&config.field, "field", "hoist-field writes the old key or value to")?;
        Ok(Self { field, on: config.on, on_non_json: config.on_non_json })
    }
}

impl Step for HoistField {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        // Unlike the other field transforms, a null is hoisted too (`{"field": null}`), as
        // Kafka Connect does.
        let old = match part::read(record, self.on, self.on_non_json)? {
            Part::Json(v) => v,
            Part::Null => Value::Null,
            Part::NotJson => {
                out.forward(record);
                return Ok(());
            }
        };
        let mut hoisted = Value::Null;
        self.field.set(&mut hoisted, old).map_err(RecordError::invalid)?;
        part::emit(record, out, self.on, &hoisted);
        Ok(())
    }
}
