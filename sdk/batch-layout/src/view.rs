//! Read-only views over a batch's columns. Reading never panics on what the columns hold (a
//! span or index out of range reads as empty); only asking for a row past the end panics, as
//! slice indexing does. The host reads plugin output only after [`crate::validate_output`].

use crate::span::{optional, Headers};
use crate::{RecordRef, Source, SourceRef, ABSENT, INPUT_STRIDE, NO_TIMESTAMP, OUTPUT_STRIDE, POSITION_STRIDE, SOURCE_STRIDE};

fn timestamp(ts: i64) -> Option<i64> {
    (ts != NO_TIMESTAMP).then_some(ts)
}

fn topic_name(topics: &[String], index: u32) -> &str {
    topics.get(index as usize).map(String::as_str).unwrap_or_default()
}

/// Row `i` of a column with `stride` entries per row.
///
/// # Panics
/// If the column has no row `i`.
fn row(column: &[u32], stride: usize, i: usize) -> &[u32] {
    &column[i * stride..][..stride]
}

/// An input batch's columns, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct InputView<'a> {
    /// Every key, value and header byte.
    pub data: &'a [u8],
    /// Topic names, referred to by index.
    pub topics: &'a [String],
    /// [`INPUT_STRIDE`] entries per record.
    pub records: &'a [u32],
    /// [`POSITION_STRIDE`] entries per record: offset, timestamp.
    pub positions: &'a [i64],
    /// [`crate::HEADER_STRIDE`] entries per header.
    pub headers: &'a [u32],
}

impl<'a> InputView<'a> {
    /// A view of anything that lends its columns as an input batch: [`crate::InputColumns`],
    /// or a side's bindgen `InputBatch` (each side implements the `From`).
    pub fn new(columns: impl Into<InputView<'a>>) -> Self {
        columns.into()
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len() / INPUT_STRIDE
    }

    /// Whether the batch has no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key of record `i`; `None` for a null key.
    pub fn key(&self, i: usize) -> Option<&'a [u8]> {
        let r = row(self.records, INPUT_STRIDE, i);
        optional(self.data, r[0], r[1])
    }

    /// The value of record `i`; `None` for a tombstone.
    pub fn value(&self, i: usize) -> Option<&'a [u8]> {
        let r = row(self.records, INPUT_STRIDE, i);
        optional(self.data, r[2], r[3])
    }

    /// The headers of record `i`.
    pub fn headers(&self, i: usize) -> Headers<'a> {
        let r = row(self.records, INPUT_STRIDE, i);
        Headers::new(self.data, self.headers, r[4], r[5])
    }

    /// The topic record `i` was read from.
    pub fn topic(&self, i: usize) -> &'a str {
        topic_name(self.topics, row(self.records, INPUT_STRIDE, i)[6])
    }

    /// The partition record `i` was read from (the `s32` bits of its column entry).
    pub fn partition(&self, i: usize) -> i32 {
        row(self.records, INPUT_STRIDE, i)[7] as i32
    }

    /// The offset of record `i`.
    pub fn offset(&self, i: usize) -> i64 {
        self.positions.get(i * POSITION_STRIDE).copied().unwrap_or_default()
    }

    /// The timestamp of record `i`, if it has one.
    pub fn timestamp(&self, i: usize) -> Option<i64> {
        self.positions.get(i * POSITION_STRIDE + 1).copied().and_then(timestamp)
    }

    /// Record `i` (its headers: [`InputView::headers`]).
    pub fn record(&self, i: usize) -> RecordRef<'a> {
        RecordRef {
            key: self.key(i),
            value: self.value(i),
            timestamp: self.timestamp(i),
            topic: self.topic(i),
            partition: self.partition(i),
            offset: self.offset(i),
        }
    }

    /// Where record `i` came from.
    pub fn source(&self, i: usize) -> Source {
        Source { topic: row(self.records, INPUT_STRIDE, i)[6], partition: self.partition(i), offset: self.offset(i) }
    }
}

/// An output batch's columns, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct OutputView<'a> {
    /// Every key, value and header byte.
    pub data: &'a [u8],
    /// Destination topic names, referred to by index.
    pub topics: &'a [String],
    /// [`OUTPUT_STRIDE`] entries per output.
    pub records: &'a [u32],
    /// One timestamp per output.
    pub timestamps: &'a [i64],
    /// [`crate::HEADER_STRIDE`] entries per header.
    pub headers: &'a [u32],
}

/// One output of an output batch. It remembers where its headers are, so that
/// [`OutputView::headers`] finds them without the output's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Produced<'a> {
    /// Index of the input record it derives from.
    pub input: u32,
    /// Key, `None` for null.
    pub key: Option<&'a [u8]>,
    /// Value, `None` for a tombstone.
    pub value: Option<&'a [u8]>,
    /// Timestamp, `None` to let the producer stamp it.
    pub timestamp: Option<i64>,
    /// The destination a plugin chose, `None` for the connector's output topic.
    pub topic: Option<&'a str>,
    /// `(first-header, header-count)`.
    headers: (u32, u32),
}

