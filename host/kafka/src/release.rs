//! Giving an idle consumer up without losing a record: where each of its partitions is to be
//! watched from, so that any record it has not read wakes its task again, and the commits
//! that make the next consumer start exactly there.
//!
//! Why the rules below are enough: a partition the consumer read from is watched from its
//! position, which must be committed; one it never read from, from the group's committed
//! offset. One with neither (a new group on a partition nobody wrote to since it was
//! assigned) is watched from the end its client last heard in a fetch, and that end is
//! committed before the consumer goes, so the next consumer starts there too, whatever its
//! `auto.offset.reset` would say. A fetch that reported the end also handed over the records
//! before it, so the caller takes one last look for a record (a short read) after reading
//! the points and before committing them.

use std::ffi::CString;
use std::time::Duration;

use rdkafka::consumer::Consumer as _;
use rdkafka::Offset;

use crate::{Consumer, KafkaError, Offsets};

/// Longest wait for the group's committed offsets.
const COMMITTED_TIMEOUT: Duration = Duration::from_secs(10);

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
    /// No fetch of the partition has answered yet, so where it ends is not known.
    #[error("where {topic} [{partition}] ends is not known yet")]
    EndUnknown { topic: String, partition: i32 },
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
    /// Blocking: it asks the broker for the group's committed offsets.
    pub fn release_points(&self) -> Result<Release, NotReleasable> {
        let client = self.inner();
        let assigned = client.assignment().map_err(KafkaError::Offsets)?;
        if assigned.count() == 0 {
            return Err(NotReleasable::Unassigned);
        }
        let positions = client.position().map_err(KafkaError::Offsets)?;
        let committed = client.committed_offsets(assigned.clone(), COMMITTED_TIMEOUT).map_err(KafkaError::Offsets)?;
        let offset_in = |list: &rdkafka::TopicPartitionList, topic: &str, partition: i32| match list.find_partition(topic, partition).map(|e| e.offset()) {
            Some(Offset::Offset(at)) => Some(at),
            _ => None,
        };
        let mut release = Release::default();
        for element in assigned.elements() {
            let (topic, partition) = (element.topic(), element.partition());
            let position = offset_in(&positions, topic, partition);
            let group_has = offset_in(&committed, topic, partition);
            let from = match (position, group_has) {
                (Some(position), Some(committed)) if position == committed => position,
                (Some(position), committed) => return Err(NotReleasable::Uncommitted { topic: topic.to_owned(), partition, position, committed }),
                (None, Some(committed)) => committed,
                (None, None) => {
                    let end = CString::new(topic).ok().and_then(|t| crate::lag::cached_high(client, &t, partition));
                    let Some(end) = end else { return Err(NotReleasable::EndUnknown { topic: topic.to_owned(), partition }) };
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
