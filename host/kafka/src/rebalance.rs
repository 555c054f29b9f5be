//! What a consumer does when the group moves partitions: commit what is known safe before
//! partitions go, and tell the task which partitions came and went.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

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

/// Partitions the consumer group took from a connector's consumers, counted for operators:
/// whether a rebalance moved only what changed owner (cooperative, KIP-848) or stopped
/// everything (eager), and how often a member fell out of its group. Partitions a consumer
/// gives up by closing are not counted: that is the connector's doing, not the group's.
#[derive(Debug, Default)]
pub struct PartitionsTaken {
    /// Revoked in a rebalance: cooperatively (and with KIP-848) only those that move to
    /// another member, another host or another task; eagerly every one, even those that
    /// come back.
    pub revoked: AtomicU64,
    /// Lost: the group went on without this member (its session or `max.poll.interval.ms`
    /// ran out, e.g. a pause longer than the poll interval, or KIP-848 fenced it), so another
    /// member may own them already.
    pub lost: AtomicU64,
}

/// The consumer's context: the offsets the caller declared safe (committed again, in sync,
/// right before their partitions are revoked, so the next owner starts after them) and the
/// partition changes not yet taken by the task.
#[derive(Default)]
pub struct GroupContext {
    pub(crate) safe: Mutex<Offsets>,
    /// Per assigned partition, the group's committed offset when it was assigned here: a
    /// commit below it would move the partition back, to where
    /// this consumer was before it lost the partition and got it again (a host frozen past
    /// its session wakes with offsets from before).
    pub(crate) floors: Mutex<std::collections::HashMap<(String, i32), i64>>,
    pub(crate) changes: Mutex<Vec<PartitionChange>>,
    /// Whether `changes` are kept ([`crate::ConsumerOptions::keep_partition_changes`]).
    pub(crate) keeps_changes: bool,
    /// Whether the client reaches a broker (errors reported outside reads land here too).
    pub(crate) health: Arc<BrokerHealth>,
    /// Set when the consumer starts closing: an assignment that arrives then is not recorded
    /// (its partitions are revoked again by the close), so its committed offsets are not read:
    /// that read cannot finish while the client shuts down, and it held a close for its
    /// whole 10 s timeout.
    pub(crate) closing: AtomicBool,
    /// What the group took from this consumer ([`crate::ConsumerOptions::taken`]).
    pub(crate) taken: Arc<PartitionsTaken>,
}

impl GroupContext {
    /// Keeps a change for the task, if it takes them.
    fn record(&self, change: PartitionChange) {
        if self.keeps_changes {
            self.changes.lock().unwrap_or_else(|p| p.into_inner()).push(change);
        }
    }
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
        let lost = consumer.assignment_lost();
        // A close revokes everything this consumer holds: its own doing, not the group's.
        if !self.closing.load(Ordering::Relaxed) {
            let count = if lost { &self.taken.lost } else { &self.taken.revoked };
            count.fetch_add(revoked.len() as u64, Ordering::Relaxed);
        }
        // What was safe for these partitions is theirs to commit no more, now or later.
        let safe = {
            let mut safe = self.safe.lock().unwrap_or_else(|p| p.into_inner());
            let before = safe.clone();
            safe.forget(&revoked);
            before
        };
        // Lost, not given up (the session or the poll interval ran out): another member owns
        // them already and reads from its own commits; committing here could move them back.
        if lost {
            tracing::warn!(partitions = ?revoked, "partitions lost (the group went on without this member); their offsets are not committed here");
            self.record(PartitionChange::Revoked(revoked));
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
        // Both callbacks run inside the consumer's poll: while they wait for the broker, the
        // partitions that stay are not read either. Their time is logged to show such a stall.
        let started = Instant::now();
        if tpl.count() > 0 {
            if let Err(e) = consumer.commit(&tpl, CommitMode::Sync) {
                tracing::warn!(error = %e, "commit before partition revocation failed; the next owner may re-read some records");
            }
        }
        tracing::info!(partitions = ?revoked, commit_ms = started.elapsed().as_millis() as u64, "partitions revoked");
        self.record(PartitionChange::Revoked(revoked));
    }

    fn post_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Assign(tpl) = rebalance {
            let assigned = partitions(tpl);
            if self.closing.load(Ordering::Relaxed) {
                // Without their floors, nothing may be committed for them when the close
                // revokes them: nothing was read from them since, and an offset acknowledged
                // before they last went could lie below the group's.
                self.safe.lock().unwrap_or_else(|p| p.into_inner()).forget(&assigned);
                tracing::debug!(partitions = ?assigned, "partitions assigned while the consumer closes");
                return;
            }
            let started = Instant::now();
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
            tracing::info!(partitions = ?assigned, committed_read_ms = started.elapsed().as_millis() as u64, "partitions assigned");
            self.record(PartitionChange::Assigned(assigned));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// An assignment that reaches a closing consumer is not looked up: against a broker that
    /// does not answer, reading its committed offsets held the close for 10 s.
    #[test]
    fn a_closing_consumer_takes_an_assignment_without_asking_the_broker() {
        let (broker, settings) = crate::EmbeddedBroker::with_topic("assigned", 1);
        let mut config = crate::client_config::client_config(&settings);
        let consumer: BaseConsumer<GroupContext> = config.set("group.id", "closing").create_with_context(GroupContext { keeps_changes: true, ..GroupContext::default() }).expect("consumer");
        broker.stall();
        consumer.context().closing.store(true, Ordering::Relaxed);
        let mut acknowledged_before = Offsets::default();
        acknowledged_before.done("assigned", 0, 41);
        consumer.context().safe.lock().expect("safe").merge(&acknowledged_before);
        let mut tpl = TopicPartitionList::new();
        tpl.add_partition("assigned", 0);
        let began = Instant::now();
        consumer.context().post_rebalance(&consumer, &Rebalance::Assign(&tpl));
        assert!(began.elapsed() < Duration::from_secs(2), "the closing consumer waited {:?}", began.elapsed());
        assert!(consumer.context().changes.lock().expect("changes").is_empty(), "a closing consumer's task reads no more changes");
        assert!(consumer.context().safe.lock().expect("safe").is_empty(), "an offset acknowledged before would be committed when the close revokes the partition");
    }
}
