//! The batch layout of `wit/types.wit`, guest side. The host has its twin in
//! `host/runtime/src/batch.rs`; both follow the layout rules written in the WIT.

/// A span length meaning "null".
pub(crate) const ABSENT: u32 = u32::MAX;
/// A timestamp meaning "none".
pub(crate) const NO_TIMESTAMP: i64 = i64::MIN;
/// `u32`s per input record: key-offset, key-length, value-offset, value-length,
/// first-header, header-count, topic-index, partition.
pub(crate) const INPUT_STRIDE: usize = 8;
/// `s64`s per input record: offset, timestamp.
pub(crate) const POSITION_STRIDE: usize = 2;
/// `u32`s per output record: input-index, key-offset, key-length, value-offset,
/// value-length, first-header, header-count, topic-index.
pub(crate) const OUTPUT_STRIDE: usize = 8;
/// `u32`s per header: key-offset, key-length, value-offset, value-length.
pub(crate) const HEADER_STRIDE: usize = 4;

/// The bytes of a span; empty when out of range (the host never sends one).
pub(crate) fn bytes(data: &[u8], offset: u32, len: u32) -> &[u8] {
    let start = offset as usize;
    data.get(start..start.saturating_add(len as usize)).unwrap_or_default()
}

/// The bytes of a span that may be "absent".
pub(crate) fn optional(data: &[u8], offset: u32, len: u32) -> Option<&[u8]> {
    (len != ABSENT).then(|| bytes(data, offset, len))
}
