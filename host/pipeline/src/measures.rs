//! What the operator's metrics add to a connector's counters: plugin CPU time and memory, how
//! long batches take, lag per partition, and whether the brokers can be reached.
//!
//! Why read at scrape time from live handles (the consumer, the run's broker health) rather
//! than sampled: a thousand idle connectors must cost nothing between scrapes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use turnpike_kafka::{Consumer, PartitionsTaken, Unreachable};
use turnpike_runtime::Usage;

/// Upper bounds of the batch-duration buckets, in seconds: from a quick native transform
/// (~1 ms for 500 records) to a sink flushing to object storage.
pub const BATCH_BUCKETS: [f64; 13] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// How long batches took, as a Prometheus histogram: cumulative counts per bucket.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchDurations {
    /// `(upper bound in seconds, batches at most that long)`, for each of [`BATCH_BUCKETS`].
    pub buckets: Vec<(f64, u64)>,
    /// Every batch's duration, summed, in seconds.
    pub sum_seconds: f64,
    /// Batches measured.
    pub count: u64,
}

/// One plugin instance's memory, as the status shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct InstanceMemory {
    /// The task running it (from 1; see the connector's `tasks`).
    pub task: u32,
    /// Where in the connector: `source`, `transform-1` (first transform), …, `sink`.
    pub stage: String,
    /// `name@version`.
    pub plugin: String,
    /// Linear memory the instance holds (all its memories, summed).
    pub memory_bytes: u64,
}

/// One input partition's lag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct PartitionLag {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
    /// Records not yet read.
    pub lag: i64,
}

/// An input partition of one task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct TaskPartition {
    /// Topic.
    pub topic: String,
    /// Partition.
    pub partition: i32,
}

/// One task (a consumer and its plugin instances) of a connector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct TaskStatus {
    /// From 1.
    pub task: u32,
    /// The input partitions its consumer is assigned now.
    pub partitions: Vec<TaskPartition>,
    /// Records it read in the current run.
    pub records_in: u64,
    /// Bytes of keys, values and headers it read in the current run.
    pub bytes_in: u64,
    /// Records it wrote safely in the current run (acknowledged, or flushed by a sink).
    pub records_out: u64,
    /// Bytes of those records.
    pub bytes_out: u64,
    /// Records in its partitions not yet read (none before its first read; 0 while idle).
    pub lag: Option<i64>,
    /// It gave its consumer up after `batch.idle_after_ms` without a record: the host watches
    /// `partitions` and gives it a consumer again when a record arrives.
    pub idle: bool,
}

/// No broker answers the connector's clients.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct BrokerUnreachable {
    /// Since when (RFC 3339).
    pub since: String,
    /// What the Kafka client said.
    pub message: String,
}

/// The live measures of one connector.
#[derive(Default)]
pub(crate) struct Measures {
    cpu_nanos: AtomicU64,
    /// Per task and stage: the plugin and its instance's memory; 0 once the instance is gone.
    memory: Mutex<BTreeMap<(usize, String), (String, u64)>>,
    batch_buckets: [AtomicU64; BATCH_BUCKETS.len()],
    /// Batches longer than the last bucket.
    batch_overflow: AtomicU64,
    batch_nanos: AtomicU64,
    /// The current run's consumers (transforms and sinks), by task, for lag at read time.
    consumers: Mutex<BTreeMap<usize, Arc<Consumer>>>,
    /// Tasks that gave their consumer up while idle, and the partitions watched for them.
    idle: Mutex<BTreeMap<usize, Vec<(String, i32)>>>,
    /// What each task read and wrote in the current run.
    task_counts: Mutex<BTreeMap<usize, TaskCounts>>,
    /// The outage the broker watch confirmed, until a broker answers again; kept across runs
    /// (a run that fails during an outage hands it to the next, which ends it).
    outage: Mutex<Option<Unreachable>>,
    pub(crate) broker_outages: AtomicU64,
    /// Input partitions the group took from the connector's consumers on this host (every
    /// run's consumers count here).
    pub(crate) partitions_taken: Arc<PartitionsTaken>,
}

/// What one task read and wrote in the current run.
#[derive(Debug, Clone, Copy, Default)]
struct TaskCounts {
    records_in: u64,
    bytes_in: u64,
    records_out: u64,
    bytes_out: u64,
}

/// A task's number as people count (the index from 0 internally).
fn task_number(task: usize) -> u32 {
    u32::try_from(task + 1).unwrap_or(u32::MAX)
}

/// Stage name of the `index`-th transform (counted from 1, as a person would).
pub(crate) fn transform_stage(index: usize) -> String {
    format!("transform-{}", index + 1)
}

