//! Run plugin logic natively, in `cargo test`, through the same per-batch code path the
//! component uses (everything except the WebAssembly boundary).
//!
//! ```
//! use turnpike_sdk::prelude::*;
//! use turnpike_sdk::testing;
//!
//! struct Drop;
//! impl Transform for Drop {
//!     type Config = NoConfig;
//!     fn create(_: NoConfig) -> Result<Self, ConfigError> { Ok(Drop) }
//!     fn transform(&mut self, _: &Record<'_>, _: &mut Output<'_>) -> Result<(), RecordError> { Ok(()) }
//! }
//!
//! let mut t = testing::create::<Drop>("{}").unwrap();
//! let result = testing::run(&mut t, [TestRecord::value("x")]).unwrap();
//! assert!(result.outputs.is_empty());
//! ```

use crate::bindings::turnpike::plugin::types as wit;
use crate::output::bytes;
use crate::transform::run_batch;
use crate::{parse_config, ConfigError, ErrorKind, RecordError, Transform};

/// An input record for a test.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestRecord {
    /// Key; `None` is a null key.
    pub key: Option<Vec<u8>>,
    /// Value; `None` is a tombstone.
    pub value: Option<Vec<u8>>,
    /// Headers in order.
    pub headers: Vec<(String, Vec<u8>)>,
    /// Milliseconds since the Unix epoch.
    pub timestamp: Option<i64>,
    /// Source topic; default `test`.
    pub topic: String,
    /// Source partition.
    pub partition: i32,
    /// Source offset; default: the record's position in the test batch.
    pub offset: Option<i64>,
}

impl TestRecord {
    /// A record with this value, on topic `test`.
    pub fn value(value: impl Into<Vec<u8>>) -> Self {
        Self { value: Some(value.into()), topic: "test".into(), ..Self::default() }
    }

    /// Sets the key.
    pub fn with_key(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Adds a header.
    pub fn with_header(mut self, key: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.headers.push((key.into(), value.into()));
        self
    }
}

/// A record a transform produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// Index of the input it came from.
    pub input: u32,
    /// Key.
    pub key: Option<Vec<u8>>,
    /// Value.
    pub value: Option<Vec<u8>>,
    /// Headers in order.
    pub headers: Vec<(String, Vec<u8>)>,
    /// Timestamp.
    pub timestamp: Option<i64>,
    /// Destination topic, if the plugin named one.
    pub topic: Option<String>,
}

/// What a test batch produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestOutput {
    /// Records produced, in order.
    pub outputs: Vec<Written>,
    /// Inputs that failed, by index.
    pub errors: Vec<(u32, RecordError)>,
}

impl TestOutput {
    /// Output values as UTF-8 text (lossy), for concise assertions.
    pub fn values(&self) -> Vec<String> {
        self.outputs.iter().map(|w| String::from_utf8_lossy(w.value.as_deref().unwrap_or_default()).into_owned()).collect()
    }
}

/// Creates a transform from JSON config text, exactly as the host's `create` call would.
pub fn create<T: Transform>(config_json: &str) -> Result<T, ConfigError> {
    parse_config::<T::Config>(config_json).and_then(T::create)
}

/// Runs `records` through `transform` as one batch.
pub fn run<T: Transform>(transform: &mut T, records: impl IntoIterator<Item = TestRecord>) -> Result<TestOutput, RecordError> {
    let batch = input_batch(records);
    let out = run_batch(transform, &batch).map_err(|e| RecordError { kind: kind(e.kind), message: e.message })?;
    let outputs = out
        .records
        .iter()
        .map(|r| Written {
            input: r.input,
            key: r.key.map(|s| bytes(&out, s)),
            value: r.value.map(|s| bytes(&out, s)),
            headers: out.headers[r.headers.offset as usize..(r.headers.offset + r.headers.len) as usize]
                .iter()
                .map(|h| (String::from_utf8_lossy(&bytes(&out, h.key)).into_owned(), bytes(&out, h.value)))
                .collect(),
            timestamp: r.timestamp,
            topic: r.topic.map(|t| out.topics[t as usize].clone()),
        })
        .collect();
    let errors = out
        .errors
        .iter()
        .map(|e| (e.input, RecordError { kind: kind(e.error.kind), message: e.error.message.clone() }))
        .collect();
    Ok(TestOutput { outputs, errors })
}

fn kind(k: wit::ErrorKind) -> ErrorKind {
    match k {
        wit::ErrorKind::InvalidRecord => ErrorKind::InvalidRecord,
        wit::ErrorKind::Retriable => ErrorKind::Retriable,
        wit::ErrorKind::Fatal => ErrorKind::Fatal,
    }
}

/// Packs test records into the batch layout the host sends.
fn input_batch(records: impl IntoIterator<Item = TestRecord>) -> wit::InputBatch {
    let mut b = wit::InputBatch { data: vec![], topics: vec![], headers: vec![], records: vec![] };
    for (i, r) in records.into_iter().enumerate() {
        let append = |data: &mut Vec<u8>, bytes: &[u8]| {
            let s = wit::Span { offset: data.len() as u32, len: bytes.len() as u32 };
            data.extend_from_slice(bytes);
            s
        };
        let key = r.key.as_deref().map(|k| append(&mut b.data, k));
        let value = r.value.as_deref().map(|v| append(&mut b.data, v));
        let first = b.headers.len() as u32;
        for (k, v) in &r.headers {
            let key = append(&mut b.data, k.as_bytes());
            let value = append(&mut b.data, v);
            b.headers.push(wit::Header { key, value });
        }
        let topic = match b.topics.iter().position(|t| *t == r.topic) {
            Some(t) => t as u32,
            None => {
                b.topics.push(r.topic.clone());
                (b.topics.len() - 1) as u32
            }
        };
        b.records.push(wit::InputRecord {
            key,
            value,
            headers: wit::Span { offset: first, len: b.headers.len() as u32 - first },
            timestamp: r.timestamp,
            topic,
            partition: r.partition,
            offset: r.offset.unwrap_or(i as i64),
        });
    }
    b
}
