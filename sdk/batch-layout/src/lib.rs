//! The batch layout of `wit/types.wit` (input and output batches) and `wit/source.wit`
//! (source batches), written once. The host runtime and the Rust SDK build, read and check
//! batches through this crate, so the two sides cannot drift apart; the Python and JS SDKs
//! are held to the same bytes by the golden fixture in `tests/fixtures/batch`.
//!
//! The bindgen types (`InputBatch`, `OutputBatch`, `SourceBatch`) are generated on each side
//! and stay there; this crate works on their columns:
//! - writers ([`InputWriter`], [`OutputWriter`], [`SourceWriter`]) append records to owned
//!   columns ([`InputColumns`], [`OutputColumns`], [`SourceColumns`]), which a side moves into
//!   its bindgen type field by field;
//! - views ([`InputView`], [`OutputView`], [`SourceView`]) borrow a batch's columns and never
//!   panic on what they hold (a span out of range reads as empty);
//! - the checks ([`validate_output`], [`validate_source`]) tell the host whether a plugin kept
//!   to the contract, with a typed [`LayoutError`] when it did not;
//! - [`resolve_forwarded`] turns the outputs of a forwarding transform (since `0.1.4`) into an
//!   ordinary output batch.
//!
//! Who writes what: the host writes input batches; a guest writes output batches (a
//! transform) and source batches (a source). The SDK's test harness also writes input batches,
//! and the host's chain merges output batches and turns them into the next stage's input.
//!
//! No dependencies and nothing platform-specific: it builds for the host and for
//! `wasm32-wasip2` alike.

mod columns;
mod error;
mod forward;
mod pass;
mod record;
mod span;
mod validate;
mod view;
mod writer;

pub use columns::{InputColumns, OutputColumns, SourceColumns};
pub use error::{BatchKind, LayoutError};
pub use forward::{resolve_forwarded, OutputParts, FORWARD_ALL, FORWARD_HEADERS, FORWARD_KEY, FORWARD_VALUE};
pub use pass::{merge_passed, passed_row, passed_timestamp, PassParts};
pub use record::{OutputRef, RecordRef, Source, SourceRef};
pub use span::{bytes, optional, span, Headers};
pub use validate::{is_valid_topic_name, validate_headers, validate_output, validate_source, validate_topics};
pub use view::{InputView, OutputView, Produced, SourceView};
pub use writer::{InputWriter, OutputMark, OutputWriter, SourceWriter};

/// A span length meaning "null" (a null key, a tombstone value); as a topic index, "the
/// connector's output topic".
pub const ABSENT: u32 = u32::MAX;
/// A timestamp meaning "none".
pub const NO_TIMESTAMP: i64 = i64::MIN;
/// `u32`s per input record: key-offset, key-length, value-offset, value-length, first-header,
/// header-count, topic-index, partition.
pub const INPUT_STRIDE: usize = 8;
/// `s64`s per input record: offset, timestamp.
pub const POSITION_STRIDE: usize = 2;
/// `u32`s per output record: input-index, key-offset, key-length, value-offset, value-length,
/// first-header, header-count, topic-index.
pub const OUTPUT_STRIDE: usize = 8;
/// `u32`s per source record: key-offset, key-length, value-offset, value-length, first-header,
/// header-count, topic-index, position-offset, position-length.
pub const SOURCE_STRIDE: usize = 9;
/// `u32`s per header: key-offset, key-length, value-offset, value-length.
pub const HEADER_STRIDE: usize = 4;

/// The longest topic name Kafka accepts.
const MAX_TOPIC_LEN: usize = 249;
