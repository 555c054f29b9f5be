//! `hoist-field` (Kafka Connect's `HoistField`): the key or value becomes `{field: old}`; a
//! nested path builds nested objects (`a.b` gives `{"a":{"b": old}}`).

use serde_json::Value;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part::{self, OneField, OneFieldConfig, Part};
use crate::{Smt, Step};

/// `field`, `on`, `on_non_json`.
pub struct HoistField(OneField);

impl Smt for HoistField {
    type Config = OneFieldConfig;

    fn create(config: OneFieldConfig) -> Result<Self, ConfigError> {
        OneField::new(config, "hoist-field writes the old key or value to").map(Self)
    }
}

impl Step for HoistField {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        // Unlike the other field transforms, a null is hoisted too (`{"field": null}`), as
        // Kafka Connect does.
        let old = match part::read(record, self.0.on, self.0.on_non_json)? {
            Part::Json(v) => v,
            Part::Null => Value::Null,
            Part::NotJson => {
                out.forward(record);
                return Ok(());
            }
        };
        let mut hoisted = Value::Null;
        self.0.field.set(&mut hoisted, old).map_err(RecordError::invalid)?;
        part::emit(record, out, self.0.on, &hoisted);
        Ok(())
    }
}
