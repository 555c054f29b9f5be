//! What a consumer does when the group moves partitions: commit what is known safe before
//! partitions go, and tell the task which partitions came and went.

use std::sync::{Arc, Mutex};

use rdkafka::client::ClientContext;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer as _, ConsumerContext, Rebalance};
use rdkafka::{Offset, TopicPartitionList};

use crate::{BrokerHealth, Offsets};

/// A partition assignment change, for a sink to flush or open per partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartitionChange {
    /// These `(topic, partition)`s were assigned to this consumer.
    Assigned(Vec<(String, i32)>),
    /// These were taken away (their safe offsets were committed first).
    Revoked(Vec<(String, i32)>),
}

/// The consumer's context: the offsets the caller declared safe (committed again, in sync,
/// right before their partitions are revoked, so the next owner starts after them) and the
/// partition changes not yet taken by the task.
#[derive(Default)]
pub struct GroupContext {
    pub(crate) safe: Mutex<Offsets>,
    pub(crate) changes: Mutex<Vec<PartitionChange>>,
    /// Whether the client reaches a broker (errors reported outside reads land here too).
    pub(crate) health: Arc<BrokerHealth>,
}

impl ClientContext for GroupContext {
    fn error(&self, error: rdkafka::error::KafkaError, reason: &str) {
        crate::health::client_error(&self.health, "consumer", &error, reason);
    }
}

fn partitions(tpl: &TopicPartitionList) -> Vec<(String, i32)> {
    tpl.elements().iter().map(|e| (e.topic().to_owned(), e.partition())).collect()
}

impl ConsumerContext for GroupContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        let Rebalance::Revoke(revoked) = rebalance else { return };
        let revoked = partitions(revoked);
        let safe = self.safe.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut tpl = TopicPartitionList::new();
        for (topic, partition, next) in safe.iter() {
            if revoked.iter().any(|(t, p)| t == topic && *p == partition) {
                let _ = tpl.add_partition_offset(topic, partition, Offset::Offset(next));
            }
        }
        if tpl.count() > 0 {
            if let Err(e) = consumer.commit(&tpl, CommitMode::Sync) {
                tracing::warn!(error = %e, "commit before partition revocation failed; the next owner may re-read some records");
            }
        }
        tracing::info!(partitions = ?revoked, "partitions revoked");
        self.changes.lock().unwrap_or_else(|p| p.into_inner()).push(PartitionChange::Revoked(revoked));
    }

    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(assigned) = rebalance {
            let assigned = partitions(assigned);
            tracing::info!(partitions = ?assigned, "partitions assigned");
            self.changes.lock().unwrap_or_else(|p| p.into_inner()).push(PartitionChange::Assigned(assigned));
        }
    }
}
