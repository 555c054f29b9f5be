//! `extract-field` (Kafka Connect's `ExtractField`, with `field.syntax.version=V2` paths): the
//! key or value becomes the value of one of its fields.

use serde::Deserialize;
use serde_json::Value;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part::{self, NonJson, On};
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

pub struct ExtractField {
    field: Path,
    on: On,
    on_non_json: NonJson,
}

impl Smt for ExtractField {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        let field = Path::single(&config.field, "field", "extract-field takes the value of")?;
        Ok(Self { field, on: config.on, on_non_json: config.on_non_json })
    }
}

impl Step for ExtractField {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let Some(value) = part::json_or_forward(record, out, self.on, self.on_non_json)? else { return Ok(()) };
        part::require_container(&value, self.on, &format!("to extract {} from", self.field))?;
        // A missing field gives null, written as a null key or value, as in Kafka Connect.
        let extracted = self.field.get(&value).unwrap_or(&Value::Null);
        part::emit(record, out, self.on, extracted);
        Ok(())
    }
}
