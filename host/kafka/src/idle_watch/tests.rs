//! The idle watch's tests: its interval rules, and reading against librdkafka's mock cluster.

use super::*;

#[test]
fn partition_counts_are_read_as_often_as_the_host_refreshes_metadata() {
    let with = |v: &str| metadata_every(&[("bootstrap.servers".into(), "b:9092".into()), (METADATA_REFRESH_SETTING.into(), v.into())]);
    assert_eq!(metadata_every(&[]), METADATA_EVERY);
    assert_eq!(with("10000"), Duration::from_secs(10));
    // Never more often than every 5 s (each check asks about every topic), never less
    // often than the default.
    assert_eq!(with("1000"), METADATA_EVERY_MIN);
    assert_eq!(with("600000"), METADATA_EVERY);
    // librdkafka's -1 ("never refresh") and 0 keep the default: new partitions must wake
    // their idle tasks at some point.
    assert_eq!(with("-1"), METADATA_EVERY);
    assert_eq!(with("0"), METADATA_EVERY);
}

async fn send(producer: &crate::Producer, topic: &str) {
    let record = crate::OutgoingRecord { topic, key: None, value: Some(b"x"), timestamp: None };
    producer.send(record, []).await.expect("send").wait().await.expect("delivered");
}

/// A watch wakes on a record at or after its offset and on none before it; two watches
/// on one partition from different offsets wake each at its own.
#[tokio::test(flavor = "multi_thread")]
async fn a_watch_wakes_on_a_record_at_or_after_its_offset_only() {
    let (_broker, settings) = crate::EmbeddedBroker::with_records("watched", 3, b"x").await;
    let producer = crate::Producer::new(&settings).expect("producer");
    let watch = IdleWatch::new(&settings).expect("watch");
    let point = |from| vec![WatchPoint { topic: "watched".into(), partition: 0, from }];
    // Offsets 0 to 2 exist: a watch from 4 must not wake, one from 2 must.
    let later = watch.watch(&point(4)).expect("watch from 4");
    let from_two = watch.watch(&point(2)).expect("watch from 2");
    tokio::time::timeout(Duration::from_secs(30), from_two.woken()).await.expect("a record at the watched offset wakes it");
    // A watch from an offset the client already read past wakes at once (record 2 was
    // seen for the first watch and is not read again).
    let late = watch.watch(&point(2)).expect("a second watch from 2");
    tokio::time::timeout(Duration::from_secs(5), late.woken()).await.expect("a watch from an offset already seen wakes at once");
    let from_three = watch.watch(&point(3)).expect("watch from 3");
    // The record at 3 is the first that concerns these two; the one from 4 stays asleep.
    send(&producer, "watched").await;
    tokio::time::timeout(Duration::from_secs(30), from_three.woken()).await.expect("the record at 3 wakes the watch from 3");
    assert!(tokio::time::timeout(Duration::from_millis(1), later.woken()).await.is_err(), "the record at 3 woke the watch from 4");
    send(&producer, "watched").await;
    tokio::time::timeout(Duration::from_secs(30), later.woken()).await.expect("the record at 4 wakes the watch from 4");
    // Dropped watches stop the partition being read.
    drop((later, from_two, from_three, late));
    assert_eq!(watch.partitions(), 0);
}
