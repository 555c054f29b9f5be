//! The task of one source connector: poll the source plugin, run the transform chain,
//! produce, and save the source's position once everything before it is acknowledged.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use turnpike_config::{ErrorTolerance, SourceStep, TopicName};
use turnpike_kafka::{read_position, BrokerHealth, FencedPositions};
use turnpike_state::TeamSecrets;
use turnpike_runtime::{input_len, input_record, CallError, ErrorKind, FaultClass, InputBatch, InstanceLabels, InstanceLimits, Polled, SourceInstance};

use crate::retry::{Attempt, Retry, RetryLog};
use super::{drain, produce, Exit, TaskContext};
use crate::chain::route_refused;
use crate::database;
use crate::committer::{self, PendingBatch, PositionWriter, SourcePosition, IN_FLIGHT_BATCHES};
use crate::failures::{without, FailedRecord, ReadFrom};
use crate::registry::PluginInfo;
use crate::status::{FaultInfo, LiveStatus};

pub(crate) struct SourceTask {
    pub(crate) cx: TaskContext,
    pub(crate) plugin: SourcePlugin,
    pub(crate) kafka: Vec<(String, String)>,
    pub(crate) positions_topic: String,
    /// Whether positions go through the source's own fenced writer (in a cluster, where the
    /// source may move between hosts) rather than the host's producer.
    pub(crate) fenced: bool,
    /// The run's broker health, which the positions reader reports to while the source starts.
    pub(crate) health: Arc<BrokerHealth>,
    /// Where the `database.password` reference is resolved, when the source starts.
    pub(crate) secrets: TeamSecrets,
}

/// The source plugin and what its instance is made from, at start and after a fault.
pub(crate) struct SourcePlugin {
    pub(crate) info: PluginInfo,
    /// The source as configured.
    pub(crate) step: SourceStep,
    /// Where records go unless the source names another topic.
    pub(crate) output_topic: TopicName,
    pub(crate) limits: InstanceLimits,
}

impl SourcePlugin {
    /// Creates the source instance at `position`.
    async fn create(&self, connector: &str, status: &LiveStatus, position: Option<&[u8]>) -> Result<SourceInstance, Exit> {
        let labels = InstanceLabels { connector: connector.to_owned(), plugin: self.info.label() };
        let json = self.step.config.to_string();
        let created = SourceInstance::create(&self.info.plugin, &json, position, self.output_topic.as_str(), labels, self.limits.clone()).await;
        created.map_err(|e| Exit::of_create(&e, &self.info.label(), status))
    }
}

impl SourceTask {
    pub(crate) async fn run(mut self) {
        let name = self.cx.connector.name().to_string();
        // Opened before the position is read: opening fences the host the source ran on
        // before, so nothing it saves after can land, and what it saved before is read.
        let writer = match self.position_writer().await {
            Ok(writer) => writer,
            Err(fault) => return self.cx.finish(&name, fault.into()),
        };
        let (position, source) = match self.start().await {
            Ok(started) => started,
            Err(exit) => return self.cx.finish(&name, exit),
        };
        self.cx.started();
        tracing::info!(connector = %name, plugins = ?self.cx.status.plugins(), resumed = position.is_some(), "source connector running");

        let (tx, rx) = mpsc::channel(IN_FLIGHT_BATCHES);
        let delivery_failed = CancellationToken::new();
        let checkpoint = SourcePosition { writer, topic: self.positions_topic.clone(), connector: name.clone() };
        let committer = tokio::spawn(committer::run(rx, checkpoint, self.cx.status.clone(), (name.clone(), self.cx.task), delivery_failed.clone()));
        let exit = self.poll_loop(source, position, &tx, &delivery_failed).await;
        drop(tx);
        drain(committer, &name).await;
        self.cx.finish(&name, exit);
    }

