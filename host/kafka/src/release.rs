//! Giving an idle consumer up without losing a record: where each of its partitions is to be
//! watched from, so that any record it has not read wakes its task again, and the commits
//! that make the next consumer start exactly there.
//!
//! The rules, per assigned partition:
//! - read from, and everything read committed: watched from its position. If the position is
//!   past the committed offset although every record read is committed, what lies between
//!   is transaction markers (a consumer steps over them), and the position is committed too;
//!   otherwise the consumer must wait for its commit.
//! - not read from, with a committed offset: watched from that offset.
//!   (A committed offset outside the log, deleted by retention, counts as none.)
//! - neither, `earliest`: watched from the first offset there is; the next consumer starts
//!   there too, as this one did.
//! - neither, `latest`: watched from the partition's end as the broker answers a list-offsets
//!   request now (the last stable offset, for a consumer reading committed records), and that
//!   end is committed, so the next consumer starts there too rather than at a later end. The
//!   consumer's own fetches must have reached that end (so it was handed every record before
//!   it), the caller takes one last short read for a record on its way, and the end is asked
//!   again before it is committed: a record written meanwhile keeps the consumer.

use std::ffi::CString;
use std::time::Duration;

use rdkafka::consumer::Consumer as _;
use rdkafka::Offset;

use crate::{Consumer, KafkaError, Offsets};

/// Longest wait for an answer from the broker.
const BROKER_TIMEOUT: Duration = Duration::from_secs(10);

/// A partition given up: any record at `from` or later must wake its task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchPoint {
    pub topic: String,
    pub partition: i32,
    pub from: i64,
}

/// Why a consumer is kept for now; the task tries again after another idle period.
#[derive(Debug, thiserror::Error)]
pub enum NotReleasable {
    /// A task without partitions waits for the group to give it some.
    #[error("no partition is assigned to it")]
    Unassigned,
    /// Something read is not committed yet (a commit failed, or is on its way).
    #[error("{topic} [{partition}] was read up to offset {position}, but the group's offset is {committed:?}")]
    Uncommitted { topic: String, partition: i32, position: i64, committed: Option<i64> },
    /// The consumer's fetches have not reached the partition's end yet.
    #[error("the consumer has not fetched {topic} [{partition}] up to its end ({end}) yet")]
    EndNotFetched { topic: String, partition: i32, end: i64 },
    /// A record was written to the partition while the consumer was being given up.
    #[error("{topic} [{partition}] got a record meanwhile")]
    EndMoved { topic: String, partition: i32 },
    /// The group moved partitions while the consumer was being given up.
    #[error("its partitions changed meanwhile")]
    Rebalanced,
    #[error(transparent)]
    Kafka(#[from] KafkaError),
}

/// What giving a consumer up takes: where to watch each partition from, and the offsets to
/// commit for the partitions the group had none for.
#[derive(Debug, Clone, Default)]
pub struct Release {
    pub points: Vec<WatchPoint>,
    ends: Offsets,
    /// The ends taken from the broker (`latest`, nothing committed), checked again before
    /// they are committed.
    listed_ends: Vec<(String, i32, i64)>,
}

impl Consumer {
    /// Where each assigned partition is to be watched from once this consumer is gone.
    /// `read` holds, per partition, the offset after the last record this consumer handed
    /// over; `earliest` is the group's `auto.offset.reset`. Blocking: it asks the broker for
    /// the group's committed offsets (and, for `latest`, partition ends).
    pub fn release_points(&self, read: &Offsets, earliest: bool) -> Result<Release, NotReleasable> {
        let client = self.inner();
        let assigned = client.assignment().map_err(KafkaError::Offsets)?;
        if assigned.count() == 0 {
            return Err(NotReleasable::Unassigned);
        }
        let positions = client.position().map_err(KafkaError::Offsets)?;
        let committed = client.committed_offsets(assigned.clone(), BROKER_TIMEOUT).map_err(KafkaError::Offsets)?;
        let offset_in = |list: &rdkafka::TopicPartitionList, topic: &str, partition: i32| match list.find_partition(topic, partition).map(|e| e.offset()) {
            Some(Offset::Offset(at)) => Some(at),
            _ => None,
        };
        let mut release = Release::default();
        for element in assigned.elements() {
            let (topic, partition) = (element.topic(), element.partition());
            let position = offset_in(&positions, topic, partition);
            let group_has = offset_in(&committed, topic, partition);
            // Nothing read here, or all of it committed.
            let all_read_committed = read.next(topic, partition).is_none_or(|next| Some(next) == group_has);
            let from = match (position, group_has) {
                (Some(position), Some(committed)) if position == committed => position,
                (Some(position), committed) if all_read_committed && committed.is_none_or(|c| position > c) => {
                    release.ends.done(topic, partition, position - 1);
                    position
                }
                (Some(position), committed) => return Err(NotReleasable::Uncommitted { topic: topic.to_owned(), partition, position, committed }),
                (None, committed) => {
                    let (start, end) = client.fetch_watermarks(topic, partition, BROKER_TIMEOUT).map_err(KafkaError::Offsets)?;
                    match committed {
                        // Out of the log (deleted by retention): the next consumer resets, as
                        // this one did; watching the old offset would wake it for nothing.
                        Some(committed) if (start..=end).contains(&committed) => committed,
                        _ if earliest => start,
                        _ => {
                            // The consumer's own fetches must have reached that end: it has
                            // then been handed every record before it (or has it on its way).
                            let fetched = CString::new(topic).ok().and_then(|t| crate::lag::cached_high(client, &t, partition));
                            if fetched.is_none_or(|high| high < end) {
                                return Err(NotReleasable::EndNotFetched { topic: topic.to_owned(), partition, end });
                            }
                            release.ends.done(topic, partition, end - 1);
                            release.listed_ends.push((topic.to_owned(), partition, end));
                            end
                        }
                    }
                }
            };
            release.points.push(WatchPoint { topic: topic.to_owned(), partition, from });
        }
        Ok(release)
    }

