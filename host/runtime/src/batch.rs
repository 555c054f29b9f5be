//! Host-side helpers for the batch layout of `wit/types.wit`: building an input batch from
//! records, and checking and reading what a plugin returns.

use crate::{Header, InputBatch, InputRecord, OutputBatch, OutputRecord, Span};

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

/// Builds an [`InputBatch`] by copying records into its single data buffer.
#[derive(Debug, Default)]
pub struct BatchBuilder {
    batch: InputBatch,
}

impl Default for InputBatch {
    fn default() -> Self {
        Self { data: Vec::new(), topics: Vec::new(), headers: Vec::new(), records: Vec::new() }
    }
}

impl BatchBuilder {
    /// An empty builder with room for `records` records and `bytes` bytes of payload.
    pub fn with_capacity(records: usize, bytes: usize) -> Self {
        Self {
            batch: InputBatch {
                data: Vec::with_capacity(bytes),
                topics: Vec::new(),
                headers: Vec::new(),
                records: Vec::with_capacity(records),
            },
        }
    }

    /// Appends a record with its headers (a null header value is passed as empty bytes).
    pub fn push<'h>(&mut self, record: RecordRef<'_>, headers: impl IntoIterator<Item = (&'h str, &'h [u8])>) {
        let b = &mut self.batch;
        let key = record.key.map(|k| append(&mut b.data, k));
        let value = record.value.map(|v| append(&mut b.data, v));
        let first_header = len_u32(b.headers.len());
        for (k, v) in headers {
            let key = append(&mut b.data, k.as_bytes());
            let value = append(&mut b.data, v);
            b.headers.push(Header { key, value });
        }
        let headers = Span { offset: first_header, len: len_u32(b.headers.len()) - first_header };
        let topic = match b.topics.iter().position(|t| t == record.topic) {
            Some(i) => len_u32(i),
            None => {
                b.topics.push(record.topic.to_owned());
                len_u32(b.topics.len() - 1)
            }
        };
        b.records.push(InputRecord {
            key,
            value,
            headers,
            timestamp: record.timestamp,
            topic,
            partition: record.partition,
            offset: record.offset,
        });
    }

    /// Records appended so far.
    pub fn len(&self) -> usize {
        self.batch.records.len()
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

fn append(data: &mut Vec<u8>, bytes: &[u8]) -> Span {
    let offset = len_u32(data.len());
    data.extend_from_slice(bytes);
    Span { offset, len: len_u32(bytes.len()) }
}

/// Batches are capped far below 4 GiB (hostcall data limits), so lengths fit in `u32`; a
/// violation is a host bug worth stopping for.
fn len_u32(n: usize) -> u32 {
    u32::try_from(n).expect("batch larger than 4 GiB: the batch size cap is broken")
}

fn slice(data: &[u8], span: Span) -> Option<&[u8]> {
    let start = usize::try_from(span.offset).ok()?;
    let end = start.checked_add(usize::try_from(span.len).ok()?)?;
    data.get(start..end)
}

/// Checks everything a plugin returned against the contract, so the rest of the host can
/// read outputs without further checks. `inputs` is the number of input records.
pub(crate) fn validate_output(out: &OutputBatch, inputs: usize) -> Result<(), String> {
    let span_ok = |s: Span| slice(&out.data, s).is_some();
    for (i, h) in out.headers.iter().enumerate() {
        let key = slice(&out.data, h.key).ok_or_else(|| format!("header {i}: key span out of range"))?;
        std::str::from_utf8(key).map_err(|_| format!("header {i}: key is not UTF-8"))?;
        if !span_ok(h.value) {
            return Err(format!("header {i}: value span out of range"));
        }
    }
    for (i, r) in out.records.iter().enumerate() {
        if usize::try_from(r.input).map_or(true, |x| x >= inputs) {
            return Err(format!("output {i}: input index {} out of range (batch of {inputs})", r.input));
        }
        if r.key.is_some_and(|s| !span_ok(s)) || r.value.is_some_and(|s| !span_ok(s)) {
            return Err(format!("output {i}: key or value span out of range"));
        }
        let hdr_end = u64::from(r.headers.offset) + u64::from(r.headers.len);
        if hdr_end > out.headers.len() as u64 {
            return Err(format!("output {i}: header range out of range"));
        }
        if r.topic.is_some_and(|t| usize::try_from(t).map_or(true, |t| t >= out.topics.len())) {
            return Err(format!("output {i}: topic index out of range"));
        }
    }
    for (i, t) in out.topics.iter().enumerate() {
        if t.is_empty() || t.len() > 249 || !t.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) {
            return Err(format!("topic {i} ({t:?}) is not a valid Kafka topic name"));
        }
    }
    for e in &out.errors {
        if usize::try_from(e.input).map_or(true, |x| x >= inputs) {
            return Err(format!("record error for input {} out of range (batch of {inputs})", e.input));
        }
    }
    Ok(())
}

