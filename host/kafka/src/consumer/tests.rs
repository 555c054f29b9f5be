//! The consumer's tests against librdkafka's mock cluster.

use super::*;
use std::sync::atomic::Ordering;

/// A batch closes at the record that reaches its byte cap, however many more records
/// it may hold: 1,000-byte values against a 2,500-byte cap make batches of three.
#[tokio::test(flavor = "multi_thread")]
async fn a_batch_closes_at_its_byte_cap() {
    let (_broker, settings) = crate::EmbeddedBroker::with_records("bytes", 10, &[b'x'; 1_000]).await;
    let options = ConsumerOptions { group_id: "turnpike-bytes".into(), start_from: "earliest".into(), topics: vec!["bytes".into()], ..Default::default() };
    let consumer = Consumer::new(&settings, &options).expect("consumer");
    let limits = BatchLimits { records: 100, bytes: 2_500, wait: Duration::from_secs(5) };
    let read = tokio::time::timeout(Duration::from_secs(60), consumer.fill(limits, |_| {}, std::future::pending())).await.expect("records arrive");
    assert_eq!(read, 3);
}

/// `group.protocol: consumer` used to fail at client creation, because the host set the
/// classic protocol's session and heartbeat timeouts.
#[tokio::test]
async fn a_consumer_can_use_the_kip_848_group_protocol() {
    let options = ConsumerOptions { group_id: "turnpike-kip848".into(), start_from: "earliest".into(), topics: vec!["t".into()], ..Default::default() };
    let settings = vec![("bootstrap.servers".to_owned(), "127.0.0.1:1".to_owned()), ("group.protocol".to_owned(), "consumer".to_owned())];
    assert!(Consumer::new(&settings, &options).is_ok(), "{:?}", Consumer::new(&settings, &options).err());
    let classic = vec![("bootstrap.servers".to_owned(), "127.0.0.1:1".to_owned())];
    assert!(Consumer::new(&classic, &options).is_ok());
}

/// librdkafka never retries after a fatal error (a broker refusing the group protocol);
/// the read used to retry every 200 ms for ever, so the connector stayed `RUNNING` and
/// read nothing. Now the read ends, the reason is there to report, and dropping the
/// consumer does not block.
#[tokio::test(flavor = "multi_thread")]
async fn a_fatal_error_ends_the_read_and_is_reported() {
    let (_broker, settings) = crate::EmbeddedBroker::with_topic("fatal", 1);
    let options = ConsumerOptions { group_id: "turnpike-fatal".into(), start_from: "earliest".into(), topics: vec!["fatal".into()], ..Default::default() };
    let consumer = Consumer::new(&settings, &options).expect("consumer");
    assert_eq!(consumer.fatal_error(), None);
    let limits = BatchLimits { records: 100, bytes: usize::MAX, wait: Duration::from_millis(100) };
    // Joined, with its partition assigned, before the error.
    let producer = crate::Producer::new(&settings).expect("producer");
    let record = crate::OutgoingRecord { topic: "fatal", key: None, value: Some(b"x"), timestamp: None };
    producer.send(record, []).await.expect("send").wait().await.expect("delivered");
    let first = tokio::time::timeout(Duration::from_secs(30), consumer.fill(limits, |_| {}, std::future::pending())).await;
    assert_eq!(first, Ok(1));
    // Raised while the read waits for records, as a broker's refusal would be.
    let raise = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let reason = c"the broker refused the group protocol";
        let code = rdkafka::types::RDKafkaRespErr::RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION;
        #[allow(unsafe_code)]
        // SAFETY: the client pointer is live for the call (the consumer is borrowed) and
        // the reason is a NUL-terminated string librdkafka copies.
        let raised = unsafe { rdkafka::bindings::rd_kafka_test_fatal_error(consumer.inner().client().native_ptr(), code, reason.as_ptr()) };
        raised
    };
    let (read, raised) = tokio::join!(tokio::time::timeout(Duration::from_secs(10), consumer.fill(limits, |_| {}, std::future::pending())), raise);
    assert_eq!(raised, rdkafka::types::RDKafkaRespErr::RD_KAFKA_RESP_ERR_NO_ERROR);
    assert_eq!(read, Ok(0), "the read ends with nothing read");
    let fatal = consumer.fatal_error().expect("the fatal error is reported");
    assert!(fatal.reason.contains("the broker refused the group protocol") && fatal.group_protocol_refused, "{fatal:?}");
    let again = tokio::time::timeout(Duration::from_secs(10), consumer.fill(limits, |_| {}, std::future::pending())).await;
    assert_eq!(again, Ok(0), "a read after the fatal error ends at once");
    // Dropped on a runtime worker, as a task drops it: librdkafka's close never ends
    // here, so it must not hold the task.
    let dropping = Instant::now();
    drop(consumer);
    assert!(dropping.elapsed() < Duration::from_secs(5), "dropping a consumer in a fatal state took {:?}", dropping.elapsed());
}

