//! The task of one sink connector: read a batch, run the transform chain, write it to the
//! sink plugin, and commit consumer offsets only after the sink flushed what they cover.
//!
//! Flushes happen on the connector's interval, before pausing, when partitions are revoked,
//! and at shutdown. A sink that faults loses what it buffered, so a fault fails the
//! connector without committing: the restarted connector reads again from the last flush.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use turnpike_config::SinkStep;
use turnpike_state::TeamSecrets;
use turnpike_kafka::{Consumer, Delivery, KafkaError, Offsets, PartitionChange};
use turnpike_runtime::{
    input_len, CallError, ErrorKind, Fault, FaultClass, InputBatch, InstanceLabels, InstanceLimits, PluginError, RecordError, SinkInstance, TopicPartition,
};

use super::idle::{self, ConsumerOpener};
use super::read_loop::{read_loop, ReadHooks};
use super::{Exit, PauseHooks, TaskContext};
use crate::batches::input_source;
use crate::chain::ChainOutput;
use crate::failures::{FailedRecord, ReadFrom};
use crate::registry::PluginInfo;
use crate::retry::{Attempt, Retry, RetryLog};
use crate::status::{FaultInfo, LiveStatus};
use crate::storage;

pub(crate) struct SinkTask {
    pub(crate) cx: TaskContext,
    pub(crate) consumer: Arc<Consumer>,
    /// A new consumer after the task was idle and gave its own up.
    pub(crate) opener: ConsumerOpener,
    /// The sink as configured.
    pub(crate) step: SinkStep,
    pub(crate) plugin: PluginInfo,
    pub(crate) limits: InstanceLimits,
    /// Where `storage.credentials` references are resolved, when the sink starts.
    pub(crate) secrets: TeamSecrets,
}

/// What was written since the last flush, waiting for the next one.
#[derive(Default)]
struct Unflushed {
    /// Offsets of every record read (written, skipped or dead-lettered).
    offsets: Offsets,
    /// Dead letters not yet known to be acknowledged.
    dead_letters: Vec<Delivery>,
    /// Records the sink accepted.
    written: u64,
    /// Their bytes (of the batches handed over, rejected records included).
    written_bytes: u64,
}

impl Unflushed {
    /// What stays to be committed after a commit of what `split_at_holds` let go: what a
    /// hold kept back; after a failed commit, everything read, so that the next flush commits
    /// it again (dropped, an idle sink would keep its older commit and, when it next starts
    /// or wakes, write again what it had already written).
    fn after_commit(&mut self, held: Offsets, committed: bool) {
        if committed {
            self.offsets = held;
        }
    }
}

/// The sink instance and what it holds between flushes: what the sink adds to the read loop.
/// Its methods take the context as `&mut`: it holds wasmtime stores, which are not `Sync`, so
/// no shared reference to it may live across an await.
struct Writer {
    sink: SinkInstance,
    plugin: PluginInfo,
    /// `None` while the task is idle without a consumer (everything was flushed and
    /// committed first).
    consumer: Option<Arc<Consumer>>,
    unflushed: Unflushed,
    interval: Duration,
    last_flush: Instant,
}

