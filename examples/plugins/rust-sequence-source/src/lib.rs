//! An example source: records `{"n": N, "source": NAME}` keyed by `N`, for N = 0, 1, 2, … Its
//! position is the last N produced, so a restarted connector carries on right after it.

use turnpike_sdk::prelude::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Put in every record.
    name: String,
    /// Stop after this many records (none: endless).
    limit: Option<u64>,
    /// At most this many records per poll.
    #[serde(default = "default_per_poll")]
    per_poll: u32,
}

fn default_per_poll() -> u32 {
    100
}

pub struct Sequence {
    name: String,
    limit: Option<u64>,
    per_poll: u32,
    next: u64,
}

impl Source for Sequence {
    type Config = Config;

    fn create(config: Config, position: Option<Vec<u8>>) -> Result<Self, ConfigError> {
        if config.name.is_empty() {
            return Err(ConfigError::at("name", "must not be empty"));
        }
        if config.per_poll == 0 {
            return Err(ConfigError::at("per_poll", "must be at least 1"));
        }
        let next = match position {
            None => 0,
            Some(p) => String::from_utf8_lossy(&p).parse::<u64>().map_err(|_| ConfigError::new("the stored position is not a record number"))? + 1,
        };
        Ok(Sequence { name: config.name, limit: config.limit, per_poll: config.per_poll, next })
    }

    fn poll(&mut self, max: usize, out: &mut Polled) -> Result<(), RecordError> {
        let end = self.limit.unwrap_or(u64::MAX);
        for _ in 0..max.min(self.per_poll as usize) {
            if self.next >= end {
                break;
            }
            let n = self.next;
            let value = serde_json::json!({ "n": n, "source": self.name }).to_string();
            out.emit(NewRecord::new().key(n.to_string()).value(value), n.to_string());
            self.next += 1;
        }
        Ok(())
    }
}

export_source!(Sequence);
