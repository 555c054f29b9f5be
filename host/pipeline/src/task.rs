//! The loop of one transform connector: read a batch, run the chain, apply the error policy,
//! produce, and hand the deliveries to the committer.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use turnpike_config::ConnectorConfig;
use turnpike_kafka::{BatchLimits, ConsumedRecord, Consumer, Offsets, OutgoingRecord, Producer};
use turnpike_runtime::{BatchBuilder, InputBatch, RecordRef};
use turnpike_runtime::FaultClass;

use crate::chain::{Chain, ChainError, ChainOutput};
use crate::committer::{self, GroupOffsets, PendingBatch, IN_FLIGHT_BATCHES};
use crate::failures::{ErrorPolicy, ReadFrom};
use crate::status::{ConnectorState, FaultInfo, LiveStatus};
use crate::swap::SwapRequest;
use crate::events::EventKind;

pub(crate) struct ConnectorTask {
    pub(crate) config: ConnectorConfig,
    pub(crate) chain: Chain,
    pub(crate) consumer: Arc<Consumer>,
    pub(crate) producer: Producer,
    pub(crate) policy: ErrorPolicy,
    pub(crate) status: Arc<LiveStatus>,
    pub(crate) cancel: CancellationToken,
    /// `true` while the connector is paused.
    pub(crate) paused: tokio::sync::watch::Receiver<bool>,
    /// Plugin versions to switch to.
    pub(crate) swaps: tokio::sync::watch::Receiver<SwapRequest>,
    /// The swap generation this task's chain already reflects.
    pub(crate) applied_swap: u64,
}

/// Why a connector's loop ended.
pub(crate) enum Exit {
    Shutdown,
    Failed(FaultInfo),
}

impl From<FaultInfo> for Exit {
    fn from(fault: FaultInfo) -> Self {
        Exit::Failed(fault)
    }
}

impl From<ChainError> for Exit {
    /// A chain stopped while retrying is a shutdown, not a failure.
    fn from(e: ChainError) -> Self {
        match e {
            ChainError::Stopping => Exit::Shutdown,
            other => Exit::Failed(FaultInfo::new(other.class(), other.to_string())),
        }
    }
}

/// How long shutdown waits for outstanding deliveries.
pub(crate) const FLUSH_TIMEOUT: Duration = Duration::from_secs(30);

/// Sets the state a run ends in: `FAILED` with the fault, or `STOPPED` after a shutdown of
/// a running or paused connector.
pub(crate) fn finish(status: &LiveStatus, name: &str, exit: Exit) {
    match exit {
        Exit::Failed(fault) => {
            tracing::error!(connector = %name, class = %fault.class, error = %fault.message, "connector failed");
            status.set(ConnectorState::Failed, Some(fault));
        }
        Exit::Shutdown if matches!(status.state(), ConnectorState::Running | ConnectorState::Paused) => {
            status.set(ConnectorState::Stopped, None);
            tracing::info!(connector = %name, "connector stopped");
        }
        Exit::Shutdown => {}
    }
}

/// After the loop dropped its sender: waits for the producer to deliver what it holds and for
/// the committer to await every in-flight delivery and save the progress they complete.
pub(crate) async fn drain(producer: &Producer, committer: tokio::task::JoinHandle<()>, name: &str) {
    if let Err(e) = producer.flush_off_thread(FLUSH_TIMEOUT).await {
        tracing::warn!(connector = %name, error = %e, "producer flush at shutdown incomplete");
    }
    if let Err(e) = committer.await {
        tracing::error!(connector = %name, error = %e, "committer task ended abnormally");
    }
}

/// Holds a connector paused until resumed; an exit if it is stopped meanwhile.
pub(crate) async fn wait_while_paused(paused: &mut tokio::sync::watch::Receiver<bool>, cancel: &CancellationToken, status: &LiveStatus) -> Option<Exit> {
    status.set(ConnectorState::Paused, None);
    while *paused.borrow() {
        tokio::select! {
            _ = cancel.cancelled() => return Some(Exit::Shutdown),
            changed = paused.changed() => if changed.is_err() { return Some(Exit::Shutdown) },
        }
    }
    status.set(ConnectorState::Running, None);
    None
}

