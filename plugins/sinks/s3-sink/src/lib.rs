//! `s3-sink`: writes topics to S3 objects (JSON lines, raw bytes or Parquet) in the layout
//! and with the options of Confluent's S3 sink.
//!
//! Each (topic, Kafka partition, encoded partition) has at most one open object, streamed to
//! the host as an upload. An object closes when it holds `flush.size` records, when a record's
//! time passes `rotate.interval.ms` after its first, or when the wall clock passes its
//! `rotate.schedule.interval.ms` boundary. At every `flush` the sink holds each partition at
//! the first offset of its open objects, so the host commits only records in closed objects;
//! and since a key names the object's first offset, a range read again writes the same key.

use std::collections::BTreeMap;

use turnpike_sdk::prelude::*;
use turnpike_sdk::storage;

mod config;
mod format;
mod key;
mod object;
mod partitioner;
mod time;
#[cfg(test)]
mod tests;

pub use config::Config;
use config::Settings;
use format::Extras;
use key::Keys;
use object::{OpenObject, Start};

/// An object's identity: topic, Kafka partition, encoded partition.
type ObjectId = (String, i32, String);

/// The s3-sink.
pub struct S3Sink {
    settings: Settings,
    /// Built at the first write, from the grant's prefix (`create` may run without a grant).
    keys: Option<Keys>,
    objects: BTreeMap<ObjectId, OpenObject>,
    /// The last offset seen per topic and partition, to notice the host reading again.
    last_offsets: BTreeMap<String, BTreeMap<i32, i64>>,
    /// Milliseconds since the epoch; the wall clock unless a test sets another.
    clock: Box<dyn Fn() -> i64>,
}

fn wall_clock() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl Sink for S3Sink {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        let settings = config.validate()?;
        Ok(S3Sink { settings, keys: None, objects: BTreeMap::new(), last_offsets: BTreeMap::new(), clock: Box::new(wall_clock) })
    }

    fn write(&mut self, batch: Batch<'_>) -> Result<Vec<(u32, RecordError)>, RecordError> {
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        self.ensure_keys()?;
        let now = (self.clock)();
        let mut rejected = Vec::new();
        for record in batch.records() {
            self.notice_rewind(&record);
            match self.write_record(&record, now) {
                Ok(()) => {}
                Err(e) if e.kind == ErrorKind::Fatal => return Err(e),
                Err(e) => rejected.push((record.index(), e)),
            }
        }
        Ok(rejected)
    }

    fn flush(&mut self) -> Result<(), RecordError> {
        let now = (self.clock)();
        let due: Vec<ObjectId> = self.objects.iter().filter(|(_, o)| o.due(now)).map(|(id, _)| id.clone()).collect();
        for id in due {
            if let Some(object) = self.objects.remove(&id) {
                object.close()?;
            }
        }
        let mut holds: BTreeMap<(&str, i32), i64> = BTreeMap::new();
        for ((topic, partition, _), object) in &self.objects {
            let held = holds.entry((topic.as_str(), *partition)).or_insert(object.start.offset);
            *held = (*held).min(object.start.offset);
        }
        for ((topic, partition), offset) in holds {
            storage::hold(topic, partition, offset);
        }
        Ok(())
    }

    fn revoked(&mut self, partitions: &[(String, i32)]) {
        for (topic, partition) in partitions {
            self.drop_partition(topic, *partition);
            if let Some(offsets) = self.last_offsets.get_mut(topic) {
                offsets.remove(partition);
            }
        }
    }
}

impl S3Sink {
    /// Replaces the wall clock (milliseconds since the epoch), for tests of scheduled rotation.
    pub fn set_clock(&mut self, clock: impl Fn() -> i64 + 'static) {
        self.clock = Box::new(clock);
    }

    fn ensure_keys(&mut self) -> Result<&Keys, RecordError> {
        if self.keys.is_none() {
            let prefix = storage::prefix().map_err(|e| object::store_error("", e))?;
            let s = &self.settings;
            self.keys = Some(Keys::new(&prefix, &s.topics_dir, s.pad_width, s.format.extension(s.compression)));
        }
        self.keys.as_ref().ok_or_else(|| RecordError::fatal("s3-sink bug: no key prefix"))
    }

    /// Aborts a partition's open objects when the host delivers an earlier offset again
    /// (after a rewind), so that the objects restart at the same offsets and so the same keys.
    /// The same offset twice in a row is not a rewind: a transform may make several records of
    /// one input, and they share its offset (aborting then would lose the object's records).
    fn notice_rewind(&mut self, record: &Record<'_>) {
        let (topic, partition, offset) = (record.topic(), record.partition(), record.offset());
        let last = self.last_offsets.get(topic).and_then(|m| m.get(&partition)).copied();
        if last.is_some_and(|last| offset < last) {
            log::warn(&format!("{topic}/{partition}: offset {offset} read again; its open objects start over"));
            self.drop_partition(topic, partition);
        }
        match self.last_offsets.get_mut(topic) {
            Some(m) => {
                m.insert(partition, offset);
            }
            None => {
                self.last_offsets.insert(topic.to_owned(), BTreeMap::from([(partition, offset)]));
            }
        }
    }

    fn drop_partition(&mut self, topic: &str, partition: i32) {
        let ids: Vec<ObjectId> = self.objects.keys().filter(|(t, p, _)| t == topic && *p == partition).cloned().collect();
        for id in ids {
            if let Some(object) = self.objects.remove(&id) {
                object.abort();
            }
        }
    }

    /// Adds one record to its object. An `ErrorKind::Fatal` error stops the batch; any other
    /// is this record's.
    fn write_record(&mut self, record: &Record<'_>, now: i64) -> Result<(), RecordError> {
        let s = &self.settings;
        let Some(value) = record.value() else {
            if s.fail_on_null {
                return Err(RecordError::invalid("the record is a tombstone (null value) and behavior.on.null.values is fail"));
            }
            return Ok(());
        };
        let parsed = if s.needs_json() { Some(format::json::parse(value)?) } else { None };
        let timestamp = if s.needs_timestamp() { Some(s.extractor.timestamp(record, parsed.as_ref(), now)?) } else { None };
        let encoded = s.partitioner.encode(record, parsed.as_ref(), timestamp, s.zone)?;
        let extras = Extras { key: s.store_keys, headers: s.store_headers };
        let piece = s.format.piece(record, value, parsed, extras)?;
        let id: ObjectId = (record.topic().to_owned(), record.partition(), encoded);

        let rotate = self.objects.get(&id).is_some_and(|o| o.due(now) || o.expired_by(timestamp, s.rotate_interval_ms));
        if rotate {
            if let Some(object) = self.objects.remove(&id) {
                object.close()?;
            }
        }
        let full = match self.objects.get_mut(&id) {
            Some(object) => {
                object.push(piece)?;
                object.records >= s.flush_size
            }
            None => {
                let keys = self.keys.as_ref().ok_or_else(|| RecordError::fatal("s3-sink bug: no key prefix"))?;
                let key = keys.key(&id.0, id.1, &id.2, record.offset());
                let body = s.format.body(s.compression, &piece, extras)?;
                let deadline = s.schedule_interval_ms.map(|interval| s.zone.next_boundary(now, interval));
                let object = OpenObject::start(key, body, piece, Start { offset: record.offset(), timestamp, deadline })?;
                let full = object.records >= s.flush_size;
                self.objects.insert(id.clone(), object);
                full
            }
        };
        if full {
            if let Some(object) = self.objects.remove(&id) {
                object.close()?;
            }
        }
        Ok(())
    }
}

export_sink!(S3Sink);
