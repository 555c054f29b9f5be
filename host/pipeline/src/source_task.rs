//! The loop of one source connector: poll the source plugin, run the transform chain,
//! produce, and save the source's position once everything before it is acknowledged.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use turnpike_config::{ConnectorConfig, ErrorTolerance};
use turnpike_kafka::{read_position, Producer};
use turnpike_runtime::{input_len, input_record, CallError, ErrorKind, InputBatch, InstanceLabels, InstanceLimits, Polled, SourceInstance};
use turnpike_runtime::FaultClass;

use crate::chain::{route_refused, Chain};
use crate::committer::{self, PendingBatch, SourcePosition, IN_FLIGHT_BATCHES};
use crate::failures::{without, ErrorPolicy, FailedRecord, ReadFrom};
use crate::registry::PluginInfo;
use crate::retry::{Next, Retry};
use crate::status::{ConnectorState, FaultInfo, LiveStatus};
use crate::task::{drain, finish, produce, wait_while_paused, Exit};

pub(crate) struct SourceTask {
    pub(crate) config: ConnectorConfig,
    pub(crate) plugin: PluginInfo,
    pub(crate) limits: InstanceLimits,
    pub(crate) chain: Chain,
    pub(crate) producer: Producer,
    pub(crate) policy: ErrorPolicy,
    pub(crate) kafka: Vec<(String, String)>,
    pub(crate) positions_topic: String,
    pub(crate) status: Arc<LiveStatus>,
    pub(crate) cancel: CancellationToken,
    pub(crate) paused: tokio::sync::watch::Receiver<bool>,
}


impl SourceTask {
    pub(crate) async fn run(mut self) {
        let name = self.config.name.to_string();
        let (position, source) = match self.start().await {
            Ok(started) => started,
            Err(fault) => return finish(&self.status, &name, Exit::Failed(fault)),
        };
        self.status.set(ConnectorState::Running, None);
        tracing::info!(connector = %name, plugins = ?self.status.plugins(), resumed = position.is_some(), "source connector running");

        let (tx, rx) = mpsc::channel(IN_FLIGHT_BATCHES);
        let delivery_failed = CancellationToken::new();
        let checkpoint = SourcePosition { producer: self.producer.clone(), topic: self.positions_topic.clone(), connector: name.clone() };
        let committer = tokio::spawn(committer::run(rx, checkpoint, self.status.clone(), name.clone(), delivery_failed.clone()));
        let exit = self.poll_loop(source, position, &tx, &delivery_failed).await;
        drop(tx);
        drain(&self.producer, committer, &name).await;
        finish(&self.status, &name, exit);
    }

    /// Reads the last saved position and creates the source and the chain.
    async fn start(&mut self) -> Result<(Option<Vec<u8>>, SourceInstance), FaultInfo> {
        let (kafka, topic, name) = (self.kafka.clone(), self.positions_topic.clone(), self.config.name.to_string());
        let position = tokio::task::spawn_blocking(move || read_position(&kafka, &topic, &name))
            .await
            .map_err(|e| FaultInfo::new(FaultClass::Kafka, format!("positions task: {e}")))?
            .map_err(|e| FaultInfo::new(FaultClass::Kafka, format!("reading the last source position: {e}")))?;
        let source = create(&self.plugin, &self.config, &self.limits, &self.status, position.as_deref()).await?;
        self.chain.prepare().await.map_err(|e| FaultInfo::new(e.class(), e.to_string()))?;
        Ok((position, source))
    }

