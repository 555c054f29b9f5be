//! Record headers read as raw bytes, through librdkafka directly.
//!
//! Why: rdkafka's `Headers::iter` turns each key into `&str` with `unwrap()`, so one record
//! whose header key is not UTF-8 (any producer can write one) panics the task reading it.
//! Here a key is just bytes; the caller decides what a non-UTF-8 key means (the pipeline
//! treats it as a bad record under the connector's error policy).

#![allow(unsafe_code, reason = "librdkafka's header accessors are C functions; see the safety comments")]

use std::ffi::CStr;

use rdkafka::bindings as rd;
use rdkafka::message::BorrowedMessage;

/// One header: key and value bytes as stored in the record; a null value reads as empty.
pub type RawHeader<'a> = (&'a [u8], &'a [u8]);

/// Every header of `msg`, in order.
pub(crate) fn headers<'a>(msg: &'a BorrowedMessage<'a>) -> Vec<RawHeader<'a>> {
    let mut list: *mut rd::rd_kafka_headers_t = std::ptr::null_mut();
    // SAFETY: `msg.ptr()` is a live message for `'a`; librdkafka writes a pointer to headers
    // the message owns (or leaves it null and returns an error when there are none).
    let err = unsafe { rd::rd_kafka_message_headers(msg.ptr(), &mut list) };
    if err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR || list.is_null() {
        return Vec::new();
    }
    // SAFETY: `list` is the message's own header list, valid while the message lives.
    let count = unsafe { rd::rd_kafka_header_cnt(list) };
    let mut out = Vec::with_capacity(count);
    for idx in 0..count {
        let (mut name, mut value, mut size) = (std::ptr::null(), std::ptr::null(), 0usize);
        // SAFETY: `idx < count`; the out-pointers are valid locals. On success `name` is a
        // NUL-terminated string and `value` points at `size` bytes (or is null), both owned by
        // the message and valid for `'a`.
        let err = unsafe { rd::rd_kafka_header_get_all(list, idx, &mut name, &mut value, &mut size) };
        if err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR || name.is_null() {
            continue;
        }
        // SAFETY: see above: NUL-terminated and alive for `'a`.
        let key: &'a [u8] = unsafe { CStr::from_ptr(name) }.to_bytes();
        let value: &'a [u8] = if value.is_null() || size == 0 {
            &[]
        } else {
            // SAFETY: `value` points at `size` bytes alive for `'a`.
            unsafe { std::slice::from_raw_parts(value.cast::<u8>(), size) }
        };
        out.push((key, value));
    }
    out
}
