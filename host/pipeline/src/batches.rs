//! The chain's batch plumbing, on `turnpike-batch-layout`: a stage's outputs become the next
//! stage's inputs without copying, per-record results merge back into one batch, and an empty
//! chain hands its input through untouched.

use std::borrow::Cow;

use turnpike_batch_layout::{Headers, InputView, OutputColumns, OutputView, OutputWriter};
use turnpike_runtime::{BatchBuilder, InputBatch, OutputBatch, PluginError, RecordError};

pub(crate) use turnpike_batch_layout::Source;

/// Where input record `i` came from.
pub(crate) fn input_source(batch: &InputBatch, i: usize) -> Source {
    InputView::new(batch).source(i)
}

/// Turns a stage's outputs into the next stage's inputs without copying any byte: the data
/// buffer and headers move over. `keep` lists, per next input, the output index and the
/// source (topic index into `topics`, partition, offset) of the Kafka record it derives from.
pub(crate) fn next_stage_input(out: OutputBatch, keep: &[(usize, Source)], topics: Vec<String>) -> InputBatch {
    let OutputBatch { data, records, timestamps, headers, .. } = out;
    OutputColumns { data, topics: Vec::new(), records, timestamps, headers }.into_next_input(keep, topics).into()
}

/// A batch holding only input record `i` of `batch` (to find which record makes a plugin
/// fault). Copies that record's bytes.
pub(crate) fn single(batch: &InputBatch, i: usize) -> InputBatch {
    subset(batch, &[i])
}

/// A batch of the records of `batch` at `picked` (copied), each keeping where it came from:
/// one record to isolate a fault, or those a step's predicate selects.
pub(crate) fn subset(batch: &InputBatch, picked: &[usize]) -> InputBatch {
    let view = InputView::new(batch);
    let mut b = BatchBuilder::default();
    for &i in picked {
        b.push(view.record(i), view.headers(i));
    }
    b.finish()
}

/// Concatenates validated output batches into one, renumbering what each part refers to.
#[derive(Default)]
pub(crate) struct OutputMerger {
    writer: OutputWriter,
    errors: Vec<RecordError>,
}

impl OutputMerger {
    /// Appends `part`, whose outputs and errors all refer to input `input` of the whole batch.
    pub(crate) fn push(&mut self, part: OutputBatch, input: u32) {
        self.writer.append(OutputView::new(&part), input);
        self.errors.extend(part.errors.into_iter().map(|mut e| {
            e.input = input;
            e
        }));
    }

    /// Adds an error for input `input`.
    pub(crate) fn fail(&mut self, input: u32, error: PluginError) {
        self.errors.push(RecordError { input, error });
    }

    /// The merged batch.
    pub(crate) fn finish(self) -> OutputBatch {
        let OutputColumns { data, topics, records, timestamps, headers } = self.writer.finish();
        OutputBatch { data, topics, records, timestamps, headers, errors: self.errors }
    }
}

/// What a chain hands on: the last stage's output, or, when the chain has no transform, the
/// input batch itself, borrowed, so that connectors without transforms copy no batch.
pub(crate) enum ChainBatch<'a> {
    /// No transform ran: output `i` is input record `i`, for every record, in order.
    Passed(&'a InputBatch),
    /// The last stage's output; owns every output byte.
    Transformed(OutputBatch),
}

/// One output, as it is produced.
pub(crate) struct Outgoing<'a> {
    pub(crate) key: Option<&'a [u8]>,
    pub(crate) value: Option<&'a [u8]>,
    pub(crate) timestamp: Option<i64>,
    pub(crate) headers: Headers<'a>,
}