impl Measures {
    /// Adds what task `task`'s instance of `plugin` at `stage` used since it was last asked.
    pub(crate) fn note_usage(&self, task: usize, stage: &str, plugin: &str, usage: Usage) {
        self.cpu_nanos.fetch_add(u64::try_from(usage.cpu.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
        let mut memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        memory.insert((task, stage.to_owned()), (plugin.to_owned(), usage.memory_bytes));
    }

    /// Task `task`'s instance at `stage` is gone (faulted or replaced); a new one shows up
    /// after its first call.
    pub(crate) fn released(&self, task: usize, stage: &str) {
        self.memory.lock().unwrap_or_else(|p| p.into_inner()).remove(&(task, stage.to_owned()));
    }

    /// Counts `records` of `bytes` task `task` read.
    pub(crate) fn task_read(&self, task: usize, records: u64, bytes: u64) {
        let mut counts = self.task_counts.lock().unwrap_or_else(|p| p.into_inner());
        let counts = counts.entry(task).or_default();
        counts.records_in += records;
        counts.bytes_in += bytes;
    }

    /// Counts `records` of `bytes` task `task` wrote safely.
    pub(crate) fn task_wrote(&self, task: usize, records: u64, bytes: u64) {
        let mut counts = self.task_counts.lock().unwrap_or_else(|p| p.into_inner());
        let counts = counts.entry(task).or_default();
        counts.records_out += records;
        counts.bytes_out += bytes;
    }

    /// The run ended: no instance holds memory, no consumer lags. (An outage goes on until
    /// a broker answers: the next run's watch ends it.)
    pub(crate) fn run_ended(&self) {
        self.memory.lock().unwrap_or_else(|p| p.into_inner()).clear();
        // Dropped after the lock is released: closing a consumer blocks (it leaves its group).
        let consumers = std::mem::take(&mut *self.consumers.lock().unwrap_or_else(|p| p.into_inner()));
        drop(consumers);
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.task_counts.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Task `task` stopped while the run goes on (fewer tasks by lag): it reads nothing and
    /// holds no instance any more.
    pub(crate) fn task_retired(&self, task: usize) {
        self.memory.lock().unwrap_or_else(|p| p.into_inner()).retain(|(t, _), _| *t != task);
        let consumer = self.consumers.lock().unwrap_or_else(|p| p.into_inner()).remove(&task);
        drop(consumer);
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).remove(&task);
        self.task_counts.lock().unwrap_or_else(|p| p.into_inner()).remove(&task);
    }

    /// Records behind over the current consumers (`None` before any is known) and how many
    /// partitions they are assigned: what scaling by lag decides on.
    pub(crate) fn lag_and_partitions(&self) -> (Option<i64>, usize) {
        let lags = self.partition_lag();
        let consumers: Vec<Arc<Consumer>> = self.consumers.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect();
        let partitions = consumers.iter().map(|c| c.assigned().len()).sum();
        ((!lags.is_empty()).then(|| lags.iter().map(|l| l.lag).sum()), partitions)
    }

    /// Task `task`'s stages were replaced (a hot swap): the old instances are gone.
    pub(crate) fn stages_replaced(&self, task: usize) {
        self.memory.lock().unwrap_or_else(|p| p.into_inner()).retain(|(t, stage), _| *t != task || !stage.starts_with("transform-"));
    }

    /// Notes how long one batch took.
    pub(crate) fn batch_took(&self, took: Duration) {
        let seconds = took.as_secs_f64();
        match BATCH_BUCKETS.iter().position(|upper| seconds <= *upper) {
            Some(i) => self.batch_buckets[i].fetch_add(1, Ordering::Relaxed),
            None => self.batch_overflow.fetch_add(1, Ordering::Relaxed),
        };
        self.batch_nanos.fetch_add(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// Task `task` reads with `consumer` (at its start, or woken after it was idle).
    pub(crate) fn set_consumer(&self, task: usize, consumer: Arc<Consumer>) {
        // Both locks, consumers first (as everywhere): a status read never sees the task in
        // both lists or in neither.
        let mut consumers = self.consumers.lock().unwrap_or_else(|p| p.into_inner());
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).remove(&task);
        consumers.insert(task, consumer);
    }

    /// Task `task` gave its consumer up while idle; `partitions` are watched for it. The
    /// consumer is returned, not dropped here: closing it blocks (it leaves its group).
    pub(crate) fn task_idle(&self, task: usize, partitions: Vec<(String, i32)>) -> Option<Arc<Consumer>> {
        let mut consumers = self.consumers.lock().unwrap_or_else(|p| p.into_inner());
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).insert(task, partitions);
        consumers.remove(&task)
    }

    pub(crate) fn set_outage(&self, outage: Option<Unreachable>) {
        *self.outage.lock().unwrap_or_else(|p| p.into_inner()) = outage;
    }

    pub(crate) fn cpu_seconds(&self) -> f64 {
        self.cpu_nanos.load(Ordering::Relaxed) as f64 / 1e9
    }

    /// Every instance's memory, by task, then stage name (`sink` and `source` sort apart
    /// from `transform-N`; each entry says which it is).
    pub(crate) fn instances(&self) -> Vec<InstanceMemory> {
        let memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        memory
            .iter()
            .map(|((task, stage), (plugin, bytes))| InstanceMemory { task: task_number(*task), stage: stage.clone(), plugin: plugin.clone(), memory_bytes: *bytes })
            .collect()
    }

    /// Each task of the current run that has a consumer or gave it up while idle: its
    /// partitions, reads and lag.
    pub(crate) fn tasks(&self) -> Vec<TaskStatus> {
        let (consumers, idle) = {
            let consumers = self.consumers.lock().unwrap_or_else(|p| p.into_inner());
            let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).clone();
            (consumers.clone(), idle)
        };
        let counts = self.task_counts.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let mut tasks: Vec<TaskStatus> = consumers
            .iter()
            .map(|(task, consumer)| {
                let counts = counts.get(task).copied().unwrap_or_default();
                TaskStatus {
                    task: task_number(*task),
                    partitions: consumer.assigned().into_iter().map(|(topic, partition)| TaskPartition { topic, partition }).collect(),
                    records_in: counts.records_in,
                    bytes_in: counts.bytes_in,
                    records_out: counts.records_out,
                    bytes_out: counts.bytes_out,
                    lag: consumer.lag(),
                    idle: false,
                }
            })
            .collect();
        tasks.extend(idle.into_iter().map(|(task, partitions)| {
            let counts = counts.get(&task).copied().unwrap_or_default();
            TaskStatus {
                task: task_number(task),
                partitions: partitions.into_iter().map(|(topic, partition)| TaskPartition { topic, partition }).collect(),
                records_in: counts.records_in,
                bytes_in: counts.bytes_in,
                records_out: counts.records_out,
                bytes_out: counts.bytes_out,
                lag: Some(0),
                idle: true,
            }
        }));
        tasks.sort_by_key(|t| t.task);
        tasks
    }

    pub(crate) fn batch_durations(&self) -> BatchDurations {
        let mut cumulative = 0;
        let buckets = BATCH_BUCKETS
            .iter()
            .zip(&self.batch_buckets)
            .map(|(upper, n)| {
                cumulative += n.load(Ordering::Relaxed);
                (*upper, cumulative)
            })
            .collect();
        let count = cumulative + self.batch_overflow.load(Ordering::Relaxed);
        BatchDurations { buckets, sum_seconds: self.batch_nanos.load(Ordering::Relaxed) as f64 / 1e9, count }
    }

    /// The current consumers' lag per partition (empty without one), in partition order.
    pub(crate) fn partition_lag(&self) -> Vec<PartitionLag> {
        let consumers: Vec<Arc<Consumer>> = self.consumers.lock().unwrap_or_else(|p| p.into_inner()).values().cloned().collect();
        let mut lags: Vec<PartitionLag> = consumers.iter().flat_map(|c| c.partition_lag()).map(|(topic, partition, lag)| PartitionLag { topic, partition, lag }).collect();
        lags.sort_by(|a, b| (&a.topic, a.partition).cmp(&(&b.topic, b.partition)));
        lags
    }

    /// The outage going on, if any.
    pub(crate) fn outage(&self) -> Option<Unreachable> {
        self.outage.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_durations_are_cumulative_and_count_the_overflow() {
        let m = Measures::default();
        for ms in [0.5, 3.0, 3.0, 40.0, 20_000.0] {
            m.batch_took(Duration::from_secs_f64(ms / 1000.0));
        }
        let d = m.batch_durations();
        let at = |upper: f64| d.buckets.iter().find(|(u, _)| *u == upper).map(|(_, n)| *n);
        assert_eq!((at(0.001), at(0.0025), at(0.005), at(0.05), at(10.0)), (Some(1), Some(1), Some(3), Some(4), Some(4)));
        assert_eq!(d.count, 5, "the 20 s batch is only in +Inf");
        assert!((d.sum_seconds - 20.0465).abs() < 1e-6, "{}", d.sum_seconds);
    }

    #[test]
    fn memory_is_kept_per_stage_and_released_with_the_instance() {
        let m = Measures::default();
        m.note_usage(0, "transform-1", "a@1", Usage { cpu: Duration::from_millis(5), memory_bytes: 1 << 20 });
        m.note_usage(0, "sink", "s@1", Usage { cpu: Duration::from_millis(7), memory_bytes: 2 << 20 });
        m.note_usage(0, "transform-1", "a@1", Usage { cpu: Duration::from_millis(1), memory_bytes: 3 << 20 });
        m.note_usage(1, "transform-1", "a@1", Usage { cpu: Duration::from_millis(2), memory_bytes: 1 << 20 });
        assert_eq!(m.instances().iter().map(|i| i.memory_bytes).sum::<u64>(), 6 << 20, "the sum of every task's instances' latest figures");
        assert_eq!(m.instances().iter().map(|i| i.task).collect::<Vec<_>>(), [1, 1, 2]);
        assert!((m.cpu_seconds() - 0.015).abs() < 1e-9);
        m.released(0, "sink");
        assert_eq!(m.instances().iter().map(|i| i.memory_bytes).sum::<u64>(), 4 << 20);
        m.stages_replaced(1);
        assert_eq!(m.instances().len(), 1, "task 2's transform went with the swap");
        m.run_ended();
        assert!(m.instances().is_empty());
    }
}
