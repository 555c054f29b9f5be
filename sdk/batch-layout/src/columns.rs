//! A batch's columns, owned: what the writers build. Each side moves them into (and out of)
//! its bindgen type field by field, so handing a batch over copies no byte.

use crate::span::{bytes, len_u32};
use crate::{InputView, OutputView, Source, SourceView, ABSENT, INPUT_STRIDE, NO_TIMESTAMP, OUTPUT_STRIDE, POSITION_STRIDE, SOURCE_STRIDE};

/// The columns of an input batch (`types.input-batch`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputColumns {
    /// Every key, value and header byte.
    pub data: Vec<u8>,
    /// Topic names, referred to by index.
    pub topics: Vec<String>,
    /// [`INPUT_STRIDE`] entries per record.
    pub records: Vec<u32>,
    /// [`POSITION_STRIDE`] entries per record: offset, timestamp.
    pub positions: Vec<i64>,
    /// [`crate::HEADER_STRIDE`] entries per header.
    pub headers: Vec<u32>,
}

/// The columns of an output batch (`types.output-batch`), without its record errors (a
/// bindgen type of each side).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutputColumns {
    /// Every key, value and header byte.
    pub data: Vec<u8>,
    /// Destination topic names, referred to by index.
    pub topics: Vec<String>,
    /// [`OUTPUT_STRIDE`] entries per output.
    pub records: Vec<u32>,
    /// One timestamp per output.
    pub timestamps: Vec<i64>,
    /// [`crate::HEADER_STRIDE`] entries per header.
    pub headers: Vec<u32>,
}

/// The columns of a source batch (`source.source-batch`), without its record errors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceColumns {
    /// Every key, value, header and position byte.
    pub data: Vec<u8>,
    /// Destination topic names, referred to by index.
    pub topics: Vec<String>,
    /// [`SOURCE_STRIDE`] entries per record.
    pub records: Vec<u32>,
    /// One timestamp per record.
    pub timestamps: Vec<i64>,
    /// [`crate::HEADER_STRIDE`] entries per header.
    pub headers: Vec<u32>,
}

impl<'a> From<&'a InputColumns> for InputView<'a> {
    fn from(c: &'a InputColumns) -> Self {
        InputView { data: &c.data, topics: &c.topics, records: &c.records, positions: &c.positions, headers: &c.headers }
    }
}

impl<'a> From<&'a OutputColumns> for OutputView<'a> {
    fn from(c: &'a OutputColumns) -> Self {
        OutputView { data: &c.data, topics: &c.topics, records: &c.records, timestamps: &c.timestamps, headers: &c.headers }
    }
}

impl<'a> From<&'a SourceColumns> for SourceView<'a> {
    fn from(c: &'a SourceColumns) -> Self {
        SourceView { data: &c.data, topics: &c.topics, records: &c.records, timestamps: &c.timestamps, headers: &c.headers }
    }
}

impl OutputColumns {
    /// A stage's outputs as the next stage's inputs, without copying a byte: `data` and
    /// `headers` move over and every span stays valid. `keep` lists, per next input, the
    /// output it is and the source of the Kafka record it derives from (whose topic is an
    /// index into `topics`).
    ///
    /// # Panics
    /// If `keep` names an output this batch does not have.
    pub fn into_next_input(self, keep: &[(usize, Source)], topics: Vec<String>) -> InputColumns {
        let mut records = Vec::with_capacity(keep.len() * INPUT_STRIDE);
        let mut positions = Vec::with_capacity(keep.len() * POSITION_STRIDE);
        for &(i, source) in keep {
            let r = &self.records[i * OUTPUT_STRIDE..][..OUTPUT_STRIDE];
            records.extend_from_slice(&[r[1], r[2], r[3], r[4], r[5], r[6], source.topic, source.partition as u32]);
            positions.extend_from_slice(&[source.offset, self.timestamps.get(i).copied().unwrap_or(NO_TIMESTAMP)]);
        }
        InputColumns { data: self.data, topics, records, positions, headers: self.headers }
    }
}

impl SourceColumns {
    /// A poll result as the transform chain reads it: each record's topic is its destination
    /// (`output_topic`, appended to the topics, unless the source chose one), its partition
    /// `-1` and its offset its index in the poll. Also returns the position after the last
    /// record that carries one. Meant for a batch [`crate::validate_source`] accepted.
    pub fn into_input(self, output_topic: &str) -> (InputColumns, Option<Vec<u8>>) {
        let SourceColumns { data, mut topics, records, timestamps, headers } = self;
        let output_index = len_u32(topics.len());
        topics.push(output_topic.to_owned());
        let n = records.len() / SOURCE_STRIDE;
        let mut input_records = Vec::with_capacity(n * INPUT_STRIDE);
        let mut positions = Vec::with_capacity(n * POSITION_STRIDE);
        let mut position = None;
        for (i, r) in records.chunks_exact(SOURCE_STRIDE).enumerate() {
            let topic = if r[6] == ABSENT { output_index } else { r[6] };
            if r[8] != ABSENT {
                position = Some((r[7], r[8]));
            }
            // Partition -1: polled, not consumed.
            input_records.extend_from_slice(&[r[0], r[1], r[2], r[3], r[4], r[5], topic, -1i32 as u32]);
            positions.extend_from_slice(&[i as i64, timestamps.get(i).copied().unwrap_or(NO_TIMESTAMP)]);
        }
        let position = position.map(|(offset, len)| bytes(&data, offset, len).to_vec());
        (InputColumns { data, topics, records: input_records, positions, headers }, position)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_stage_keeps_spans_and_sources() {
        let out = OutputColumns { data: b"abc".to_vec(), topics: vec!["x".into()], records: vec![0, ABSENT, ABSENT, 1, 2, 0, 1, 0], timestamps: vec![77], headers: vec![0, 1, 2, 1] };
        let data = out.data.as_ptr();
        let next = out.into_next_input(&[(0, Source { topic: 0, partition: 3, offset: 9 })], vec!["in".into()]);
        assert_eq!(next.data.as_ptr(), data, "the buffer moved, not copied");
        assert_eq!(next.records, [ABSENT, ABSENT, 1, 2, 0, 1, 0, 3]);
        assert_eq!(next.positions, [9, 77]);
        assert_eq!(next.topics, ["in"]);
        assert_eq!(InputView::new(&next).source(0), Source { topic: 0, partition: 3, offset: 9 });
    }

    #[test]
    fn a_poll_becomes_input_for_the_chain() {
        // "k1v1p1" "v2p2": record 0 to the output topic, record 1 to "side".
        let polled = SourceColumns {
            data: b"k1v1p1v2p2".to_vec(),
            topics: vec!["side".into()],
            records: vec![0, 2, 2, 2, 0, 0, ABSENT, 4, 2, 0, ABSENT, 6, 2, 0, 0, 0, 8, 2],
            timestamps: vec![NO_TIMESTAMP, 5],
            headers: vec![],
        };
        let (input, position) = polled.into_input("out");
        assert_eq!(position.as_deref(), Some(&b"p2"[..]));
        assert_eq!(input.topics, ["side", "out"]);
        let view = InputView::new(&input);
        assert_eq!((view.topic(0), view.key(0), view.value(0), view.offset(0), view.partition(0)), ("out", Some(&b"k1"[..]), Some(&b"v1"[..]), 0, -1));
        assert_eq!((view.topic(1), view.key(1), view.timestamp(1), view.offset(1)), ("side", None, Some(5), 1));
    }
}
