//! Building a transform's output batch: zero or more records per input.

use crate::bindings::turnpike::plugin::types as wit;
use crate::layout::{ABSENT, HEADER_STRIDE, NO_TIMESTAMP, OUTPUT_STRIDE};
use crate::{Record, RecordError};

/// All outputs of one batch. [`crate::Transform::transform_batch`] gets it whole; per-record
/// code gets an [`Output`] bound to one input.
pub struct Outputs {
    batch: wit::OutputBatch,
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

/// A position in [`Outputs`] to roll back to when an input fails halfway.
#[derive(Clone, Copy)]
pub(crate) struct Mark {
    data: usize,
    headers: usize,
    records: usize,
    timestamps: usize,
    topics: usize,
}

impl Outputs {
    pub(crate) fn with_capacity(records: usize, bytes: usize) -> Self {
        Self {
            batch: wit::OutputBatch {
                data: Vec::with_capacity(bytes),
                topics: Vec::new(),
                records: Vec::with_capacity(records * OUTPUT_STRIDE),
                timestamps: Vec::with_capacity(records),
                headers: Vec::new(),
                errors: Vec::new(),
            },
        }
    }

    /// The output handle for the input record at `index`.
    pub fn for_input(&mut self, index: u32) -> Output<'_> {
        Output { outputs: self, input: index }
    }

    /// Reports that the input at `index` failed; the host applies the error policy to it.
    pub fn fail(&mut self, index: u32, error: RecordError) {
        self.batch.errors.push(wit::RecordError { input: index, error: error.into_wit() });
    }

    pub(crate) fn mark(&self) -> Mark {
        let b = &self.batch;
        Mark {
            data: b.data.len(),
            headers: b.headers.len(),
            records: b.records.len(),
            timestamps: b.timestamps.len(),
            topics: b.topics.len(),
        }
    }

    pub(crate) fn rollback(&mut self, m: Mark) {
        let b = &mut self.batch;
        b.data.truncate(m.data);
        b.headers.truncate(m.headers);
        b.records.truncate(m.records);
        b.timestamps.truncate(m.timestamps);
        b.topics.truncate(m.topics);
    }

    pub(crate) fn finish(self) -> wit::OutputBatch {
        self.batch
    }

    fn append(&mut self, bytes: &[u8]) -> (u32, u32) {
        let offset = self.batch.data.len() as u32;
        self.batch.data.extend_from_slice(bytes);
        (offset, bytes.len() as u32)
    }

    fn append_opt(&mut self, bytes: Option<&[u8]>) -> (u32, u32) {
        bytes.map_or((0, ABSENT), |b| self.append(b))
    }

    fn topic_index(&mut self, topic: &str) -> u32 {
        let topics = &mut self.batch.topics;
        match topics.iter().position(|t| t == topic) {
            Some(i) => i as u32,
            None => {
                topics.push(topic.to_owned());
                (topics.len() - 1) as u32
            }
        }
    }

    /// Appends headers; returns `(first-header, header-count)`.
    fn push_headers<'h>(&mut self, headers: impl Iterator<Item = (&'h str, &'h [u8])>) -> (u32, u32) {
        let first = (self.batch.headers.len() / HEADER_STRIDE) as u32;
        for (k, v) in headers {
            let (ko, kl) = self.append(k.as_bytes());
            let (vo, vl) = self.append(v);
            self.batch.headers.extend_from_slice(&[ko, kl, vo, vl]);
        }
        (first, (self.batch.headers.len() / HEADER_STRIDE) as u32 - first)
    }

    #[allow(clippy::too_many_arguments, reason = "one column entry, written in one place")]
    fn push_record(&mut self, input: u32, key: (u32, u32), value: (u32, u32), headers: (u32, u32), timestamp: Option<i64>, topic: u32) {
        self.batch.records.extend_from_slice(&[input, key.0, key.1, value.0, value.1, headers.0, headers.1, topic]);
        self.batch.timestamps.push(timestamp.unwrap_or(NO_TIMESTAMP));
    }
}

impl Output<'_> {
    /// Sends the input record on unchanged (key, value, headers, timestamp).
    pub fn forward(&mut self, record: &Record<'_>) {
        self.forward_parts(record, record.value());
    }

    /// Sends the input record on with a new value, keeping its key, headers and timestamp.
    pub fn forward_with_value(&mut self, record: &Record<'_>, value: impl AsRef<[u8]>) {
        self.forward_parts(record, Some(value.as_ref()));
    }

    fn forward_parts(&mut self, record: &Record<'_>, value: Option<&[u8]>) {
        let o = &mut *self.outputs;
        let key = o.append_opt(record.key());
        let value = o.append_opt(value);
        let headers = o.push_headers(record.headers());
        o.push_record(self.input, key, value, headers, record.timestamp(), ABSENT);
    }

    /// Sends a record built from scratch.
    pub fn emit(&mut self, record: NewRecord) {
        let o = &mut *self.outputs;
        let key = o.append_opt(record.key.as_deref());
        let value = o.append_opt(record.value.as_deref());
        let headers = o.push_headers(record.headers.iter().map(|(k, v)| (k.as_str(), v.as_slice())));
        let topic = record.topic.as_deref().map_or(ABSENT, |t| o.topic_index(t));
        o.push_record(self.input, key, value, headers, record.timestamp, topic);
    }

    /// The index of the input this output handle belongs to.
    pub fn input(&self) -> u32 {
        self.input
    }
}
