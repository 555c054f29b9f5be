//! The golden batches of `tests/fixtures/batch` through the SDK: a transform reads
//! `input.bin` through [`Record`] and, applying the golden rule of the README there through
//! [`Output`], writes the outputs of `output.bin`; the test harness writes exactly `input.bin`
//! from the records it describes. The host, Python and JS tests hold their layout code to the
//! same bytes. Since contract 0.1.4 the SDK's forwarded outputs only name their parts, so its
//! output batch holds only its own bytes, and what it says reads exactly as `output.bin` once
//! the forwarded parts are resolved.

use crate::bindings::turnpike::plugin::types as wit;
use crate::testing::{self, input_batch, TestRecord, Written};
use crate::transform::{run_batch, run_batch_forwarding};
use turnpike_batch_layout::{OutputView, FORWARD_ALL};
use crate::{ConfigError, NewRecord, NoConfig, Output, Record, RecordError, Transform};

#[allow(dead_code)]
mod file {
    include!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/batch/golden_file.rs"));
}

use file::GoldenFile;

/// The golden rule, through the SDK's ordinary API; also notes every record it read.
#[derive(Default)]
struct Golden {
    seen: Vec<TestRecord>,
}

impl Transform for Golden {
    type Config = NoConfig;

    fn create(_: NoConfig) -> Result<Self, ConfigError> {
        Ok(Self::default())
    }

    fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        self.seen.push(TestRecord {
            key: record.key().map(<[u8]>::to_vec),
            value: record.value().map(<[u8]>::to_vec),
            headers: record.headers().map(|(k, v)| (k.to_owned(), v.to_vec())).collect(),
            timestamp: record.timestamp(),
            topic: record.topic().to_owned(),
            partition: record.partition(),
            offset: Some(record.offset()),
        });
        if record.value() == Some(&b"drop"[..]) {
            return Ok(());
        }
        out.forward(record);
        if record.header("audit").is_some() {
            let mut audit = NewRecord::new().value("audited").header("from", record.topic()).header("note", "").topic("audit");
            if let Some(key) = record.key() {
                audit = audit.key(key);
            }
            out.emit(audit);
        }
        Ok(())
    }
}

/// The described input records, as a test would write them.
fn described_inputs() -> Vec<TestRecord> {
    file::inputs()
        .into_iter()
        .map(|r| TestRecord {
            key: r.key.map(<[u8]>::to_vec),
            value: r.value.map(<[u8]>::to_vec),
            headers: r.headers.iter().map(|(k, v)| ((*k).to_owned(), v.to_vec())).collect(),
            timestamp: r.timestamp,
            topic: r.topic.to_owned(),
            partition: r.partition,
            offset: Some(r.offset),
        })
        .collect()
}

/// The described outputs, as [`testing::run`] reports them.
fn described_outputs() -> Vec<Written> {
    file::outputs()
        .into_iter()
        .map(|o| Written {
            input: o.input,
            key: o.key.map(<[u8]>::to_vec),
            value: o.value.map(<[u8]>::to_vec),
            headers: o.headers.iter().map(|(k, v)| ((*k).to_owned(), v.to_vec())).collect(),
            timestamp: o.timestamp,
            topic: o.topic.map(str::to_owned),
        })
        .collect()
}

#[test]
fn a_transform_reads_the_golden_input_and_writes_the_golden_output() {
    let input = GoldenFile::read("input.bin");
    let batch = wit::InputBatch { data: input.data, topics: input.topics, records: input.records, positions: input.wide, headers: input.headers };
    let mut golden = Golden::default();
    let Ok(forwarding) = run_batch_forwarding(&mut golden, &batch) else { panic!("the golden rule fails no batch") };
    assert_eq!(golden.seen, described_inputs(), "records read through `Record`");
    // The three forwarded records name their parts; the two audit records carry their bytes.
    assert_eq!(forwarding.forwarded, [FORWARD_ALL, FORWARD_ALL, 0, FORWARD_ALL, 0]);
    let own: usize = b"auditedfrompaymentsnote".len() + b"auditedfromordersnote".len() + "clé".len() + 2;
    assert_eq!(forwarding.outputs.data.len(), own, "forwarded bytes stay out of the output batch");
    let Ok(out) = run_batch(&mut Golden::default(), &batch) else { panic!("the golden rule fails no batch") };
    assert!(out.errors.is_empty());
    let expected = GoldenFile::read("output.bin");
    let expected = wit::OutputBatch { data: expected.data, topics: expected.topics, records: expected.records, timestamps: expected.wide, headers: expected.headers, errors: vec![] };
    assert_eq!(read(&out), read(&expected), "outputs written through `Output`, resolved");
}

/// Every output as `(input, key, value, timestamp, topic, headers)`.
#[allow(clippy::type_complexity, reason = "a test's flat view of an output")]
fn read(out: &wit::OutputBatch) -> Vec<(u32, Option<&[u8]>, Option<&[u8]>, Option<i64>, Option<&str>, Vec<(&str, &[u8])>)> {
    let view = OutputView::new(out);
    view.iter().map(|p| (p.input, p.key, p.value, p.timestamp, p.topic, view.headers(&p).collect())).collect()
}

#[test]
fn the_test_harness_writes_the_golden_input_and_reads_the_golden_output() {
    let batch = input_batch(described_inputs());
    let written = GoldenFile { data: batch.data, topics: batch.topics, records: batch.records, wide: batch.positions, headers: batch.headers };
    assert_eq!(written, GoldenFile::read("input.bin"));
    let result = testing::run(&mut Golden::default(), described_inputs()).expect("the golden rule fails no batch");
    assert_eq!(result.outputs, described_outputs());
    assert!(result.errors.is_empty());
}
