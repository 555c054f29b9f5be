//! The cluster's topics, and a read-only look at a topic's latest records (for the console's
//! "mask a topic" wizard). Blocking calls: run them on a blocking thread.
//!
//! Why a sample assigns partitions instead of subscribing: a look must not create a consumer
//! group on the broker or commit anything, so it never moves any connector's offsets and
//! leaves nothing behind.

use std::time::{Duration, Instant};

use rdkafka::consumer::{BaseConsumer, Consumer as _};
use rdkafka::error::KafkaError as RdError;
use rdkafka::message::Message as _;
use rdkafka::{Offset, TopicPartitionList};
use serde::Serialize;

use crate::KafkaError;

/// How long listing the topics may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// How long a whole sample may take: metadata, every partition's range, and the reading.
const SAMPLE_DEADLINE: Duration = Duration::from_secs(8);
/// The most partitions one sample looks at (the first ones, by number).
pub const MAX_SAMPLED_PARTITIONS: usize = 256;
/// The most headers kept per sampled record.
const MAX_HEADERS: usize = 32;

/// One topic of the cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct TopicInfo {
    /// Topic name.
    pub name: String,
    /// Number of partitions.
    pub partitions: i32,
}

/// One record of a sample, as text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct SampledRecord {
    /// Partition.
    pub partition: i32,
    /// Offset.
    pub offset: i64,
    /// The record's timestamp (milliseconds since the epoch), when it has one.
    pub timestamp: Option<i64>,
    /// The key as UTF-8 text (bytes that are not UTF-8 read as U+FFFD), capped like the value.
    pub key: Option<String>,
    /// The value as UTF-8 text (lossy), at most the cap asked for; none for a tombstone.
    pub value: Option<String>,
    /// Whether the value was longer than the cap and is cut.
    pub value_truncated: bool,
    /// Headers as `[key, value]` text pairs.
    pub headers: Vec<(String, String)>,
}

fn client(settings: &[(String, String)]) -> Result<BaseConsumer, KafkaError> {
    let mut config = crate::client_config::client_config(settings);
    // rdkafka's consumer needs a group id to read at all (without one the sample reads
    // nothing), but with `assign` and no commit it never joins or creates the group.
    config
        .set("group.id", "turnpike-topic-sample")
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("enable.partition.eof", "true");
    config.create().map_err(|source| KafkaError::Client { role: "topic reader", source })
}

/// Every topic of the cluster with its partition count, sorted by name.
pub fn list_topics(settings: &[(String, String)]) -> Result<Vec<TopicInfo>, KafkaError> {
    let consumer = client(settings)?;
    let metadata = consumer.fetch_metadata(None, TIMEOUT).map_err(KafkaError::Offsets)?;
    let mut topics: Vec<TopicInfo> = metadata
        .topics()
        .iter()
        .filter(|t| t.error().is_none())
        .map(|t| TopicInfo { name: t.name().to_owned(), partitions: t.partitions().len() as i32 })
        .collect();
    topics.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(topics)
}

/// Up to `limit` of the latest records of `topic` across its partitions, oldest first, each
/// value cut at `value_cap` bytes. `Ok(None)` when the topic does not exist.
pub fn sample_topic(settings: &[(String, String)], topic: &str, limit: usize, value_cap: usize) -> Result<Option<Vec<SampledRecord>>, KafkaError> {
    let deadline = Instant::now() + SAMPLE_DEADLINE;
    let left = || deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    let consumer = client(settings)?;
    let metadata = consumer.fetch_metadata(Some(topic), left()).map_err(KafkaError::Offsets)?;
    let Some(meta) = metadata.topics().iter().find(|t| t.name() == topic && t.error().is_none() && !t.partitions().is_empty()) else {
        return Ok(None);
    };
    let mut assignment = TopicPartitionList::new();
    // Per partition, the offset past the last record: reading stops there.
    let mut ends = Vec::new();
    for p in meta.partitions().iter().take(MAX_SAMPLED_PARTITIONS) {
        let (low, high) = consumer.fetch_watermarks(topic, p.id(), left()).map_err(KafkaError::Offsets)?;
        if high > low {
            let start = low.max(high - limit as i64);
            assignment.add_partition_offset(topic, p.id(), Offset::Offset(start)).map_err(KafkaError::Offsets)?;
            ends.push((p.id(), high));
        }
    }
    if ends.is_empty() {
        return Ok(Some(Vec::new()));
    }
    consumer.assign(&assignment).map_err(KafkaError::Offsets)?;
    let mut records = Vec::new();
    while !ends.is_empty() && Instant::now() < deadline {
        let Some(polled) = consumer.poll(Duration::from_millis(200)) else { continue };
        match polled {
            Ok(msg) => {
                let (partition, offset) = (msg.partition(), msg.offset());
                records.push(sampled(&msg, value_cap));
                ends.retain(|(p, end)| !(*p == partition && offset + 1 >= *end));
                // Keep memory bounded by the answer, not by `limit` × partitions.
                if records.len() >= 2 * limit {
                    keep_latest(&mut records, limit);
                }
            }
            Err(RdError::PartitionEOF(partition)) => ends.retain(|(p, _)| *p != partition),
            Err(e) => tracing::debug!(topic, error = %e, "while sampling"),
        }
    }
    keep_latest(&mut records, limit);
    Ok(Some(records))
}

/// Keeps the latest `limit` records across partitions, by time (offset order within a
/// partition), oldest first.
fn keep_latest(records: &mut Vec<SampledRecord>, limit: usize) {
    records.sort_by_key(|r| (r.timestamp.unwrap_or(i64::MIN), r.partition, r.offset));
    let skip = records.len().saturating_sub(limit);
    records.drain(..skip);
}

fn sampled(msg: &rdkafka::message::BorrowedMessage<'_>, value_cap: usize) -> SampledRecord {
    let text = |bytes: &[u8]| String::from_utf8_lossy(&bytes[..bytes.len().min(value_cap)]).into_owned();
    let headers = crate::raw_headers::headers(msg).iter().take(MAX_HEADERS).map(|(k, v)| (text(k), text(v))).collect();
    SampledRecord {
        partition: msg.partition(),
        offset: msg.offset(),
        timestamp: msg.timestamp().to_millis(),
        key: msg.key().map(text),
        value: msg.payload().map(text),
        value_truncated: msg.payload().is_some_and(|v| v.len() > value_cap),
        headers,
    }
}
