//! The batch layout of `wit/types.wit`, host side: building input batches, checking and
//! reading what a plugin returns, and handing one stage's output to the next stage. Nothing
//! outside this module knows the column layout.

use std::ops::Range;

use crate::{InputBatch, OutputBatch};

/// A span length meaning "null".
const ABSENT: u32 = u32::MAX;
/// A timestamp meaning "none".
const NO_TIMESTAMP: i64 = i64::MIN;
/// `u32`s per input record: key-offset, key-length, value-offset, value-length, first-header,
/// header-count, topic-index, partition.
const INPUT_STRIDE: usize = 8;
/// `s64`s per input record: offset, timestamp.
const POSITION_STRIDE: usize = 2;
/// `u32`s per output record: input-index, key-offset, key-length, value-offset, value-length,
/// first-header, header-count, topic-index.
const OUTPUT_STRIDE: usize = 8;
/// `u32`s per header: key-offset, key-length, value-offset, value-length.
const HEADER_STRIDE: usize = 4;

/// One record to append to a batch, borrowed from wherever it came from.
#[derive(Debug, Clone, Copy)]
pub struct RecordRef<'a> {
    /// `None` for a null key.
    pub key: Option<&'a [u8]>,
    /// `None` for a null value.
    pub value: Option<&'a [u8]>,
    /// Milliseconds since the epoch.
    pub timestamp: Option<i64>,
    /// Source topic.
    pub topic: &'a str,
    /// Source partition.
    pub partition: i32,
    /// Source offset.
    pub offset: i64,
}

impl Default for InputBatch {
    fn default() -> Self {
        Self { data: Vec::new(), topics: Vec::new(), records: Vec::new(), positions: Vec::new(), headers: Vec::new() }
    }
}

/// Builds an [`InputBatch`] by copying records into its buffer and columns.
#[derive(Debug, Default)]
pub struct BatchBuilder {
    batch: InputBatch,
}

impl BatchBuilder {
    /// An empty builder with room for `records` records and `bytes` bytes of payload.
    pub fn with_capacity(records: usize, bytes: usize) -> Self {
        Self {
            batch: InputBatch {
                data: Vec::with_capacity(bytes),
                topics: Vec::new(),
                records: Vec::with_capacity(records * INPUT_STRIDE),
                positions: Vec::with_capacity(records * POSITION_STRIDE),
                headers: Vec::new(),
            },
        }
    }

    /// Appends a record with its headers (a null header value is passed as empty bytes).
    pub fn push<'h>(&mut self, record: RecordRef<'_>, headers: impl IntoIterator<Item = (&'h str, &'h [u8])>) {
        let b = &mut self.batch;
        let (key_offset, key_len) = append_opt(&mut b.data, record.key);
        let (value_offset, value_len) = append_opt(&mut b.data, record.value);
        let first_header = len_u32(b.headers.len() / HEADER_STRIDE);
        for (k, v) in headers {
            let (ko, kl) = append(&mut b.data, k.as_bytes());
            let (vo, vl) = append(&mut b.data, v);
            b.headers.extend_from_slice(&[ko, kl, vo, vl]);
        }
        let header_count = len_u32(b.headers.len() / HEADER_STRIDE) - first_header;
        let topic = topic_index(&mut b.topics, record.topic);
        b.records.extend_from_slice(&[
            key_offset,
            key_len,
            value_offset,
            value_len,
            first_header,
            header_count,
            topic,
            record.partition as u32,
        ]);
        b.positions.extend_from_slice(&[record.offset, record.timestamp.unwrap_or(NO_TIMESTAMP)]);
    }

    /// Records appended so far.
    pub fn len(&self) -> usize {
        self.batch.records.len() / INPUT_STRIDE
    }

    /// Whether no record was appended.
    pub fn is_empty(&self) -> bool {
        self.batch.records.is_empty()
    }

    /// Payload bytes appended so far.
    pub fn bytes(&self) -> usize {
        self.batch.data.len()
    }

    /// The finished batch.
    pub fn finish(self) -> InputBatch {
        self.batch
    }
}

/// Where an input record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// Index into the batch's `topics`.
    pub topic: u32,
    /// Partition.
    pub partition: i32,
    /// Offset.
    pub offset: i64,
}

