//! Writers: the one place that lays records out in columns. Every record's bytes go into
//! `data` in the same order on every side: key, value, then each header's key and value (and
//! for a source record, its position last).

use crate::span::len_u32;
use crate::{
    InputColumns, OutputColumns, OutputRef, OutputView, RecordRef, SourceColumns, SourceRef, ABSENT, HEADER_STRIDE, INPUT_STRIDE, NO_TIMESTAMP,
    OUTPUT_STRIDE, POSITION_STRIDE, SOURCE_STRIDE,
};

/// Appends `bytes` to `data`; returns its span.
fn append(data: &mut Vec<u8>, bytes: &[u8]) -> (u32, u32) {
    let offset = len_u32(data.len());
    data.extend_from_slice(bytes);
    (offset, len_u32(bytes.len()))
}

/// Appends bytes that may be null; a null is the span `(0, ABSENT)`.
pub(crate) fn append_opt(data: &mut Vec<u8>, bytes: Option<&[u8]>) -> (u32, u32) {
    bytes.map_or((0, ABSENT), |b| append(data, b))
}

/// Appends headers; returns `(first-header, header-count)`.
fn push_headers<'h>(data: &mut Vec<u8>, column: &mut Vec<u32>, headers: impl IntoIterator<Item = (&'h str, &'h [u8])>) -> (u32, u32) {
    let first = len_u32(column.len() / HEADER_STRIDE);
    for (key, value) in headers {
        let (ko, kl) = append(data, key.as_bytes());
        let (vo, vl) = append(data, value);
        column.extend_from_slice(&[ko, kl, vo, vl]);
    }
    (first, len_u32(column.len() / HEADER_STRIDE) - first)
}

/// The index of `topic`, added to the table the first time it is named.
fn topic_index(topics: &mut Vec<String>, topic: &str) -> u32 {
    match topics.iter().position(|t| t == topic) {
        Some(i) => len_u32(i),
        None => {
            topics.push(topic.to_owned());
            len_u32(topics.len() - 1)
        }
    }
}

/// Builds an input batch (the host from consumed records; the SDK's test harness).
#[derive(Debug, Default)]
pub struct InputWriter {
    columns: InputColumns,
}

impl InputWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty writer with room for `records` records and `bytes` bytes of payload.
    pub fn with_capacity(records: usize, bytes: usize) -> Self {
        Self {
            columns: InputColumns {
                data: Vec::with_capacity(bytes),
                topics: Vec::new(),
                records: Vec::with_capacity(records * INPUT_STRIDE),
                positions: Vec::with_capacity(records * POSITION_STRIDE),
                headers: Vec::new(),
            },
        }
    }

    /// Appends a record with its headers (pass a null header value as empty bytes).
    pub fn push<'h>(&mut self, record: RecordRef<'_>, headers: impl IntoIterator<Item = (&'h str, &'h [u8])>) {
        let c = &mut self.columns;
        let key = append_opt(&mut c.data, record.key);
        let value = append_opt(&mut c.data, record.value);
        let (first, count) = push_headers(&mut c.data, &mut c.headers, headers);
        let topic = topic_index(&mut c.topics, record.topic);
        c.records.extend_from_slice(&[key.0, key.1, value.0, value.1, first, count, topic, record.partition as u32]);
        c.positions.extend_from_slice(&[record.offset, record.timestamp.unwrap_or(NO_TIMESTAMP)]);
    }

    /// Records appended so far.
    pub fn len(&self) -> usize {
        self.columns.records.len() / INPUT_STRIDE
    }

    /// Whether no record was appended.
    pub fn is_empty(&self) -> bool {
        self.columns.records.is_empty()
    }

    /// Payload bytes appended so far.
    pub fn bytes(&self) -> usize {
        self.columns.data.len()
    }

    /// The finished columns.
    pub fn finish(self) -> InputColumns {
        self.columns
    }
}

/// Builds an output batch (a transform in the SDK; the host merging per-record results).
#[derive(Debug, Default)]
pub struct OutputWriter {
    columns: OutputColumns,
}

/// A position in an [`OutputWriter`] to roll back to, when an input fails after some of its
/// outputs were written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputMark {
    data: usize,
    topics: usize,
    records: usize,
    timestamps: usize,
    headers: usize,
}