impl SinkTask {
    pub(crate) async fn run(self) {
        let Self { mut cx, mut consumer, opener, step, plugin, limits, secrets } = self;
        let name = cx.connector.name().to_string();
        let sink = match start(&mut cx, &step, &plugin, limits, &secrets).await {
            Ok(sink) => sink,
            Err(exit) => return cx.finish(&name, exit),
        };
        cx.started();
        tracing::info!(connector = %name, plugins = ?cx.status.plugins(), "sink connector running");
        let interval = Duration::from_millis(step.flush_interval_ms.get());
        let mut writer = Writer { sink, plugin, consumer: Some(consumer.clone()), unflushed: Unflushed::default(), interval, last_flush: Instant::now() };
        let idle_after = idle::idle_after(cx.connector.config());
        let mut exit = loop {
            let release = match read_loop(&mut cx, &consumer, &mut writer, None, idle_after).await {
                Ok(idle) => idle,
                Err(exit) => break exit,
            };
            writer.consumer = None;
            consumer = match idle::give_up(consumer, &release, &opener).await {
                Err(kept) => kept,
                Ok(watch) => {
                    // As in a rebalance: the sink holds nothing for them (all was flushed).
                    let gone: Vec<(String, i32)> = release.points.iter().map(|p| (p.topic.clone(), p.partition)).collect();
                    if let Err(exit) = writer.tell_partitions(&mut cx, gone, false).await {
                        idle::drop_watch(watch);
                        break exit;
                    }
                    match idle::wait_for_record(&mut cx, watch, &opener, &mut writer).await {
                        Ok(consumer) => consumer,
                        Err(exit) => break exit,
                    }
                }
            };
            writer.consumer = Some(consumer.clone());
        };
        if matches!(exit, Exit::Shutdown) {
            if let Err(e) = writer.flush(&mut cx).await {
                exit = e;
            }
        }
        cx.finish(&name, exit);
    }
}

/// Creates the sink instance and the chain's.
async fn start(cx: &mut TaskContext, step: &SinkStep, plugin: &PluginInfo, mut limits: InstanceLimits, secrets: &TeamSecrets) -> Result<SinkInstance, Exit> {
    if let Some(access) = &cx.connector.config().storage {
        let (credentials, secret_values) = storage::credentials(access, secrets).map_err(|e| e.fault(&access.bucket))?;
        limits.scrub = limits.scrub.and(secret_values);
        let grant = storage::open(access, credentials).await.map_err(|e| e.fault(&access.bucket))?;
        cx.status.set_bucket(grant.bucket().clone());
        limits.storage = Some(grant);
    }
    let labels = InstanceLabels { connector: cx.connector.name().to_string(), plugin: plugin.label() };
    let created = SinkInstance::create(&plugin.plugin, &step.config.to_string(), labels, limits).await;
    let sink = created.map_err(|e| Exit::of_create(&e, &plugin.label(), &cx.status))?;
    cx.chain.prepare().await?;
    Ok(sink)
}

impl PauseHooks for Writer {}

impl ReadHooks for Writer {
    async fn before_read(&mut self, cx: &mut TaskContext) -> Result<(), Exit> {
        self.partition_changes(cx).await?;
        if self.last_flush.elapsed() >= self.interval {
            self.flush(cx).await?;
            self.last_flush = Instant::now();
        }
        Ok(())
    }

    async fn before_pause(&mut self, cx: &mut TaskContext) -> Result<(), Exit> {
        self.flush(cx).await
    }

    async fn before_release(&mut self, cx: &mut TaskContext) -> Result<(), Exit> {
        self.flush(cx).await?;
        self.last_flush = Instant::now();
        Ok(())
    }

    async fn interrupt(&mut self) {
        tokio::time::sleep_until(tokio::time::Instant::from_std(self.last_flush + self.interval)).await;
    }

    async fn batch(&mut self, cx: &mut TaskContext, batch: InputBatch, offsets: Offsets, unreadable: Vec<(u32, String)>) -> Result<(), Exit> {
        let (readable, dead_letters) = cx.policy.set_aside_unreadable(&cx.producer, &batch, unreadable).await?;
        self.unflushed.dead_letters.extend(dead_letters);
        self.write_batch(cx, readable.as_ref().unwrap_or(&batch)).await?;
        self.unflushed.offsets.merge(&offsets);
        Ok(())
    }
}