/// The group's count of partitions taken from a consumer: a second member joining takes
/// half of the first's (and, cooperatively, nothing else); a member closing gives its own up,
/// which is not counted. Without the count an operator cannot tell a rebalance that moved two
/// partitions from one that stopped all of them.
#[tokio::test(flavor = "multi_thread")]
async fn the_partitions_the_group_takes_are_counted_and_a_close_is_not() {
    let (_broker, settings) = crate::EmbeddedBroker::with_topic("moving", 4);
    // Each with a count of its own.
    let options = || ConsumerOptions { group_id: "turnpike-moving".into(), start_from: "earliest".into(), topics: vec!["moving".into()], ..Default::default() };
    // Only the second keeps its partition changes, as only a sink's consumer does.
    let (first_options, second_options) = (options(), ConsumerOptions { keep_partition_changes: true, ..options() });
    let first = Consumer::new(&settings, &first_options).expect("consumer");
    let limits = BatchLimits { records: 100, bytes: usize::MAX, wait: Duration::from_millis(100) };
    async fn poll(consumer: &Consumer, limits: BatchLimits) {
        consumer.fill(limits, |_| {}, tokio::time::sleep(Duration::from_millis(100))).await;
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while first.assigned().len() < 4 {
        assert!(Instant::now() < deadline, "the first member never got the 4 partitions: {:?}", first.assigned());
        poll(&first, limits).await;
    }
    let second = Consumer::new(&settings, &second_options).expect("consumer");
    while first.assigned().len() != 2 || second.assigned().len() != 2 {
        assert!(Instant::now() < deadline, "the partitions were never shared: {:?} and {:?}", first.assigned(), second.assigned());
        tokio::join!(poll(&first, limits), poll(&second, limits));
    }
    let count = |options: &ConsumerOptions| (options.taken.revoked.load(Ordering::Relaxed), options.taken.lost.load(Ordering::Relaxed));
    assert_eq!(count(&first_options), (2, 0), "the two partitions that moved, and no more");
    let changes = second.take_partition_changes();
    assert!(matches!(changes.as_slice(), [.., PartitionChange::Assigned(got)] if got.len() == 2), "the second keeps its changes: {changes:?}");
    let kept = first.inner().context().changes.lock().expect("changes").len();
    assert_eq!(kept, 0, "a consumer whose task takes no changes keeps none, after three rebalances");
    drop(second);
    assert_eq!(count(&second_options), (0, 0), "a close gives partitions up; the group took none");
    // The first member gets them back: nothing taken from it.
    while first.assigned().len() < 4 {
        assert!(Instant::now() < deadline, "the first member never got the partitions back: {:?}", first.assigned());
        poll(&first, limits).await;
    }
    assert_eq!(count(&first_options), (2, 0));
}

/// A close against a broker that stopped answering waits on its last commit; once the host's
/// shutdown has a deadline, the close is left behind by then, so the shutdown ends in time
/// (a close that stalled during a rebalance made a host exit as stuck).
#[tokio::test(flavor = "multi_thread")]
async fn a_close_is_waited_for_no_longer_than_the_shutdown_allows() {
    let (broker, settings) = crate::EmbeddedBroker::with_records("deadline", 1, b"x").await;
    let options = ConsumerOptions { group_id: "turnpike-deadline".into(), start_from: "earliest".into(), topics: vec!["deadline".into()], ..Default::default() };
    let consumer = Consumer::new(&settings, &options).expect("consumer");
    let limits = BatchLimits { records: 100, bytes: usize::MAX, wait: Duration::from_millis(100) };
    let read = tokio::time::timeout(Duration::from_secs(60), consumer.fill(limits, |_| {}, std::future::pending())).await;
    assert_eq!(read, Ok(1));
    let mut acknowledged = Offsets::default();
    acknowledged.done("deadline", 0, 0);
    consumer.acknowledged(&acknowledged);
    broker.stall();
    options.close_deadline.set(std::time::Instant::now() + Duration::from_millis(500));
    let dropping = Instant::now();
    drop(consumer);
    let waited = dropping.elapsed();
    // Not sooner either: the close did stall, and was waited for until the deadline.
    assert!(waited >= Duration::from_millis(400) && waited < Duration::from_secs(3), "the close was waited for {waited:?}, against a deadline 500 ms after it began");
}
