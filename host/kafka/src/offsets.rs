//! Reading and resetting a consumer group's committed offsets (for a stopped connector).
//! Blocking calls: run them on a blocking thread.

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer as _};
use rdkafka::{Offset, TopicPartitionList};
use serde::Serialize;

use crate::KafkaError;

/// How long one offsets request to the cluster may take.
const TIMEOUT: Duration = Duration::from_secs(15);

/// Where a group stands in one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct PartitionOffsets {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// The next offset the group will read, or `None` if it never committed one.
    pub committed: Option<i64>,
    /// The oldest offset still in the partition.
    pub earliest: i64,
    /// The offset the next record produced will get.
    pub latest: i64,
    /// Records not yet consumed (`latest - committed`), when the group committed.
    pub lag: Option<i64>,
}

/// Where to move a group's offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResetTo {
    /// The oldest records still kept.
    Earliest,
    /// Only records produced from now on.
    Latest,
    /// The first record at or after this time (milliseconds since the epoch); partitions with
    /// none go to their end.
    Timestamp(i64),
    /// These offsets, per `(topic, partition)`; others are left alone.
    Explicit(Vec<(String, i32, i64)>),
}

fn client(settings: &[(String, String)], group_id: &str) -> Result<BaseConsumer, KafkaError> {
    let mut config = crate::client_config::client_config(settings);
    config.set("group.id", group_id).set("enable.auto.commit", "false");
    config.create().map_err(|source| KafkaError::Client { role: "offsets client", source })
}

fn partitions(consumer: &BaseConsumer, topics: &[String]) -> Result<Vec<(String, i32)>, KafkaError> {
    let mut all = Vec::new();
    for topic in topics {
        let metadata = consumer.fetch_metadata(Some(topic), TIMEOUT).map_err(KafkaError::Offsets)?;
        for t in metadata.topics() {
            all.extend(t.partitions().iter().map(|p| (t.name().to_owned(), p.id())));
        }
    }
    Ok(all)
}

/// The group's committed offsets on every partition of `topics`, with each partition's range.
pub fn group_offsets(settings: &[(String, String)], group_id: &str, topics: &[String]) -> Result<Vec<PartitionOffsets>, KafkaError> {
    let consumer = client(settings, group_id)?;
    let parts = partitions(&consumer, topics)?;
    let mut tpl = TopicPartitionList::new();
    for (t, p) in &parts {
        tpl.add_partition(t, *p);
    }
    let committed = consumer.committed_offsets(tpl, TIMEOUT).map_err(KafkaError::Offsets)?;
    parts
        .into_iter()
        .map(|(topic, partition)| {
            let (earliest, latest) = consumer.fetch_watermarks(&topic, partition, TIMEOUT).map_err(KafkaError::Offsets)?;
            let committed = committed
                .find_partition(&topic, partition)
                .and_then(|e| match e.offset() {
                    Offset::Offset(o) => Some(o),
                    _ => None,
                });
            Ok(PartitionOffsets { lag: committed.map(|c| (latest - c).max(0)), topic, partition, committed, earliest, latest })
        })
        .collect()
}

/// Commits new offsets for the group (which must have no active member) and returns them.
pub fn reset_group_offsets(settings: &[(String, String)], group_id: &str, topics: &[String], to: &ResetTo) -> Result<Vec<(String, i32, i64)>, KafkaError> {
    let consumer = client(settings, group_id)?;
    let parts = partitions(&consumer, topics)?;
    let mut targets: Vec<(String, i32, i64)> = Vec::new();
    match to {
        ResetTo::Earliest | ResetTo::Latest => {
            for (t, p) in parts {
                let (low, high) = consumer.fetch_watermarks(&t, p, TIMEOUT).map_err(KafkaError::Offsets)?;
                targets.push((t, p, if *to == ResetTo::Earliest { low } else { high }));
            }
        }
        ResetTo::Timestamp(ms) => {
            let mut tpl = TopicPartitionList::new();
            for (t, p) in &parts {
                tpl.add_partition_offset(t, *p, Offset::Offset(*ms)).map_err(KafkaError::Offsets)?;
            }
            let found = consumer.offsets_for_times(tpl, TIMEOUT).map_err(KafkaError::Offsets)?;
            for (t, p) in parts {
                let offset = match found.find_partition(&t, p).map(|e| e.offset()) {
                    Some(Offset::Offset(o)) if o >= 0 => o,
                    _ => consumer.fetch_watermarks(&t, p, TIMEOUT).map_err(KafkaError::Offsets)?.1,
                };
                targets.push((t, p, offset));
            }
        }
        ResetTo::Explicit(wanted) => {
            for (t, p, o) in wanted {
                if !parts.iter().any(|(pt, pp)| pt == t && pp == p) {
                    return Err(KafkaError::NoSuchPartition { topic: t.clone(), partition: *p });
                }
                targets.push((t.clone(), *p, *o));
            }
        }
    }
    let mut tpl = TopicPartitionList::new();
    for (t, p, o) in &targets {
        tpl.add_partition_offset(t, *p, Offset::Offset(*o)).map_err(KafkaError::Offsets)?;
    }
    consumer.commit(&tpl, CommitMode::Sync).map_err(KafkaError::Commit)?;
    Ok(targets)
}
