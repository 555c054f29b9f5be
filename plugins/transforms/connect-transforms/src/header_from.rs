//! `header-from` (Kafka Connect's `HeaderFrom$Value` and `HeaderFrom$Key`): copies or moves
//! fields of the value (or key) into headers, `fields[i]` into header `headers[i]`.

use serde::Deserialize;
use serde_json::Value;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part::{self, NonJson, On};
use crate::path::Path;
use crate::{Smt, Step};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Operation {
    /// The field stays in the value.
    Copy,
    /// The field is removed from the value.
    Move,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    fields: Vec<String>,
    headers: Vec<String>,
    operation: Operation,
    #[serde(default)]
    on: On,
    #[serde(default)]
    on_non_json: NonJson,
}

pub struct HeaderFrom {
    pairs: Vec<(Path, String)>,
    operation: Operation,
    on: On,
    on_non_json: NonJson,
}

impl Smt for HeaderFrom {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        if config.fields.is_empty() {
            return Err(ConfigError::at("fields", "name at least one field to put in a header"));
        }
        if config.fields.len() != config.headers.len() {
            return Err(ConfigError::at(
                "headers",
                format!(
                    "headers names {} header(s) but fields names {} field(s); they pair up one to one, in order",
                    config.headers.len(),
                    config.fields.len()
                ),
            ));
        }
        if let Some(i) = config.headers.iter().position(String::is_empty) {
            return Err(ConfigError::at(format!("headers[{i}]"), "a header name cannot be empty"));
        }
        let pairs = config
            .fields
            .iter()
            .zip(config.headers)
            .enumerate()
            .map(|(i, (field, header))| Ok((Path::single(field, &format!("fields[{i}]"), "each header takes the value of")?, header)))
            .collect::<Result<_, ConfigError>>()?;
        Ok(Self { pairs, operation: config.operation, on: config.on, on_non_json: config.on_non_json })
    }
}

impl Step for HeaderFrom {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let Some(mut value) = part::json_or_forward(record, out, self.on, self.on_non_json)? else { return Ok(()) };
        part::require_object(&value, self.on, "to read header values from")?;
        let mut rebuilt = part::copy_without_headers(record);
        for (name, bytes) in record.headers() {
            rebuilt = rebuilt.header(name, bytes);
        }
        for (path, header) in &self.pairs {
            // A text goes in as its characters; anything else as its JSON text. A missing
            // field adds no header.
            match path.get(&value) {
                Some(Value::String(text)) => rebuilt = rebuilt.header(header, text.as_bytes()),
                Some(other) => rebuilt = rebuilt.header(header, other.to_string()),
                None => {}
            }
        }
        let mut moved = false;
        if self.operation == Operation::Move {
            for (path, _) in &self.pairs {
                moved |= path.remove_all(&mut value);
            }
        }
        // Copy keeps the part's bytes exactly as they came.
        if moved {
            rebuilt = match self.on {
                On::Value => rebuilt.value(value.to_string()),
                On::Key => rebuilt.key(value.to_string()),
            };
        }
        out.emit(rebuilt);
        Ok(())
    }
}