/// Number of records in an input batch.
pub fn input_len(batch: &InputBatch) -> usize {
    batch.records.len() / INPUT_STRIDE
}

/// Input record `i` of a batch (as consumed), for dead-lettering it unchanged.
pub fn input_record(batch: &InputBatch, i: usize) -> (RecordRef<'_>, Vec<(&str, &[u8])>) {
    let r = &batch.records[i * INPUT_STRIDE..][..INPUT_STRIDE];
    let bytes = |offset: u32, len: u32| (len != ABSENT).then(|| span(&batch.data, offset, len).map(|s| &batch.data[s]).unwrap_or_default());
    let headers = batch.headers[r[4] as usize * HEADER_STRIDE..][..r[5] as usize * HEADER_STRIDE]
        .chunks_exact(HEADER_STRIDE)
        .map(|h| (std::str::from_utf8(bytes(h[0], h[1]).unwrap_or_default()).unwrap_or_default(), bytes(h[2], h[3]).unwrap_or_default()))
        .collect();
    let ts = batch.positions[i * POSITION_STRIDE + 1];
    let record = RecordRef {
        key: bytes(r[0], r[1]),
        value: bytes(r[2], r[3]),
        timestamp: (ts != NO_TIMESTAMP).then_some(ts),
        topic: &batch.topics[r[6] as usize],
        partition: r[7] as i32,
        offset: batch.positions[i * POSITION_STRIDE],
    };
    (record, headers)
}

/// Number of records in an output batch (before validation: a ragged tail is not counted).
pub(crate) fn output_len(batch: &OutputBatch) -> usize {
    batch.records.len() / OUTPUT_STRIDE
}

/// Where input record `i` came from.
pub fn input_source(batch: &InputBatch, i: usize) -> Source {
    let r = &batch.records[i * INPUT_STRIDE..][..INPUT_STRIDE];
    Source { topic: r[6], partition: r[7] as i32, offset: batch.positions[i * POSITION_STRIDE] }
}

fn topic_index(topics: &mut Vec<String>, topic: &str) -> u32 {
    match topics.iter().position(|t| t == topic) {
        Some(i) => len_u32(i),
        None => {
            topics.push(topic.to_owned());
            len_u32(topics.len() - 1)
        }
    }
}

fn append(data: &mut Vec<u8>, bytes: &[u8]) -> (u32, u32) {
    let offset = len_u32(data.len());
    data.extend_from_slice(bytes);
    (offset, len_u32(bytes.len()))
}

fn append_opt(data: &mut Vec<u8>, bytes: Option<&[u8]>) -> (u32, u32) {
    bytes.map_or((0, ABSENT), |b| append(data, b))
}

/// Batches are capped far below 4 GiB (hostcall data limits), so sizes fit in `u32`; a
/// violation is a host bug worth stopping for.
fn len_u32(n: usize) -> u32 {
    u32::try_from(n).expect("batch larger than 4 GiB: the batch size cap is broken")
}

/// The byte range of a span, if it is valid for `data` (and not "absent").
fn span(data: &[u8], offset: u32, len: u32) -> Option<Range<usize>> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    (end <= data.len()).then_some(start..end)
}

