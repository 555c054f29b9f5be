//! Checking what a plugin returns against the contract, so that the rest of the host can read
//! it through the views without further checks. A violation is a plugin bug.

use crate::span::span;
use crate::{BatchKind, LayoutError, OutputView, SourceView, ABSENT, HEADER_STRIDE, MAX_TOPIC_LEN, OUTPUT_STRIDE, SOURCE_STRIDE};

/// Checks an output batch a transform returned for a batch of `inputs` records.
/// `error_inputs` are the `input` fields of the batch's record errors.
pub fn validate_output(out: OutputView<'_>, inputs: usize, error_inputs: impl IntoIterator<Item = u32>) -> Result<(), LayoutError> {
    const KIND: BatchKind = BatchKind::Output;
    if !out.records.len().is_multiple_of(OUTPUT_STRIDE) || !out.headers.len().is_multiple_of(HEADER_STRIDE) {
        return Err(LayoutError::RaggedColumns);
    }
    let n = out.records.len() / OUTPUT_STRIDE;
    if out.timestamps.len() != n {
        return Err(LayoutError::TimestampCount { kind: KIND, timestamps: out.timestamps.len(), rows: n });
    }
    let header_count = validate_headers(out.data, out.headers)?;
    for (row, r) in out.records.chunks_exact(OUTPUT_STRIDE).enumerate() {
        if r[0] as usize >= inputs {
            return Err(LayoutError::InputIndex { output: row, input: r[0], inputs });
        }
        check_row(KIND, row, out.data, [(r[1], r[2]), (r[3], r[4])], (r[5], r[6]), header_count)?;
        if r[7] != ABSENT && r[7] as usize >= out.topics.len() {
            return Err(LayoutError::TopicIndex { kind: KIND, row });
        }
    }
    validate_topics(out.topics)?;
    check_error_inputs(KIND, error_inputs, inputs)
}

/// Checks a source batch returned for a poll of at most `max_records` records.
/// `error_inputs` are the `input` fields of the batch's record errors.
pub fn validate_source(batch: SourceView<'_>, max_records: usize, error_inputs: impl IntoIterator<Item = u32>) -> Result<(), LayoutError> {
    const KIND: BatchKind = BatchKind::Source;
    if !batch.records.len().is_multiple_of(SOURCE_STRIDE) || !batch.headers.len().is_multiple_of(HEADER_STRIDE) {
        return Err(LayoutError::RaggedColumns);
    }
    let n = batch.records.len() / SOURCE_STRIDE;
    if n > max_records {
        return Err(LayoutError::TooManyRecords { records: n, max: max_records });
    }
    if batch.timestamps.len() != n {
        return Err(LayoutError::TimestampCount { kind: KIND, timestamps: batch.timestamps.len(), rows: n });
    }
    validate_topics(batch.topics)?;
    let header_count = validate_headers(batch.data, batch.headers)?;
    // The connector's output topic is appended after the source's own, at this index.
    if u32::try_from(batch.topics.len()).is_err() {
        return Err(LayoutError::TooManyTopics);
    }
    for (row, r) in batch.records.chunks_exact(SOURCE_STRIDE).enumerate() {
        check_row(KIND, row, batch.data, [(r[0], r[1]), (r[2], r[3])], (r[4], r[5]), header_count)?;
        if r[6] != ABSENT && r[6] as usize >= batch.topics.len() {
            return Err(LayoutError::TopicIndex { kind: KIND, row });
        }
        if r[8] != ABSENT && span(batch.data, r[7], r[8]).is_none() {
            return Err(LayoutError::PositionSpan { row });
        }
    }
    check_error_inputs(KIND, error_inputs, n)
}