/// Read access to a validated output batch.
pub struct OutputView<'a> {
    batch: &'a OutputBatch,
}

impl<'a> OutputView<'a> {
    /// Wraps a batch returned by [`crate::TransformInstance::transform`] (already validated).
    pub fn new(batch: &'a OutputBatch) -> Self {
        Self { batch }
    }

    /// Bytes of a span (empty if out of range, which validation rules out).
    pub fn bytes(&self, span: Span) -> &'a [u8] {
        slice(&self.batch.data, span).unwrap_or_default()
    }

    /// The key of an output record.
    pub fn key(&self, r: &OutputRecord) -> Option<&'a [u8]> {
        r.key.map(|s| self.bytes(s))
    }

    /// The value of an output record.
    pub fn value(&self, r: &OutputRecord) -> Option<&'a [u8]> {
        r.value.map(|s| self.bytes(s))
    }

    /// The destination topic an output names, if any.
    pub fn topic(&self, r: &OutputRecord) -> Option<&'a str> {
        let i = usize::try_from(r.topic?).ok()?;
        self.batch.topics.get(i).map(String::as_str)
    }

    /// The headers of an output record.
    pub fn headers(&self, r: &OutputRecord) -> impl Iterator<Item = (&'a str, &'a [u8])> + 'a {
        let start = usize::try_from(r.headers.offset).unwrap_or(usize::MAX);
        let len = usize::try_from(r.headers.len).unwrap_or(0);
        let headers = self.batch.headers.get(start..start.saturating_add(len)).unwrap_or_default();
        let data = &self.batch.data;
        headers.iter().map(move |h| {
            let key = slice(data, h.key).and_then(|k| std::str::from_utf8(k).ok()).unwrap_or_default();
            (key, slice(data, h.value).unwrap_or_default())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record<'a>(value: &'a [u8], offset: i64) -> RecordRef<'a> {
        RecordRef { key: None, value: Some(value), timestamp: Some(1), topic: "t", partition: 0, offset }
    }

    #[test]
    fn builder_packs_records_into_one_buffer() {
        let mut b = BatchBuilder::default();
        b.push(record(b"hello", 5), [("h", &b"v"[..])]);
        b.push(RecordRef { topic: "u", ..record(b"", 6) }, []);
        let batch = b.finish();
        assert_eq!(batch.topics, ["t", "u"]);
        assert_eq!(batch.records[0].value, Some(Span { offset: 0, len: 5 }));
        assert_eq!(batch.records[0].headers, Span { offset: 0, len: 1 });
        assert_eq!(batch.records[1].value, Some(Span { offset: 7, len: 0 }));
        assert_eq!(batch.records[1].headers, Span { offset: 1, len: 0 });
        assert_eq!(batch.data, b"hellohv");
    }

    fn output(records: Vec<OutputRecord>) -> OutputBatch {
        OutputBatch { data: b"abc".to_vec(), topics: vec!["x".into()], headers: vec![], records, errors: vec![] }
    }

    fn out_record(input: u32, value: Span) -> OutputRecord {
        OutputRecord { input, key: None, value: Some(value), headers: Span { offset: 0, len: 0 }, timestamp: None, topic: Some(0) }
    }

    #[test]
    fn validation_accepts_good_and_refuses_bad_output() {
        assert!(validate_output(&output(vec![out_record(0, Span { offset: 1, len: 2 })]), 1).is_ok());
        let bad_span = validate_output(&output(vec![out_record(0, Span { offset: 2, len: 2 })]), 1);
        assert!(bad_span.unwrap_err().contains("span out of range"));
        let bad_input = validate_output(&output(vec![out_record(3, Span { offset: 0, len: 1 })]), 1);
        assert!(bad_input.unwrap_err().contains("input index 3"));
        let overflow = validate_output(&output(vec![out_record(0, Span { offset: u32::MAX, len: u32::MAX })]), 1);
        assert!(overflow.is_err());
    }
}