impl ConnectorTask {
    pub(crate) async fn run(mut self) {
        let name = self.config.name.to_string();
        if let Err(e) = self.chain.prepare().await {
            return finish(&self.status, &name, Exit::Failed(FaultInfo { class: e.class().into(), message: e.to_string() }));
        }
        self.status.set(ConnectorState::Running, None);
        tracing::info!(connector = %name, plugins = ?self.chain.plugin_labels(), "connector running");

        let (tx, rx) = mpsc::channel(IN_FLIGHT_BATCHES);
        let delivery_failed = CancellationToken::new();
        let checkpoint = GroupOffsets { consumer: self.consumer.clone(), connector: name.clone() };
        let committer = tokio::spawn(committer::run(rx, checkpoint, self.status.clone(), name.clone(), delivery_failed.clone()));

        let exit = self.consume(&tx, &delivery_failed).await;
        drop(tx);
        drain(&self.producer, committer, &name).await;
        finish(&self.status, &name, exit);
    }

    async fn consume(&mut self, tx: &mpsc::Sender<PendingBatch<Offsets>>, delivery_failed: &CancellationToken) -> Exit {
        let limits = batch_limits(&self.config);
        let max_records = limits.records;
        loop {
            self.apply_swap().await;
            if *self.paused.borrow() {
                if let Some(exit) = self.wait_while_paused().await {
                    return exit;
                }
            }
            let mut builder = BatchBuilder::with_capacity(max_records, 64 * 1024);
            let mut offsets = Offsets::default();
            let mut unreadable = Vec::new();
            let (paused, swaps) = (&mut self.paused, &mut self.swaps);
            // A pause or a swap interrupts only an idle wait; a batch already started is
            // completed (on the plugin versions it started with).
            let pause_requested = async {
                let closed = tokio::select! {
                    r = paused.changed() => r.is_err(),
                    r = swaps.changed() => r.is_err(),
                };
                if closed {
                    std::future::pending::<()>().await;
                }
            };
            // Stopping may drop a batch being read: nothing after it is committed in this run,
            // so it is read again on the next start.
            let read = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return Exit::Shutdown,
                _ = delivery_failed.cancelled() => return Exit::Shutdown,
                n = self.consumer.fill(limits, |r| read_record(&r, &mut builder, &mut offsets, &mut unreadable), pause_requested) => n,
            };
            if read == 0 {
                continue;
            }
            LiveStatus::add(&self.status.records_in, read as u64);
            let batch = builder.finish();
            match self.process(&batch, unreadable).await {
                Ok(deliveries) => {
                    if tx.send(PendingBatch { deliveries, progress: offsets }).await.is_err() {
                        // The committer stopped: a delivery failed and it already said why.
                        return Exit::Shutdown;
                    }
                }
                Err(exit) => return exit,
            }
        }
    }

    /// One batch as read: unreadable records set aside, the rest through the chain, outputs
    /// and dead letters handed to the producer.
    async fn process(&mut self, read: &InputBatch, unreadable: Vec<(u32, String)>) -> Result<Vec<turnpike_kafka::Delivery>, Exit> {
        let (readable, mut deliveries) = self.policy.set_aside_unreadable(&self.producer, read, unreadable).await?;
        let batch = readable.as_ref().unwrap_or(read);
        let output = self.chain.run(batch, false).await?;
        if let Some(fault) = self.policy.judge(&output.failed, batch, ReadFrom::Kafka) {
            return Err(fault.into());
        }
        deliveries.extend(produce(&self.producer, self.config.output(), &output).await?);
        deliveries.extend(self.policy.dead_letter(&self.producer, batch, &output.failed, ReadFrom::Kafka).await?);
        Ok(deliveries)
    }

    /// Holds the connector paused: fetching stops, instances and clients stay. Returns an exit
    /// if the connector is stopped meanwhile. (A pause longer than the consumer's
    /// `max.poll.interval.ms` also hands its partitions back to the group until resumed.)
    async fn wait_while_paused(&mut self) -> Option<Exit> {
        if let Err(e) = self.consumer.pause_all() {
            tracing::warn!(connector = %self.config.name, error = %e, "could not pause fetching");
        }
        self.status.set(ConnectorState::Paused, None);
        while *self.paused.borrow() {
            tokio::select! {
                _ = self.cancel.cancelled() => return Some(Exit::Shutdown),
                changed = self.paused.changed() => if changed.is_err() { return Some(Exit::Shutdown) },
                changed = self.swaps.changed() => if changed.is_err() { return Some(Exit::Shutdown) },
            }
            self.apply_swap().await;
        }
        if let Err(e) = self.consumer.resume_all() {
            tracing::warn!(connector = %self.config.name, error = %e, "could not resume fetching");
        }
        self.status.set(ConnectorState::Running, None);
        None
    }

    /// Switches plugin versions if a new swap generation was published; between batches.
    async fn apply_swap(&mut self) {
        let request = self.swaps.borrow().clone();
        if request.generation == self.applied_swap {
            return;
        }
        self.applied_swap = request.generation;
        let name = self.config.name.to_string();
        let from = self.chain.plugin_labels();
        let to: Vec<String> = request.stages.iter().map(|(info, _)| info.label()).collect();
        match self.chain.swap(request.stages.clone()).await {
            Ok(()) => {
                self.status.set_plugins(to.clone());
                self.status.set_swap_error(None);
                self.status.events().emit(&name, EventKind::PluginSwapped { from, to: to.clone() });
                request.answer(Ok(to));
            }
            Err(e) => {
                let reason = format!("{e}; still running {}", from.join(", "));
                self.status.set_swap_error(Some(reason.clone()));
                self.status.events().emit(&name, EventKind::SwapFailed { to, reason: reason.clone() });
                request.answer(Err(reason));
            }
        }
    }
}

