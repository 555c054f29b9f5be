//! The source trait, the batch it fills, and the glue that exports it.

use std::cell::RefCell;

use serde::de::DeserializeOwned;
use turnpike_batch_layout::{SourceRef, SourceWriter};

use crate::bindings::source::exports::turnpike::plugin::source as export;
use crate::bindings::turnpike::plugin::types as wit;
use crate::{parse_config, ConfigError, NewRecord, RecordError};

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
    writer: SourceWriter,
    errors: Vec<wit::RecordError>,
}

impl Polled {
    pub(crate) fn new() -> Self {
        Self { writer: SourceWriter::new(), errors: Vec::new() }
    }

    /// Records added so far.
    pub fn len(&self) -> usize {
        self.writer.len()
    }

    /// Whether no record was added.
    pub fn is_empty(&self) -> bool {
        self.writer.is_empty()
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
        self.errors.push(wit::RecordError { input, error: error.into_wit() });
    }

    fn push(&mut self, record: NewRecord, position: Option<&[u8]>) {
        let source = SourceRef {
            key: record.key.as_deref(),
            value: record.value.as_deref(),
            timestamp: record.timestamp,
            topic: record.topic.as_deref(),
            position,
        };
        self.writer.push(source, record.headers.iter().map(|(k, v)| (k.as_str(), v.as_slice())));
    }

    pub(crate) fn finish(self) -> export::SourceBatch {
        crate::layout::source_batch(self.writer.finish(), self.errors)
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
