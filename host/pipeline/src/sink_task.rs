//! The loop of one sink connector: read a batch, run the transform chain, write it to the
//! sink plugin, and commit consumer offsets only after the sink flushed what they cover.
//!
//! Flushes happen on the connector's interval, before pausing, when partitions are revoked,
//! and at shutdown. A sink that faults loses what it buffered, so a fault fails the
//! connector without committing: the restarted connector reads again from the last flush.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;
use turnpike_config::ConnectorConfig;
use turnpike_kafka::{Consumer, Delivery, Offsets, PartitionChange, Producer};
use turnpike_runtime::{
    input_len, CallError, ErrorKind, InputBatch, InstanceLabels, InstanceLimits, RecordError, SinkInstance, BatchBuilder, TopicPartition,
};
use turnpike_runtime::FaultClass;

use crate::batches::input_source;
use crate::chain::{Chain, ChainOutput};
use crate::failures::{ErrorPolicy, FailedRecord, ReadFrom};
use crate::registry::PluginInfo;
use crate::retry::{Next, Retry};
use crate::status::{FaultInfo, LiveStatus};
use crate::task::{batch_limits, finish, read_record, wait_while_paused, Exit};

pub(crate) struct SinkTask {
    pub(crate) config: ConnectorConfig,
    pub(crate) plugin: PluginInfo,
    pub(crate) limits: InstanceLimits,
    pub(crate) chain: Chain,
    pub(crate) consumer: Arc<Consumer>,
    /// For the dead-letter topic only.
    pub(crate) producer: Producer,
    pub(crate) policy: ErrorPolicy,
    pub(crate) status: Arc<LiveStatus>,
    pub(crate) cancel: CancellationToken,
    pub(crate) paused: tokio::sync::watch::Receiver<bool>,
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
}


impl SinkTask {
    pub(crate) async fn run(mut self) {
        let name = self.config.name.to_string();
        let mut sink = match self.start().await {
            Ok(sink) => sink,
            Err(fault) => return finish(&self.status, &name, Exit::Failed(fault)),
        };
        self.status.set(crate::status::ConnectorState::Running, None);
        tracing::info!(connector = %name, plugins = ?self.status.plugins(), "sink connector running");
        let mut unflushed = Unflushed::default();
        let mut exit = self.consume(&mut sink, &mut unflushed).await;
        if matches!(exit, Exit::Shutdown) {
            if let Err(e) = self.flush(&mut sink, &mut unflushed, true).await {
                exit = e;
            }
        }
        finish(&self.status, &name, exit);
    }

    async fn start(&mut self) -> Result<SinkInstance, FaultInfo> {
        let labels = InstanceLabels { connector: self.config.name.to_string(), plugin: self.plugin.label() };
        let config = self.config.sink.as_ref().map(|s| s.config.to_string()).unwrap_or_else(|| "{}".into());
        let created = SinkInstance::create(&self.plugin.plugin, &config, labels, self.limits.clone()).await;
        let sink = created.map_err(|e| FaultInfo::of_create(&e, &self.plugin.label(), &self.status))?;
        self.chain.prepare().await.map_err(|e| FaultInfo::new(e.class(), e.to_string()))?;
        Ok(sink)
    }