impl<'a> ChainBatch<'a> {
    /// Output `i`.
    pub(crate) fn get(&self, i: usize) -> Outgoing<'_> {
        match self {
            ChainBatch::Passed(batch) => {
                let view = InputView::new(*batch);
                let r = view.record(i);
                Outgoing { key: r.key, value: r.value, timestamp: r.timestamp, headers: view.headers(i) }
            }
            ChainBatch::Transformed(out) => {
                let view = OutputView::new(out);
                let p = view.get(i);
                Outgoing { key: p.key, value: p.value, timestamp: p.timestamp, headers: view.headers(&p) }
            }
        }
    }

    /// The outputs in `keep` (output index, source of the Kafka record it derives from) as the
    /// batch a sink writes. A passed batch is handed over as it is (its outputs are its own
    /// records, in order) instead of being copied.
    pub(crate) fn into_sink_input(self, keep: &[(usize, Source)], topics: &[String]) -> Cow<'a, InputBatch> {
        match self {
            ChainBatch::Passed(batch) => {
                debug_assert!(keep.len() == InputView::new(batch).len() && keep.iter().enumerate().all(|(k, &(j, _))| k == j), "an empty chain passes every record, in order");
                Cow::Borrowed(batch)
            }
            ChainBatch::Transformed(out) => Cow::Owned(next_stage_input(out, keep, topics.to_vec())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_batch_layout::{validate_output, ABSENT, INPUT_STRIDE};
    use turnpike_runtime::{input_len, RecordRef};

    fn record<'a>(value: &'a [u8], offset: i64) -> RecordRef<'a> {
        RecordRef { key: None, value: Some(value), timestamp: Some(1), topic: "t", partition: 2, offset }
    }

    fn two_records() -> InputBatch {
        let mut b = BatchBuilder::default();
        b.push(record(b"one", 5), [("h", &b"1"[..])]);
        b.push(RecordRef { key: Some(b"k"), ..record(b"two", 6) }, [("h", &b"2"[..])]);
        b.finish()
    }

    #[test]
    fn single_and_merge_round_trip_a_record() {
        let batch = two_records();
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
        merger.fail(1, PluginError { kind: turnpike_runtime::ErrorKind::InvalidRecord, message: "no".into() });
        let merged = merger.finish();
        validate_output(OutputView::new(&merged), 2, merged.errors.iter().map(|e| e.input)).unwrap();
        let view = OutputView::new(&merged);
        let values: Vec<_> = view.iter().map(|p| (p.input, p.key, p.value, p.topic)).collect();
        assert_eq!(values, [(0, None, Some(&b"one"[..]), None), (1, Some(&b"k"[..]), Some(&b"two"[..]), Some("routed"))]);
        assert_eq!(view.headers(&view.get(1)).collect::<Vec<_>>(), [("h", &b"2"[..])]);
        assert_eq!(merged.errors.iter().map(|e| e.input).collect::<Vec<_>>(), [1]);
    }

    #[test]
    fn the_next_stage_keeps_sources() {
        let out = OutputBatch { data: b"abc".to_vec(), topics: vec!["x".into()], records: vec![0, ABSENT, ABSENT, 1, 2, 0, 1, 0], timestamps: vec![77], headers: vec![0, 1, 2, 1], errors: vec![] };
        let next = next_stage_input(out, &[(0, Source { topic: 0, partition: 3, offset: 9 })], vec!["in".into()]);
        assert_eq!(input_source(&next, 0), Source { topic: 0, partition: 3, offset: 9 });
        assert_eq!(next.positions, [9, 77]);
        assert_eq!(next.records[..6], [ABSENT, ABSENT, 1, 2, 0, 1]);
        assert_eq!(next.topics, ["in"]);
    }

    /// An empty chain's batch reaches a sink as the very batch that was read, and its outputs
    /// are read from that batch's own buffer: neither path copies.
    #[test]
    fn a_passed_batch_is_written_and_produced_without_a_copy() {
        let batch = two_records();
        let keep: Vec<_> = (0..2).map(|i| (i, input_source(&batch, i))).collect();
        let to_write = ChainBatch::Passed(&batch).into_sink_input(&keep, &batch.topics);
        assert!(matches!(&to_write, Cow::Borrowed(b) if std::ptr::eq(*b, &batch)), "the sink gets the batch itself");
        let passed = ChainBatch::Passed(&batch);
        let second = passed.get(1);
        assert!(second.value.is_some_and(|v| batch.data.as_ptr_range().contains(&v.as_ptr())), "values point into the batch read");
        assert_eq!((second.key, second.value, second.timestamp), (Some(&b"k"[..]), Some(&b"two"[..]), Some(1)));
        assert_eq!(second.headers.collect::<Vec<_>>(), [("h", &b"2"[..])]);
    }

    #[test]
    fn a_transformed_batch_reaches_the_sink_with_the_sources_of_its_records() {
        let out = OutputBatch { data: b"ab".to_vec(), topics: vec![], records: vec![0, ABSENT, ABSENT, 1, 1, 0, 0, ABSENT], timestamps: vec![3], headers: vec![], errors: vec![] };
        let keep = [(0, Source { topic: 0, partition: 4, offset: 8 })];
        let to_write = ChainBatch::Transformed(out).into_sink_input(&keep, &["in".to_owned()]);
        assert!(matches!(to_write, Cow::Owned(_)));
        let view = InputView::new(&*to_write);
        assert_eq!((view.topic(0), view.partition(0), view.offset(0), view.value(0), view.timestamp(0)), ("in", 4, 8, Some(&b"b"[..]), Some(3)));
    }
}
