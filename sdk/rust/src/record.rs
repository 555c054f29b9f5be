//! Read-only views of the records in a batch.

use serde::de::DeserializeOwned;

use crate::bindings::turnpike::plugin::types as wit;
use crate::layout::{bytes, optional, HEADER_STRIDE, INPUT_STRIDE, NO_TIMESTAMP, POSITION_STRIDE};
use crate::RecordError;

/// A batch of input records, as handed to [`crate::Transform::transform_batch`].
#[derive(Clone, Copy)]
pub struct Batch<'a> {
    pub(crate) inner: &'a wit::InputBatch,
}

impl<'a> Batch<'a> {
    /// The records, in order.
    pub fn records(&self) -> impl Iterator<Item = Record<'a>> + 'a {
        let batch = self.inner;
        (0..self.len()).map(move |i| Record::new(batch, i))
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.inner.records.len() / INPUT_STRIDE
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
    fields: &'a [u32],
    index: u32,
}

impl<'a> Record<'a> {
    fn new(batch: &'a wit::InputBatch, i: usize) -> Self {
        Self { batch, fields: &batch.records[i * INPUT_STRIDE..][..INPUT_STRIDE], index: i as u32 }
    }

    /// The key, or `None` for a null key.
    pub fn key(&self) -> Option<&'a [u8]> {
        optional(&self.batch.data, self.fields[0], self.fields[1])
    }

    /// The value, or `None` for a tombstone.
    pub fn value(&self) -> Option<&'a [u8]> {
        optional(&self.batch.data, self.fields[2], self.fields[3])
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
        let (first, count) = (self.fields[4] as usize, self.fields[5] as usize);
        let headers = self.batch.headers.get(first * HEADER_STRIDE..(first + count) * HEADER_STRIDE).unwrap_or_default();
        headers
            .chunks_exact(HEADER_STRIDE)
            .map(move |h| (std::str::from_utf8(bytes(data, h[0], h[1])).unwrap_or_default(), bytes(data, h[2], h[3])))
    }

    /// The value of the first header named `key`.
    pub fn header(&self, key: &str) -> Option<&'a [u8]> {
        self.headers().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Milliseconds since the Unix epoch, if the record has a timestamp.
    pub fn timestamp(&self) -> Option<i64> {
        let ts = self.batch.positions[self.index as usize * POSITION_STRIDE + 1];
        (ts != NO_TIMESTAMP).then_some(ts)
    }

    /// The topic the record was read from.
    pub fn topic(&self) -> &'a str {
        self.batch.topics.get(self.fields[6] as usize).map(String::as_str).unwrap_or_default()
    }

    /// The partition it was read from.
    pub fn partition(&self) -> i32 {
        self.fields[7] as i32
    }

    /// Its offset in that partition.
    pub fn offset(&self) -> i64 {
        self.batch.positions[self.index as usize * POSITION_STRIDE]
    }

    /// Its position in the batch.
    pub fn index(&self) -> u32 {
        self.index
    }
}
