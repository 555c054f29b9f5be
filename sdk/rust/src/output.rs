//! Building a transform's output batch: zero or more records per input.

use turnpike_batch_layout::{OutputMark, OutputRef, OutputWriter, FORWARD_HEADERS, FORWARD_KEY};

use crate::bindings::exports::turnpike::plugin::passing_transform::PassingBatch;
use crate::bindings::turnpike::plugin::types as wit;
use crate::passes::Passes;
use crate::{Record, RecordError};

/// All outputs of one batch. [`crate::Transform::transform_batch`] gets it whole; per-record
/// code gets an [`Output`] bound to one input.
///
/// Outputs that pass on parts of their input ([`Output::forward`],
/// [`Output::forward_with_value`]) only name those parts (contract `0.1.4`); the host takes
/// their bytes from the batch it sent, so they are never copied through the plugin. An input
/// forwarded whole as its only output is not even written: it is listed as passed (contract
/// `0.1.6`), one number.
pub struct Outputs {
    writer: OutputWriter,
    /// One flag word per written output: which parts are its input's own.
    forwarded: Vec<u32>,
    /// Inputs passed on whole.
    passes: Passes,
    errors: Vec<wit::RecordError>,
}

/// Where the outputs stand (see [`Outputs::mark`]).
pub(crate) struct Mark {
    writer: OutputMark,
    passed: usize,
}

/// Where the outputs of one input record go.
pub struct Output<'b> {
    outputs: &'b mut Outputs,
    input: u32,
}

/// A record built from scratch, for [`Output::emit`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewRecord {
    pub(crate) key: Option<Vec<u8>>,
    pub(crate) value: Option<Vec<u8>>,
    pub(crate) headers: Vec<(String, Vec<u8>)>,
    pub(crate) timestamp: Option<i64>,
    pub(crate) topic: Option<String>,
}

impl NewRecord {
    /// A record with a null key, a null value and no headers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the key.
    pub fn key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Sets the value.
    pub fn value(mut self, value: impl Into<Vec<u8>>) -> Self {
        self.value = Some(value.into());
        self
    }

    /// Adds a header.
    pub fn header(mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.headers.push((key.into(), value.into()));
        self
    }

    /// Sets the timestamp (milliseconds since the Unix epoch).
    pub fn timestamp(mut self, millis: i64) -> Self {
        self.timestamp = Some(millis);
        self
    }

    /// Sends the record to `topic` instead of the connector's output topic.
    pub fn topic(mut self, topic: impl Into<String>) -> Self {
        self.topic = Some(topic.into());
        self
    }
}

impl Outputs {
    pub(crate) fn with_capacity(records: usize, bytes: usize) -> Self {
        Self {
            writer: OutputWriter::with_capacity(records, bytes),
            forwarded: Vec::with_capacity(records),
            passes: Passes::with_capacity(records),
            errors: Vec::new(),
        }
    }

    /// The output handle for the input record at `index`.
    pub fn for_input(&mut self, index: u32) -> Output<'_> {
        Output { outputs: self, input: index }
    }

    /// Reports that the input at `index` failed; the host applies the error policy to it.
    pub fn fail(&mut self, index: u32, error: RecordError) {
        self.errors.push(wit::RecordError { input: index, error: error.into_wit() });
    }

    /// Where the outputs stand, to roll back to when an input fails halfway.
    pub(crate) fn mark(&self) -> Mark {
        Mark { writer: self.writer.mark(), passed: self.passes.len() }
    }

    pub(crate) fn rollback(&mut self, mark: Mark) {
        self.writer.rollback(mark.writer);
        self.forwarded.truncate(self.writer.len());
        self.passes.truncate(mark.passed);
    }

    /// The written outputs with their forwarded parts left out, the flags that name them, and
    /// the inputs passed on whole (or, if listing them would change the outputs' order, none:
    /// see [`Passes::finish`]). `positions` is the batch's column of that name.
    pub(crate) fn finish(self, positions: &[i64]) -> PassingBatch {
        let mut outputs = crate::layout::output_batch(self.writer.finish(), self.errors);
        let mut forwarded = self.forwarded;
        let passed = self.passes.finish(&mut outputs.records, &mut outputs.timestamps, &mut forwarded, positions);
        PassingBatch { outputs, forwarded, passed }
    }

    fn push<'h>(&mut self, output: OutputRef<'_>, headers: impl IntoIterator<Item = (&'h str, &'h [u8])>, forwarded: u32) {
        self.passes.sent(output.input);
        self.writer.push(output, headers);
        self.forwarded.push(forwarded);
    }
}

impl Output<'_> {
    /// Sends the input record on unchanged (key, value, headers, timestamp).
    ///
    /// When `record` is this handle's input (the record [`crate::Transform::transform`] got
    /// with it), nothing is written: the input is listed as passed, and the host takes the
    /// record from the batch it sent (or, if that would change the order of the batch's
    /// outputs, only its timestamp is written). Another record of the batch is copied.
    pub fn forward(&mut self, record: &Record<'_>) {
        if record.index() == self.input {
            let written = self.outputs.writer.len();
            self.outputs.passes.pass(self.input, written);
        } else {
            self.copy(record, record.value());
        }
    }

    /// Sends the input record on with a new value, keeping its key, headers and timestamp
    /// (forwarded as in [`Output::forward`]).
    pub fn forward_with_value(&mut self, record: &Record<'_>, value: impl AsRef<[u8]>) {
        if record.index() == self.input {
            let output = OutputRef { input: self.input, key: None, value: Some(value.as_ref()), timestamp: record.timestamp(), topic: None };
            self.outputs.push(output, [], FORWARD_KEY | FORWARD_HEADERS);
        } else {
            self.copy(record, Some(value.as_ref()));
        }
    }

    fn copy(&mut self, record: &Record<'_>, value: Option<&[u8]>) {
        let output = OutputRef { input: self.input, key: record.key(), value, timestamp: record.timestamp(), topic: None };
        self.outputs.push(output, record.headers(), 0);
    }

    /// Sends a record built from scratch.
    pub fn emit(&mut self, record: NewRecord) {
        let output = OutputRef {
            input: self.input,
            key: record.key.as_deref(),
            value: record.value.as_deref(),
            timestamp: record.timestamp,
            topic: record.topic.as_deref(),
        };
        self.outputs.push(output, record.headers.iter().map(|(k, v)| (k.as_str(), v.as_slice())), 0);
    }

    /// The index of the input this output handle belongs to.
    pub fn input(&self) -> u32 {
        self.input
    }
}

