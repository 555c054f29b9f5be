//! Producing records no well-behaved client library lets you write: a header key that is not
//! UTF-8. Any producer speaking the protocol can write one, and rdkafka's own header iterator
//! panics on it, so the tests need a way to make it.

#![allow(unsafe_code, reason = "librdkafka's produceva takes raw header names; see the safety comments")]

use std::ffi::CString;
use std::time::Duration;

use anyhow::{bail, Result};
use rdkafka::bindings as rd;
use rdkafka::config::ClientConfig;
use rdkafka::producer::{BaseProducer, Producer};

/// Produces one record with `value` to `topic` whose only header has the raw key `key`
/// (which may be any bytes but NUL) and value `header_value`, and waits for it to be sent.
/// Its own producer: a record produced behind rdkafka's back carries no delivery opaque,
/// which only the default (unit) delivery context accepts.
pub fn produce_with_raw_header_key(topic: &str, value: &[u8], key: &[u8], header_value: &[u8]) -> Result<()> {
    let producer: BaseProducer = ClientConfig::new().set("bootstrap.servers", crate::bootstrap()).create()?;
    let topic = CString::new(topic)?;
    let key = CString::new(key)?;
    let mut vus = [
        rd::rd_kafka_vu_t { vtype: rd::rd_kafka_vtype_t::RD_KAFKA_VTYPE_TOPIC, u: rd::rd_kafka_vu_s__bindgen_ty_1 { cstr: topic.as_ptr() } },
        rd::rd_kafka_vu_t {
            vtype: rd::rd_kafka_vtype_t::RD_KAFKA_VTYPE_VALUE,
            u: rd::rd_kafka_vu_s__bindgen_ty_1 { mem: rd::rd_kafka_vu_s__bindgen_ty_1__bindgen_ty_1 { ptr: value.as_ptr() as *mut _, size: value.len() } },
        },
        rd::rd_kafka_vu_t {
            vtype: rd::rd_kafka_vtype_t::RD_KAFKA_VTYPE_HEADER,
            u: rd::rd_kafka_vu_s__bindgen_ty_1 {
                header: rd::rd_kafka_vu_s__bindgen_ty_1__bindgen_ty_2 { name: key.as_ptr(), val: header_value.as_ptr().cast(), size: header_value.len() as isize },
            },
        },
    ];
    // SAFETY: the client pointer is live while `producer` is; every pointer in `vus` points
    // at data alive until this call returns, and librdkafka copies the value and header
    // before returning (no RD_KAFKA_MSG_F_FREE, default copy semantics).
    let error = unsafe { rd::rd_kafka_produceva(producer.client().native_ptr(), vus.as_mut_ptr(), vus.len()) };
    if !error.is_null() {
        // SAFETY: a non-null error returned by produceva is ours to destroy.
        unsafe { rd::rd_kafka_error_destroy(error) };
        bail!("librdkafka refused to produce the poison record");
    }
    producer.flush(Duration::from_secs(30))?;
    if producer.in_flight_count() > 0 {
        bail!("the poison record was not delivered");
    }
    Ok(())
}
