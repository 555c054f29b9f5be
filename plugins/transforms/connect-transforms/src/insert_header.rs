//! `insert-header` (Kafka Connect's `InsertHeader`): adds a header with a fixed text.

use serde::Deserialize;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::part;
use crate::{Smt, Step};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    header: String,
    value: String,
}

pub struct InsertHeader {
    header: String,
    value: String,
}

impl Smt for InsertHeader {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        if config.header.is_empty() {
            return Err(ConfigError::at("header", "the header name cannot be empty"));
        }
        Ok(Self { header: config.header, value: config.value })
    }
}

impl Step for InsertHeader {
    fn apply(&self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        // Added after the existing headers, even one of the same name, as Kafka's
        // `Headers.add` does.
        out.emit(part::copy(record).header(&self.header, self.value.as_bytes()));
        Ok(())
    }
}