impl<'a> OutputView<'a> {
    /// A view of anything that lends its columns as an output batch:
    /// [`crate::OutputColumns`], or a side's bindgen `OutputBatch` (each side implements the
    /// `From`).
    pub fn new(columns: impl Into<OutputView<'a>>) -> Self {
        columns.into()
    }

    /// Number of outputs (a ragged tail is not counted).
    pub fn len(&self) -> usize {
        self.records.len() / OUTPUT_STRIDE
    }

    /// Whether there is no output.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Output `i`.
    ///
    /// # Panics
    /// If `i >= self.len()`.
    pub fn get(&self, i: usize) -> Produced<'a> {
        let r = row(self.records, OUTPUT_STRIDE, i);
        Produced {
            input: r[0],
            key: optional(self.data, r[1], r[2]),
            value: optional(self.data, r[3], r[4]),
            timestamp: self.timestamps.get(i).copied().and_then(timestamp),
            topic: (r[7] != ABSENT).then(|| topic_name(self.topics, r[7])),
            headers: (r[5], r[6]),
        }
    }

    /// Every output, in order.
    pub fn iter(&self) -> impl Iterator<Item = Produced<'a>> + 'a {
        let view = *self;
        (0..self.len()).map(move |i| view.get(i))
    }

    /// The headers of an output of this batch.
    pub fn headers(&self, p: &Produced<'_>) -> Headers<'a> {
        Headers::new(self.data, self.headers, p.headers.0, p.headers.1)
    }
}

/// A source batch's columns, borrowed.
#[derive(Debug, Clone, Copy)]
pub struct SourceView<'a> {
    /// Every key, value, header and position byte.
    pub data: &'a [u8],
    /// Destination topic names, referred to by index.
    pub topics: &'a [String],
    /// [`SOURCE_STRIDE`] entries per record.
    pub records: &'a [u32],
    /// One timestamp per record.
    pub timestamps: &'a [i64],
    /// [`crate::HEADER_STRIDE`] entries per header.
    pub headers: &'a [u32],
}

impl<'a> SourceView<'a> {
    /// A view of anything that lends its columns as a source batch:
    /// [`crate::SourceColumns`], or a side's bindgen `SourceBatch`.
    pub fn new(columns: impl Into<SourceView<'a>>) -> Self {
        columns.into()
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.records.len() / SOURCE_STRIDE
    }

    /// Whether the source returned no record.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Record `i` (its headers: [`SourceView::headers`]).
    ///
    /// # Panics
    /// If `i >= self.len()`.
    pub fn record(&self, i: usize) -> SourceRef<'a> {
        let r = row(self.records, SOURCE_STRIDE, i);
        SourceRef {
            key: optional(self.data, r[0], r[1]),
            value: optional(self.data, r[2], r[3]),
            timestamp: self.timestamps.get(i).copied().and_then(timestamp),
            topic: (r[6] != ABSENT).then(|| topic_name(self.topics, r[6])),
            position: optional(self.data, r[7], r[8]),
        }
    }

    /// The headers of record `i`.
    pub fn headers(&self, i: usize) -> Headers<'a> {
        let r = row(self.records, SOURCE_STRIDE, i);
        Headers::new(self.data, self.headers, r[4], r[5])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_view_reads_outputs_and_their_headers() {
        let topics = ["x".to_owned()];
        let out = OutputView { data: b"abc", topics: &topics, records: &[0, ABSENT, ABSENT, 1, 2, 0, 1, 0], timestamps: &[77], headers: &[0, 1, 2, 1] };
        let p = out.get(0);
        assert_eq!((p.input, p.key, p.value, p.timestamp, p.topic), (0, None, Some(&b"bc"[..]), Some(77), Some("x")));
        assert_eq!(out.headers(&p).collect::<Vec<_>>(), [("a", &b"c"[..])]);
        assert_eq!(out.iter().count(), 1);
    }

    #[test]
    fn views_read_unchecked_columns_without_panicking() {
        let topics = ["t".to_owned()];
        // Spans past the data, a topic index past the topics, headers past the column, no
        // positions or timestamps at all.
        let records = [0, 9, 7, 1, 5, 5, 3, 2];
        let input = InputView { data: b"abc", topics: &topics, records: &records, positions: &[], headers: &[] };
        assert_eq!(input.record(0), RecordRef { key: Some(&b""[..]), value: Some(&b""[..]), timestamp: None, topic: "", partition: 2, offset: 0 });
        assert_eq!(input.headers(0).count(), 0);
        let output = OutputView { data: b"abc", topics: &topics, records: &records, timestamps: &[], headers: &[] };
        assert_eq!(output.get(0).topic, Some(""));
        let source = SourceView { data: b"abc", topics: &topics, records: &[0, 1, 1, 1, 0, 0, ABSENT, 2, 9], timestamps: &[], headers: &[] };
        assert_eq!(source.record(0), SourceRef { key: Some(&b"a"[..]), value: Some(&b"b"[..]), timestamp: None, topic: None, position: Some(&b""[..]) });
    }
}
