//! `datagen`: a source of JSON records made from a field spec, at a fixed rate or as fast as
//! possible, the same records on every run for the same seed. Its position is the number of
//! the next record, so a restarted connector continues where the last stored position was.

mod fields;

use std::time::{SystemTime, UNIX_EPOCH};

use turnpike_sdk::prelude::*;

use crate::fields::{Field, Rng};

/// The plugin's configuration.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The fields of each record, in order.
    pub fields: Vec<Field>,
    /// The field whose value (as text) becomes the record key; none by default.
    #[serde(default)]
    pub key: Option<String>,
    /// Seed of the generator. Default 0.
    #[serde(default)]
    pub seed: u64,
    /// Records per second; omitted or 0 means as fast as Kafka takes them.
    #[serde(default)]
    pub rate_per_sec: f64,
    /// Stop after this many records; omitted means never.
    #[serde(default)]
    pub count: Option<u64>,
}

/// The datagen source.
pub struct Datagen {
    config: Config,
    key_field: Option<usize>,
    /// The number of the next record.
    next: u64,
    /// Rate pacing: when this run started and which record it started at.
    started: Option<(f64, u64)>,
}

fn now_ms() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

impl Source for Datagen {
    type Config = Config;

    fn create(config: Config, position: Option<Vec<u8>>) -> Result<Self, ConfigError> {
        if config.fields.is_empty() {
            return Err(ConfigError::at("fields", "list at least one field"));
        }
        for (i, f) in config.fields.iter().enumerate() {
            f.kind.check().map_err(|e| ConfigError::at(format!("fields[{i}]"), e))?;
        }
        if !(config.rate_per_sec >= 0.0 && config.rate_per_sec.is_finite()) {
            return Err(ConfigError::at("rate_per_sec", "must be 0 (as fast as possible) or a positive number"));
        }
        let key_field = match &config.key {
            None => None,
            Some(k) => Some(
                config.fields.iter().position(|f| f.name == *k).ok_or_else(|| ConfigError::at("key", format!("no field named {k:?}")))?,
            ),
        };
        let next = match position {
            None => 0,
            Some(p) => std::str::from_utf8(&p)
                .ok()
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| ConfigError::new(format!("stored position {:?} is not a record number", String::from_utf8_lossy(&p))))?,
        };
        Ok(Self { config, key_field, next, started: None })
    }

    fn poll(&mut self, max: usize, out: &mut Polled) -> Result<(), RecordError> {
        let mut budget = max as u64;
        if let Some(count) = self.config.count {
            budget = budget.min(count.saturating_sub(self.next));
        }
        if self.config.rate_per_sec > 0.0 {
            let now = now_ms() as f64;
            let (start, first) = *self.started.get_or_insert((now, self.next));
            let due = first + ((now - start) / 1000.0 * self.config.rate_per_sec) as u64;
            budget = budget.min(due.saturating_sub(self.next));
        }
        let now = now_ms();
        for _ in 0..budget {
            out.emit(self.record(self.next, now), (self.next + 1).to_string());
            self.next += 1;
        }
        Ok(())
    }
}

impl Datagen {
    /// Record `n` as a JSON object, keyed by the key field if one is set.
    fn record(&self, n: u64, now_ms: i64) -> NewRecord {
        let mut json = String::from("{");
        let mut key = None;
        for (i, field) in self.config.fields.iter().enumerate() {
            let value = field.kind.value(n, &mut Rng::for_value(self.config.seed, n, i), now_ms);
            if i > 0 {
                json.push(',');
            }
            json.push_str(&serde_json::Value::from(field.name.as_str()).to_string());
            json.push(':');
            json.push_str(&value.to_string());
            if self.key_field == Some(i) {
                key = Some(match value {
                    serde_json::Value::String(s) => s,
                    other => other.to_string(),
                });
            }
        }
        json.push('}');
        let record = NewRecord::new().value(json);
        match key {
            Some(k) => record.key(k),
            None => record,
        }
    }
}

export_source!(Datagen);

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_sdk::testing;

    const SPEC: &str = r#"{"seed": 7, "key": "id", "count": 5, "fields": [
        {"name": "id", "type": "sequence"},
        {"name": "name", "type": "name"},
        {"name": "email", "type": "email"},
        {"name": "age", "type": "int", "min": 18, "max": 90},
        {"name": "at", "type": "timestamp", "start_ms": 1000, "step_ms": 10}
    ]}"#;

    #[test]
    fn same_seed_same_records_and_positions_count_records() {
        let mut a: Datagen = testing::create_source(SPEC, None).unwrap();
        let first = testing::poll(&mut a, 3).unwrap();
        assert_eq!(first.len(), 3);
        assert_eq!(first[2].position.as_deref(), Some(&b"3"[..]));
        let v: serde_json::Value = serde_json::from_slice(first[1].record.value.as_ref().unwrap()).unwrap();
        assert_eq!(v["id"], 1);
        assert_eq!(v["at"], 1010);
        assert!(v["email"].as_str().unwrap().contains('@'));
        assert_eq!(first[1].record.key.as_deref(), Some(&b"1"[..]));
        // Resuming at position 1 gives records 1.. again, byte for byte.
        let mut b: Datagen = testing::create_source(SPEC, Some(b"1")).unwrap();
        let again = testing::poll(&mut b, 2).unwrap();
        assert_eq!(again[0].record, testing::Written { input: 0, ..first[1].record.clone() });
        // `count` stops the source.
        let rest = testing::poll(&mut a, 10).unwrap();
        assert_eq!(rest.len(), 2);
        assert!(testing::poll(&mut a, 10).unwrap().is_empty());
    }

    #[test]
    fn bad_specs_name_the_key() {
        let e = testing::create_source::<Datagen>(r#"{"fields": [{"name": "a", "type": "int", "min": 5, "max": 1}]}"#, None).err().unwrap();
        assert_eq!(e.key.as_deref(), Some("fields[0]"));
        let e = testing::create_source::<Datagen>(r#"{"key": "nope", "fields": [{"name": "a", "type": "bool"}]}"#, None).err().unwrap();
        assert_eq!(e.key.as_deref(), Some("key"));
        let e = testing::create_source::<Datagen>(r#"{"fields": [{"name": "a", "type": "colour"}]}"#, None).err().unwrap();
        assert!(e.message.contains("colour"), "{e}");
    }

    #[test]
    fn a_rate_paces_the_records() {
        let mut g: Datagen = testing::create_source(r#"{"rate_per_sec": 1000000, "fields": [{"name": "a", "type": "bool"}]}"#, None).unwrap();
        assert!(testing::poll(&mut g, 100).unwrap().len() <= 100);
        let mut slow: Datagen = testing::create_source(r#"{"rate_per_sec": 0.001, "fields": [{"name": "a", "type": "bool"}]}"#, None).unwrap();
        assert!(testing::poll(&mut slow, 100).unwrap().is_empty(), "one record per 1000 s: none due yet");
    }
}
