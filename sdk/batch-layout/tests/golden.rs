//! The golden batches of `tests/fixtures/batch` through this crate: the views read what
//! README.md describes, the writers re-create both files byte for byte, and the host's check
//! accepts the output batch.

use turnpike_batch_layout::{validate_output, InputColumns, InputView, InputWriter, OutputColumns, OutputRef, OutputView, OutputWriter, RecordRef};

#[allow(dead_code)]
mod golden {
    include!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/batch/golden_file.rs"));
}

use golden::{GoldenFile, GoldenInput, GoldenOutput};

fn input_columns(f: GoldenFile) -> InputColumns {
    InputColumns { data: f.data, topics: f.topics, records: f.records, positions: f.wide, headers: f.headers }
}

fn output_columns(f: GoldenFile) -> OutputColumns {
    OutputColumns { data: f.data, topics: f.topics, records: f.records, timestamps: f.wide, headers: f.headers }
}

#[test]
fn the_file_format_reads_and_writes_the_same_bytes() {
    for name in ["input.bin", "output.bin"] {
        let bytes = golden::read_bytes(name);
        let file = GoldenFile::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(file.encode(), bytes, "{name}");
    }
}

#[test]
fn the_input_view_reads_the_described_records() {
    let columns = input_columns(GoldenFile::read("input.bin"));
    let view = InputView::new(&columns);
    let read: Vec<GoldenInput<'_>> = (0..view.len())
        .map(|i| {
            let r = view.record(i);
            GoldenInput { topic: r.topic, partition: r.partition, offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: view.headers(i).collect() }
        })
        .collect();
    assert_eq!(read, golden::inputs());
}

#[test]
fn the_input_writer_lays_the_records_out_byte_for_byte() {
    let mut writer = InputWriter::new();
    for r in golden::inputs() {
        let record = RecordRef { key: r.key, value: r.value, timestamp: r.timestamp, topic: r.topic, partition: r.partition, offset: r.offset };
        writer.push(record, r.headers.iter().copied());
    }
    assert_eq!(writer.finish(), input_columns(GoldenFile::read("input.bin")));
}

#[test]
fn the_output_is_valid_and_the_view_reads_the_described_outputs() {
    let columns = output_columns(GoldenFile::read("output.bin"));
    let view = OutputView::new(&columns);
    validate_output(view, golden::inputs().len(), std::iter::empty::<u32>()).expect("the golden output keeps to the contract");
    let read: Vec<GoldenOutput<'_>> = view
        .iter()
        .map(|p| GoldenOutput { input: p.input, key: p.key, value: p.value, timestamp: p.timestamp, topic: p.topic, headers: view.headers(&p).collect() })
        .collect();
    assert_eq!(read, golden::outputs());
}

#[test]
fn the_output_writer_lays_the_outputs_out_byte_for_byte() {
    let mut writer = OutputWriter::new();
    for o in golden::outputs() {
        let record = OutputRef { input: o.input, key: o.key, value: o.value, timestamp: o.timestamp, topic: o.topic };
        writer.push(record, o.headers.iter().copied());
    }
    assert_eq!(writer.finish(), output_columns(GoldenFile::read("output.bin")));
}
