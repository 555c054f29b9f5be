//! A transform or sink task idle for `batch.idle_after_ms` gives its consumer up and waits
//! for a record through the host's one [`IdleWatch`], then takes a consumer again. An idle
//! connector's own librdkafka consumer was what was left of its cost at rest: four threads,
//! a fetch every 500 ms and a heartbeat every 2 s. Its plugin instances stay, so waking
//! costs only the consumer's group join.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use turnpike_config::ConnectorConfig;
use turnpike_kafka::{BrokerHealth, Consumer, ConsumerOptions, IdleWatch, KafkaError, Release, Watch};
use turnpike_runtime::FaultClass;

use super::{Exit, PauseHooks, TaskContext};
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
    pub(crate) connector: String,
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

/// How long a task of `config` reads nothing before it gives its consumer up; `None`: never.
pub(crate) fn idle_after(config: &ConnectorConfig) -> Option<Duration> {
    match config.batch.idle_after_ms.get() {
        0 => None,
        ms => Some(Duration::from_millis(ms)),
    }
}

/// Gives `consumer` up: commits the ends `release` watches unread partitions from, has the
/// host's idle watch read its partitions, and closes it (leaving its group). The caller must
/// hold no other reference to it. If it cannot be given up safely it is handed back, and the
/// task reads on.
pub(crate) async fn give_up(consumer: Arc<Consumer>, release: &Release, opener: &ConsumerOpener) -> Result<Watch, Arc<Consumer>> {
    let watched = {
        let (consumer, release, kafka, shared) = (consumer.clone(), release.clone(), opener.kafka.clone(), opener.watch.clone());
        tokio::task::spawn_blocking(move || -> Result<Watch, String> {
            consumer.commit_release(&release).map_err(|e| e.to_string())?;
            shared.get(&kafka).and_then(|watch| watch.watch(&release.points)).map_err(|e| e.to_string())
        })
        .await
        .unwrap_or_else(|e| Err(e.to_string()))
    };
    let watch = match watched {
        Ok(watch) => watch,
        Err(e) => return Err(kept(consumer, &opener.connector, &e)),
    };
    let partitions: Vec<(String, i32)> = release.points.iter().map(|p| (p.topic.clone(), p.partition)).collect();
    let listed = opener.status.measures.task_idle(opener.task, partitions);
    // The last references: closing leaves the group (a blocking call, made where blocking is
    // allowed by the consumer's own drop).
    drop((listed, consumer));
    opener.watch.trim.clients_closed();
    tracing::info!(connector = %opener.connector, task = opener.task + 1, partitions = release.points.len(), "idle: consumer given up until a record arrives");
    Ok(watch)
}

fn kept(consumer: Arc<Consumer>, connector: &str, why: &dyn std::fmt::Display) -> Arc<Consumer> {
    tracing::info!(%connector, %why, "idle consumer not given up; it reads on");
    consumer
}

/// Drops a watch where blocking is allowed (it stops reading its partitions).
pub(crate) fn drop_watch(watch: Watch) {
    tokio::task::spawn_blocking(move || drop(watch));
}

/// Waits until `watch` sees a record in one of the task's partitions, then returns a new
/// consumer. A pause, and what its hooks wake it for (a plugin swap), are handled without
/// one: a paused idle task stays out of its group, and its watch goes on watching, so a record
/// that came during the pause wakes it once it is resumed.
pub(crate) async fn wait_for_record<H: PauseHooks>(cx: &mut TaskContext, watch: Watch, opener: &ConsumerOpener, hooks: &mut H) -> Result<Arc<Consumer>, Exit> {
    let woke = loop {
        // Paused before the wait began (the read loop's last look may have taken that change).
        if *cx.paused.borrow_and_update() {
            if let Some(exit) = cx.wait_while_paused(hooks).await {
                break Err(exit);
            }
        }
        tokio::select! {
            _ = cx.cancel.cancelled() => break Err(Exit::Shutdown),
            () = watch.woken() => break Ok(()),
            // Paused: handled at the top of the loop.
            changed = cx.paused.changed() => {
                if changed.is_err() {
                    break Err(Exit::Shutdown);
                }
            }
            woke = hooks.wake() => {
                if !woke {
                    break Err(Exit::Shutdown);
                }
                hooks.after_wake(cx).await;
            }
        }
    };
    drop_watch(watch);
    woke?;
    tracing::info!(connector = %opener.connector, task = opener.task + 1, "idle task woke: a record arrived; taking a consumer again");
    opener.open().map_err(Exit::Failed)
}
