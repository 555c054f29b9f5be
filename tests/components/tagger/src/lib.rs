//! Forwards every record with an extra `tagged: v2` header, so a test can tell which plugin
//! version produced each output.

use turnpike_sdk::prelude::*;

struct Tagger;

impl Transform for Tagger {
    type Config = NoConfig;

    fn create(_: NoConfig) -> Result<Self, ConfigError> {
        Ok(Tagger)
    }

    fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        let mut tagged = NewRecord::new();
        if let Some(k) = record.key() {
            tagged = tagged.key(k);
        }
        if let Some(v) = record.value() {
            tagged = tagged.value(v);
        }
        if let Some(ts) = record.timestamp() {
            tagged = tagged.timestamp(ts);
        }
        for (k, v) in record.headers() {
            tagged = tagged.header(k, v);
        }
        out.emit(tagged.header("tagged", "v2"));
        Ok(())
    }
}

export_transform!(Tagger);
