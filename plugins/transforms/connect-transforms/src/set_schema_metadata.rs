//! `set-schema-metadata` (Kafka Connect's `SetSchemaMetadata`). Turnpike records carry no
//! Connect schema, so the name and version travel as the headers `schema.name` and
//! `schema.version`, replacing any already there: a documented substitute that downstream
//! steps and consumers can read.

use serde::Deserialize;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part;
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    schema_name: Option<String>,
    schema_version: Option<i32>,
}

pub struct SetSchemaMetadata {
    headers: Vec<(&'static str, String)>,
}

impl Smt for SetSchemaMetadata {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        let mut headers = Vec::new();
        if let Some(name) = config.schema_name {
            headers.push(("schema.name", name));
        }
        if let Some(version) = config.schema_version {
            headers.push(("schema.version", version.to_string()));
        }
        if headers.is_empty() {
            return Err(ConfigError::new("set schema_name, schema_version or both"));
        }
        Ok(Self { headers })
    }
}

impl Step for SetSchemaMetadata {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let mut rebuilt = part::copy_without_headers(record);
        for (name, value) in record.headers().filter(|(name, _)| !self.headers.iter().any(|(set, _)| set == name)) {
            rebuilt = rebuilt.header(name, value);
        }
        for (name, value) in &self.headers {
            rebuilt = rebuilt.header(*name, value.as_bytes());
        }
        out.emit(rebuilt);
        Ok(())
    }
}