/// Checks a row's key and value spans and its header range.
fn check_row(kind: BatchKind, row: usize, data: &[u8], spans: [(u32, u32); 2], headers: (u32, u32), header_count: usize) -> Result<(), LayoutError> {
    for (offset, len) in spans {
        if len != ABSENT && span(data, offset, len).is_none() {
            return Err(LayoutError::SpanOutOfRange { kind, row });
        }
    }
    if u64::from(headers.0) + u64::from(headers.1) > header_count as u64 {
        return Err(LayoutError::HeaderRange { kind, row });
    }
    Ok(())
}

/// Checks that every record error names a row of the batch.
fn check_error_inputs(kind: BatchKind, error_inputs: impl IntoIterator<Item = u32>, rows: usize) -> Result<(), LayoutError> {
    match error_inputs.into_iter().find(|&input| input as usize >= rows) {
        Some(input) => Err(LayoutError::ErrorIndex { kind, input, rows }),
        None => Ok(()),
    }
}

/// Checks header spans and keys (UTF-8); returns the number of headers.
pub fn validate_headers(data: &[u8], headers: &[u32]) -> Result<usize, LayoutError> {
    for (header, h) in headers.chunks_exact(HEADER_STRIDE).enumerate() {
        let key = span(data, h[0], h[1]).and_then(|r| data.get(r)).ok_or(LayoutError::HeaderKeySpan { header })?;
        std::str::from_utf8(key).map_err(|_| LayoutError::HeaderKeyNotUtf8 { header })?;
        span(data, h[2], h[3]).ok_or(LayoutError::HeaderValueSpan { header })?;
    }
    Ok(headers.len() / HEADER_STRIDE)
}

/// Checks that every topic a plugin names is a valid Kafka topic name.
pub fn validate_topics(topics: &[String]) -> Result<(), LayoutError> {
    for (index, t) in topics.iter().enumerate() {
        if !is_valid_topic_name(t) {
            return Err(LayoutError::BadTopicName { index, name: t.clone() });
        }
    }
    Ok(())
}

