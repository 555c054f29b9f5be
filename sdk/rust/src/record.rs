//! Read-only views of the records in a batch.

use serde::de::DeserializeOwned;

use crate::bindings::turnpike::plugin::types as wit;
use crate::RecordError;

pub(crate) fn slice(data: &[u8], span: wit::Span) -> &[u8] {
    let start = span.offset as usize;
    data.get(start..start.saturating_add(span.len as usize)).unwrap_or_default()
}

/// A batch of input records, as handed to [`crate::Transform::transform_batch`].
#[derive(Clone, Copy)]
pub struct Batch<'a> {
    pub(crate) inner: &'a wit::InputBatch,
}

impl<'a> Batch<'a> {
    /// The records, in order.
    pub fn records(&self) -> impl Iterator<Item = Record<'a>> + 'a {
        let batch = self.inner;
        batch.records.iter().enumerate().map(move |(i, meta)| Record { batch, meta, index: i as u32 })
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.inner.records.len()
    }

    /// Whether the batch has no record.
    pub fn is_empty(&self) -> bool {
        self.inner.records.is_empty()
    }
}

/// One Kafka record: key, value, headers and where it came from. Borrowed from the batch, so
/// reading it copies nothing.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    batch: &'a wit::InputBatch,
    meta: &'a wit::InputRecord,
    index: u32,
}

impl<'a> Record<'a> {
    /// The key, or `None` for a null key.
    pub fn key(&self) -> Option<&'a [u8]> {
        self.meta.key.map(|s| slice(&self.batch.data, s))
    }

    /// The value, or `None` for a tombstone.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.meta.value.map(|s| slice(&self.batch.data, s))
    }

    /// The value as UTF-8 text; an error (for the record) if it is null or not UTF-8.
    pub fn value_str(&self) -> Result<&'a str, RecordError> {
        let bytes = self.value().ok_or_else(|| RecordError::invalid("the record has no value"))?;
        std::str::from_utf8(bytes).map_err(|e| RecordError::invalid(format!("the value is not UTF-8: {e}")))
    }

    /// The value parsed as JSON into `T`; an error (for the record) if it does not parse.
    pub fn value_json<T: DeserializeOwned>(&self) -> Result<T, RecordError> {
        let bytes = self.value().ok_or_else(|| RecordError::invalid("the record has no value"))?;
        serde_json::from_slice(bytes).map_err(|e| RecordError::invalid(format!("the value is not valid JSON: {e}")))
    }

    /// Every header as `(key, value)`, in order.
    pub fn headers(&self) -> impl Iterator<Item = (&'a str, &'a [u8])> + 'a {
        let data = &self.batch.data;
        let start = self.meta.headers.offset as usize;
        let end = start.saturating_add(self.meta.headers.len as usize);
        let headers = self.batch.headers.get(start..end).unwrap_or_default();
        headers.iter().map(move |h| (std::str::from_utf8(slice(data, h.key)).unwrap_or_default(), slice(data, h.value)))
    }

    /// The value of the first header named `key`.
    pub fn header(&self, key: &str) -> Option<&'a [u8]> {
        self.headers().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Milliseconds since the Unix epoch, if the record has a timestamp.
    pub fn timestamp(&self) -> Option<i64> {
        self.meta.timestamp
    }

    /// The topic the record was read from.
    pub fn topic(&self) -> &'a str {
        self.batch.topics.get(self.meta.topic as usize).map(String::as_str).unwrap_or_default()
    }

    /// The partition it was read from.
    pub fn partition(&self) -> i32 {
        self.meta.partition
    }

    /// Its offset in that partition.
    pub fn offset(&self) -> i64 {
        self.meta.offset
    }

    /// Its position in the batch.
    pub fn index(&self) -> u32 {
        self.index
    }
}