impl Writer {
    /// Runs the chain, writes the result to the sink and applies the error policy to every
    /// record that failed on the way.
    async fn write_batch(&mut self, cx: &mut TaskContext, batch: &InputBatch) -> Result<(), Exit> {
        let output = cx.chain.run(batch, false).await?;
        let ChainOutput { batch: out, sends, origins, mut failed } = output;
        let keep: Vec<_> = sends.iter().zip(&origins).map(|((j, _), &origin)| (*j, input_source(batch, origin as usize))).collect();
        // Without transforms this is `batch` itself, not a copy.
        let to_write = out.into_sink_input(&keep, &batch.topics);
        let Some(rejected) = self.write(cx, &to_write).await? else { return Err(Exit::Shutdown) };
        let rejected = distinct_rejections(rejected).map_err(|why| Exit::Failed(sink_fault(&self.plugin, &cx.status, &Fault::InvalidOutput(why))))?;
        for r in &rejected {
            failed.push(FailedRecord {
                origin: origins[r.input as usize],
                stage: "sink".into(),
                plugin: self.plugin.label(),
                kind: r.error.kind,
                class: FaultClass::RecordError.into(),
                message: r.error.message.clone(),
            });
        }
        self.unflushed.written += (input_len(&to_write) - rejected.len()) as u64;
        self.unflushed.written_bytes += to_write.data.len() as u64;
        if let Some(fault) = cx.policy.judge(&failed, batch, ReadFrom::Kafka) {
            return Err(fault.into());
        }
        self.unflushed.dead_letters.extend(cx.policy.dead_letter(&cx.producer, batch, &failed, ReadFrom::Kafka).await?);
        Ok(())
    }

    /// `write` with the error policy: retriable errors are retried with backoff; an error for
    /// the whole batch (or retries running out) fails every record of it. `None`: the
    /// connector is stopping (nothing is failed and nothing committed).
    async fn write(&mut self, cx: &mut TaskContext, batch: &InputBatch) -> Result<Option<Vec<RecordError>>, FaultInfo> {
        if input_len(batch) == 0 {
            return Ok(Some(Vec::new()));
        }
        let mut retry = Retry::new(&cx.connector.config().errors, &cx.cancel);
        let plugin = self.plugin.label();
        let error = loop {
            let written = self.sink.write(batch).await;
            cx.status.measures.note_usage(cx.task, "sink", &plugin, self.sink.take_usage());
            let log = RetryLog { status: &cx.status, connector: cx.connector.name().as_str(), plugin: &plugin, what: "sink asked to retry the write" };
            match retry.settle(written, log).await {
                Attempt::Done(rejected) => return Ok(Some(rejected)),
                Attempt::Again => {}
                Attempt::Stopped | Attempt::Failed(CallError::Stopped) => return Ok(None),
                Attempt::GaveUp(message) => break PluginError { kind: ErrorKind::InvalidRecord, message: format!("{message} (still failing after errors.retry_timeout_ms)") },
                Attempt::Failed(CallError::Fault(f)) => return Err(sink_fault(&self.plugin, &cx.status, &f)),
                Attempt::Failed(CallError::Plugin { kind, message }) => break PluginError { kind, message },
            }
        };
        Ok(Some((0..input_len(batch) as u32).map(|input| RecordError { input, error: error.clone() }).collect()))
    }

