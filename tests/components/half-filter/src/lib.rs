//! Drops every record at an odd offset and forwards the rest unchanged: a filter that keeps
//! half of a batch, for the transform benchmark (`host/bench/benches/transforms.rs`).

use turnpike_sdk::prelude::*;

/// The filter.
pub struct HalfFilter;

impl Transform for HalfFilter {
    type Config = NoConfig;

    fn create(_: NoConfig) -> Result<Self, ConfigError> {
        Ok(HalfFilter)
    }

    fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        if record.offset() % 2 == 0 {
            out.forward(record);
        }
        Ok(())
    }
}

export_transform!(HalfFilter);
