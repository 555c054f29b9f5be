//! An example sink: buffers records in `write` and, in `flush`, POSTs them to a webhook as one
//! JSON array of `{"topic", "partition", "offset", "key", "value"}`. The host commits offsets
//! only after `flush` succeeds, so a failing endpoint (any non-`2xx`, or no answer) is a
//! retriable error: the buffer is kept, the host retries, nothing is committed or lost.

use serde_json::{json, Value};
use turnpike_sdk::http::{self, Request};
use turnpike_sdk::prelude::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    url: String,
}

pub struct Webhook {
    url: String,
    buffer: Vec<Value>,
}

impl Sink for Webhook {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        http::check_url(&config.url).map_err(|e| ConfigError::at("url", e.message))?;
        Ok(Webhook { url: config.url, buffer: Vec::new() })
    }

    fn write(&mut self, batch: Batch<'_>) -> Result<Vec<(u32, RecordError)>, RecordError> {
        let text = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
        for r in batch.records() {
            self.buffer.push(json!({ "topic": r.topic(), "partition": r.partition(), "offset": r.offset(), "key": text(r.key()), "value": text(r.value()) }));
        }
        Ok(Vec::new())
    }

    fn flush(&mut self) -> Result<(), RecordError> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let body = Value::Array(std::mem::take(&mut self.buffer));
        let request = Request::post(self.url.clone(), body.to_string()).header("content-type", "application/json");
        let sent = match http::send(&request) {
            Ok(answer) if (200..300).contains(&answer.status) => Ok(()),
            Ok(answer) => Err(RecordError::retriable(format!("{} answered {}", self.url, answer.status))),
            Err(e) if e.refused => Err(RecordError::fatal(e.message)),
            Err(e) => Err(RecordError::retriable(e.message)),
        };
        if sent.is_err() {
            // Kept for the retry: cleared only once the endpoint has them.
            let Value::Array(records) = body else { unreachable!("built as an array") };
            self.buffer = records;
        }
        sent
    }
}

export_sink!(Webhook);
