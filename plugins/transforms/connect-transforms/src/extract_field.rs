//! `extract-field` (Kafka Connect's `ExtractField`, with `field.syntax.version=V2` paths): the
//! key or value becomes the value of one of its fields.

use serde_json::Value;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part::{self, OneField, OneFieldConfig};
use crate::{Smt, Step};

/// `field`, `on`, `on_non_json`.
pub struct ExtractField(OneField);

impl Smt for ExtractField {
    type Config = OneFieldConfig;

    fn create(config: OneFieldConfig) -> Result<Self, ConfigError> {
        OneField::new(config, "extract-field takes the value of").map(Self)
    }
}

impl Step for ExtractField {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let Some(value) = part::json_or_forward(record, out, self.0.on, self.0.on_non_json)? else { return Ok(()) };
        part::require_container(&value, self.0.on, &format!("to extract {} from", self.0.field))?;
        // A missing field gives null, written as a null key or value, as in Kafka Connect.
        let extracted = self.0.field.get(&value).unwrap_or(&Value::Null);
        part::emit(record, out, self.0.on, extracted);
        Ok(())
    }
}
