//! What a source's `poll` returns, checked and turned into an input batch for the transform
//! chain, with the position the batch reaches. The layout rules live in
//! `turnpike-batch-layout`; this is the glue to the host's bindgen types.

use turnpike_batch_layout::{validate_source, SourceColumns, SourceView};

use crate::bindings::SourceBatch;
use crate::{InputBatch, RecordError};

/// A checked poll result.
#[derive(Debug)]
pub struct Polled {
    /// The records, as the transform chain reads them: each record's topic is its destination
    /// (the connector's output topic unless the source chose one), its partition `-1` and its
    /// offset its index in the poll.
    pub batch: InputBatch,
    /// The source's position after the last record that carries one; `None` if no record did.
    pub position: Option<Vec<u8>>,
    /// Records the source could not read properly; they hold the raw bytes as read.
    pub errors: Vec<RecordError>,
}

impl<'a> From<&'a SourceBatch> for SourceView<'a> {
    fn from(b: &'a SourceBatch) -> Self {
        SourceView { data: &b.data, topics: &b.topics, records: &b.records, timestamps: &b.timestamps, headers: &b.headers }
    }
}

/// Checks a poll result against the contract and converts it. `max_records` is what the host
/// asked for; more is a contract violation. The reason comes as text because that is what
/// `Fault::InvalidOutput` carries.
pub(crate) fn check_poll(polled: SourceBatch, output_topic: &str, max_records: usize) -> Result<Polled, String> {
    validate_source(SourceView::new(&polled), max_records, polled.errors.iter().map(|e| e.input)).map_err(|e| e.to_string())?;
    let SourceBatch { data, topics, records, timestamps, headers, errors } = polled;
    let (batch, position) = SourceColumns { data, topics, records, timestamps, headers }.into_input(output_topic);
    Ok(Polled { batch: batch.into(), position, errors })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{input_record, ErrorKind, PluginError};
    use turnpike_batch_layout::{ABSENT, SOURCE_STRIDE};

    fn poll(records: Vec<u32>, data: &[u8]) -> SourceBatch {
        let n = records.len() / SOURCE_STRIDE;
        SourceBatch { data: data.to_vec(), topics: vec!["side".into()], records, timestamps: vec![i64::MIN; n], headers: vec![], errors: vec![] }
    }

    #[test]
    fn converts_records_and_keeps_the_last_position() {
        // "k1v1p1" "v2p2": record 0 to the output topic, record 1 to "side".
        let data = b"k1v1p1v2p2";
        let sb = poll(vec![0, 2, 2, 2, 0, 0, ABSENT, 4, 2, 0, ABSENT, 6, 2, 0, 0, 0, 8, 2], data);
        let polled = check_poll(sb, "out", 10).unwrap();
        assert_eq!(polled.position.as_deref(), Some(&b"p2"[..]));
        let (first, _) = input_record(&polled.batch, 0);
        assert_eq!((first.topic, first.key, first.value, first.offset, first.partition), ("out", Some(&b"k1"[..]), Some(&b"v1"[..]), 0, -1));
        let (second, _) = input_record(&polled.batch, 1);
        assert_eq!((second.topic, second.key, second.value), ("side", None, Some(&b"v2"[..])));
    }

    #[test]
    fn refuses_what_breaks_the_contract() {
        let data = b"abc";
        let too_far = poll(vec![0, ABSENT, 0, 9, 0, 0, ABSENT, 0, ABSENT], data);
        assert!(check_poll(too_far, "out", 10).unwrap_err().contains("span"));
        let bad_topic = poll(vec![0, ABSENT, 0, 1, 0, 0, 5, 0, ABSENT], data);
        assert!(check_poll(bad_topic, "out", 10).unwrap_err().contains("topic"));
        let too_many = poll([0, ABSENT, 0, 1, 0, 0, ABSENT, 0, ABSENT].repeat(3), data);
        assert!(check_poll(too_many, "out", 2).unwrap_err().contains("at most 2"));
        let mut bad_error = poll(vec![0, ABSENT, 0, 1, 0, 0, ABSENT, 0, ABSENT], data);
        bad_error.errors.push(RecordError { input: 1, error: PluginError { kind: ErrorKind::InvalidRecord, message: "x".into() } });
        assert_eq!(check_poll(bad_error, "out", 10).unwrap_err(), "record error for record 1 out of range (batch of 1)");
    }
}
