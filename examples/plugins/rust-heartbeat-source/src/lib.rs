//! An example source: one `{"beat": N, "service": …}` record per poll. Its position is the
//! next beat number, so a restarted connector carries on counting where it stopped.

use turnpike_sdk::prelude::*;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    service: String,
}

pub struct Heartbeat {
    service: String,
    next: u64,
}

impl Source for Heartbeat {
    type Config = Config;

    fn create(config: Config, position: Option<Vec<u8>>) -> Result<Self, ConfigError> {
        let next = match position {
            None => 0,
            Some(p) => String::from_utf8_lossy(&p).parse().map_err(|_| ConfigError::new("stored position is not a beat number"))?,
        };
        Ok(Heartbeat { service: config.service, next })
    }

    fn poll(&mut self, max: usize, out: &mut Polled) -> Result<(), RecordError> {
        if max > 0 {
            let value = format!(r#"{{"beat":{},"service":"{}"}}"#, self.next, self.service);
            self.next += 1;
            out.emit(NewRecord::new().key(self.service.clone()).value(value), self.next.to_string());
        }
        Ok(())
    }
}

export_source!(Heartbeat);

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_sdk::testing;

    #[test]
    fn counts_on_from_the_stored_position() {
        let mut s: Heartbeat = testing::create_source(r#"{"service": "billing"}"#, Some(b"41")).unwrap();
        let polled = testing::poll(&mut s, 10).unwrap();
        assert_eq!(polled[0].record.value.as_deref(), Some(&br#"{"beat":41,"service":"billing"}"#[..]));
        assert_eq!(polled[0].position.as_deref(), Some(&b"42"[..]));
    }
}
