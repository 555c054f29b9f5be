//! What is wrong with a batch a plugin returned. Hand-written `Display` and `Error`: the
//! crate has no dependencies (a plugin links it too).

use std::fmt;

/// The kind of batch an error is about, which names its rows in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchKind {
    /// A transform's output batch; its rows are "outputs".
    Output,
    /// A source's poll result; its rows are "records".
    Source,
}

impl BatchKind {
    fn row(self) -> &'static str {
        match self {
            BatchKind::Output => "output",
            BatchKind::Source => "record",
        }
    }
}

/// A way a batch breaks the layout rules of the contract: a plugin bug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LayoutError {
    /// The record or header column is not a whole number of entries.
    RaggedColumns,
    /// The timestamp column does not hold one entry per row.
    TimestampCount { kind: BatchKind, timestamps: usize, rows: usize },
    /// A source returned more records than the host asked for.
    TooManyRecords { records: usize, max: usize },
    /// An output names an input the batch does not have.
    InputIndex { output: usize, input: u32, inputs: usize },
    /// A row's key or value span lies outside `data`.
    SpanOutOfRange { kind: BatchKind, row: usize },
    /// A row's headers run past the header column.
    HeaderRange { kind: BatchKind, row: usize },
    /// A row names a topic the batch does not list.
    TopicIndex { kind: BatchKind, row: usize },
    /// A source record's position span lies outside `data`.
    PositionSpan { row: usize },
    /// A header's key span lies outside `data`.
    HeaderKeySpan { header: usize },
    /// A header key is not UTF-8.
    HeaderKeyNotUtf8 { header: usize },
    /// A header's value span lies outside `data`.
    HeaderValueSpan { header: usize },
    /// A topic the plugin names is not a valid Kafka topic name.
    BadTopicName { index: usize, name: String },
    /// More topics than a `u32` index can name.
    TooManyTopics,
    /// A record error names a row the batch does not have (for an output batch, an input).
    ErrorIndex { kind: BatchKind, input: u32, rows: usize },
    /// A forwarding transform's flag column does not hold one entry per output.
    ForwardedCount { forwarded: usize, rows: usize },
    /// An output's forwarded flags have a bit the contract does not define.
    ForwardFlags { row: usize, flags: u32 },
    /// An output both forwards a part and writes it.
    ForwardedPartWritten { row: usize },
    /// The outputs with their forwarded parts would carry more bytes than the host allows.
    ForwardedTooLarge { bytes: usize, max: usize },
    /// A passed input (`passing-transform`) the batch does not have.
    PassedInput { index: usize, input: u32, inputs: usize },
    /// Passed inputs not in increasing order (or one passed twice).
    PassedOrder { index: usize, input: u32 },
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutError::RaggedColumns => f.write_str("record or header columns are not a whole number of entries"),
            LayoutError::TimestampCount { kind, timestamps, rows } => write!(f, "{timestamps} timestamps for {rows} {}s", kind.row()),
            LayoutError::TooManyRecords { records, max } => write!(f, "{records} records returned, at most {max} asked for"),
            LayoutError::InputIndex { output, input, inputs } => write!(f, "output {output}: input index {input} out of range (batch of {inputs})"),
            LayoutError::SpanOutOfRange { kind, row } => write!(f, "{} {row}: key or value span out of range", kind.row()),
            LayoutError::HeaderRange { kind, row } => write!(f, "{} {row}: header range out of range", kind.row()),
            LayoutError::TopicIndex { kind, row } => write!(f, "{} {row}: topic index out of range", kind.row()),
            LayoutError::PositionSpan { row } => write!(f, "record {row}: position span out of range"),
            LayoutError::HeaderKeySpan { header } => write!(f, "header {header}: key span out of range"),
            LayoutError::HeaderKeyNotUtf8 { header } => write!(f, "header {header}: key is not UTF-8"),
            LayoutError::HeaderValueSpan { header } => write!(f, "header {header}: value span out of range"),
            LayoutError::BadTopicName { index, name } => write!(f, "topic {index} ({name:?}) is not a valid Kafka topic name"),
            LayoutError::TooManyTopics => f.write_str("too many topics"),
            LayoutError::ErrorIndex { kind: BatchKind::Output, input, rows } => write!(f, "record error for input {input} out of range (batch of {rows})"),
            LayoutError::ErrorIndex { kind: BatchKind::Source, input, rows } => write!(f, "record error for record {input} out of range (batch of {rows})"),
            LayoutError::ForwardedCount { forwarded, rows } => write!(f, "{forwarded} forwarded flags for {rows} outputs"),
            LayoutError::ForwardFlags { row, flags } => write!(f, "output {row}: unknown forwarded flags {flags:#x}"),
            LayoutError::ForwardedPartWritten { row } => write!(f, "output {row}: a part is both forwarded and written"),
            LayoutError::ForwardedTooLarge { bytes, max } => write!(f, "{bytes} output bytes with the forwarded parts, at most {max}"),
            LayoutError::PassedInput { index, input, inputs } => write!(f, "passed input {index}: index {input} out of range (batch of {inputs})"),
            LayoutError::PassedOrder { index, input } => write!(f, "passed input {index}: index {input} does not follow the one before (passed inputs go in increasing order, each once)"),
        }
    }
}

