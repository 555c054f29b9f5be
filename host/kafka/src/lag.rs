//! A consumer's lag from what its client already knows: no request to the broker.
//!
//! Why through librdkafka directly: rdkafka's safe API offers only `fetch_watermarks`, a
//! round trip to the broker per partition; librdkafka keeps each partition's high watermark
//! from the last fetch response, which is what a status read after every batch needs.

#![allow(unsafe_code, reason = "librdkafka's cached watermarks have no safe wrapper; see the safety comment")]

use std::ffi::CString;

use rdkafka::bindings as rd;
use rdkafka::consumer::{Consumer, ConsumerContext};
use rdkafka::Offset;

/// Records in the assigned partitions not yet read: per partition, the high watermark the
/// client last saw minus its position, over the partitions it has read from (one it never
/// read from has no position yet), as `(topic, partition, lag)`. Against the high watermark,
/// so a transactional topic's control records count.
pub(crate) fn cached_lag<C: ConsumerContext, K: Consumer<C>>(consumer: &K) -> Vec<(String, i32, i64)> {
    let Ok(positions) = consumer.position() else { return Vec::new() };
    let mut lags = Vec::new();
    for elem in positions.elements() {
        let Offset::Offset(position) = elem.offset() else { continue };
        let Ok(topic) = CString::new(elem.topic()) else { continue };
        if let Some(high) = cached_high(consumer, &topic, elem.partition()) {
            lags.push((elem.topic().to_owned(), elem.partition(), (high - position).max(0)));
        }
    }
    lags
}

/// A partition's high watermark as the client last heard it in a fetch; `None` before any
/// fetch answered.
pub(crate) fn cached_high<C: ConsumerContext, K: Consumer<C>>(consumer: &K, topic: &std::ffi::CStr, partition: i32) -> Option<i64> {
    let client = consumer.client().native_ptr();
    let (mut low, mut high) = (-1i64, -1i64);
    // SAFETY: `client` is the live handle of `consumer`, borrowed for this call; `topic` is a
    // NUL-terminated string that outlives it; `low` and `high` are valid locals the call
    // writes to. librdkafka takes its own locks (it may create the partition's bookkeeping
    // object for a partition it has not seen, harmless for an assigned one) and is safe to
    // call from any thread.
    let err = unsafe { rd::rd_kafka_get_watermark_offsets(client, topic.as_ptr(), partition, &mut low, &mut high) };
    (err == rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR && high >= 0).then_some(high)
}