    /// Where this run saves positions: the host's producer, or the source's own fenced writer.
    async fn position_writer(&mut self) -> Result<PositionWriter, FaultInfo> {
        if !self.fenced {
            return Ok(PositionWriter::Shared(self.cx.producer.clone()));
        }
        let name = self.cx.connector.name().to_string();
        let (kafka, topic, id) = (self.kafka.clone(), self.positions_topic.clone(), format!("turnpike-position-{name}"));
        let opened = tokio::task::spawn_blocking(move || FencedPositions::open(&kafka, &topic, &name, &id))
            .await
            .map_err(|e| FaultInfo::new(FaultClass::Kafka, format!("position writer task: {e}")))?;
        let writer = opened.map_err(|e| FaultInfo::new(FaultClass::Kafka, format!("opening the source's fenced position writer: {e}")))?;
        Ok(PositionWriter::Fenced(Arc::new(writer)))
    }

    /// Reads the last saved position and creates the source and the chain.
    async fn start(&mut self) -> Result<(Option<Vec<u8>>, SourceInstance), Exit> {
        let (kafka, topic, name, health) = (self.kafka.clone(), self.positions_topic.clone(), self.cx.connector.name().to_string(), self.health.clone());
        self.open_database().await?;
        let position = tokio::task::spawn_blocking(move || read_position(&kafka, &topic, &name, health))
            .await
            .map_err(|e| FaultInfo::new(FaultClass::Kafka, format!("positions task: {e}")))?
            .map_err(|e| FaultInfo::new(FaultClass::Kafka, format!("reading the last source position: {e}")))?;
        let source = self.plugin.create(self.cx.connector.name().as_str(), &self.cx.status, position.as_deref()).await?;
        self.cx.chain.prepare().await?;
        Ok((position, source))
    }

    /// Connects to the granted database, if any, and grants it to the source's instances.
    async fn open_database(&mut self) -> Result<(), FaultInfo> {
        let Some(access) = self.cx.connector.config().database.clone() else { return Ok(()) };
        let (client, secret_values) = database::client(&access, &self.secrets).map_err(|e| e.fault(&access))?;
        let limits = &mut self.plugin.limits;
        limits.scrub = limits.scrub.and(secret_values);
        let grant = database::open(&access, client).await.map_err(|e| e.fault(&access))?;
        self.cx.status.set_database(grant.database().clone());
        limits.sql = Some(grant);
        Ok(())
    }

