//! The sink against the SDK's in-memory object store: object boundaries, keys, holds,
//! revocation and re-reads. Formats, partitioners and configuration have their own files.

mod config;
mod formats;
mod partitions;

use std::collections::BTreeMap;

use turnpike_sdk::testing::{self, Hold, TestRecord};
use turnpike_sdk::{ConfigError, ErrorKind};

use crate::S3Sink;

/// A sink on an empty store granted with an empty prefix.
pub(crate) fn sink(config: &str) -> S3Sink {
    testing::reset_storage();
    match testing::create_sink(config) {
        Ok(s) => s,
        Err(e) => panic!("config {config}: {e}"),
    }
}

/// Why `config` is refused.
pub(crate) fn refused(config: &str) -> ConfigError {
    match testing::create_sink::<S3Sink>(config) {
        Ok(_) => panic!("config {config} was accepted"),
        Err(e) => e,
    }
}

/// A record of topic `test` with this value.
pub(crate) fn record(partition: i32, offset: i64, value: &str) -> TestRecord {
    TestRecord { partition, offset: Some(offset), ..TestRecord::value(value) }
}

/// `{"n":<offset>}` at `partition`/`offset`.
pub(crate) fn n(partition: i32, offset: i64) -> TestRecord {
    record(partition, offset, &format!("{{\"n\":{offset}}}"))
}

pub(crate) fn hold(topic: &str, partition: i32, offset: i64) -> Hold {
    Hold { topic: topic.into(), partition, offset }
}

/// Completed objects as text.
pub(crate) fn texts() -> BTreeMap<String, String> {
    testing::stored_objects().into_iter().map(|(k, v)| (k, String::from_utf8(v).expect("a text object"))).collect()
}

fn key(partition: i32, offset: i64) -> String {
    format!("topics/test/partition={partition}/test+{partition}+{offset:010}.json")
}

