//! A transform task idle for `batch.idle_after_ms` gives its consumer up and waits for a
//! record through the host's one [`IdleWatch`], then takes a consumer again. An idle
//! connector's own librdkafka consumer was what was left of its cost at rest: four threads,
//! a fetch every 500 ms and a heartbeat every 2 s. Its plugin instances stay, so waking
//! costs only the consumer's group join.

use std::sync::{Arc, Mutex};

use turnpike_kafka::{BrokerHealth, Consumer, ConsumerOptions, IdleWatch, KafkaError, Release};
use turnpike_runtime::FaultClass;

use super::read_loop::ReadHooks;
use super::{Exit, TaskContext};
use crate::memory_trim::MemoryTrim;
use crate::status::{FaultInfo, LiveStatus};

/// The host's idle watch, created when the first task goes idle.
#[derive(Default)]
pub(crate) struct SharedIdleWatch {
    inner: Mutex<Option<Arc<IdleWatch>>>,
    /// The consumers given up leave their memory free but resident until trimmed.
    trim: MemoryTrim,
}

impl SharedIdleWatch {
    fn get(&self, kafka: &[(String, String)]) -> Result<Arc<IdleWatch>, KafkaError> {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(watch) = inner.as_ref() {
            return Ok(watch.clone());
        }
        Ok(inner.insert(Arc::new(IdleWatch::new(kafka)?)).clone())
    }
}

/// Creates a task's consumer: at the start of a run, and again after it woke.
pub(crate) struct ConsumerOpener {
    pub(crate) kafka: Vec<(String, String)>,
    pub(crate) options: ConsumerOptions,
    pub(crate) health: Arc<BrokerHealth>,
    pub(crate) status: Arc<LiveStatus>,
    pub(crate) task: usize,
    pub(crate) watch: Arc<SharedIdleWatch>,
}

impl ConsumerOpener {
    /// A new consumer, subscribed, which the status lists (for lag).
    pub(crate) fn open(&self) -> Result<Arc<Consumer>, FaultInfo> {
        let consumer = Consumer::with_health(&self.kafka, &self.options, self.health.clone()).map(Arc::new).map_err(|e| FaultInfo::new(FaultClass::Kafka, e.to_string()))?;
        self.status.measures.set_consumer(self.task, consumer.clone());
        Ok(consumer)
    }
}

/// Gives `consumer` up and waits until a record arrives in one of its partitions (or the
/// task is stopped, paused or resumed, or its hooks interrupt, e.g. a plugin swap); then
/// returns a new consumer. If the consumer cannot be given up safely it is returned as it
/// is, and the task reads on.
pub(crate) async fn wait_without_consumer<H: ReadHooks>(cx: &mut TaskContext, consumer: Arc<Consumer>, release: Release, opener: &ConsumerOpener, hooks: &mut H) -> Result<Arc<Consumer>, Exit> {
    let name = cx.connector.name().to_string();
    let watched = {
        let (consumer, release, kafka, shared) = (consumer.clone(), release.clone(), opener.kafka.clone(), opener.watch.clone());
        tokio::task::spawn_blocking(move || {
            consumer.commit_release(&release)?;
            shared.get(&kafka)?.watch(&release.points)
        })
        .await
    };
    let watch = match watched {
        Ok(Ok(watch)) => watch,
        Ok(Err(e)) => {
            tracing::warn!(connector = %name, error = %e, "could not give the idle consumer up; it reads on");
            return Ok(consumer);
        }
        Err(e) => {
            tracing::warn!(connector = %name, error = %e, "could not give the idle consumer up; it reads on");
            return Ok(consumer);
        }
    };
    let partitions: Vec<(String, i32)> = release.points.iter().map(|p| (p.topic.clone(), p.partition)).collect();
    let listed = cx.status.measures.task_idle(cx.task, partitions);
    // The last references: closing leaves the group (a blocking call, made where blocking is
    // allowed by the consumer's own drop).
    drop((listed, consumer));
    opener.watch.trim.clients_closed();
    tracing::info!(connector = %name, task = cx.task + 1, partitions = release.points.len(), "idle: consumer given up until a record arrives");
    let woke = tokio::select! {
        _ = cx.cancel.cancelled() => Err(Exit::Shutdown),
        () = watch.woken() => Ok("a record arrived"),
        changed = cx.paused.changed() => changed.map(|()| "paused or resumed").map_err(|_| Exit::Shutdown),
        () = hooks.interrupt() => Ok("interrupted"),
    };
    // Stops reading its partitions: a blocking call.
    tokio::task::spawn_blocking(move || drop(watch));
    let why = woke?;
    tracing::info!(connector = %name, task = cx.task + 1, why, "idle task woke; taking a consumer again");
    opener.open().map_err(Exit::Failed)
}