/// When a batch read from Kafka closes, from the connector's `batch` settings.
pub(crate) fn batch_limits(config: &ConnectorConfig) -> BatchLimits {
    let b = &config.batch;
    BatchLimits { records: b.max_records.get() as usize, bytes: b.max_bytes.get() as usize, wait: Duration::from_millis(b.max_wait_ms.get()) }
}

/// Adds a consumed record to the batch being built and notes its offset. A record whose
/// headers cannot be handed to a plugin as they are is added (with its keys made readable,
/// for the dead-letter copy) and noted in `unreadable` with the reason.
pub(crate) fn read_record(r: &ConsumedRecord<'_>, builder: &mut BatchBuilder, offsets: &mut Offsets, unreadable: &mut Vec<(u32, String)>) {
    offsets.done(r.topic(), r.partition(), r.offset());
    let headers = r.headers();
    if let Some(why) = headers.problem {
        unreadable.push((builder.len() as u32, why));
    }
    let record = RecordRef { key: r.key(), value: r.value(), timestamp: r.timestamp(), topic: r.topic(), partition: r.partition(), offset: r.offset() };
    builder.push(record, headers.list.iter().map(|(k, v)| (k.as_ref(), *v)));
}

/// Hands every output to the producer. Takes no `&ConnectorTask`: the task holds wasmtime
/// stores, which are not `Sync`, and this future runs across awaits.
pub(crate) async fn produce(producer: &Producer, output_topic: &str, output: &ChainOutput<'_>) -> Result<Vec<turnpike_kafka::Delivery>, FaultInfo> {
    let mut deliveries = Vec::with_capacity(output.sends.len());
    for (index, route) in &output.sends {
        let out = output.batch.get(*index);
        let record = OutgoingRecord {
            topic: route.as_deref().unwrap_or(output_topic),
            key: out.key,
            value: out.value,
            timestamp: out.timestamp,
        };
        let delivery = producer
            .send(record, out.headers)
            .await
            .map_err(|e| FaultInfo { class: FaultClass::Kafka.into(), message: e.to_string() })?;
        deliveries.push(delivery);
    }
    Ok(deliveries)
}
