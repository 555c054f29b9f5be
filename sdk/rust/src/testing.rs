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
use crate::layout::{bytes, optional, ABSENT, HEADER_STRIDE, NO_TIMESTAMP, OUTPUT_STRIDE};
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
    let data = &out.data;
    let outputs = out
        .records
        .chunks_exact(OUTPUT_STRIDE)
        .zip(&out.timestamps)
        .map(|(r, &ts)| Written {
            input: r[0],
            key: optional(data, r[1], r[2]).map(<[u8]>::to_vec),
            value: optional(data, r[3], r[4]).map(<[u8]>::to_vec),
            headers: out.headers[r[5] as usize * HEADER_STRIDE..(r[5] + r[6]) as usize * HEADER_STRIDE]
                .chunks_exact(HEADER_STRIDE)
                .map(|h| (String::from_utf8_lossy(bytes(data, h[0], h[1])).into_owned(), bytes(data, h[2], h[3]).to_vec()))
                .collect(),
            timestamp: (ts != NO_TIMESTAMP).then_some(ts),
            topic: (r[7] != ABSENT).then(|| out.topics[r[7] as usize].clone()),
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
    let mut b = wit::InputBatch { data: vec![], topics: vec![], records: vec![], positions: vec![], headers: vec![] };
    let append = |data: &mut Vec<u8>, bytes: Option<&[u8]>| match bytes {
        Some(bytes) => {
            let span = (data.len() as u32, bytes.len() as u32);
            data.extend_from_slice(bytes);
            span
        }
        None => (0, ABSENT),
    };
    for (i, r) in records.into_iter().enumerate() {
        let key = append(&mut b.data, r.key.as_deref());
        let value = append(&mut b.data, r.value.as_deref());
        let first = (b.headers.len() / HEADER_STRIDE) as u32;
        for (k, v) in &r.headers {
            let (ko, kl) = append(&mut b.data, Some(k.as_bytes()));
            let (vo, vl) = append(&mut b.data, Some(v));
            b.headers.extend_from_slice(&[ko, kl, vo, vl]);
        }
        let count = (b.headers.len() / HEADER_STRIDE) as u32 - first;
        let topic = match b.topics.iter().position(|t| *t == r.topic) {
            Some(t) => t as u32,
            None => {
                b.topics.push(r.topic.clone());
                (b.topics.len() - 1) as u32
            }
        };
        b.records.extend_from_slice(&[key.0, key.1, value.0, value.1, first, count, topic, r.partition as u32]);
        b.positions.extend_from_slice(&[r.offset.unwrap_or(i as i64), r.timestamp.unwrap_or(NO_TIMESTAMP)]);
    }
    b
}
