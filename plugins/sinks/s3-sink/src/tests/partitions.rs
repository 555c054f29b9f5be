//! Partitioners, timestamps, and rotation by record time and by the wall clock.

use std::cell::Cell;
use std::rc::Rc;

use turnpike_sdk::testing::{self, TestRecord};

use super::{hold, n, record, sink, texts};

/// 2024-02-29T13:45:30Z.
const T: i64 = 1_709_214_330_000;

fn at(offset: i64, timestamp: i64) -> TestRecord {
    TestRecord { timestamp: Some(timestamp), ..n(0, offset) }
}

fn keys() -> Vec<String> {
    texts().into_keys().collect()
}

#[test]
fn time_partitions_come_from_record_timestamps() {
    let mut s = sink(r#"{"partitioner.class": "time", "path.format": "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", "partition.duration.ms": 3600000, "flush.size": 2}"#);
    let rejected = testing::write(&mut s, [at(0, T), at(1, T + 60_000), at(2, T + 3_600_000), n(0, 3)]).unwrap();
    assert_eq!(keys(), ["topics/test/year=2024/month=02/day=29/hour=13/test+0+0000000000.json"]);
    assert_eq!(testing::open_uploads(), ["topics/test/year=2024/month=02/day=29/hour=14/test+0+0000000002.json"]);
    assert_eq!(rejected.len(), 1, "{rejected:?}");
    assert_eq!(rejected[0].0, 3);
    assert!(rejected[0].1.message.contains("no timestamp"), "{}", rejected[0].1);
}

#[test]
fn time_partitions_are_in_the_configured_zone() {
    let mut s = sink(
        r#"{"partitioner.class": "io.confluent.connect.storage.partitioner.TimeBasedPartitioner", "path.format": "YYYY-MM-dd/HH",
            "partition.duration.ms": 86400000, "timezone": "-05:30", "flush.size": 1}"#,
    );
    testing::write(&mut s, [at(0, T)]).unwrap();
    // 13:45 UTC is 08:15 at -05:30; a day-long partition starts at local midnight.
    assert_eq!(keys(), ["topics/test/2024-02-29/00/test+0+0000000000.json"]);
}

#[test]
fn a_value_field_can_carry_the_time() {
    let mut s = sink(
        r#"{"partitioner.class": "time", "path.format": "'hour'=HH", "partition.duration.ms": 3600000, "flush.size": 1,
            "timestamp.extractor": "RecordField", "timestamp.field": "meta.at"}"#,
    );
    let batch = [
        record(0, 0, r#"{"meta": {"at": "2024-02-29T15:10:00+02:00"}}"#),
        record(0, 1, &format!(r#"{{"meta": {{"at": {}}}}}"#, T + 3 * 3_600_000)),
        record(0, 2, r#"{"meta": {}}"#),
        record(0, 3, r#"{"meta": {"at": "yesterday"}}"#),
    ];
    let rejected = testing::write(&mut s, batch).unwrap();
    assert_eq!(keys(), ["topics/test/hour=13/test+0+0000000000.json", "topics/test/hour=16/test+0+0000000001.json"]);
    assert_eq!(rejected.iter().map(|r| r.0).collect::<Vec<_>>(), [2, 3]);
    assert!(rejected.iter().all(|r| r.1.message.contains("meta.at")), "{rejected:?}");
}

#[test]
fn field_partitions_name_each_field_and_its_value() {
    let mut s = sink(r#"{"partitioner.class": "field", "partition.field.name": ["region", "shop.id"], "flush.size": 1}"#);
    let batch = [
        record(0, 0, r#"{"region": "eu", "shop": {"id": 7}}"#),
        record(0, 1, r#"{"region": "us"}"#),
        record(0, 2, r#"{"region": "a/b", "shop": {"id": true}}"#),
        record(0, 3, "not json"),
        record(0, 4, r#"{"region": ["x"], "shop": {"id": 1}}"#),
    ];
    let rejected = testing::write(&mut s, batch).unwrap();
    assert_eq!(keys(), ["topics/test/region=a%2Fb/shop.id=true/test+0+0000000002.json", "topics/test/region=eu/shop.id=7/test+0+0000000000.json"]);
    assert_eq!(rejected.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 3, 4]);
    assert!(rejected[0].1.message.contains("no field `shop.id`"), "{}", rejected[0].1);
    assert!(rejected[1].1.message.contains("not JSON"), "{}", rejected[1].1);
    assert!(rejected[2].1.message.contains("an array"), "{}", rejected[2].1);
}

#[test]
fn rotate_interval_starts_an_object_when_record_time_moves_past_it() {
    let mut s = sink(r#"{"rotate.interval.ms": 1000, "flush.size": 100}"#);
    testing::write(&mut s, [at(0, 0), at(1, 500), at(2, 999), at(3, 1000), at(4, 1500), at(5, 2999)]).unwrap();
    let objects = texts();
    let lines = |offset: i64| objects[&format!("topics/test/partition=0/test+0+{offset:010}.json")].lines().count();
    assert_eq!(objects.len(), 2);
    assert_eq!((lines(0), lines(3)), (3, 2));
    assert_eq!(testing::flush(&mut s).unwrap(), [hold("test", 0, 5)]);
}

#[test]
fn the_schedule_closes_objects_on_flush_and_on_write() {
    let now = Rc::new(Cell::new(10_000_i64));
    let mut s = sink(r#"{"rotate.schedule.interval.ms": 60000, "flush.size": 1000}"#);
    let clock = now.clone();
    s.set_clock(move || clock.get());
    testing::write(&mut s, [n(0, 0), n(0, 1)]).unwrap();
    now.set(59_999);
    assert_eq!(testing::flush(&mut s).unwrap(), [hold("test", 0, 0)]);
    assert!(testing::stored_objects().is_empty());

    // The host keeps flushing a held partition with no new records: the boundary closes it.
    now.set(60_000);
    assert!(testing::flush(&mut s).unwrap().is_empty());
    assert_eq!(keys(), ["topics/test/partition=0/test+0+0000000000.json"]);

    // Opened at 70 s, an object is due at the next minute; a write after that closes it first.
    now.set(70_000);
    testing::write(&mut s, [n(0, 2)]).unwrap();
    now.set(130_000);
    testing::write(&mut s, [n(0, 3)]).unwrap();
    assert_eq!(texts()["topics/test/partition=0/test+0+0000000002.json"], "{\"n\":2}\n");
    assert_eq!(testing::open_uploads(), ["topics/test/partition=0/test+0+0000000003.json"]);
}
