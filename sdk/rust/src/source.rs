//! The source trait, the batch it fills, and the glue that exports it.

use std::cell::RefCell;

use serde::de::DeserializeOwned;

use crate::bindings::source::exports::turnpike::plugin::source as export;
use crate::bindings::turnpike::plugin::types as wit;
use crate::layout::{ABSENT, HEADER_STRIDE, NO_TIMESTAMP};
use crate::{parse_config, ConfigError, NewRecord, RecordError};

/// `u32`s per source record: key-offset, key-length, value-offset, value-length,
/// first-header, header-count, topic-index, position-offset, position-length.
const SOURCE_STRIDE: usize = 9;

/// A source: reads from the outside world; the host produces what it returns into Kafka.
///
/// Every record carries the source's *position* after it: opaque bytes you define (a
/// cursor, a line number, an ETag). The host stores a position durably only once the record
/// and every record before it are acknowledged by Kafka, and hands the last stored one back
/// to [`Source::create`] after a restart: resume right after it.
pub trait Source: Sized + 'static {
    /// The plugin's configuration, parsed from the connector's `source.config` mapping.
    type Config: DeserializeOwned;

    /// Builds the source. `position` is the last position stored, or `None` on a first run.
    /// Do not read or write the outside world here (the host may call `create` to validate
    /// a configuration); start in the first [`Source::poll`].
    fn create(config: Self::Config, position: Option<Vec<u8>>) -> Result<Self, ConfigError>;

    /// Adds up to `max` new records to `out`. Adding none means "nothing new yet": the host
    /// polls again after the connector's poll interval. An `Err` fails the whole poll: a
    /// [`RecordError::retriable`] is retried with backoff.
    fn poll(&mut self, max: usize, out: &mut Polled) -> Result<(), RecordError>;
}

/// The records of one poll.
pub struct Polled {
    batch: export::SourceBatch,
}

impl Polled {
    pub(crate) fn new() -> Self {
        Self { batch: export::SourceBatch { data: vec![], topics: vec![], records: vec![], timestamps: vec![], headers: vec![], errors: vec![] } }
    }

    /// Records added so far.
    pub fn len(&self) -> usize {
        self.batch.records.len() / SOURCE_STRIDE
    }

    /// Whether no record was added.
    pub fn is_empty(&self) -> bool {
        self.batch.records.is_empty()
    }

    /// Adds a record; `position` is where the source stands after it.
    pub fn emit(&mut self, record: NewRecord, position: impl AsRef<[u8]>) {
        self.push(record, Some(position.as_ref()));
    }

    /// Adds a record that does not move the position (a later record will).
    pub fn emit_unpositioned(&mut self, record: NewRecord) {
        self.push(record, None);
    }

    /// Reports something read that is not a good record (a line that does not parse). Pass
    /// the raw bytes as `raw`: the host dead-letters them unchanged (or fails the connector,
    /// per its error policy) instead of producing them. The position still moves past it.
    pub fn fail(&mut self, raw: NewRecord, position: impl AsRef<[u8]>, error: RecordError) {
        let input = self.len() as u32;
        self.push(raw, Some(position.as_ref()));
        self.batch.errors.push(wit::RecordError { input, error: error.into_wit() });
    }

    fn append(&mut self, bytes: Option<&[u8]>) -> (u32, u32) {
        match bytes {
            None => (0, ABSENT),
            Some(b) => {
                let offset = self.batch.data.len() as u32;
                self.batch.data.extend_from_slice(b);
                (offset, b.len() as u32)
            }
        }
    }

    fn push(&mut self, record: NewRecord, position: Option<&[u8]>) {
        let key = self.append(record.key.as_deref());
        let value = self.append(record.value.as_deref());
        let first = (self.batch.headers.len() / HEADER_STRIDE) as u32;
        for (k, v) in &record.headers {
            let (ko, kl) = self.append(Some(k.as_bytes()));
            let (vo, vl) = self.append(Some(v));
            self.batch.headers.extend_from_slice(&[ko, kl, vo, vl]);
        }
        let count = (self.batch.headers.len() / HEADER_STRIDE) as u32 - first;
        let topic = match record.topic {
            None => ABSENT,
            Some(t) => match self.batch.topics.iter().position(|x| *x == t) {
                Some(i) => i as u32,
                None => {
                    self.batch.topics.push(t);
                    (self.batch.topics.len() - 1) as u32
                }
            },
        };
        let pos = self.append(position);
        self.batch.records.extend_from_slice(&[key.0, key.1, value.0, value.1, first, count, topic, pos.0, pos.1]);
        self.batch.timestamps.push(record.timestamp.unwrap_or(NO_TIMESTAMP));
    }

    pub(crate) fn finish(self) -> export::SourceBatch {
        self.batch
    }
}

/// One poll through a source: the whole per-poll path except the component-model boundary.
pub(crate) fn run_poll<S: Source>(source: &mut S, max: u32) -> Result<export::SourceBatch, RecordError> {
    let mut out = Polled::new();
    source.poll(max as usize, &mut out)?;
    Ok(out.finish())
}

/// The component-model resource wrapping a user's source.
#[doc(hidden)]
pub struct SourceResource<S>(RefCell<S>);

impl<S: Source> export::GuestReader for SourceResource<S> {
    fn create(config: String, position: Option<Vec<u8>>) -> Result<export::Reader, wit::ConfigError> {
        match parse_config::<S::Config>(&config).and_then(|c| S::create(c, position)) {
            Ok(s) => Ok(export::Reader::new(SourceResource(RefCell::new(s)))),
            Err(e) => Err(e.into_wit()),
        }
    }

    fn poll(&self, max_records: u32) -> Result<export::SourceBatch, wit::PluginError> {
        run_poll(&mut *self.0.borrow_mut(), max_records).map_err(RecordError::into_wit)
    }
}

/// Exports a [`Source`] implementation as the plugin's source. Use it once, in `lib.rs`.
#[macro_export]
macro_rules! export_source {
    ($t:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            struct __TurnpikeSourcePlugin;
            impl $crate::bindings::source::exports::turnpike::plugin::source::Guest for __TurnpikeSourcePlugin {
                type Reader = $crate::__private::SourceResource<$t>;
            }
            $crate::bindings::source::export_source_world!(__TurnpikeSourcePlugin with_types_in $crate::bindings::source);
        };
    };
}