    async fn poll_loop(
        &mut self,
        mut source: SourceInstance,
        mut position: Option<Vec<u8>>,
        tx: &mpsc::Sender<PendingBatch<Option<Vec<u8>>>>,
        delivery_failed: &CancellationToken,
    ) -> Exit {
        let max_records = u32::try_from(self.cx.connector.config().batch.max_records.get()).unwrap_or(u32::MAX);
        let interval = Duration::from_millis(self.plugin.step.poll_interval_ms.get());
        loop {
            if self.cx.cancel.is_cancelled() || delivery_failed.is_cancelled() {
                return Exit::Shutdown;
            }
            if *self.cx.paused.borrow() {
                if let Some(exit) = self.cx.wait_while_paused(&mut ()).await {
                    return exit;
                }
            }
            let began = std::time::Instant::now();
            let polled = match self.poll(&mut source, position.as_deref(), max_records).await {
                Ok(Some(polled)) => polled,
                Ok(None) => continue,
                Err(exit) => return exit,
            };
            if input_len(&polled.batch) == 0 {
                // Nothing new: wait for the interval (a pause or a stop ends the wait).
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = self.cx.cancel.cancelled() => return Exit::Shutdown,
                    _ = self.cx.paused.changed() => {}
                }
                continue;
            }
            if polled.position.is_some() {
                position.clone_from(&polled.position);
            }
            self.cx.status.count_in(self.cx.task, input_len(&polled.batch) as u64, polled.batch.data.len() as u64);
            let delivered = self.deliver(polled).await;
            self.cx.status.measures.batch_took(began.elapsed());
            match delivered {
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
    async fn poll(&mut self, source: &mut SourceInstance, position: Option<&[u8]>, max_records: u32) -> Result<Option<Polled>, Exit> {
        let mut retry = Retry::new(&self.cx.connector.config().errors, &self.cx.cancel);
        let mut faulted = false;
        let label = self.plugin.info.label();
        loop {
            let polled = source.poll(max_records).await;
            self.cx.status.measures.note_usage(self.cx.task, "source", &label, source.take_usage());
            let connector = self.cx.connector.name().as_str();
            let log = RetryLog { status: &self.cx.status, connector, plugin: &label, what: "source asked to retry the poll" };
            match retry.settle(polled, log).await {
                Attempt::Done(polled) => return Ok(Some(polled)),
                Attempt::Again => {}
                Attempt::Stopped | Attempt::Failed(CallError::Stopped) => return Err(Exit::Shutdown),
                Attempt::GaveUp(message) => {
                    return Err(FaultInfo::new(FaultClass::RecordError, format!("plugin {label} (source) kept failing past errors.retry_timeout_ms: {message}")).into());
                }
                Attempt::Failed(CallError::Plugin { kind, message }) => {
                    if kind == ErrorKind::Fatal || self.cx.connector.config().errors.tolerance == ErrorTolerance::None {
                        return Err(FaultInfo::new(FaultClass::RecordError, format!("plugin {label} (source) failed a poll: {message}")).into());
                    }
                    tracing::warn!(connector, plugin = %label, stage = "source", error = %message, "poll failed; skipped (errors.tolerance is all)");
                    LiveStatus::add(&self.cx.status.records_failed, 1);
                    return Ok(None);
                }
                Attempt::Failed(CallError::Fault(fault)) => {
                    self.cx.status.fault(&label, fault.class(), &fault.to_string());
                    LiveStatus::add(&self.cx.status.instance_restarts, 1);
                    if std::mem::replace(&mut faulted, true) {
                        return Err(FaultInfo::new(fault.class(), format!("plugin {label} (source): {fault} (again after re-creating the instance)")).into());
                    }
                    tracing::warn!(connector, plugin = %label, error = %fault, "source faulted; re-creating it at the last position");
                    *source = self.plugin.create(connector, &self.cx.status, position).await?;
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
            .map(|e| FailedRecord { origin: e.input, stage: "source".into(), plugin: self.plugin.info.label(), kind: e.error.kind, class: FaultClass::RecordError.into(), message: e.error.message.clone() })
            .collect();
        source_failed.extend(self.refused_routes(&polled.batch, &source_failed));
        let cx = &mut self.cx;
        if let Some(fault) = cx.policy.judge(&source_failed, &polled.batch, from) {
            return Err(fault.into());
        }
        let mut deliveries = cx.policy.dead_letter(&cx.producer, &polled.batch, &source_failed, from).await?;
        let good = without(&polled.batch, &source_failed);
        let batch = good.as_ref().unwrap_or(&polled.batch);
        let output = cx.chain.run(batch, true).await?;
        if let Some(fault) = cx.policy.judge(&output.failed, batch, from) {
            return Err(fault.into());
        }
        deliveries.extend(produce(&cx.producer, self.plugin.output_topic.as_str(), &output).await?);
        deliveries.extend(cx.policy.dead_letter(&cx.producer, batch, &output.failed, from).await?);
        Ok(PendingBatch { deliveries, progress: polled.position })
    }

    /// Records the source sent to a topic the connector may not write to (not its
    /// `output_topic` nor in its `routes`), as failures of the source stage.
    fn refused_routes(&self, batch: &InputBatch, already: &[FailedRecord]) -> Vec<FailedRecord> {
        let writable = self.cx.chain.writable();
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
                    plugin: self.plugin.info.label(),
                    kind: ErrorKind::InvalidRecord,
                    class: FaultClass::RouteRefused.into(),
                    message: route_refused(topic, writable),
                })
            })
            .collect()
    }
}
