//! A sink for the rebalance test: each batch is POSTed to `{url}/records` as lines of
//! `topic/partition@offset value`, each assignment change to `{url}/events` as
//! `assigned topic/partition ...` or `revoked ...`. Nothing is buffered, so `flush` has
//! nothing to do — unless `fail_flush` is set, when every flush fails as fatal (for the test
//! that such a sink fails with class `sink_flush` and commits nothing).

use turnpike_sdk::http::{self, Request};
use turnpike_sdk::prelude::*;

#[derive(Deserialize)]
struct Config {
    url: String,
    #[serde(default)]
    fail_flush: bool,
}

struct PartitionSink {
    url: String,
    fail_flush: bool,
}

impl PartitionSink {
    fn post(&self, path: &str, body: String) -> Result<(), RecordError> {
        let answer = http::send(&Request::post(format!("{}{path}", self.url), body)).map_err(|e| RecordError::retriable(e.message))?;
        if answer.status / 100 == 2 {
            Ok(())
        } else {
            Err(RecordError::retriable(format!("answered {}", answer.status)))
        }
    }

    fn event(&self, what: &str, partitions: &[(String, i32)]) {
        let list: Vec<String> = partitions.iter().map(|(t, p)| format!("{t}/{p}")).collect();
        if let Err(e) = self.post("/events", format!("{what} {}", list.join(" "))) {
            log::warn(&format!("could not report {what}: {e}"));
        }
    }
}

impl Sink for PartitionSink {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        Ok(Self { url: config.url, fail_flush: config.fail_flush })
    }

    fn write(&mut self, batch: Batch<'_>) -> Result<Vec<(u32, RecordError)>, RecordError> {
        let lines: Vec<String> = batch
            .records()
            .map(|r| format!("{}/{}@{} {}", r.topic(), r.partition(), r.offset(), String::from_utf8_lossy(r.value().unwrap_or_default())))
            .collect();
        self.post("/records", lines.join("\n"))?;
        Ok(Vec::new())
    }

    fn flush(&mut self) -> Result<(), RecordError> {
        if self.fail_flush {
            return Err(RecordError::fatal("the disk is full (fail_flush)"));
        }
        Ok(())
    }

    fn assigned(&mut self, partitions: &[(String, i32)]) {
        self.event("assigned", partitions);
    }

    fn revoked(&mut self, partitions: &[(String, i32)]) {
        self.event("revoked", partitions);
    }
}

export_sink!(PartitionSink);