/// Checks everything a plugin returned against the contract, so the rest of the host can
/// read outputs without further checks. `inputs` is the number of input records.
pub(crate) fn validate_output(out: &OutputBatch, inputs: usize) -> Result<(), String> {
    if out.records.len() % OUTPUT_STRIDE != 0 || out.headers.len() % HEADER_STRIDE != 0 {
        return Err("record or header columns are not a whole number of entries".into());
    }
    let n = out.records.len() / OUTPUT_STRIDE;
    if out.timestamps.len() != n {
        return Err(format!("{} timestamps for {n} outputs", out.timestamps.len()));
    }
    let header_count = out.headers.len() / HEADER_STRIDE;
    for (j, h) in out.headers.chunks_exact(HEADER_STRIDE).enumerate() {
        let key = span(&out.data, h[0], h[1]).ok_or_else(|| format!("header {j}: key span out of range"))?;
        std::str::from_utf8(&out.data[key]).map_err(|_| format!("header {j}: key is not UTF-8"))?;
        span(&out.data, h[2], h[3]).ok_or_else(|| format!("header {j}: value span out of range"))?;
    }
    for (i, r) in out.records.chunks_exact(OUTPUT_STRIDE).enumerate() {
        if r[0] as usize >= inputs {
            return Err(format!("output {i}: input index {} out of range (batch of {inputs})", r[0]));
        }
        for (offset, len) in [(r[1], r[2]), (r[3], r[4])] {
            if len != ABSENT && span(&out.data, offset, len).is_none() {
                return Err(format!("output {i}: key or value span out of range"));
            }
        }
        if u64::from(r[5]) + u64::from(r[6]) > header_count as u64 {
            return Err(format!("output {i}: header range out of range"));
        }
        if r[7] != ABSENT && r[7] as usize >= out.topics.len() {
            return Err(format!("output {i}: topic index out of range"));
        }
    }
    for (i, t) in out.topics.iter().enumerate() {
        if t.is_empty() || t.len() > 249 || !t.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) {
            return Err(format!("topic {i} ({t:?}) is not a valid Kafka topic name"));
        }
    }
    for e in &out.errors {
        if e.input as usize >= inputs {
            return Err(format!("record error for input {} out of range (batch of {inputs})", e.input));
        }
    }
    Ok(())
}

/// One output record of a validated batch.
#[derive(Debug, Clone, Copy)]
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
    headers: (u32, u32),
}

/// Read access to an output batch returned by [`crate::TransformInstance::transform`], which
/// validated it.
#[derive(Clone, Copy)]
pub struct OutputView<'a> {
    batch: &'a OutputBatch,
}

impl<'a> OutputView<'a> {
    /// Wraps a validated batch.
    pub fn new(batch: &'a OutputBatch) -> Self {
        Self { batch }
    }

    /// Number of outputs.
    pub fn len(&self) -> usize {
        self.batch.records.len() / OUTPUT_STRIDE
    }

    /// Whether there is no output.
    pub fn is_empty(&self) -> bool {
        self.batch.records.is_empty()
    }

    /// Output `i`.
    pub fn get(&self, i: usize) -> Produced<'a> {
        let r = &self.batch.records[i * OUTPUT_STRIDE..][..OUTPUT_STRIDE];
        let bytes = |offset: u32, len: u32| (len != ABSENT).then(|| self.bytes(offset, len));
        let ts = self.batch.timestamps[i];
        Produced {
            input: r[0],
            key: bytes(r[1], r[2]),
            value: bytes(r[3], r[4]),
            headers: (r[5], r[6]),
            timestamp: (ts != NO_TIMESTAMP).then_some(ts),
            topic: (r[7] != ABSENT).then(|| self.batch.topics[r[7] as usize].as_str()),
        }
    }

    /// Every output, in order.
    pub fn iter(&self) -> impl Iterator<Item = Produced<'a>> + 'a {
        let view = *self;
        (0..self.len()).map(move |i| view.get(i))
    }

    /// The headers of an output.
    pub fn headers(&self, p: &Produced<'a>) -> impl Iterator<Item = (&'a str, &'a [u8])> + 'a {
        let view = *self;
        let (first, count) = (p.headers.0 as usize, p.headers.1 as usize);
        self.batch.headers[first * HEADER_STRIDE..][..count * HEADER_STRIDE].chunks_exact(HEADER_STRIDE).map(move |h| {
            (std::str::from_utf8(view.bytes(h[0], h[1])).unwrap_or_default(), view.bytes(h[2], h[3]))
        })
    }

    fn bytes(&self, offset: u32, len: u32) -> &'a [u8] {
        span(&self.batch.data, offset, len).map(|r| &self.batch.data[r]).unwrap_or_default()
    }
}