impl OutputWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty writer with room for `records` outputs and `bytes` bytes of payload.
    pub fn with_capacity(records: usize, bytes: usize) -> Self {
        Self {
            columns: OutputColumns {
                data: Vec::with_capacity(bytes),
                topics: Vec::new(),
                records: Vec::with_capacity(records * OUTPUT_STRIDE),
                timestamps: Vec::with_capacity(records),
                headers: Vec::new(),
            },
        }
    }

    /// Appends an output with its headers.
    pub fn push<'h>(&mut self, record: OutputRef<'_>, headers: impl IntoIterator<Item = (&'h str, &'h [u8])>) {
        let c = &mut self.columns;
        let key = append_opt(&mut c.data, record.key);
        let value = append_opt(&mut c.data, record.value);
        let (first, count) = push_headers(&mut c.data, &mut c.headers, headers);
        let topic = record.topic.map_or(ABSENT, |t| topic_index(&mut c.topics, t));
        c.records.extend_from_slice(&[record.input, key.0, key.1, value.0, value.1, first, count, topic]);
        c.timestamps.push(record.timestamp.unwrap_or(NO_TIMESTAMP));
    }

    /// Appends an output whose key, value and headers are all its input's, forwarded
    /// ([`crate::FORWARD_ALL`]): nothing of it is written but its input, timestamp and the
    /// place its headers would start. The same columns as [`OutputWriter::push`] with no
    /// parts, in a fraction of the work: forwarding is most of what real transforms output.
    /// The writer keeps no flags: without its `FORWARD_ALL` flag word beside it (the SDK's
    /// `Outputs` keeps them), this row reads as a record with a null key and value.
    pub fn push_forwarded(&mut self, input: u32, timestamp: Option<i64>) {
        let c = &mut self.columns;
        let first = len_u32(c.headers.len() / HEADER_STRIDE);
        c.records.extend_from_slice(&[input, 0, ABSENT, 0, ABSENT, first, 0, ABSENT]);
        c.timestamps.push(timestamp.unwrap_or(NO_TIMESTAMP));
    }

    /// Appends every output of `part` (a validated batch) as deriving from input `input`,
    /// renumbering its spans, headers and topics. Copies `part`'s bytes.
    pub fn append(&mut self, part: OutputView<'_>, input: u32) {
        let c = &mut self.columns;
        let shift = len_u32(c.data.len());
        let header_shift = len_u32(c.headers.len() / HEADER_STRIDE);
        let topics: Vec<u32> = part.topics.iter().map(|t| topic_index(&mut c.topics, t)).collect();
        let moved = |offset: u32, len: u32| if len == ABSENT { offset } else { offset + shift };
        c.data.extend_from_slice(part.data);
        for h in part.headers.chunks_exact(HEADER_STRIDE) {
            c.headers.extend_from_slice(&[h[0] + shift, h[1], h[2] + shift, h[3]]);
        }
        for r in part.records.chunks_exact(OUTPUT_STRIDE) {
            let topic = if r[7] == ABSENT { ABSENT } else { topics.get(r[7] as usize).copied().unwrap_or(ABSENT) };
            c.records.extend_from_slice(&[input, moved(r[1], r[2]), r[2], moved(r[3], r[4]), r[4], r[5] + header_shift, r[6], topic]);
        }
        c.timestamps.extend_from_slice(part.timestamps);
    }

    /// Outputs appended so far.
    pub fn len(&self) -> usize {
        self.columns.records.len() / OUTPUT_STRIDE
    }

    /// Whether no output was appended.
    pub fn is_empty(&self) -> bool {
        self.columns.records.is_empty()
    }

    /// Where the writer stands now.
    pub fn mark(&self) -> OutputMark {
        let c = &self.columns;
        OutputMark { data: c.data.len(), topics: c.topics.len(), records: c.records.len(), timestamps: c.timestamps.len(), headers: c.headers.len() }
    }

    /// Forgets everything appended since `mark`.
    pub fn rollback(&mut self, mark: OutputMark) {
        let c = &mut self.columns;
        c.data.truncate(mark.data);
        c.topics.truncate(mark.topics);
        c.records.truncate(mark.records);
        c.timestamps.truncate(mark.timestamps);
        c.headers.truncate(mark.headers);
    }

    /// The finished columns.
    pub fn finish(self) -> OutputColumns {
        self.columns
    }
}

/// Builds a source batch (a source in the SDK).
#[derive(Debug, Default)]
pub struct SourceWriter {
    columns: SourceColumns,
}