    /// Flushes the sink (retrying retriable errors), waits for the dead letters, then commits
    /// the offsets of everything read so far.
    /// Stopping while a flush waits to be retried ends it with [`Exit::Shutdown`] and commits
    /// nothing: what was written since the last flush is read again at the next start.
    /// The commit waits for the broker: an asynchronous one's failure is heard of by nobody,
    /// and these offsets would then be left uncommitted. (Flushes are a second apart by
    /// default; the wait is a round trip to the group coordinator.)
    async fn flush(&mut self, cx: &mut TaskContext) -> Result<(), Exit> {
        if self.unflushed.offsets.is_empty() {
            return Ok(());
        }
        let errors = &cx.connector.config().errors;
        let mut retry = if cx.cancel.is_cancelled() {
            // The last flush of a stopping connector: a short budget of its own, so a
            // transient error does not cost a flush interval's worth of re-delivery.
            Retry::with(SHUTDOWN_FLUSH_RETRY.min(Duration::from_millis(errors.retry_timeout_ms.get())), Duration::from_secs(1), CancellationToken::new())
        } else {
            Retry::new(errors, &cx.cancel)
        };
        let plugin = self.plugin.label();
        loop {
            let flushed = self.sink.flush().await;
            cx.status.measures.note_usage(cx.task, "sink", &plugin, self.sink.take_usage());
            let log = RetryLog { status: &cx.status, connector: cx.connector.name().as_str(), plugin: &plugin, what: "sink asked to retry the flush" };
            let message = match retry.settle(flushed, log).await {
                Attempt::Done(()) => break,
                Attempt::Again => continue,
                Attempt::Stopped | Attempt::Failed(CallError::Stopped) => {
                    tracing::warn!(connector = %cx.connector.name(), "stopped before the flush ended; what was written since the last flush will be read again");
                    return Err(Exit::Shutdown);
                }
                Attempt::Failed(CallError::Fault(f)) => return Err(sink_fault(&self.plugin, &cx.status, &f).into()),
                Attempt::GaveUp(message) | Attempt::Failed(CallError::Plugin { message, .. }) => message,
            };
            return Err(FaultInfo::new(FaultClass::SinkFlush, format!("plugin {plugin} (sink) could not flush: {message}; offsets not committed")).into());
        }
        // Objects the plugin handed over are written by the host: wait for them (outside the
        // plugin's deadline) before anything they hold is committed.
        if let Err(why) = self.sink.settle_storage().await {
            return Err(FaultInfo::new(FaultClass::ObjectStore, format!("plugin {plugin} (sink): {why}; offsets not committed")).into());
        }
        for delivery in std::mem::take(&mut self.unflushed.dead_letters) {
            delivery.wait().await.map_err(|e| FaultInfo::new(FaultClass::Kafka, format!("dead-letter topic: {e}")))?;
        }
        // A held partition (an object still open) is committed up to its hold only, and
        // stays unflushed so the next interval flushes it again even if nothing new arrives.
        let (commit, held) = self.unflushed.offsets.split_at_holds(&self.sink.take_holds());
        let committed = match &self.consumer {
            // Stopping: the last commit is waited for.
            Some(consumer) if cx.cancel.is_cancelled() => consumer.commit_off_thread(&commit, true).await,
            // Without a coordinator the wait can last a session timeout or more: a stop
            // meanwhile leaves it, and these offsets go to the last flush's commit.
            Some(consumer) => tokio::select! {
                committed = consumer.commit_off_thread(&commit, true) => committed,
                _ = cx.cancel.cancelled() => Err(KafkaError::Blocking("stopped while the commit waited for the broker".into())),
            },
            None => Ok(()),
        };
        if let Err(e) = &committed {
            tracing::warn!(connector = %cx.connector.name(), error = %e, "offset commit failed; these offsets stay to be committed by the next flush (stopping: read again at the next start)");
        }
        cx.status.count_out(cx.task, std::mem::take(&mut self.unflushed.written), std::mem::take(&mut self.unflushed.written_bytes));
        self.unflushed.after_commit(held, committed.is_ok());
        Ok(())
    }

    /// Tells the sink about partitions assigned and revoked, at the batch boundary after the
    /// rebalance. Before giving partitions up, the consumer already committed (in sync) the
    /// offsets of what was flushed; what was written since is flushed here, and may also be
    /// read again by the partitions' next owner (at least once, never lost).
    async fn partition_changes(&mut self, cx: &mut TaskContext) -> Result<(), Exit> {
        let changes = self.consumer.as_ref().map(|c| c.take_partition_changes()).unwrap_or_default();
        for (i, change) in changes.iter().enumerate() {
            let (list, assigned) = match change {
                PartitionChange::Assigned(list) => (list.clone(), true),
                PartitionChange::Revoked(list) => {
                    self.flush(cx).await?;
                    // A partition given back in the same rebalance is read again from its
                    // commit, and the batch already written may hold those records: the sink
                    // keeps it (it sees the offsets go back and starts over from there). Only
                    // the partitions really lost are forgotten and revoked.
                    let regained = |tp: &(String, i32)| changes[i + 1..].iter().any(|c| matches!(c, PartitionChange::Assigned(l) if l.contains(tp)));
                    let lost: Vec<(String, i32)> = list.iter().filter(|tp| !regained(tp)).cloned().collect();
                    // What a hold kept back is the next owner's to read: never commit it here.
                    self.unflushed.offsets.forget(&lost);
                    (lost, false)
                }
            };
            self.tell_partitions(cx, list, assigned).await?;
        }
        Ok(())
    }