/// Turns a stage's outputs into the next stage's inputs without copying any byte: the data
/// buffer and headers move over. `keep` lists, per next input, the output index and the
/// source (topic index into `topics`, partition, offset) of the Kafka record it derives from.
pub fn next_stage_input(out: OutputBatch, keep: &[(usize, Source)], topics: Vec<String>) -> InputBatch {
    let mut records = Vec::with_capacity(keep.len() * INPUT_STRIDE);
    let mut positions = Vec::with_capacity(keep.len() * POSITION_STRIDE);
    for &(i, source) in keep {
        let r = &out.records[i * OUTPUT_STRIDE..][..OUTPUT_STRIDE];
        records.extend_from_slice(&[r[1], r[2], r[3], r[4], r[5], r[6], source.topic, source.partition as u32]);
        positions.extend_from_slice(&[source.offset, out.timestamps[i]]);
    }
    InputBatch { data: out.data, topics, records, positions, headers: out.headers }
}

/// A batch holding only input record `i` of `batch` (to find which record makes a plugin
/// fault). Copies that record's bytes.
pub fn single(batch: &InputBatch, i: usize) -> InputBatch {
    let (record, headers) = input_record(batch, i);
    let mut b = BatchBuilder::default();
    b.push(record, headers);
    b.finish()
}

/// Concatenates validated output batches into one, renumbering what each part refers to.
#[derive(Default)]
pub struct OutputMerger {
    out: Option<OutputBatch>,
}

impl OutputMerger {
    /// Appends `part`, whose outputs and errors all refer to input `input` of the whole batch.
    pub fn push(&mut self, part: OutputBatch, input: u32) {
        let out = self.out.get_or_insert_with(|| OutputBatch {
            data: Vec::new(),
            topics: Vec::new(),
            records: Vec::new(),
            timestamps: Vec::new(),
            headers: Vec::new(),
            errors: Vec::new(),
        });
        let shift = len_u32(out.data.len());
        let header_shift = len_u32(out.headers.len() / HEADER_STRIDE);
        let topics: Vec<u32> = part.topics.iter().map(|t| topic_index(&mut out.topics, t)).collect();
        let moved = |offset: u32, len: u32| if len == ABSENT { offset } else { offset + shift };
        out.data.extend_from_slice(&part.data);
        for h in part.headers.chunks_exact(HEADER_STRIDE) {
            out.headers.extend_from_slice(&[h[0] + shift, h[1], h[2] + shift, h[3]]);
        }
        for r in part.records.chunks_exact(OUTPUT_STRIDE) {
            let topic = if r[7] == ABSENT { ABSENT } else { topics[r[7] as usize] };
            out.records.extend_from_slice(&[input, moved(r[1], r[2]), r[2], moved(r[3], r[4]), r[4], r[5] + header_shift, r[6], topic]);
        }
        out.timestamps.extend_from_slice(&part.timestamps);
        out.errors.extend(part.errors.into_iter().map(|mut e| {
            e.input = input;
            e
        }));
    }

    /// Adds an error for input `input`.
    pub fn fail(&mut self, input: u32, error: crate::PluginError) {
        self.push(OutputBatch { data: vec![], topics: vec![], records: vec![], timestamps: vec![], headers: vec![], errors: vec![crate::RecordError { input, error }] }, input);
    }

    /// The merged batch.
    pub fn finish(self) -> OutputBatch {
        self.out.unwrap_or(OutputBatch { data: vec![], topics: vec![], records: vec![], timestamps: vec![], headers: vec![], errors: vec![] })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ErrorKind, PluginError, RecordError};

