//! A sink for the object-store tests: each record's value is a key. A key starting with
//! `upload:` is written through an upload (the rest of the value is the key), any other with
//! one `put`; the record's own bytes are the object. Whatever the host refuses is the
//! record's error, with the host's words, so a test can see the refusal as an error code and
//! the instance as alive (never a trap).

use turnpike_sdk::prelude::*;
use turnpike_sdk::storage::{self, Upload};

struct StoreProbe;

fn store(key: &str, body: &[u8]) -> Result<(), storage::StorageError> {
    match key.strip_prefix("upload:") {
        Some(key) => {
            let mut upload = Upload::open(key)?;
            upload.write(body)?;
            upload.complete(false)
        }
        None => storage::put(key, body, false),
    }
}

impl Sink for StoreProbe {
    type Config = NoConfig;

    fn create(_: NoConfig) -> Result<Self, ConfigError> {
        Ok(StoreProbe)
    }

    fn write(&mut self, batch: Batch<'_>) -> Result<Vec<(u32, RecordError)>, RecordError> {
        let mut rejected = Vec::new();
        for record in batch.records() {
            let key = String::from_utf8_lossy(record.value().unwrap_or_default()).into_owned();
            if let Err(e) = store(&key, key.as_bytes()) {
                rejected.push((record.index(), RecordError::invalid(format!("{key}: {e}"))));
            }
        }
        Ok(rejected)
    }
}

export_sink!(StoreProbe);