    async fn poll_loop(
        &mut self,
        mut source: SourceInstance,
        mut position: Option<Vec<u8>>,
        tx: &mpsc::Sender<PendingBatch<Option<Vec<u8>>>>,
        delivery_failed: &CancellationToken,
    ) -> Exit {
        let max_records = u32::try_from(self.config.batch.max_records.get()).unwrap_or(u32::MAX);
        let interval = Duration::from_millis(self.config.source.as_ref().map_or(1_000, |s| s.poll_interval_ms.get()));
        loop {
            if self.cancel.is_cancelled() || delivery_failed.is_cancelled() {
                return Exit::Shutdown;
            }
            if *self.paused.borrow() {
                if let Some(exit) = wait_while_paused(&mut self.paused, &self.cancel, &self.status).await {
                    return exit;
                }
            }
            let polled = match self.poll(&mut source, &mut position, max_records).await {
                Ok(Some(polled)) => polled,
                Ok(None) => continue,
                Err(exit) => return exit,
            };
            if input_len(&polled.batch) == 0 {
                // Nothing new: wait for the interval (a pause or a stop ends the wait).
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = self.cancel.cancelled() => return Exit::Shutdown,
                    _ = self.paused.changed() => {}
                }
                continue;
            }
            if polled.position.is_some() {
                position.clone_from(&polled.position);
            }
            LiveStatus::add(&self.status.records_in, input_len(&polled.batch) as u64);
            match self.deliver(polled).await {
                Ok(pending) => {
                    if tx.send(pending).await.is_err() {
                        return Exit::Shutdown;
                    }
                }
                Err(exit) => return exit,
            }
        }
    }

    /// One poll, with the error policy: a retriable error is retried with backoff, a fault
    /// re-creates the source at the last position handed out (once in a row). `Ok(None)`
    /// means "poll again".
    async fn poll(&mut self, source: &mut SourceInstance, position: &mut Option<Vec<u8>>, max_records: u32) -> Result<Option<Polled>, Exit> {
        let mut retry = Retry::new(&self.config.errors, &self.cancel);
        let mut faulted = false;
        loop {
            match source.poll(max_records).await {
                Ok(polled) => return Ok(Some(polled)),
                Err(CallError::Plugin { kind: ErrorKind::Retriable, message }) => {
                    match retry.pause().await {
                        Next::Again => {}
                        Next::Stop => return Err(Exit::Shutdown),
                        Next::GiveUp => {
                            return Err(FaultInfo::new(FaultClass::RecordError, format!("plugin {} (source) kept failing past errors.retry_timeout_ms: {message}", self.plugin.label())).into())
                        }
                    }
                    LiveStatus::add(&self.status.retries, 1);
                    tracing::info!(connector = %self.config.name, plugin = %self.plugin.label(), %message, attempt = retry.attempts(), "source asked to retry the poll");
                }
                Err(CallError::Plugin { kind, message }) => {
                    if kind == ErrorKind::Fatal || self.config.errors.tolerance == ErrorTolerance::None {
                        return Err(FaultInfo::new(FaultClass::RecordError, format!("plugin {} (source) failed a poll: {message}", self.plugin.label())).into());
                    }
                    tracing::warn!(connector = %self.config.name, plugin = %self.plugin.label(), stage = "source", error = %message, "poll failed; skipped (errors.tolerance is all)");
                    LiveStatus::add(&self.status.records_failed, 1);
                    return Ok(None);
                }
                Err(CallError::Fault(fault)) => {
                    self.status.fault(&self.plugin.label(), fault.class(), &fault.to_string());
                    LiveStatus::add(&self.status.instance_restarts, 1);
                    if std::mem::replace(&mut faulted, true) {
                        return Err(FaultInfo::new(fault.class(), format!("plugin {} (source): {fault} (again after re-creating the instance)", self.plugin.label())).into());
                    }
                    tracing::warn!(connector = %self.config.name, plugin = %self.plugin.label(), error = %fault, "source faulted; re-creating it at the last position");
                    *source = create(&self.plugin, &self.config, &self.limits, &self.status, position.as_deref()).await?;
                }
            }
        }
    }

    /// Runs a polled batch through the chain and hands its outputs and dead letters to the
    /// producer.
    async fn deliver(&mut self, polled: Polled) -> Result<PendingBatch<Option<Vec<u8>>>, Exit> {
        let from = ReadFrom::Source { position: polled.position.as_deref() };
        let mut source_failed: Vec<FailedRecord> = polled
            .errors
            .iter()
            .map(|e| FailedRecord { origin: e.input, stage: "source".into(), plugin: self.plugin.label(), kind: e.error.kind, class: FaultClass::RecordError.into(), message: e.error.message.clone() })
            .collect();
        source_failed.extend(self.refused_routes(&polled.batch, &source_failed));
        if let Some(fault) = self.policy.judge(&source_failed, &polled.batch, from) {
            return Err(fault.into());
        }
        let mut deliveries = self.policy.dead_letter(&self.producer, &polled.batch, &source_failed, from).await?;
        let good = without(&polled.batch, &source_failed);
        let batch = good.as_ref().unwrap_or(&polled.batch);
        let output = self.chain.run(batch, true).await?;
        if let Some(fault) = self.policy.judge(&output.failed, batch, from) {
            return Err(fault.into());
        }
        deliveries.extend(produce(&self.producer, self.config.output(), &output).await?);
        deliveries.extend(self.policy.dead_letter(&self.producer, batch, &output.failed, from).await?);
        Ok(PendingBatch { deliveries, progress: polled.position })
    }

    /// Records the source sent to a topic the connector may not write to (not its
    /// `output_topic` nor in its `routes`), as failures of the source stage.
    fn refused_routes(&self, batch: &InputBatch, already: &[FailedRecord]) -> Vec<FailedRecord> {
        let writable = self.chain.writable();
        let mut failed = vec![false; input_len(batch)];
        for f in already {
            if let Some(x) = failed.get_mut(f.origin as usize) {
                *x = true;
            }
        }
        (0..input_len(batch))
            .filter(|&i| !failed[i])
            .filter_map(|i| {
                let topic = input_record(batch, i).0.topic;
                (!writable.iter().any(|w| w == topic)).then(|| FailedRecord {
                    origin: i as u32,
                    stage: "source".into(),
                    plugin: self.plugin.label(),
                    kind: ErrorKind::InvalidRecord,
                    class: FaultClass::RouteRefused.into(),
                    message: route_refused(topic, writable),
                })
            })
            .collect()
    }
}

/// Creates the source instance at `position`. A free function: the task holds wasmtime
/// stores, which are not `Sync`, so no `&SourceTask` may live across an await.
async fn create(plugin: &PluginInfo, config: &ConnectorConfig, limits: &InstanceLimits, status: &LiveStatus, position: Option<&[u8]>) -> Result<SourceInstance, FaultInfo> {
    let labels = InstanceLabels { connector: config.name.to_string(), plugin: plugin.label() };
    let json = config.source.as_ref().map(|s| s.config.to_string()).unwrap_or_else(|| "{}".into());
    let created = SourceInstance::create(&plugin.plugin, &json, position, config.output(), labels, limits.clone()).await;
    created.map_err(|e| FaultInfo::of_create(&e, &plugin.label(), status))
}