/// Whether Kafka accepts `name` as a topic name (1 to 249 of `a-z A-Z 0-9 . _ -`). A plugin
/// that computes topic names checks with this first, so a bad name is a record error it can
/// explain rather than an invalid output (a fault).
pub fn is_valid_topic_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_TOPIC_LEN && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NO_TIMESTAMP;

    fn output<'a>(records: &'a [u32], timestamps: &'a [i64], topics: &'a [String]) -> OutputView<'a> {
        OutputView { data: b"abc", topics, records, timestamps, headers: &[] }
    }

    fn check(records: &[u32], inputs: usize, errors: &[u32]) -> Result<(), LayoutError> {
        let topics = ["x".to_owned()];
        let timestamps = vec![NO_TIMESTAMP; records.len() / OUTPUT_STRIDE];
        validate_output(output(records, &timestamps, &topics), inputs, errors.iter().copied())
    }

    #[test]
    fn output_validation_accepts_good_and_refuses_bad_output() {
        assert_eq!(check(&[0, 0, ABSENT, 1, 2, 0, 0, 0], 1, &[]), Ok(()));
        assert_eq!(check(&[0, 0, ABSENT, 2, 2, 0, 0, 0], 1, &[]), Err(LayoutError::SpanOutOfRange { kind: BatchKind::Output, row: 0 }));
        assert_eq!(check(&[3, 0, ABSENT, 0, 1, 0, 0, ABSENT], 1, &[]), Err(LayoutError::InputIndex { output: 0, input: 3, inputs: 1 }));
        assert_eq!(check(&[0, u32::MAX - 1, 5, 0, 1, 0, 0, ABSENT], 1, &[]), Err(LayoutError::SpanOutOfRange { kind: BatchKind::Output, row: 0 }));
        assert_eq!(check(&[0, 0, 0], 1, &[]), Err(LayoutError::RaggedColumns));
        assert_eq!(check(&[0, 0, ABSENT, 0, 1, 0, 1, ABSENT], 1, &[]), Err(LayoutError::HeaderRange { kind: BatchKind::Output, row: 0 }));
        assert_eq!(check(&[0, 0, ABSENT, 0, 1, 0, 0, 1], 1, &[]), Err(LayoutError::TopicIndex { kind: BatchKind::Output, row: 0 }));
        assert_eq!(check(&[], 1, &[1]), Err(LayoutError::ErrorIndex { kind: BatchKind::Output, input: 1, rows: 1 }));
        let topics = ["x".to_owned()];
        let short = output(&[0, 0, ABSENT, 0, 1, 0, 0, ABSENT], &[], &topics);
        assert_eq!(validate_output(short, 1, []), Err(LayoutError::TimestampCount { kind: BatchKind::Output, timestamps: 0, rows: 1 }));
    }

    #[test]
    fn headers_need_spans_in_range_and_utf8_keys() {
        assert_eq!(validate_headers(b"kv", &[0, 1, 1, 1]), Ok(1));
        assert_eq!(validate_headers(b"kv", &[0, 3, 1, 1]), Err(LayoutError::HeaderKeySpan { header: 0 }));
        assert_eq!(validate_headers(b"\xffv", &[0, 1, 1, 1]), Err(LayoutError::HeaderKeyNotUtf8 { header: 0 }));
        assert_eq!(validate_headers(b"kv", &[0, 1, 1, 1, 0, 1, 1, ABSENT]), Err(LayoutError::HeaderValueSpan { header: 1 }));
    }

    #[test]
    fn topic_names_follow_kafka_rules() {
        assert_eq!(validate_topics(&["a.b_c-9".to_owned()]), Ok(()));
        let too_long = "x".repeat(250);
        for bad in ["", "a b", "ü", too_long.as_str()] {
            assert!(matches!(validate_topics(&[bad.to_owned()]), Err(LayoutError::BadTopicName { index: 0, .. })), "{bad:?}");
        }
    }

    fn source<'a>(records: &'a [u32], timestamps: &'a [i64], topics: &'a [String]) -> SourceView<'a> {
        SourceView { data: b"abc", topics, records, timestamps, headers: &[] }
    }

    #[test]
    fn source_validation_refuses_what_breaks_the_contract() {
        let topics = ["side".to_owned()];
        let one = [0, ABSENT, 0, 1, 0, 0, ABSENT, 0, ABSENT];
        let none = [NO_TIMESTAMP; 3];
        assert_eq!(validate_source(source(&one, &none[..1], &topics), 10, []), Ok(()));
        let too_far = [0, ABSENT, 0, 9, 0, 0, ABSENT, 0, ABSENT];
        assert_eq!(validate_source(source(&too_far, &none[..1], &topics), 10, []), Err(LayoutError::SpanOutOfRange { kind: BatchKind::Source, row: 0 }));
        let bad_topic = [0, ABSENT, 0, 1, 0, 0, 5, 0, ABSENT];
        assert_eq!(validate_source(source(&bad_topic, &none[..1], &topics), 10, []), Err(LayoutError::TopicIndex { kind: BatchKind::Source, row: 0 }));
        let bad_position = [0, ABSENT, 0, 1, 0, 0, ABSENT, 2, 2];
        assert_eq!(validate_source(source(&bad_position, &none[..1], &topics), 10, []), Err(LayoutError::PositionSpan { row: 0 }));
        let three = one.repeat(3);
        assert_eq!(validate_source(source(&three, &none, &topics), 2, []), Err(LayoutError::TooManyRecords { records: 3, max: 2 }));
        assert_eq!(validate_source(source(&one, &none[..1], &topics), 10, [1]), Err(LayoutError::ErrorIndex { kind: BatchKind::Source, input: 1, rows: 1 }));
        let bad_name = ["no spaces".to_owned()];
        assert!(matches!(validate_source(source(&one, &none[..1], &bad_name), 10, []), Err(LayoutError::BadTopicName { .. })));
    }
}
