//! Read-only views of the records in a batch.

use serde::de::DeserializeOwned;
use turnpike_batch_layout::InputView;

use crate::bindings::turnpike::plugin::types as wit;
use crate::RecordError;

/// A batch of input records, as handed to [`crate::Transform::transform_batch`].
#[derive(Clone, Copy)]
pub struct Batch<'a> {
    pub(crate) inner: &'a wit::InputBatch,
}

impl<'a> Batch<'a> {
    /// The records, in order.
    pub fn records(&self) -> impl Iterator<Item = Record<'a>> + 'a {
        let view = InputView::new(self.inner);
        (0..view.len()).map(move |i| Record { view, index: i as u32 })
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        InputView::new(self.inner).len()
    }

    /// Whether the batch has no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One Kafka record: key, value, headers and where it came from. Borrowed from the batch, so
/// reading it copies nothing.
#[derive(Clone, Copy)]
pub struct Record<'a> {
    view: InputView<'a>,
    index: u32,
}

impl<'a> Record<'a> {
    fn i(&self) -> usize {
        self.index as usize
    }

    /// The key, or `None` for a null key.
    pub fn key(&self) -> Option<&'a [u8]> {
        self.view.key(self.i())
    }

    /// The value, or `None` for a tombstone.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.view.value(self.i())
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
        self.view.headers(self.i())
    }

    /// The value of the first header named `key`.
    pub fn header(&self, key: &str) -> Option<&'a [u8]> {
        self.headers().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Milliseconds since the Unix epoch, if the record has a timestamp.
    pub fn timestamp(&self) -> Option<i64> {
        self.view.timestamp(self.i())
    }

    /// The topic the record was read from.
    pub fn topic(&self) -> &'a str {
        self.view.topic(self.i())
    }

    /// The partition it was read from.
    pub fn partition(&self) -> i32 {
        self.view.partition(self.i())
    }

    /// Its offset in that partition.
    pub fn offset(&self) -> i64 {
        self.view.offset(self.i())
    }

    /// Its position in the batch.
    pub fn index(&self) -> u32 {
        self.index
    }
}