    async fn consume(&mut self, sink: &mut SinkInstance, unflushed: &mut Unflushed) -> Exit {
        let limits = batch_limits(&self.config);
        let max_records = limits.records;
        let interval = Duration::from_millis(self.config.sink.as_ref().map_or(1_000, |s| s.flush_interval_ms.get()));
        let mut last_flush = Instant::now();
        loop {
            if let Err(exit) = self.partition_changes(sink, unflushed).await {
                return exit;
            }
            if last_flush.elapsed() >= interval {
                if let Err(exit) = self.flush(sink, unflushed, false).await {
                    return exit;
                }
                last_flush = Instant::now();
            }
            if *self.paused.borrow() {
                if let Err(exit) = self.flush(sink, unflushed, false).await {
                    return exit;
                }
                if let Err(e) = self.consumer.pause_all() {
                    tracing::warn!(connector = %self.config.name, error = %e, "could not pause fetching");
                }
                if let Some(exit) = wait_while_paused(&mut self.paused, &self.cancel, &self.status).await {
                    return exit;
                }
                if let Err(e) = self.consumer.resume_all() {
                    tracing::warn!(connector = %self.config.name, error = %e, "could not resume fetching");
                }
            }
            let mut builder = BatchBuilder::with_capacity(max_records, 64 * 1024);
            let mut offsets = Offsets::default();
            let mut unreadable = Vec::new();
            let flush_due = tokio::time::Instant::from_std(last_flush + interval);
            let paused = &mut self.paused;
            // An idle wait ends for a pause or when the next flush is due.
            let interrupt = async move {
                tokio::select! {
                    _ = paused.changed() => {}
                    _ = tokio::time::sleep_until(flush_due) => {}
                }
            };
            let read = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return Exit::Shutdown,
                n = self.consumer.fill(limits, |r| read_record(&r, &mut builder, &mut offsets, &mut unreadable), interrupt) => n,
            };
            if read == 0 {
                continue;
            }
            LiveStatus::add(&self.status.records_in, read as u64);
            let batch = builder.finish();
            let (readable, dead_letters) = match self.policy.set_aside_unreadable(&self.producer, &batch, unreadable).await {
                Ok(set_aside) => set_aside,
                Err(fault) => return Exit::Failed(fault),
            };
            unflushed.dead_letters.extend(dead_letters);
            if let Err(exit) = self.write_batch(sink, readable.as_ref().unwrap_or(&batch), unflushed).await {
                return exit;
            }
            unflushed.offsets.merge(&offsets);
        }
    }

    /// Runs the chain, writes the result to the sink and applies the error policy to every
    /// record that failed on the way.
    async fn write_batch(&mut self, sink: &mut SinkInstance, batch: &InputBatch, unflushed: &mut Unflushed) -> Result<(), Exit> {
        let output = self.chain.run(batch, false).await?;
        let ChainOutput { batch: out, sends, origins, mut failed } = output;
        let keep: Vec<_> = sends.iter().zip(&origins).map(|((j, _), &origin)| (*j, input_source(batch, origin as usize))).collect();
        // Without transforms this is `batch` itself, not a copy.
        let to_write = out.into_sink_input(&keep, &batch.topics);
        let Some(rejected) = self.write(sink, &to_write).await? else { return Err(Exit::Shutdown) };
        let rejected = distinct_rejections(rejected).map_err(|why| Exit::Failed(self.sink_fault(&turnpike_runtime::Fault::InvalidOutput(why))))?;
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
        unflushed.written += (input_len(&to_write) - rejected.len()) as u64;
        if let Some(fault) = self.policy.judge(&failed, batch, ReadFrom::Kafka) {
            return Err(fault.into());
        }
        unflushed.dead_letters.extend(self.policy.dead_letter(&self.producer, batch, &failed, ReadFrom::Kafka).await?);
        Ok(())
    }

    /// `write` with the error policy: retriable errors are retried with backoff; an error for
    /// the whole batch (or retries running out) fails every record of it. `None`: the
    /// connector is stopping (nothing is failed and nothing committed).
    async fn write(&mut self, sink: &mut SinkInstance, batch: &InputBatch) -> Result<Option<Vec<RecordError>>, FaultInfo> {
        if input_len(batch) == 0 {
            return Ok(Some(Vec::new()));
        }
        let mut retry = Retry::new(&self.config.errors, &self.cancel);
        loop {
            let error = match sink.write(batch).await {
                Ok(rejected) => return Ok(Some(rejected)),
                Err(CallError::Fault(f)) => return Err(self.sink_fault(&f)),
                Err(CallError::Plugin { kind: ErrorKind::Retriable, message }) => match retry.pause().await {
                    Next::Again => {
                        LiveStatus::add(&self.status.retries, 1);
                        tracing::info!(connector = %self.config.name, plugin = %self.plugin.label(), %message, attempt = retry.attempts(), "sink asked to retry the write");
                        continue;
                    }
                    Next::Stop => return Ok(None),
                    Next::GiveUp => turnpike_runtime::PluginError { kind: ErrorKind::InvalidRecord, message: format!("{message} (still failing after errors.retry_timeout_ms)") },
                },
                Err(CallError::Plugin { kind, message }) => turnpike_runtime::PluginError { kind, message },
            };
            return Ok(Some((0..input_len(batch) as u32).map(|input| RecordError { input, error: error.clone() }).collect()));
        }
    }

    /// Flushes the sink (retrying retriable errors), waits for the dead letters, then commits
    /// the offsets of everything read so far.
    /// Stopping while a flush waits to be retried ends it with [`Exit::Shutdown`] and commits
    /// nothing: what was written since the last flush is read again at the next start.
    async fn flush(&mut self, sink: &mut SinkInstance, unflushed: &mut Unflushed, sync: bool) -> Result<(), Exit> {
        if unflushed.offsets.is_empty() {
            return Ok(());
        }
        let mut retry = if self.cancel.is_cancelled() {
            // The last flush of a stopping connector: a short budget of its own, so a
            // transient error does not cost a flush interval's worth of re-delivery.
            Retry::with(SHUTDOWN_FLUSH_RETRY.min(Duration::from_millis(self.config.errors.retry_timeout_ms.get())), Duration::from_secs(1), CancellationToken::new())
        } else {
            Retry::new(&self.config.errors, &self.cancel)
        };
        loop {
            match sink.flush().await {
                Ok(()) => break,
                Err(CallError::Fault(f)) => return Err(self.sink_fault(&f).into()),
                Err(CallError::Plugin { kind: ErrorKind::Retriable, message }) if retry_again(&mut retry).await? => {
                    LiveStatus::add(&self.status.retries, 1);
                    tracing::info!(connector = %self.config.name, plugin = %self.plugin.label(), %message, attempt = retry.attempts(), "sink asked to retry the flush");
                }
                Err(CallError::Plugin { message, .. }) => {
                    return Err(FaultInfo::new(FaultClass::SinkFlush, format!("plugin {} (sink) could not flush: {message}; offsets not committed", self.plugin.label())).into());
                }
            }
        }
        for delivery in std::mem::take(&mut unflushed.dead_letters) {
            delivery.wait().await.map_err(|e| FaultInfo::new(FaultClass::Kafka, format!("dead-letter topic: {e}")))?;
        }
        if let Err(e) = self.consumer.commit_off_thread(&unflushed.offsets, sync).await {
            tracing::warn!(connector = %self.config.name, error = %e, "offset commit failed; will retry");
        }
        LiveStatus::add(&self.status.records_out, std::mem::take(&mut unflushed.written));
        unflushed.offsets = Offsets::default();
        Ok(())
    }

    /// Tells the sink about partitions assigned and revoked, at the batch boundary after the
    /// rebalance. Before giving partitions up, the consumer already committed (in sync) the
    /// offsets of what was flushed; what was written since is flushed here, and may also be
    /// read again by the partitions' next owner (at least once, never lost).
    async fn partition_changes(&mut self, sink: &mut SinkInstance, unflushed: &mut Unflushed) -> Result<(), Exit> {
        for change in self.consumer.take_partition_changes() {
            let (list, assigned) = match change {
                PartitionChange::Assigned(list) => (list, true),
                PartitionChange::Revoked(list) => {
                    self.flush(sink, unflushed, true).await?;
                    (list, false)
                }
            };
            let partitions: Vec<TopicPartition> = list.into_iter().map(|(topic, partition)| TopicPartition { topic, partition }).collect();
            sink.partitions(&partitions, assigned).await.map_err(|e| match e {
                CallError::Fault(f) => self.sink_fault(&f),
                other => FaultInfo::new(FaultClass::RecordError, other.to_string()),
            })?;
        }
        Ok(())
    }

    fn sink_fault(&self, fault: &turnpike_runtime::Fault) -> FaultInfo {
        self.status.fault(&self.plugin.label(), fault.class(), &fault.to_string());
        FaultInfo::new(fault.class(), format!("plugin {} (sink): {fault}; what it buffered since the last flush will be read again", self.plugin.label()))
    }
}

/// How long the last flush of a stopping connector retries a retriable error.
const SHUTDOWN_FLUSH_RETRY: Duration = Duration::from_secs(10);

/// A retry pause for a flush: `Ok(true)` to try again, `Ok(false)` when the budget is spent,
/// and a shutdown when the connector is stopping (not a failure: nothing is committed).
async fn retry_again(retry: &mut Retry) -> Result<bool, Exit> {
    match retry.pause().await {
        Next::Again => Ok(true),
        Next::GiveUp => Ok(false),
        Next::Stop => {
            tracing::warn!("stopped while retrying a flush; what was written since the last flush will be read again");
            Err(Exit::Shutdown)
        }
    }
}

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
    fn a_sink_rejecting_one_record_twice_breaks_the_contract() {
        assert!(distinct_rejections(vec![rejection(0), rejection(2)]).is_ok());
        let err = distinct_rejections(vec![rejection(1), rejection(1)]).unwrap_err();
        assert!(err.contains("input 1 more than once"), "{err}");
    }
}