    /// Commits the offsets [`Consumer::release_points`] found to commit, after the caller's
    /// last look found no record, unless the consumer's partitions changed since (a
    /// rebalance) or a partition end taken from the broker moved (a record was written):
    /// then the consumer is kept, and reads on. Blocking.
    pub fn commit_release(&self, release: &Release) -> Result<(), NotReleasable> {
        let mut assigned = self.assigned();
        let mut points: Vec<(String, i32)> = release.points.iter().map(|p| (p.topic.clone(), p.partition)).collect();
        assigned.sort();
        points.sort();
        if assigned != points {
            return Err(NotReleasable::Rebalanced);
        }
        for (topic, partition, end) in &release.listed_ends {
            let (_, now) = self.inner().fetch_watermarks(topic, *partition, BROKER_TIMEOUT).map_err(KafkaError::Offsets)?;
            if now != *end {
                return Err(NotReleasable::EndMoved { topic: topic.clone(), partition: *partition });
            }
        }
        Ok(self.commit(&release.ends, true)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BatchLimits, ConsumerOptions};

    /// Records read but not committed keep the consumer; once committed, it is watched from
    /// its position with nothing more to commit.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_consumer_with_uncommitted_reads_is_kept_until_they_are_committed() {
        let (_broker, settings) = crate::EmbeddedBroker::with_records("release", 3, b"x").await;
        let options = ConsumerOptions { group_id: "turnpike-release".into(), start_from: "earliest".into(), topics: vec!["release".into()], ..Default::default() };
        let consumer = std::sync::Arc::new(Consumer::new(&settings, &options).expect("consumer"));
        let limits = BatchLimits { records: 3, bytes: usize::MAX, wait: Duration::from_secs(5) };
        let mut read = Offsets::default();
        let n = tokio::time::timeout(Duration::from_secs(60), consumer.fill(limits, |r| read.done(r.topic(), r.partition(), r.offset()), std::future::pending())).await;
        assert_eq!(n, Ok(3));
        let points = |consumer: &std::sync::Arc<Consumer>, read: &Offsets| {
            let (consumer, read) = (consumer.clone(), read.clone());
            tokio::task::spawn_blocking(move || consumer.release_points(&read, true))
        };
        let kept = points(&consumer, &read).await.expect("joined");
        assert!(matches!(kept, Err(NotReleasable::Uncommitted { position: 3, committed: None, .. })), "{kept:?}");
        consumer.commit(&read, true).expect("commit");
        let release = points(&consumer, &read).await.expect("joined").expect("releasable once committed");
        assert_eq!(release.points, [WatchPoint { topic: "release".into(), partition: 0, from: 3 }]);
        assert!(release.ends.is_empty(), "nothing more to commit: {:?}", release.ends);
    }
}
