//! `filter` (Kafka Connect's `Filter`): drops every record it sees. On its own it empties the
//! stream; with a `predicate:` on its step (the host evaluates it) it drops only the records
//! the predicate selects.

use serde::Deserialize;
use turnpike_sdk::{ConfigError, Output, Record, RecordError};

use crate::{Smt, Step};

/// No keys; an unknown one is refused by name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {}

pub struct Filter;

impl Smt for Filter {
    type Config = Config;

    fn create(_: Config) -> Result<Self, ConfigError> {
        Ok(Filter)
    }
}

impl Step for Filter {
    fn apply(&self, _: &Record<'_>, _: &mut Output<'_>) -> Result<(), RecordError> {
        Ok(())
    }
}
