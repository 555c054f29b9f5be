//! What a source's `poll` returns, checked and turned into an input batch for the transform
//! chain, with the position the batch reaches.

use crate::batch::{span, validate_headers, validate_topics, ABSENT, HEADER_STRIDE, INPUT_STRIDE, POSITION_STRIDE};
use crate::bindings::SourceBatch;
use crate::{InputBatch, RecordError};

/// Nine `u32`s per source record (see `wit/source.wit`).
const SOURCE_STRIDE: usize = 9;

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

/// Checks a poll result against the contract and converts it. `max_records` is what the host
/// asked for; more is a contract violation.
pub(crate) fn check_poll(polled: SourceBatch, output_topic: &str, max_records: usize) -> Result<Polled, String> {
    let SourceBatch { data, mut topics, records, timestamps, headers, errors } = polled;
    if !records.len().is_multiple_of(SOURCE_STRIDE) || !headers.len().is_multiple_of(HEADER_STRIDE) {
        return Err("record or header columns are not a whole number of entries".into());
    }
    let n = records.len() / SOURCE_STRIDE;
    if n > max_records {
        return Err(format!("{n} records returned, at most {max_records} asked for"));
    }
    if timestamps.len() != n {
        return Err(format!("{} timestamps for {n} records", timestamps.len()));
    }
    validate_topics(&topics)?;
    let header_count = validate_headers(&data, &headers)?;
    let output_index = u32::try_from(topics.len()).map_err(|_| "too many topics".to_owned())?;
    topics.push(output_topic.to_owned());
    let mut input_records = Vec::with_capacity(n * INPUT_STRIDE);
    let mut positions = Vec::with_capacity(n * POSITION_STRIDE);
    let mut position = None;
    for (i, r) in records.chunks_exact(SOURCE_STRIDE).enumerate() {
        for (offset, len) in [(r[0], r[1]), (r[2], r[3])] {
            if len != ABSENT && span(&data, offset, len).is_none() {
                return Err(format!("record {i}: key or value span out of range"));
            }
        }
        if u64::from(r[4]) + u64::from(r[5]) > header_count as u64 {
            return Err(format!("record {i}: header range out of range"));
        }
        let topic = match r[6] {
            ABSENT => output_index,
            t if (t as usize) < output_index as usize => t,
            _ => return Err(format!("record {i}: topic index out of range")),
        };
        if r[8] != ABSENT {
            let at = span(&data, r[7], r[8]).ok_or_else(|| format!("record {i}: position span out of range"))?;
            position = Some(at);
        }
        input_records.extend_from_slice(&[r[0], r[1], r[2], r[3], r[4], r[5], topic, u32::MAX]);
        positions.extend_from_slice(&[i as i64, timestamps[i]]);
    }
    for e in &errors {
        if e.input as usize >= n {
            return Err(format!("record error for record {} out of range (batch of {n})", e.input));
        }
    }
    let position = position.map(|at| data[at].to_vec());
    let batch = InputBatch { data, topics, records: input_records, positions, headers };
    Ok(Polled { batch, position, errors })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{input_record, ErrorKind, PluginError};

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
        assert_eq!((first.topic, first.key, first.value, first.offset), ("out", Some(&b"k1"[..]), Some(&b"v1"[..]), 0));
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
        assert!(check_poll(bad_error, "out", 10).unwrap_err().contains("out of range"));
    }
}
