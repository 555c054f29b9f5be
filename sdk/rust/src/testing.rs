//! Run plugin logic natively, in `cargo test`, through the same per-batch code path the
//! component uses (everything except the WebAssembly boundary, and the fetching of a lazy
//! batch's bytes from the host: here every batch comes with its bytes).
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

use turnpike_batch_layout::{InputWriter, OutputView, RecordRef, SourceView};

use crate::bindings::turnpike::plugin::types as wit;
use crate::transform::run_batch;
use crate::{parse_config, ConfigError, RecordError, Transform};

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
    let out = run_batch(transform, &batch).map_err(RecordError::from_wit)?;
    let view = OutputView::new(&out);
    let outputs = view
        .iter()
        .map(|p| Written {
            input: p.input,
            key: p.key.map(<[u8]>::to_vec),
            value: p.value.map(<[u8]>::to_vec),
            headers: owned(view.headers(&p)),
            timestamp: p.timestamp,
            topic: p.topic.map(str::to_owned),
        })
        .collect();
    let errors = out
        .errors
        .iter()
        .map(|e| (e.input, RecordError::from_wit(e.error.clone())))
        .collect();
    Ok(TestOutput { outputs, errors })
}

/// Packs test records into the batch layout the host sends.
pub(crate) fn input_batch(records: impl IntoIterator<Item = TestRecord>) -> wit::InputBatch {
    let mut writer = InputWriter::new();
    for (i, r) in records.into_iter().enumerate() {
        let record = RecordRef {
            key: r.key.as_deref(),
            value: r.value.as_deref(),
            timestamp: r.timestamp,
            topic: &r.topic,
            partition: r.partition,
            offset: r.offset.unwrap_or(i as i64),
        };
        writer.push(record, r.headers.iter().map(|(k, v)| (k.as_str(), v.as_slice())));
    }
    crate::layout::input_batch(writer.finish())
}

/// Headers as owned pairs, for assertions.
fn owned<'a>(headers: impl Iterator<Item = (&'a str, &'a [u8])>) -> Vec<(String, Vec<u8>)> {
    headers.map(|(k, v)| (k.to_owned(), v.to_vec())).collect()
}

thread_local! {
    static HTTP_RESPONDER: std::cell::RefCell<Option<HttpResponder>> = const { std::cell::RefCell::new(None) };
}

/// What answers a plugin's HTTP requests in native tests.
type HttpResponder = Box<dyn FnMut(&crate::http::Request) -> Result<crate::http::Response, crate::http::HttpError>>;

/// Makes `responder` answer every [`crate::http::send`] on this thread (native tests only;
/// inside the host, requests go out through `wasi:http`). Without one, requests fail as
/// refused, as they would on a connector without an HTTP grant.
pub fn respond_http(responder: impl FnMut(&crate::http::Request) -> Result<crate::http::Response, crate::http::HttpError> + 'static) {
    HTTP_RESPONDER.with(|r| *r.borrow_mut() = Some(Box::new(responder)));
}

#[cfg_attr(target_arch = "wasm32", allow(dead_code, reason = "native transport only"))]
pub(crate) fn answer_http(request: &crate::http::Request) -> Result<crate::http::Response, crate::http::HttpError> {
    HTTP_RESPONDER.with(|r| match r.borrow_mut().as_mut() {
        Some(respond) => respond(request),
        None => Err(crate::http::HttpError { message: "no HTTP responder set (testing::respond_http)".into(), refused: true }),
    })
}

/// Creates a source from JSON config text and a position, as the host's `create` would.
pub fn create_source<S: crate::Source>(config_json: &str, position: Option<&[u8]>) -> Result<S, ConfigError> {
    parse_config::<S::Config>(config_json).and_then(|c| S::create(c, position.map(<[u8]>::to_vec)))
}

/// A record a source produced, with the position after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sourced {
    /// The record (its `input` is its index in the poll).
    pub record: Written,
    /// The position after it, if it carried one.
    pub position: Option<Vec<u8>>,
    /// Set when the source reported it as failed.
    pub error: Option<RecordError>,
}