    fn record<'a>(value: &'a [u8], offset: i64) -> RecordRef<'a> {
        RecordRef { key: None, value: Some(value), timestamp: Some(1), topic: "t", partition: 2, offset }
    }

    #[test]
    fn builder_packs_records_into_columns() {
        let mut b = BatchBuilder::default();
        b.push(record(b"hello", 5), [("h", &b"v"[..])]);
        b.push(RecordRef { topic: "u", timestamp: None, ..record(b"", 6) }, []);
        assert_eq!(b.len(), 2);
        let batch = b.finish();
        assert_eq!(batch.topics, ["t", "u"]);
        assert_eq!(batch.data, b"hellohv");
        assert_eq!(batch.records, [0, ABSENT, 0, 5, 0, 1, 0, 2, 0, ABSENT, 7, 0, 1, 0, 1, 2]);
        assert_eq!(batch.positions, [5, 1, 6, NO_TIMESTAMP]);
        assert_eq!(batch.headers, [5, 1, 6, 1]);
        assert_eq!(input_source(&batch, 1), Source { topic: 1, partition: 2, offset: 6 });
    }

    fn output(records: Vec<u32>) -> OutputBatch {
        let n = records.len() / OUTPUT_STRIDE;
        OutputBatch { data: b"abc".to_vec(), topics: vec!["x".into()], records, timestamps: vec![NO_TIMESTAMP; n], headers: vec![], errors: vec![] }
    }

    #[test]
    fn validation_accepts_good_and_refuses_bad_output() {
        assert!(validate_output(&output(vec![0, 0, ABSENT, 1, 2, 0, 0, 0]), 1).is_ok());
        let bad_span = validate_output(&output(vec![0, 0, ABSENT, 2, 2, 0, 0, 0]), 1);
        assert!(bad_span.unwrap_err().contains("span out of range"));
        let bad_input = validate_output(&output(vec![3, 0, ABSENT, 0, 1, 0, 0, ABSENT]), 1);
        assert!(bad_input.unwrap_err().contains("input index 3"));
        let overflow = validate_output(&output(vec![0, u32::MAX - 1, 5, 0, 1, 0, 0, ABSENT]), 1);
        assert!(overflow.is_err());
        let ragged = validate_output(&output(vec![0, 0, 0]), 1);
        assert!(ragged.is_err());
        let mut bad_error = output(vec![]);
        bad_error.errors.push(RecordError { input: 1, error: PluginError { kind: ErrorKind::Fatal, message: String::new() } });
        assert!(validate_output(&bad_error, 1).is_err());
    }

    #[test]
    fn single_and_merge_round_trip_a_record() {
        let mut b = BatchBuilder::default();
        b.push(record(b"one", 5), [("h", &b"1"[..])]);
        b.push(RecordRef { key: Some(b"k"), ..record(b"two", 6) }, [("h", &b"2"[..])]);
        let batch = b.finish();
        let second = single(&batch, 1);
        assert_eq!(input_len(&second), 1);
        assert_eq!(input_source(&second, 0), Source { topic: 0, partition: 2, offset: 6 });
        // An "identity" output for each single batch, merged back in input order.
        let mut merger = OutputMerger::default();
        for i in 0..2 {
            let one = single(&batch, i);
            let r = &one.records[..INPUT_STRIDE];
            let out = OutputBatch {
                data: one.data.clone(),
                topics: vec!["routed".into()],
                records: vec![0, r[0], r[1], r[2], r[3], r[4], r[5], if i == 1 { 0 } else { ABSENT }],
                timestamps: vec![one.positions[1]],
                headers: one.headers.clone(),
                errors: vec![],
            };
            merger.push(out, i as u32);
        }
        let merged = merger.finish();
        validate_output(&merged, 2).unwrap();
        let view = OutputView::new(&merged);
        let values: Vec<_> = view.iter().map(|p| (p.input, p.key, p.value, p.topic)).collect();
        assert_eq!(values, [(0, None, Some(&b"one"[..]), None), (1, Some(&b"k"[..]), Some(&b"two"[..]), Some("routed"))]);
        assert_eq!(view.headers(&view.get(1)).collect::<Vec<_>>(), [("h", &b"2"[..])]);
    }

    #[test]
    fn a_view_reads_outputs_and_the_next_stage_keeps_sources() {
        let mut out = output(vec![0, ABSENT, ABSENT, 1, 2, 0, 1, 0]);
        out.headers = vec![0, 1, 2, 1];
        out.timestamps = vec![77];
        validate_output(&out, 1).unwrap();
        let view = OutputView::new(&out);
        let p = view.get(0);
        assert_eq!((p.input, p.key, p.value, p.timestamp, p.topic), (0, None, Some(&b"bc"[..]), Some(77), Some("x")));
        assert_eq!(view.headers(&p).collect::<Vec<_>>(), [("a", &b"c"[..])]);
        let next = next_stage_input(out, &[(0, Source { topic: 0, partition: 3, offset: 9 })], vec!["in".into()]);
        assert_eq!(input_source(&next, 0), Source { topic: 0, partition: 3, offset: 9 });
        assert_eq!(next.positions, [9, 77]);
        assert_eq!(next.records[..6], [ABSENT, ABSENT, 1, 2, 0, 1]);
    }
}