#[cfg(test)]
mod tests {
    use turnpike_batch_layout::FORWARD_ALL;

    use crate::testing::{self, input_batch};
    use crate::transform::run_batch_passing;
    use crate::{ConfigError, NewRecord, NoConfig, Output, Record, RecordError, TestRecord, Transform};

    /// Per record, by value: `pass` forwards, `twice` forwards twice, `pass+emit` forwards then
    /// emits, `emit+pass` the other way round, `pass+fail` forwards then fails.
    struct Script;

    impl Transform for Script {
        type Config = NoConfig;
        fn create(_: NoConfig) -> Result<Self, ConfigError> {
            Ok(Script)
        }
        fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
            let emit = |out: &mut Output<'_>| out.emit(NewRecord::new().value("made"));
            match record.value() {
                Some(b"pass") => out.forward(record),
                Some(b"twice") => (0..2).for_each(|_| out.forward(record)),
                Some(b"pass+emit") => {
                    out.forward(record);
                    emit(out);
                }
                Some(b"emit+pass") => {
                    emit(out);
                    out.forward(record);
                }
                Some(b"pass+fail") => {
                    out.forward(record);
                    return Err(RecordError::invalid("no"));
                }
                _ => {}
            }
            Ok(())
        }
    }

    fn inputs(values: &[&str]) -> Vec<TestRecord> {
        values.iter().map(|v| TestRecord::value(*v)).collect()
    }

    /// An input forwarded whole as its one output is only listed; nothing is written for it.
    #[test]
    fn an_input_forwarded_whole_is_listed_not_written() {
        let batch = input_batch(inputs(&["pass", "drop", "pass+fail", "pass"]));
        let Ok(out) = run_batch_passing(&mut Script, &batch) else { panic!("no batch error") };
        assert_eq!(out.passed, [0, 3], "the failed input's pass is rolled back with it");
        assert!(out.outputs.records.is_empty() && out.forwarded.is_empty() && out.outputs.data.is_empty());
        assert_eq!(out.outputs.errors.len(), 1);
    }

    /// An input's written outputs before its pass keep the listing; an output after its pass
    /// (or a second forward) would be placed before it by the host, so then every pass is
    /// written out where it was sent: each output in the order it was sent.
    #[test]
    fn outputs_keep_the_order_they_were_sent_in() {
        let batch = input_batch(inputs(&["emit+pass", "pass"]));
        let Ok(out) = run_batch_passing(&mut Script, &batch) else { panic!("no batch error") };
        assert_eq!((out.passed, out.forwarded), (vec![0, 1], vec![0]), "input 0's emitted output, then the passes");

        let values = ["twice", "pass+emit", "emit+pass", "pass"];
        let Ok(out) = run_batch_passing(&mut Script, &input_batch(inputs(&values))) else { panic!("no batch error") };
        assert!(out.passed.is_empty());
        assert_eq!(out.forwarded, [FORWARD_ALL, FORWARD_ALL, FORWARD_ALL, 0, 0, FORWARD_ALL, FORWARD_ALL]);
        let read = testing::run(&mut Script, inputs(&values)).expect("no batch error");
        let outputs: Vec<_> = read.outputs.iter().map(|o| (o.input, String::from_utf8(o.value.clone().unwrap()).unwrap())).collect();
        let o = |i: u32, v: &str| (i, v.to_owned());
        assert_eq!(outputs, [o(0, "twice"), o(0, "twice"), o(1, "pass+emit"), o(1, "made"), o(2, "made"), o(2, "emit+pass"), o(3, "pass")]);
    }

    /// Forwards every record, last first: a plugin's own loop may send outputs in any order.
    struct Reversed;

    impl Transform for Reversed {
        type Config = NoConfig;
        fn create(_: NoConfig) -> Result<Self, ConfigError> {
            Ok(Reversed)
        }
        fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
            out.forward(record);
            Ok(())
        }
        fn transform_batch(&mut self, batch: crate::Batch<'_>, outputs: &mut crate::Outputs) -> Result<(), RecordError> {
            let records: Vec<_> = batch.records().collect();
            for record in records.iter().rev() {
                self.transform(record, &mut outputs.for_input(record.index()))?;
            }
            Ok(())
        }
    }

    /// Listed, the passes would be refused by the host (not in increasing order); written out,
    /// they keep the order sent, as before contract 0.1.6.
    #[test]
    fn passes_sent_out_of_input_order_are_written_out_in_that_order() {
        let values = ["a", "b", "c"];
        let Ok(out) = run_batch_passing(&mut Reversed, &input_batch(inputs(&values))) else { panic!("no batch error") };
        assert!(out.passed.is_empty());
        let read = testing::run(&mut Reversed, inputs(&values)).expect("no batch error");
        let outputs: Vec<_> = read.outputs.iter().map(|o| (o.input, o.value.clone().unwrap())).collect();
        assert_eq!(outputs, [(2, b"c".to_vec()), (1, b"b".to_vec()), (0, b"a".to_vec())]);
    }
}
