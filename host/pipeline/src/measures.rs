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
use turnpike_kafka::{BrokerHealth, Consumer, Unreachable};
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
    /// Per stage: the plugin and its instance's memory; 0 once the instance is gone.
    memory: Mutex<BTreeMap<String, (String, u64)>>,
    batch_buckets: [AtomicU64; BATCH_BUCKETS.len()],
    /// Batches longer than the last bucket.
    batch_overflow: AtomicU64,
    batch_nanos: AtomicU64,
    /// The current run's consumer (transforms and sinks), for lag at read time.
    consumer: Mutex<Option<Arc<Consumer>>>,
    /// The current run's broker reachability.
    health: Mutex<Option<Arc<BrokerHealth>>>,
    pub(crate) broker_outages: AtomicU64,
}

/// Stage name of the `index`-th transform (counted from 1, as a person would).
pub(crate) fn transform_stage(index: usize) -> String {
    format!("transform-{}", index + 1)
}

impl Measures {
    /// Adds what an instance of `plugin` at `stage` used since it was last asked.
    pub(crate) fn note_usage(&self, stage: &str, plugin: &str, usage: Usage) {
        self.cpu_nanos.fetch_add(u64::try_from(usage.cpu.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
        let mut memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        memory.insert(stage.to_owned(), (plugin.to_owned(), usage.memory_bytes));
    }

    /// The instance at `stage` is gone (faulted, replaced, or the run ended).
    pub(crate) fn released(&self, stage: &str) {
        if let Some(entry) = self.memory.lock().unwrap_or_else(|p| p.into_inner()).get_mut(stage) {
            entry.1 = 0;
        }
    }

    /// The run ended: no instance holds memory, no consumer lags, no client is unreachable.
    pub(crate) fn run_ended(&self) {
        self.memory.lock().unwrap_or_else(|p| p.into_inner()).values_mut().for_each(|e| e.1 = 0);
        *self.consumer.lock().unwrap_or_else(|p| p.into_inner()) = None;
        *self.health.lock().unwrap_or_else(|p| p.into_inner()) = None;
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

    pub(crate) fn set_consumer(&self, consumer: Arc<Consumer>) {
        *self.consumer.lock().unwrap_or_else(|p| p.into_inner()) = Some(consumer);
    }

    pub(crate) fn set_health(&self, health: Arc<BrokerHealth>) {
        *self.health.lock().unwrap_or_else(|p| p.into_inner()) = Some(health);
    }

    pub(crate) fn cpu_seconds(&self) -> f64 {
        self.cpu_nanos.load(Ordering::Relaxed) as f64 / 1e9
    }

    /// Every stage's instance memory, in stage order as stored (`source`, `sink`,
    /// `transform-N` sort apart; the list says which is which).
    pub(crate) fn instances(&self) -> Vec<InstanceMemory> {
        let memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        memory.iter().map(|(stage, (plugin, bytes))| InstanceMemory { stage: stage.clone(), plugin: plugin.clone(), memory_bytes: *bytes }).collect()
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

    /// The current consumer's lag per partition (empty without one).
    pub(crate) fn partition_lag(&self) -> Vec<PartitionLag> {
        let consumer = self.consumer.lock().unwrap_or_else(|p| p.into_inner()).clone();
        consumer.map_or_else(Vec::new, |c| c.partition_lag().into_iter().map(|(topic, partition, lag)| PartitionLag { topic, partition, lag }).collect())
    }

    /// The outage the current run's clients are in, if any.
    pub(crate) fn unreachable(&self) -> Option<Unreachable> {
        self.health.lock().unwrap_or_else(|p| p.into_inner()).as_ref().and_then(|h| h.unreachable())
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
        m.note_usage("transform-1", "a@1", Usage { cpu: Duration::from_millis(5), memory_bytes: 1 << 20 });
        m.note_usage("sink", "s@1", Usage { cpu: Duration::from_millis(7), memory_bytes: 2 << 20 });
        m.note_usage("transform-1", "a@1", Usage { cpu: Duration::from_millis(1), memory_bytes: 3 << 20 });
        assert_eq!(m.instances().iter().map(|i| i.memory_bytes).sum::<u64>(), 5 << 20, "the sum of the instances' latest figures");
        assert!((m.cpu_seconds() - 0.013).abs() < 1e-9);
        m.released("sink");
        assert_eq!(m.instances().iter().map(|i| i.memory_bytes).sum::<u64>(), 3 << 20);
        m.run_ended();
        assert_eq!(m.instances().iter().map(|i| i.memory_bytes).sum::<u64>(), 0);
    }
}
