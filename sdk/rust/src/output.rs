//! Building a transform's output batch: zero or more records per input.

use turnpike_batch_layout::{OutputMark, OutputRef, OutputWriter, FORWARD_ALL, FORWARD_HEADERS, FORWARD_KEY};

use crate::bindings::turnpike::plugin::types as wit;
use crate::{Record, RecordError};

/// All outputs of one batch. [`crate::Transform::transform_batch`] gets it whole; per-record
/// code gets an [`Output`] bound to one input.
///
/// Outputs that pass on parts of their input ([`Output::forward`],
/// [`Output::forward_with_value`]) only name those parts (contract `0.1.4`); the host takes
/// their bytes from the batch it sent, so they are never copied through the plugin.
pub struct Outputs {
    writer: OutputWriter,
    /// One flag word per output: which parts are its input's own.
    forwarded: Vec<u32>,
    errors: Vec<wit::RecordError>,
}

/// Where the outputs of one input record go.
pub struct Output<'b> {
    outputs: &'b mut Outputs,
    input: u32,
}

/// A record built from scratch, for [`Output::emit`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewRecord {
    pub(crate) key: Option<Vec<u8>>,
    pub(crate) value: Option<Vec<u8>>,
    pub(crate) headers: Vec<(String, Vec<u8>)>,
    pub(crate) timestamp: Option<i64>,
    pub(crate) topic: Option<String>,
}

impl NewRecord {
    /// A record with a null key, a null value and no headers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the key.
    pub fn key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Sets the value.
    pub fn value(mut self, value: impl Into<Vec<u8>>) -> Self {
        self.value = Some(value.into());
        self
    }

    /// Adds a header.
    pub fn header(mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.headers.push((key.into(), value.into()));
        self
    }

    /// Sets the timestamp (milliseconds since the Unix epoch).
    pub fn timestamp(mut self, millis: i64) -> Self {
        self.timestamp = Some(millis);
        self
    }

    /// Sends the record to `topic` instead of the connector's output topic.
    pub fn topic(mut self, topic: impl Into<String>) -> Self {
        self.topic = Some(topic.into());
        self
    }
}

impl Outputs {
    pub(crate) fn with_capacity(records: usize, bytes: usize) -> Self {
        Self { writer: OutputWriter::with_capacity(records, bytes), forwarded: Vec::with_capacity(records), errors: Vec::new() }
    }

    /// The output handle for the input record at `index`.
    pub fn for_input(&mut self, index: u32) -> Output<'_> {
        Output { outputs: self, input: index }
    }

    /// Reports that the input at `index` failed; the host applies the error policy to it.
    pub fn fail(&mut self, index: u32, error: RecordError) {
        self.errors.push(wit::RecordError { input: index, error: error.into_wit() });
    }

    /// Where the outputs stand, to roll back to when an input fails halfway.
    pub(crate) fn mark(&self) -> OutputMark {
        self.writer.mark()
    }

    pub(crate) fn rollback(&mut self, mark: OutputMark) {
        self.writer.rollback(mark);
        self.forwarded.truncate(self.writer.len());
    }

    /// The outputs with their forwarded parts left out, and the flags that name them.
    pub(crate) fn finish(self) -> (wit::OutputBatch, Vec<u32>) {
        (crate::layout::output_batch(self.writer.finish(), self.errors), self.forwarded)
    }

    fn push<'h>(&mut self, output: OutputRef<'_>, headers: impl IntoIterator<Item = (&'h str, &'h [u8])>, forwarded: u32) {
        self.writer.push(output, headers);
        self.forwarded.push(forwarded);
    }
}

impl Output<'_> {
    /// Sends the input record on unchanged (key, value, headers, timestamp).
    ///
    /// When `record` is this handle's input (the record [`crate::Transform::transform`] got
    /// with it), only its timestamp is written: the host takes the rest from the batch it
    /// sent. Another record of the batch is copied.
    pub fn forward(&mut self, record: &Record<'_>) {
        if record.index() == self.input {
            self.outputs.writer.push_forwarded(self.input, record.timestamp());
            self.outputs.forwarded.push(FORWARD_ALL);
        } else {
            self.copy(record, record.value());
        }
    }

    /// Sends the input record on with a new value, keeping its key, headers and timestamp
    /// (forwarded as in [`Output::forward`]).
    pub fn forward_with_value(&mut self, record: &Record<'_>, value: impl AsRef<[u8]>) {
        if record.index() == self.input {
            let output = OutputRef { input: self.input, key: None, value: Some(value.as_ref()), timestamp: record.timestamp(), topic: None };
            self.outputs.push(output, [], FORWARD_KEY | FORWARD_HEADERS);
        } else {
            self.copy(record, Some(value.as_ref()));
        }
    }

    fn copy(&mut self, record: &Record<'_>, value: Option<&[u8]>) {
        let output = OutputRef { input: self.input, key: record.key(), value, timestamp: record.timestamp(), topic: None };
        self.outputs.push(output, record.headers(), 0);
    }

    /// Sends a record built from scratch.
    pub fn emit(&mut self, record: NewRecord) {
        let output = OutputRef {
            input: self.input,
            key: record.key.as_deref(),
            value: record.value.as_deref(),
            timestamp: record.timestamp,
            topic: record.topic.as_deref(),
        };
        self.outputs.push(output, record.headers.iter().map(|(k, v)| (k.as_str(), v.as_slice())), 0);
    }

    /// The index of the input this output handle belongs to.
    pub fn input(&self) -> u32 {
        self.input
    }
}