/// Polls a source once for up to `max` records, as the host would.
pub fn poll<S: crate::Source>(source: &mut S, max: u32) -> Result<Vec<Sourced>, RecordError> {
    let out = crate::source::run_poll(source, max)?;
    let view = SourceView::new(&out);
    let polled = (0..view.len())
        .map(|i| {
            let r = view.record(i);
            Sourced {
                record: Written {
                    input: i as u32,
                    key: r.key.map(<[u8]>::to_vec),
                    value: r.value.map(<[u8]>::to_vec),
                    headers: owned(view.headers(i)),
                    timestamp: r.timestamp,
                    topic: r.topic.map(str::to_owned),
                },
                position: r.position.map(<[u8]>::to_vec),
                error: out.errors.iter().find(|e| e.input as usize == i).map(|e| RecordError::from_wit(e.error.clone())),
            }
        })
        .collect();
    Ok(polled)
}

/// Creates a sink from JSON config text, as the host's `create` would.
pub fn create_sink<S: crate::Sink>(config_json: &str) -> Result<S, ConfigError> {
    parse_config::<S::Config>(config_json).and_then(S::create)
}

/// Writes `records` to a sink as one batch; returns the rejected records by index.
pub fn write<S: crate::Sink>(sink: &mut S, records: impl IntoIterator<Item = TestRecord>) -> Result<Vec<(u32, RecordError)>, RecordError> {
    let batch = input_batch(records);
    let rejected = crate::sink::run_write(sink, &batch)?;
    Ok(rejected.into_iter().map(|r| (r.input, RecordError::from_wit(r.error))).collect())
}

/// A hold a sink made in a flush (see [`crate::storage::hold`]).
pub use crate::storage::fake::Hold;

/// Flushes `sink` as the host does and returns the holds it made during this flush: one per
/// partition, the lowest offset, sorted by topic and partition. Each flush starts with none.
pub fn flush<S: crate::Sink>(sink: &mut S) -> Result<Vec<Hold>, RecordError> {
    let before = crate::storage::fake::hold_count();
    sink.flush()?;
    let mut lowest: std::collections::BTreeMap<(String, i32), i64> = std::collections::BTreeMap::new();
    for h in crate::storage::fake::holds_since(before) {
        let offset = lowest.entry((h.topic, h.partition)).or_insert(h.offset);
        *offset = (*offset).min(h.offset);
    }
    Ok(lowest.into_iter().map(|((topic, partition), offset)| Hold { topic, partition, offset }).collect())
}

/// Tells `sink` that `partitions` (`(topic, partition)`) are taken away, as the host does
/// after a final flush.
pub fn revoke<S: crate::Sink>(sink: &mut S, partitions: &[(&str, i32)]) {
    let partitions: Vec<(String, i32)> = partitions.iter().map(|(t, p)| ((*t).to_owned(), *p)).collect();
    sink.revoked(&partitions);
}

/// Sets the prefix the fake object store grants on this thread (native tests only; inside
/// the host the connector's `storage` grant decides). `None` withdraws the grant, so every
/// [`crate::storage`] call fails with [`crate::storage::StorageError::NotGranted`]. Until
/// set, the store is granted with an empty prefix.
pub fn set_storage_prefix(prefix: Option<&str>) {
    crate::storage::fake::set_prefix(prefix);
}

/// Every completed object in the fake store, key → bytes.
pub fn stored_objects() -> std::collections::BTreeMap<String, Vec<u8>> {
    crate::storage::fake::objects()
}

/// The keys of uploads started and neither completed nor aborted, in the order they were opened.
pub fn open_uploads() -> Vec<String> {
    crate::storage::fake::open_keys()
}

/// The keys of uploads aborted (by [`crate::storage::Upload::abort`] or dropped open), in order.
pub fn aborted_uploads() -> Vec<String> {
    crate::storage::fake::aborted()
}

/// Every [`crate::storage::hold`] made since the last call (or reset), in order, and forgets
/// them. [`flush`] returns a flush's holds without taking them.
pub fn take_holds() -> Vec<Hold> {
    crate::storage::fake::take_holds()
}

/// Empties the fake store (objects, uploads, aborts, holds) and grants it with an empty
/// prefix again.
pub fn reset_storage() {
    crate::storage::fake::reset();
}

/// The database [`crate::sql`] calls go to in native tests.
pub use crate::sql::fake::FakeDatabase;

/// Makes `db` answer every [`crate::sql`] call on this thread (native tests only; inside the
/// host the connector's `database` grant decides), replacing any set before.
pub fn set_sql(db: FakeDatabase) {
    crate::sql::fake::set(Some(db));
}

/// Withdraws the fake database: every [`crate::sql`] call fails with
/// [`crate::sql::SqlError::NotGranted`], as on a connector without a `database` grant (the
/// state before any [`set_sql`]).
pub fn clear_sql() {
    crate::sql::fake::set(None);
}
