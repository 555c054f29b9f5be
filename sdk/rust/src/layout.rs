//! The SDK's bindgen batch types lent to `turnpike-batch-layout`, which owns the layout of
//! `wit/types.wit` and `wit/source.wit`. The host uses the same crate, so the two sides
//! cannot drift apart; `tests/fixtures/batch` holds every SDK to the same bytes.

use turnpike_batch_layout::{InputColumns, InputView, OutputColumns, OutputView, SourceColumns, SourceView};

use crate::bindings::source::exports::turnpike::plugin::source::SourceBatch;
use crate::bindings::turnpike::plugin::types as wit;

impl<'a> From<&'a wit::InputBatch> for InputView<'a> {
    fn from(b: &'a wit::InputBatch) -> Self {
        InputView { data: &b.data, topics: &b.topics, records: &b.records, positions: &b.positions, headers: &b.headers }
    }
}

impl<'a> From<&'a wit::OutputBatch> for OutputView<'a> {
    fn from(b: &'a wit::OutputBatch) -> Self {
        OutputView { data: &b.data, topics: &b.topics, records: &b.records, timestamps: &b.timestamps, headers: &b.headers }
    }
}

impl<'a> From<&'a SourceBatch> for SourceView<'a> {
    fn from(b: &'a SourceBatch) -> Self {
        SourceView { data: &b.data, topics: &b.topics, records: &b.records, timestamps: &b.timestamps, headers: &b.headers }
    }
}

/// Written input columns as the batch the host would send (for [`crate::testing`]).
pub(crate) fn input_batch(c: InputColumns) -> wit::InputBatch {
    wit::InputBatch { data: c.data, topics: c.topics, records: c.records, positions: c.positions, headers: c.headers }
}

/// Written output columns and the inputs that failed, as a transform returns them.
pub(crate) fn output_batch(c: OutputColumns, errors: Vec<wit::RecordError>) -> wit::OutputBatch {
    wit::OutputBatch { data: c.data, topics: c.topics, records: c.records, timestamps: c.timestamps, headers: c.headers, errors }
}

/// Written source columns and the records that failed, as a source returns them.
pub(crate) fn source_batch(c: SourceColumns, errors: Vec<wit::RecordError>) -> SourceBatch {
    SourceBatch { data: c.data, topics: c.topics, records: c.records, timestamps: c.timestamps, headers: c.headers, errors }
}
