//! A compacted, single-partition topic used as a log that several hosts share: every host
//! writes to it ([`LogWriter`]) and reads all of it, from the start and then as it grows
//! ([`tail`]). One partition keeps one order that every reader sees.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::message::Message as _;
use rdkafka::producer::{FutureProducer, FutureRecord, Producer as _};
use rdkafka::{Offset, TopicPartitionList};
use tokio::sync::mpsc;

use crate::client_config::client_config;
use crate::KafkaError;

/// How long creating a topic or reading its end may take.
const TIMEOUT: Duration = Duration::from_secs(30);


/// Creates `topic` compacted, with one partition and the given extra settings, unless it
/// exists. An error means the request could not be made: a shared log must exist to be shared.
pub async fn ensure_log_topic(settings: &[(String, String)], topic: &str, extra: &[(&str, &str)]) -> Result<(), KafkaError> {
    let topic_settings: Vec<(&str, &str)> = [("cleanup.policy", "compact")].into_iter().chain(extra.iter().copied()).collect();
    crate::create_topic::create_unless_exists(settings, topic, 1, &topic_settings, "the compacted log topic").await
}

/// Writes records to a shared log, each acknowledged by every in-sync replica, in order.
pub struct LogWriter {
    producer: FutureProducer,
    topic: String,
}

impl LogWriter {
    /// A writer to `topic`.
    pub fn new(settings: &[(String, String)], topic: &str) -> Result<Self, KafkaError> {
        let producer = client_config(settings)
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("linger.ms", "0")
            .create()
            .map_err(|source| KafkaError::Client { role: "log producer", source })?;
        Ok(Self { producer, topic: topic.to_owned() })
    }

    /// The log's end now: the offset its next record will get.
    pub async fn end(&self) -> Result<i64, KafkaError> {
        let (producer, topic) = (self.producer.clone(), self.topic.clone());
        tokio::task::spawn_blocking(move || producer.client().fetch_watermarks(&topic, 0, TIMEOUT).map(|(_, high)| high))
            .await
            .map_err(|e| KafkaError::Blocking(e.to_string()))?
            .map_err(KafkaError::Offsets)
    }

    /// Writes `value` under `key` (`None`: a tombstone, which compaction removes the key
    /// for) and waits for the broker's acknowledgement; the record's offset.
    pub async fn write(&self, key: &str, value: Option<&[u8]>) -> Result<i64, KafkaError> {
        let mut record = FutureRecord::<str, [u8]>::to(&self.topic).key(key).partition(0);
        if let Some(value) = value {
            record = record.payload(value);
        }
        match self.producer.send(record, TIMEOUT).await {
            Ok(delivery) => Ok(delivery.offset),
            Err((source, _)) => Err(KafkaError::Delivery { topic: self.topic.clone(), source }),
        }
    }
}

/// One record of a shared log.
#[derive(Debug)]
pub struct LogRecord {
    /// Its offset.
    pub offset: i64,
    /// Its key (records without a key, which no host writes, are skipped).
    pub key: String,
    /// Its value; `None` for a tombstone.
    pub value: Option<Vec<u8>>,
}

/// What [`tail`] hands over.
#[derive(Debug)]
pub enum Tailed {
    /// The next record.
    Record(LogRecord),
    /// Every record that was in the log when the tail began has been handed over.
    CaughtUp,
}

/// Reads `topic` from its first record on, then every record written after, on a thread of
/// its own, until `stop` is set. Records arrive in log order; [`Tailed::CaughtUp`] comes
/// once, after the last record that was there at the start.
pub fn tail(settings: &[(String, String)], topic: &str, group: &str, stop: Arc<AtomicBool>) -> Result<mpsc::Receiver<Tailed>, KafkaError> {
    // Assigned by hand, never committed: the group id is required by the client only.
    let consumer: BaseConsumer = client_config(settings)
        .set("group.id", group)
        .set("enable.auto.commit", "false")
        .set("enable.partition.eof", "false")
        .set("fetch.wait.max.ms", "100")
        .create()
        .map_err(|source| KafkaError::Client { role: "log reader", source })?;
    let (start, end) = consumer.fetch_watermarks(topic, 0, TIMEOUT).map_err(KafkaError::Offsets)?;
    let mut tpl = TopicPartitionList::new();
    tpl.add_partition_offset(topic, 0, Offset::Beginning).map_err(KafkaError::Offsets)?;
    consumer.assign(&tpl).map_err(KafkaError::Offsets)?;
    let (tx, rx) = mpsc::channel(1024);
    let topic = topic.to_owned();
    std::thread::Builder::new()
        .name("turnpike-log".into())
        .spawn(move || {
            // Empty: nothing at all, or every record deleted (`start == end > 0`).
            let mut caught_up = start >= end;
            if caught_up && tx.blocking_send(Tailed::CaughtUp).is_err() {
                return;
            }
            while !stop.load(Ordering::Relaxed) {
                let Some(polled) = consumer.poll(Duration::from_millis(200)) else { continue };
                let msg = match polled {
                    Ok(msg) => msg,
                    Err(e) => {
                        tracing::warn!(%topic, error = %e, "reading the shared log; retrying");
                        continue;
                    }
                };
                let offset = msg.offset();
                if let Some(key) = msg.key().and_then(|k| std::str::from_utf8(k).ok()) {
                    let record = LogRecord { offset, key: key.to_owned(), value: msg.payload().map(<[u8]>::to_vec) };
                    if tx.blocking_send(Tailed::Record(record)).is_err() {
                        return;
                    }
                }
                if !caught_up && offset + 1 >= end {
                    caught_up = true;
                    if tx.blocking_send(Tailed::CaughtUp).is_err() {
                        return;
                    }
                }
            }
        })
        .map_err(|e| KafkaError::Blocking(format!("starting the log reader thread: {e}")))?;
    Ok(rx)
}
