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
    /// Per assigned partition, the group's committed offset when it was assigned here (then
    /// raised by each commit): a commit below it would move the partition back, to where
    /// this consumer was before it lost the partition and got it again (a host frozen past
    /// its session wakes with offsets from before).
    pub(crate) floors: Mutex<std::collections::HashMap<(String, i32), i64>>,
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
        // What was safe for these partitions is theirs to commit no more, now or later.
        let safe = {
            let mut safe = self.safe.lock().unwrap_or_else(|p| p.into_inner());
            let before = safe.clone();
            safe.forget(&revoked);
            before
        };
        // Lost, not given up (the session expired): another member owns them already and
        // reads from its own commits; committing here could move them back.
        if consumer.assignment_lost() {
            tracing::warn!(partitions = ?revoked, "partitions lost (the session expired); their offsets are not committed here");
            self.changes.lock().unwrap_or_else(|p| p.into_inner()).push(PartitionChange::Revoked(revoked));
            return;
        }
        let floors = self.floors.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut tpl = TopicPartitionList::new();
        for (topic, partition, next) in safe.iter() {
            let below = floors.get(&(topic.to_owned(), partition)).is_some_and(|&floor| next < floor);
            if revoked.iter().any(|(t, p)| t == topic && *p == partition) && !below {
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

    fn post_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(tpl) = rebalance {
            let assigned = partitions(tpl);
            match consumer.committed_offsets((*tpl).clone(), std::time::Duration::from_secs(10)) {
                Ok(committed) => {
                    let mut floors = self.floors.lock().unwrap_or_else(|p| p.into_inner());
                    for e in committed.elements() {
                        if let Offset::Offset(at) = e.offset() {
                            floors.insert((e.topic().to_owned(), e.partition()), at);
                        }
                    }
                }
                Err(e) => tracing::warn!(error = %e, "could not read the committed offsets of newly assigned partitions"),
            }
            tracing::info!(partitions = ?assigned, "partitions assigned");
            self.changes.lock().unwrap_or_else(|p| p.into_inner()).push(PartitionChange::Assigned(assigned));
        }
    }
}