    /// Tells the sink these partitions were assigned to it, or taken away.
    async fn tell_partitions(&mut self, cx: &mut TaskContext, list: Vec<(String, i32)>, assigned: bool) -> Result<(), Exit> {
        if list.is_empty() {
            return Ok(());
        }
        let partitions: Vec<TopicPartition> = list.into_iter().map(|(topic, partition)| TopicPartition { topic, partition }).collect();
        let told = self.sink.partitions(&partitions, assigned).await;
        cx.status.measures.note_usage(cx.task, "sink", &self.plugin.label(), self.sink.take_usage());
        match told {
            Ok(()) => Ok(()),
            Err(CallError::Stopped) => Err(Exit::Shutdown),
            Err(CallError::Fault(f)) => Err(sink_fault(&self.plugin, &cx.status, &f).into()),
            Err(other) => Err(FaultInfo::new(FaultClass::RecordError, other.to_string()).into()),
        }
    }
}

/// A sink fault, counted against the plugin; what the sink buffered is lost.
fn sink_fault(plugin: &PluginInfo, status: &LiveStatus, fault: &Fault) -> FaultInfo {
    status.fault(&plugin.label(), fault.class(), &fault.to_string());
    FaultInfo::new(fault.class(), format!("plugin {} (sink): {fault}; what it buffered since the last flush will be read again", plugin.label()))
}

/// How long the last flush of a stopping connector retries a retriable error.
const SHUTDOWN_FLUSH_RETRY: Duration = Duration::from_secs(10);

/// The rejections a sink returned, each input once. The same index twice is a contract
/// violation (it would count one record as failed twice and underflow the written count).
fn distinct_rejections(rejected: Vec<RecordError>) -> Result<Vec<RecordError>, String> {
    let mut seen = std::collections::HashSet::with_capacity(rejected.len());
    for r in &rejected {
        if !seen.insert(r.input) {
            return Err(format!("the sink rejected input {} more than once", r.input));
        }
    }
    Ok(rejected)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejection(input: u32) -> RecordError {
        RecordError { input, error: turnpike_runtime::PluginError { kind: ErrorKind::InvalidRecord, message: "no".into() } }
    }

    #[test]
    fn a_failed_commit_leaves_everything_read_to_the_next_flush() {
        let mut read = Offsets::default();
        read.done("t", 0, 99);
        read.done("t", 1, 49);
        let holds = std::collections::BTreeMap::from([(("t".to_owned(), 0), 40)]);
        let mut unflushed = Unflushed { offsets: read.clone(), ..Unflushed::default() };
        let (_, held) = unflushed.offsets.split_at_holds(&holds);
        unflushed.after_commit(held.clone(), false);
        assert_eq!(unflushed.offsets, read, "a failed commit keeps every offset read for the next flush");
        unflushed.after_commit(held.clone(), true);
        assert_eq!(unflushed.offsets, held, "a commit that went through leaves only what a hold kept back");
    }

    #[test]
    fn a_sink_rejecting_one_record_twice_breaks_the_contract() {
        assert!(distinct_rejections(vec![rejection(0), rejection(2)]).is_ok());
        let err = distinct_rejections(vec![rejection(1), rejection(1)]).unwrap_err();
        assert!(err.contains("input 1 more than once"), "{err}");
    }
}
