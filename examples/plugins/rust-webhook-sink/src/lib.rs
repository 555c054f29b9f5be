//! An example sink: POSTs each record to a webhook as
//! `{"topic", "partition", "offset", "key", "value"}`. A `5xx` asks the host to retry the
//! batch; any other non-`2xx` rejects the record (dead-letter topic, per the connector).

use serde_json::json;
use turnpike_sdk::http::{self, Request};
use turnpike_sdk::prelude::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    url: String,
}

pub struct Webhook {
    url: String,
}

impl Sink for Webhook {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        http::check_url(&config.url).map_err(|e| ConfigError::at("url", e.message))?;
        Ok(Webhook { url: config.url })
    }

    fn write(&mut self, batch: Batch<'_>) -> Result<Vec<(u32, RecordError)>, RecordError> {
        let mut rejected = Vec::new();
        for r in batch.records() {
            let text = |b: Option<&[u8]>| b.map(|b| String::from_utf8_lossy(b).into_owned());
            let body = json!({ "topic": r.topic(), "partition": r.partition(), "offset": r.offset(), "key": text(r.key()), "value": text(r.value()) });
            let request = Request::post(self.url.clone(), body.to_string()).header("content-type", "application/json");
            let answer = http::send(&request).map_err(|e| if e.refused { RecordError::fatal(e.message) } else { RecordError::retriable(e.message) })?;
            match answer.status {
                200..=299 => {}
                500..=599 | 429 => return Err(RecordError::retriable(format!("{} answered {}", self.url, answer.status))),
                status => rejected.push((r.index(), RecordError::invalid(format!("{} answered {status}", self.url)))),
            }
        }
        Ok(rejected)
    }
}

export_sink!(Webhook);