#[test]
fn objects_close_at_flush_size_and_hold_the_open_one() {
    let mut s = sink(r#"{"flush.size": 10}"#);
    assert!(testing::write(&mut s, (0..25).map(|o| n(0, o))).unwrap().is_empty());
    assert_eq!(texts().keys().cloned().collect::<Vec<_>>(), [key(0, 0), key(0, 10)]);
    assert_eq!(testing::open_uploads(), [key(0, 20)]);
    assert_eq!(testing::flush(&mut s).unwrap(), [hold("test", 0, 20)], "records 20.. are in no complete object");

    assert!(testing::write(&mut s, (25..30).map(|o| n(0, o))).unwrap().is_empty());
    assert!(testing::flush(&mut s).unwrap().is_empty(), "every record is in a complete object");
    let lines: Vec<String> = texts().values().flat_map(|t| t.lines().map(str::to_owned).collect::<Vec<_>>()).collect();
    let expected: Vec<String> = (0..30).map(|o| format!("{{\"n\":{o}}}")).collect();
    assert_eq!(lines, expected, "each record exactly once, in offset order");
}

#[test]
fn each_partition_is_held_at_its_oldest_open_object() {
    let mut s = sink(r#"{"flush.size": 3, "partitioner.class": "field", "partition.field.name": "k"}"#);
    let v = |k: &str| format!("{{\"k\":\"{k}\"}}");
    let batch = [
        record(0, 0, &v("a")),
        record(0, 1, &v("a")),
        record(0, 2, &v("a")),
        record(0, 3, &v("b")),
        record(0, 4, &v("a")),
        record(1, 7, &v("a")),
    ];
    assert!(testing::write(&mut s, batch).unwrap().is_empty());
    assert_eq!(testing::flush(&mut s).unwrap(), [hold("test", 0, 3), hold("test", 1, 7)]);
    assert_eq!(texts().keys().cloned().collect::<Vec<_>>(), ["topics/test/k=a/test+0+0000000000.json"]);
    // Holds belong to one flush: with nothing open, the next one holds nothing.
    testing::revoke(&mut s, &[("test", 0), ("test", 1)]);
    assert!(testing::flush(&mut s).unwrap().is_empty());
}

#[test]
fn revoked_partitions_give_up_their_open_objects() {
    let mut s = sink(r#"{"flush.size": 100}"#);
    testing::write(&mut s, [n(0, 0), n(0, 1), n(1, 0)]).unwrap();
    testing::revoke(&mut s, &[("test", 0)]);
    assert_eq!(testing::aborted_uploads(), [key(0, 0)]);
    assert_eq!(testing::open_uploads(), [key(1, 0)]);
    assert_eq!(testing::flush(&mut s).unwrap(), [hold("test", 1, 0)]);
    assert!(testing::stored_objects().is_empty());
    // Assigned again, the partition is read from its committed offset: not a rewind.
    testing::write(&mut s, [n(0, 0)]).unwrap();
    assert_eq!(testing::aborted_uploads(), [key(0, 0)]);
    assert_eq!(testing::open_uploads(), [key(1, 0), key(0, 0)]);
}

#[test]
fn a_partition_read_again_starts_its_objects_over() {
    let mut s = sink(r#"{"flush.size": 3}"#);
    testing::write(&mut s, [n(0, 0), n(0, 1)]).unwrap();
    testing::write(&mut s, [n(0, 0), n(0, 1), n(0, 2)]).unwrap();
    assert_eq!(testing::aborted_uploads(), [key(0, 0)]);
    assert_eq!(texts()[&key(0, 0)], "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n");
}

#[test]
fn records_sharing_an_offset_stay_in_their_object() {
    // A transform that makes two records of one input gives the sink both at its offset.
    let mut s = sink(r#"{"flush.size": 4}"#);
    testing::write(&mut s, [n(0, 0), n(0, 1), n(0, 1), n(0, 2)]).unwrap();
    assert!(testing::aborted_uploads().is_empty(), "nothing was read again: {:?}", testing::aborted_uploads());
    assert_eq!(texts().get(&key(0, 0)).map(String::as_str), Some("{\"n\":0}\n{\"n\":1}\n{\"n\":1}\n{\"n\":2}\n"));
}

#[test]
fn a_range_delivered_again_rewrites_the_same_object() {
    let mut first = sink(r#"{"flush.size": 4, "s3.compression.type": "gzip"}"#);
    testing::write(&mut first, (0..6).map(|o| n(0, o))).unwrap();
    let before = testing::stored_objects();
    assert_eq!(before.len(), 1);
    // The connector stops before committing past 4; a new instance reads from 0 again.
    drop(first);
    let mut second: S3Sink = testing::create_sink(r#"{"flush.size": 4, "s3.compression.type": "gzip"}"#).unwrap_or_else(|e| panic!("{e}"));
    testing::write(&mut second, (0..8).map(|o| n(0, o))).unwrap();
    let after = testing::stored_objects();
    assert_eq!(after.len(), 2);
    let first_key = before.keys().next().cloned().unwrap_or_default();
    assert_eq!(after.get(&first_key), before.get(&first_key), "same key, same bytes");
}

#[test]
fn keys_lie_under_the_granted_prefix() {
    testing::reset_storage();
    testing::set_storage_prefix(Some("team/orders/"));
    let mut s: S3Sink = testing::create_sink(r#"{"flush.size": 1, "topics.dir": "/raw/kafka/"}"#).unwrap_or_else(|e| panic!("{e}"));
    let rec = TestRecord { topic: "orders".into(), ..n(2, 7) };
    assert!(testing::write(&mut s, [rec]).unwrap().is_empty());
    assert_eq!(texts().keys().cloned().collect::<Vec<_>>(), ["team/orders/raw/kafka/orders/partition=2/orders+2+0000000007.json"]);
}

#[test]
fn without_a_storage_grant_writing_fails_the_connector() {
    testing::reset_storage();
    testing::set_storage_prefix(None);
    // `create` needs no grant: the host may only be validating the config.
    let mut s: S3Sink = testing::create_sink("{}").unwrap_or_else(|e| panic!("{e}"));
    let e = testing::write(&mut s, [n(0, 0)]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Fatal);
    assert!(e.message.contains("add `storage: {bucket: …}` to the connector"), "{e}");
}

#[test]
fn the_offset_padding_is_configurable() {
    let mut s = sink(r#"{"flush.size": 1, "filename.offset.zero.pad.width": 3}"#);
    testing::write(&mut s, [n(0, 5), n(0, 12345)]).unwrap();
    assert_eq!(texts().keys().cloned().collect::<Vec<_>>(), ["topics/test/partition=0/test+0+005.json", "topics/test/partition=0/test+0+12345.json"]);
}
