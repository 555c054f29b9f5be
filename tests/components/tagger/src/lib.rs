//! Forwards every record with an extra `tagged: v2` header, so a test can tell which plugin
//! version produced each output. With `route_to`, it sends every record to that topic (to
//! test that the host confines routing to what the connector may write).

use turnpike_sdk::prelude::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TaggerConfig {
    #[serde(default)]
    route_to: Option<String>,
}

struct Tagger {
    route_to: Option<String>,
}

impl Transform for Tagger {
    type Config = TaggerConfig;

    fn create(config: TaggerConfig) -> Result<Self, ConfigError> {
        Ok(Tagger { route_to: config.route_to })
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
        if let Some(topic) = &self.route_to {
            tagged = tagged.topic(topic.clone());
        }
        out.emit(tagged.header("tagged", "v2"));
        Ok(())
    }
}

export_transform!(Tagger);
