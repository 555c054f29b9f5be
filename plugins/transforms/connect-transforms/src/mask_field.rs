//! `mask-field` (Kafka Connect's `MaskField`): replaces field values with their type's empty
//! value, or with a replacement text or number.

use serde::Deserialize;
use serde_json::{Map, Number, Value};
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part::{self, describe, NonJson, On};
use crate::path::Path;
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    fields: Vec<String>,
    replacement: Option<String>,
    #[serde(default)]
    on: On,
    #[serde(default)]
    on_non_json: NonJson,
}

pub struct MaskField {
    fields: Vec<Path>,
    replacement: Option<Replacement>,
    on: On,
    on_non_json: NonJson,
}

struct Replacement {
    text: String,
    /// The text read as a number, for numeric fields; parsed once here.
    number: Option<Number>,
}

impl Smt for MaskField {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        if config.fields.is_empty() {
            return Err(ConfigError::at("fields", "name at least one field to mask"));
        }
        let fields = config.fields.iter().enumerate().map(|(i, f)| Path::any(f, &format!("fields[{i}]"))).collect::<Result<_, _>>()?;
        let replacement = config.replacement.map(|text| {
            let trimmed = text.trim();
            let number = trimmed.parse::<i64>().map(Number::from).ok().or_else(|| trimmed.parse::<f64>().ok().and_then(Number::from_f64));
            Replacement { text, number }
        });
        Ok(Self { fields, replacement, on: config.on, on_non_json: config.on_non_json })
    }
}

impl Step for MaskField {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let Some(mut value) = part::json_or_forward(record, out, self.on, self.on_non_json)? else { return Ok(()) };
        part::require_container(&value, self.on, "to mask fields of")?;
        for path in &self.fields {
            path.for_each_mut(&mut value, &mut |v| self.mask(v, path))?;
        }
        part::emit(record, out, self.on, &value);
        Ok(())
    }
}

impl MaskField {
    fn mask(&self, v: &mut Value, path: &Path) -> Result<(), RecordError> {
        let masked = match (&self.replacement, &*v) {
            (_, Value::Null) => return Ok(()),
            (None, Value::String(_)) => Value::String(String::new()),
            (None, Value::Number(n)) if n.is_f64() => Value::from(0.0),
            (None, Value::Number(_)) => Value::from(0),
            (None, Value::Bool(_)) => Value::Bool(false),
            (None, Value::Object(_)) => Value::Object(Map::new()),
            (None, Value::Array(_)) => Value::Array(Vec::new()),
            (Some(r), Value::String(_)) => Value::String(r.text.clone()),
            (Some(r), Value::Number(_)) => match &r.number {
                Some(n) => Value::Number(n.clone()),
                None => {
                    return Err(RecordError::invalid(format!(
                        "{path} is {}, and the replacement {:?} is not a number, so it cannot stand in for one",
                        describe(v),
                        r.text
                    )))
                }
            },
            (Some(_), other) => {
                return Err(RecordError::invalid(format!(
                    "{path} is {}; a replacement can stand in only for texts and numbers (Kafka Connect refuses this too), \
                     so leave replacement out to mask it",
                    describe(other)
                )))
            }
        };
        *v = masked;
        Ok(())
    }
}