impl std::error::Error for LayoutError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts operators see in a connector's status; they kept their wording when the
    /// layout moved into this crate.
    #[test]
    fn messages_name_the_row_and_what_is_wrong() {
        let cases = [
            (LayoutError::RaggedColumns, "record or header columns are not a whole number of entries"),
            (LayoutError::TimestampCount { kind: BatchKind::Output, timestamps: 1, rows: 2 }, "1 timestamps for 2 outputs"),
            (LayoutError::TimestampCount { kind: BatchKind::Source, timestamps: 0, rows: 3 }, "0 timestamps for 3 records"),
            (LayoutError::TooManyRecords { records: 3, max: 2 }, "3 records returned, at most 2 asked for"),
            (LayoutError::InputIndex { output: 0, input: 3, inputs: 1 }, "output 0: input index 3 out of range (batch of 1)"),
            (LayoutError::SpanOutOfRange { kind: BatchKind::Output, row: 4 }, "output 4: key or value span out of range"),
            (LayoutError::HeaderRange { kind: BatchKind::Source, row: 1 }, "record 1: header range out of range"),
            (LayoutError::TopicIndex { kind: BatchKind::Output, row: 2 }, "output 2: topic index out of range"),
            (LayoutError::PositionSpan { row: 5 }, "record 5: position span out of range"),
            (LayoutError::HeaderKeySpan { header: 0 }, "header 0: key span out of range"),
            (LayoutError::HeaderKeyNotUtf8 { header: 1 }, "header 1: key is not UTF-8"),
            (LayoutError::HeaderValueSpan { header: 2 }, "header 2: value span out of range"),
            (LayoutError::BadTopicName { index: 0, name: "a b".into() }, r#"topic 0 ("a b") is not a valid Kafka topic name"#),
            (LayoutError::TooManyTopics, "too many topics"),
            (LayoutError::ErrorIndex { kind: BatchKind::Output, input: 1, rows: 1 }, "record error for input 1 out of range (batch of 1)"),
            (LayoutError::ErrorIndex { kind: BatchKind::Source, input: 2, rows: 2 }, "record error for record 2 out of range (batch of 2)"),
            (LayoutError::ForwardedCount { forwarded: 1, rows: 2 }, "1 forwarded flags for 2 outputs"),
            (LayoutError::ForwardFlags { row: 3, flags: 9 }, "output 3: unknown forwarded flags 0x9"),
            (LayoutError::ForwardedPartWritten { row: 0 }, "output 0: a part is both forwarded and written"),
            (LayoutError::ForwardedTooLarge { bytes: 10, max: 9 }, "10 output bytes with the forwarded parts, at most 9"),
            (LayoutError::PassedInput { index: 1, input: 4, inputs: 4 }, "passed input 1: index 4 out of range (batch of 4)"),
            (LayoutError::PassedOrder { index: 2, input: 0 }, "passed input 2: index 0 does not follow the one before (passed inputs go in increasing order, each once)"),
        ];
        for (error, text) in cases {
            assert_eq!(error.to_string(), text);
        }
    }
}
