//! The task of one transform connector: read a batch, run the chain, apply the error policy,
//! produce, and hand the deliveries to the committer. Plugin versions are switched between
//! two batches, while paused, and while idle without a consumer.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;
use turnpike_config::TopicName;
use turnpike_kafka::{Consumer, Delivery, Offsets};
use turnpike_runtime::InputBatch;

use super::idle::{self, ConsumerOpener};
use super::read_loop::{read_loop, ReadHooks};
use super::{drain, produce, Exit, PauseHooks, TaskContext};
use crate::committer::{self, GroupOffsets, PendingBatch, IN_FLIGHT_BATCHES};
use crate::events::EventKind;
use crate::failures::ReadFrom;
use crate::swap::SwapRequest;

pub(crate) struct TransformTask {
    pub(crate) cx: TaskContext,
    pub(crate) consumer: Arc<Consumer>,
    /// A new consumer after the task was idle and gave its own up.
    pub(crate) opener: ConsumerOpener,
    /// Where outputs go unless a plugin routes them elsewhere.
    pub(crate) output_topic: TopicName,
    /// Plugin versions to switch to.
    pub(crate) swaps: watch::Receiver<SwapRequest>,
    /// The swap generation this task's chain already reflects.
    pub(crate) applied_swap: u64,
}

/// What the transform adds to the read loop.
struct Transforming {
    output_topic: TopicName,
    swaps: watch::Receiver<SwapRequest>,
    applied_swap: u64,
    /// To the committer of the current consumer; dropped when its loop ends.
    batches: Option<mpsc::Sender<PendingBatch<Offsets>>>,
}

impl TransformTask {
    pub(crate) async fn run(self) {
        let Self { mut cx, mut consumer, opener, output_topic, swaps, applied_swap } = self;
        let name = cx.connector.name().to_string();
        if let Err(e) = cx.chain.prepare().await {
            return cx.finish(&name, Exit::from(e));
        }
        cx.started();
        tracing::info!(connector = %name, plugins = ?cx.chain.plugin_labels(), "connector running");
        let idle_after = idle::idle_after(cx.connector.config());
        let mut hooks = Transforming { output_topic, swaps, applied_swap, batches: None };
        loop {
            // A committer per consumer: its offsets are that consumer's to commit.
            let (tx, rx) = mpsc::channel(IN_FLIGHT_BATCHES);
            let delivery_failed = CancellationToken::new();
            let checkpoint = GroupOffsets { consumer: consumer.clone(), connector: name.clone() };
            let committer = tokio::spawn(committer::run(rx, checkpoint, cx.status.clone(), (name.clone(), cx.task), delivery_failed.clone()));
            hooks.batches = Some(tx);
            let ended = read_loop(&mut cx, &consumer, &mut hooks, Some(&delivery_failed), idle_after).await;
            hooks.batches = None;
            drain(committer, &name).await;
            let release = match ended {
                Ok(idle) => idle,
                Err(exit) => return cx.finish(&name, exit),
            };
            consumer = match idle::give_up(consumer, &release, &opener).await {
                Err(kept) => kept,
                Ok(watch) => match idle::wait_for_record(&mut cx, watch, &opener, &mut hooks).await {
                    Ok(consumer) => consumer,
                    Err(exit) => return cx.finish(&name, exit),
                },
            };
        }
    }
}

impl PauseHooks for Transforming {
    async fn wake(&mut self) -> bool {
        self.swaps.changed().await.is_ok()
    }

    async fn after_wake(&mut self, cx: &mut TaskContext) {
        self.apply_swap(cx).await;
    }
}

impl ReadHooks for Transforming {
    async fn before_read(&mut self, cx: &mut TaskContext) -> Result<(), Exit> {
        self.apply_swap(cx).await;
        Ok(())
    }

    async fn before_pause(&mut self, _cx: &mut TaskContext) -> Result<(), Exit> {
        Ok(())
    }

    async fn before_release(&mut self, _cx: &mut TaskContext) -> Result<(), Exit> {
        Ok(())
    }

    async fn interrupt(&mut self) {
        if self.swaps.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    async fn batch(&mut self, cx: &mut TaskContext, batch: InputBatch, offsets: Offsets, unreadable: Vec<(u32, String)>) -> Result<(), Exit> {
        let deliveries = process(cx, &self.output_topic, &batch, unreadable).await?;
        let Some(batches) = &self.batches else { return Err(Exit::Shutdown) };
        if batches.send(PendingBatch { deliveries, progress: offsets }).await.is_err() {
            // The committer stopped: a delivery failed and it already said why.
            return Err(Exit::Shutdown);
        }
        Ok(())
    }
}

impl Transforming {
    /// Switches plugin versions if a new swap generation was published; between batches.
    async fn apply_swap(&mut self, cx: &mut TaskContext) {
        let request = self.swaps.borrow().clone();
        if request.generation == self.applied_swap {
            return;
        }
        self.applied_swap = request.generation;
        let name = cx.connector.name().to_string();
        let from = cx.chain.plugin_labels();
        let to: Vec<String> = request.stages.steps.iter().map(|s| s.info.label()).collect();
        match cx.chain.swap(request.stages.clone()).await {
            Ok(()) => {
                cx.status.set_plugins(to.clone());
                cx.status.set_swap_error(None);
                cx.status.events().emit(&name, EventKind::PluginSwapped { from, to: to.clone() });
                request.answer(Ok(to));
            }
            Err(e) => {
                let reason = format!("{e}; still running {}", from.join(", "));
                cx.status.set_swap_error(Some(reason.clone()));
                cx.status.events().emit(&name, EventKind::SwapFailed { to, reason: reason.clone() });
                request.answer(Err(reason));
            }
        }
    }
}

/// One batch as read: unreadable records set aside, the rest through the chain, outputs
/// and dead letters handed to the producer.
async fn process(cx: &mut TaskContext, output_topic: &TopicName, read: &InputBatch, unreadable: Vec<(u32, String)>) -> Result<Vec<Delivery>, Exit> {
    let (readable, mut deliveries) = cx.policy.set_aside_unreadable(&cx.producer, read, unreadable).await?;
    let batch = readable.as_ref().unwrap_or(read);
    let output = cx.chain.run(batch, false).await?;
    if let Some(fault) = cx.policy.judge(&output.failed, batch, ReadFrom::Kafka) {
        return Err(fault.into());
    }
    deliveries.extend(produce(&cx.producer, output_topic.as_str(), &output).await?);
    deliveries.extend(cx.policy.dead_letter(&cx.producer, batch, &output.failed, ReadFrom::Kafka).await?);
    Ok(deliveries)
}
