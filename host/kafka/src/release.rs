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
//! - neither, `earliest`: watched from the first offset there is; the next consumer starts
//!   there too, as this one did.
//! - neither, `latest`: watched from the partition's end as the broker answers a list-offsets
//!   request now (the last stable offset, for a consumer reading committed records), and that
//!   end is committed, so the next consumer starts there too rather than at a later end. A
//!   record before it would have been handed to this consumer, which has read for the idle
//!   period; the caller takes one last short read for one on its way, before committing.

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
    #[error(transparent)]
    Kafka(#[from] KafkaError),
}

/// What giving a consumer up takes: where to watch each partition from, and the offsets to
/// commit for the partitions the group had none for.
#[derive(Debug, Clone, Default)]
pub struct Release {
    pub points: Vec<WatchPoint>,
    ends: Offsets,
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
                (None, Some(committed)) => committed,
                (None, None) if earliest => 0,
                (None, None) => {
                    let (_, end) = client.fetch_watermarks(topic, partition, BROKER_TIMEOUT).map_err(KafkaError::Offsets)?;
                    release.ends.done(topic, partition, end - 1);
                    end
                }
            };
            release.points.push(WatchPoint { topic: topic.to_owned(), partition, from });
        }
        Ok(release)
    }

    /// Commits the ends [`Consumer::release_points`] watches partitions without a committed
    /// offset from, after the caller's last look found no record. Blocking.
    pub fn commit_release(&self, release: &Release) -> Result<(), KafkaError> {
        self.commit(&release.ends, true)
    }
}
