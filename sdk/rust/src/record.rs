//! Read-only views of the records in a batch.

use std::cell::OnceCell;

use serde::de::DeserializeOwned;
use turnpike_batch_layout::InputView;

use crate::bindings::turnpike::plugin::types as wit;
use crate::RecordError;

/// A batch of input records, as handed to [`crate::Transform::transform_batch`].
#[derive(Clone, Copy)]
pub struct Batch<'a> {
    inner: &'a wit::InputBatch,
    bytes: Bytes<'a>,
}

/// Where a batch's key, value and header bytes are.
#[derive(Clone, Copy)]
enum Bytes<'a> {
    /// In the batch, as the host sent it.
    Sent,
    /// Still with the host (a lazy transform's batch, contract `0.1.5`): fetched on the first
    /// read of any record's key, value or headers, then kept for the rest of the batch.
    Lazy { fetched: &'a OnceCell<Vec<u8>>, fetch: fn() -> Vec<u8> },
}

impl<'a> Batch<'a> {
    /// A batch that came with its bytes.
    pub(crate) fn sent(inner: &'a wit::InputBatch) -> Self {
        Self { inner, bytes: Bytes::Sent }
    }

    /// A batch whose bytes `fetch` returns, called at most once (the result is kept in
    /// `fetched`), and only if a record's bytes are read.
    pub(crate) fn lazy(inner: &'a wit::InputBatch, fetched: &'a OnceCell<Vec<u8>>, fetch: fn() -> Vec<u8>) -> Self {
        Self { inner, bytes: Bytes::Lazy { fetched, fetch } }
    }

    /// The records, in order.
    pub fn records(&self) -> impl Iterator<Item = Record<'a>> + 'a {
        let batch = *self;
        (0..self.len()).map(move |i| Record { batch, index: i as u32 })
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.columns().len()
    }

    /// Whether the batch has no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many bytes came with the batch (none for a lazy one).
    pub(crate) fn sent_bytes(&self) -> usize {
        self.inner.data.len()
    }

    /// Two `s64`s per record: offset and timestamp (`wit/types.wit`).
    pub(crate) fn positions(&self) -> &'a [i64] {
        &self.inner.positions
    }

    /// The columns, for reading anything but bytes (a lazy batch's `data` is empty here).
    fn columns(&self) -> InputView<'a> {
        InputView::new(self.inner)
    }

    /// The columns with the bytes, fetched first if they are still with the host.
    fn with_bytes(&self) -> InputView<'a> {
        let mut view = self.columns();
        if let Bytes::Lazy { fetched, fetch } = self.bytes {
            view.data = fetched.get_or_init(fetch);
        }
        view
    }
}

/// One Kafka record: key, value, headers and where it came from. Borrowed from the batch, so
/// reading it copies nothing (in a lazy transform, the first read of any record's key, value or
/// headers fetches the whole batch's bytes from the host, once).
#[derive(Clone, Copy)]
pub struct Record<'a> {
    batch: Batch<'a>,
    index: u32,
}

impl<'a> Record<'a> {
    fn i(&self) -> usize {
        self.index as usize
    }

    /// The key, or `None` for a null key.
    pub fn key(&self) -> Option<&'a [u8]> {
        self.batch.with_bytes().key(self.i())
    }

    /// The value, or `None` for a tombstone.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.batch.with_bytes().value(self.i())
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
        self.batch.with_bytes().headers(self.i())
    }

    /// The value of the first header named `key`.
    pub fn header(&self, key: &str) -> Option<&'a [u8]> {
        self.headers().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Milliseconds since the Unix epoch, if the record has a timestamp.
    pub fn timestamp(&self) -> Option<i64> {
        self.batch.columns().timestamp(self.i())
    }

    /// The topic the record was read from.
    pub fn topic(&self) -> &'a str {
        self.batch.columns().topic(self.i())
    }

    /// The partition it was read from.
    pub fn partition(&self) -> i32 {
        self.batch.columns().partition(self.i())
    }

    /// Its offset in that partition.
    pub fn offset(&self) -> i64 {
        self.batch.columns().offset(self.i())
    }

    /// Its position in the batch.
    pub fn index(&self) -> u32 {
        self.index
    }
}