impl SourceWriter {
    /// An empty writer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a record with its headers; its position bytes go after its headers.
    pub fn push<'h>(&mut self, record: SourceRef<'_>, headers: impl IntoIterator<Item = (&'h str, &'h [u8])>) {
        let c = &mut self.columns;
        let key = append_opt(&mut c.data, record.key);
        let value = append_opt(&mut c.data, record.value);
        let (first, count) = push_headers(&mut c.data, &mut c.headers, headers);
        let topic = record.topic.map_or(ABSENT, |t| topic_index(&mut c.topics, t));
        let position = append_opt(&mut c.data, record.position);
        c.records.extend_from_slice(&[key.0, key.1, value.0, value.1, first, count, topic, position.0, position.1]);
        c.timestamps.push(record.timestamp.unwrap_or(NO_TIMESTAMP));
    }

    /// Records appended so far.
    pub fn len(&self) -> usize {
        self.columns.records.len() / SOURCE_STRIDE
    }

    /// Whether no record was appended.
    pub fn is_empty(&self) -> bool {
        self.columns.records.is_empty()
    }

    /// The finished columns.
    pub fn finish(self) -> SourceColumns {
        self.columns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{validate_output, InputView};

    fn record<'a>(value: &'a [u8], offset: i64) -> RecordRef<'a> {
        RecordRef { key: None, value: Some(value), timestamp: Some(1), topic: "t", partition: 2, offset }
    }

    #[test]
    fn the_input_writer_packs_records_into_columns() {
        let mut w = InputWriter::new();
        w.push(record(b"hello", 5), [("h", &b"v"[..])]);
        w.push(RecordRef { topic: "u", timestamp: None, ..record(b"", 6) }, []);
        assert_eq!((w.len(), w.bytes()), (2, 7));
        let c = w.finish();
        assert_eq!(c.topics, ["t", "u"]);
        assert_eq!(c.data, b"hellohv");
        assert_eq!(c.records, [0, ABSENT, 0, 5, 0, 1, 0, 2, 0, ABSENT, 7, 0, 1, 0, 1, 2]);
        assert_eq!(c.positions, [5, 1, 6, NO_TIMESTAMP]);
        assert_eq!(c.headers, [5, 1, 6, 1]);
        assert_eq!(InputView::new(&c).record(1), RecordRef { topic: "u", timestamp: None, ..record(b"", 6) });
    }

    fn output<'a>(input: u32, value: &'a [u8], topic: Option<&'a str>) -> OutputRef<'a> {
        OutputRef { input, key: None, value: Some(value), timestamp: None, topic }
    }

    /// The fast path for a fully forwarded output lays out exactly what `push` would for an
    /// output with no key, value, headers or topic, wherever it falls among other outputs.
    #[test]
    fn a_forwarded_output_is_laid_out_as_an_empty_push() {
        let (mut fast, mut slow) = (OutputWriter::new(), OutputWriter::new());
        for w in [&mut fast, &mut slow] {
            w.push(output(0, b"own", Some("t")), [("h", &b"v"[..]), ("i", &b""[..])]);
        }
        fast.push_forwarded(1, Some(7));
        slow.push(OutputRef { input: 1, key: None, value: None, timestamp: Some(7), topic: None }, []);
        fast.push_forwarded(2, None);
        slow.push(OutputRef { input: 2, key: None, value: None, timestamp: None, topic: None }, []);
        for w in [&mut fast, &mut slow] {
            w.push(output(3, b"after", None), [("j", &b"w"[..])]);
        }
        assert_eq!(fast.finish(), slow.finish());
    }

    #[test]
    fn a_rollback_forgets_outputs_and_the_topics_they_named() {
        let mut w = OutputWriter::new();
        w.push(output(0, b"keep", None), []);
        let mark = w.mark();
        w.push(output(1, b"drop", Some("side")), [("h", &b"x"[..])]);
        w.rollback(mark);
        assert_eq!(w.mark(), mark);
        let c = w.finish();
        assert_eq!((c.data, c.topics.len(), c.records, c.timestamps), (b"keep".to_vec(), 0, vec![0, 0, ABSENT, 0, 4, 0, 0, ABSENT], vec![NO_TIMESTAMP]));
    }

    #[test]
    fn appending_parts_renumbers_spans_headers_and_topics() {
        let mut one = OutputWriter::new();
        one.push(output(0, b"one", Some("a")), [("h", &b"1"[..])]);
        let mut two = OutputWriter::new();
        two.push(OutputRef { key: Some(b"k"), ..output(0, b"two", Some("b")) }, [("h", &b"2"[..])]);
        two.push(output(0, b"also", None), []);
        let (one, two) = (one.finish(), two.finish());
        let mut merged = OutputWriter::new();
        merged.append(OutputView::new(&one), 4);
        merged.append(OutputView::new(&two), 7);
        let merged = merged.finish();
        let view = OutputView::new(&merged);
        validate_output(view, 8, std::iter::empty::<u32>()).expect("a merge of valid parts is valid");
        let read: Vec<_> = view.iter().map(|p| (p.input, p.key, p.value, p.topic, view.headers(&p).collect::<Vec<_>>())).collect();
        assert_eq!(
            read,
            [
                (4, None, Some(&b"one"[..]), Some("a"), vec![("h", &b"1"[..])]),
                (7, Some(&b"k"[..]), Some(&b"two"[..]), Some("b"), vec![("h", &b"2"[..])]),
                (7, None, Some(&b"also"[..]), None, vec![]),
            ]
        );
    }

    #[test]
    fn a_source_record_keeps_its_position_after_its_headers() {
        let mut w = SourceWriter::new();
        let record = SourceRef { key: Some(b"k"), value: None, timestamp: Some(3), topic: Some("side"), position: Some(b"p") };
        w.push(record, [("h", &b"v"[..])]);
        w.push(SourceRef { topic: None, position: None, ..record }, []);
        assert_eq!(w.len(), 2);
        let c = w.finish();
        assert_eq!(c.data, b"khvpk");
        assert_eq!(c.records[..SOURCE_STRIDE], [0, 1, 0, ABSENT, 0, 1, 0, 3, 1]);
        assert_eq!(c.records[SOURCE_STRIDE..], [4, 1, 0, ABSENT, 1, 0, ABSENT, 0, ABSENT]);
        assert_eq!((c.topics, c.timestamps, c.headers), (vec!["side".to_owned()], vec![3, 3], vec![1, 1, 2, 1]));
    }
}
