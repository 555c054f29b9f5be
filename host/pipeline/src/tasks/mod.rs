//! The task of one connector run: transform ([`transform`]), source ([`source`]) or sink
//! ([`sink`]). What they share is here: the [`TaskContext`] every task runs with, how a run
//! ends, how a paused task waits, and how outputs reach the producer; the Kafka read loop of
//! the transform and sink tasks is [`read_loop`], and every retry goes through [`retry`].

pub(crate) mod idle;
pub(crate) mod read_loop;
pub(crate) mod sink;
pub(crate) mod source;
pub(crate) mod transform;

use std::future::Future;
use std::sync::Arc;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use turnpike_config::Connector;
use turnpike_kafka::{Delivery, OutgoingRecord, Producer};
use turnpike_runtime::{CreateError, FaultClass};

use crate::chain::{Chain, ChainError, ChainOutput};
use crate::connector_state::ConnectorState;
use crate::failures::ErrorPolicy;
use crate::status::{FaultInfo, LiveStatus};

/// What every connector task runs with.
pub(crate) struct TaskContext {
    /// The connector, as validated.
    pub(crate) connector: Connector,
    pub(crate) chain: Chain,
    /// Outputs and dead letters (a sink connector's dead letters only).
    pub(crate) producer: Producer,
    pub(crate) policy: ErrorPolicy,
    pub(crate) status: Arc<LiveStatus>,
    /// This task's stop: the run's, or its own alone (fewer tasks by lag).
    pub(crate) cancel: CancellationToken,
    /// The whole run's stop.
    pub(crate) run: CancellationToken,
    /// `true` while the connector is paused.
    pub(crate) paused: watch::Receiver<bool>,
    /// Which of the connector's tasks this is (from 0).
    pub(crate) task: usize,
}

impl TaskContext {
    /// Ends the task as [`finish`] does, except that a task stopped alone while the run goes
    /// on (fewer tasks by lag) leaves the connector's state as it is.
    pub(crate) fn finish(&self, name: &str, exit: Exit) {
        let alone = matches!(exit, Exit::Shutdown) && self.cancel.is_cancelled() && !self.run.is_cancelled();
        if !alone {
            finish(&self.status, name, exit);
        }
    }
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

impl Exit {
    /// Why a plugin instance was not created: a failure (its fault counted against the plugin
    /// when it is one), or a shutdown when the host declined because the connector is
    /// stopping.
    pub(crate) fn of_create(error: &CreateError, plugin: &str, status: &LiveStatus) -> Self {
        match error {
            CreateError::Stopped => Exit::Shutdown,
            other => Exit::Failed(FaultInfo::of_create(other, plugin, status)),
        }
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

/// What a task does while it reads nothing (paused, or idle without a consumer), besides
/// waiting. By default, nothing.
pub(crate) trait PauseHooks: Send {
    /// Resolves when something besides the pause switch needs the waiting task (a transform:
    /// a plugin swap); `false` when that channel closed, which ends the run.
    fn wake(&mut self) -> impl Future<Output = bool> + Send {
        std::future::pending()
    }

    /// Runs after each wake-up while waiting.
    fn after_wake(&mut self, _cx: &mut TaskContext) -> impl Future<Output = ()> + Send {
        std::future::ready(())
    }
}

/// A task with nothing to do while paused (a source).
impl PauseHooks for () {}

impl TaskContext {
    /// Marks the task started: `RUNNING`, or `PAUSED` for a connector created or restarted
    /// paused, so its state never shows `RUNNING` before the first pause check catches up.
    pub(crate) fn started(&self) {
        let state = if *self.paused.borrow() { ConnectorState::Paused } else { ConnectorState::Running };
        self.status.set(state, None);
    }

    /// Holds the connector paused until resumed; an exit if it is stopped meanwhile.
    pub(crate) async fn wait_while_paused<H: PauseHooks>(&mut self, hooks: &mut H) -> Option<Exit> {
        self.status.set(ConnectorState::Paused, None);
        while *self.paused.borrow() {
            tokio::select! {
                _ = self.cancel.cancelled() => return Some(Exit::Shutdown),
                changed = self.paused.changed() => if changed.is_err() { return Some(Exit::Shutdown) },
                woke = hooks.wake() => if !woke { return Some(Exit::Shutdown) },
            }
            hooks.after_wake(self).await;
        }
        self.status.set(ConnectorState::Running, None);
        None
    }
}

/// Sets the state a run ends in: `FAILED` with the fault, or `STOPPED` after a shutdown of
/// a running or paused connector.
fn finish(status: &LiveStatus, name: &str, exit: Exit) {
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

/// After the loop dropped its sender: waits for the committer to await every in-flight
/// delivery and save the progress they complete. (No producer flush: the producer is the
/// host's, shared with every connector, and a flush would wait for all of theirs too; with
/// `linger.ms` at 5 ms what a task sent is on its way already.)
pub(crate) async fn drain(committer: tokio::task::JoinHandle<()>, name: &str) {
    if let Err(e) = committer.await {
        tracing::error!(connector = %name, error = %e, "committer task ended abnormally");
    }
}

/// Hands every output to the producer. Takes no `&TaskContext`: it holds wasmtime stores,
/// which are not `Sync`, and this future runs across awaits.
pub(crate) async fn produce(producer: &Producer, output_topic: &str, output: &ChainOutput<'_>) -> Result<Vec<Delivery>, FaultInfo> {
    let mut deliveries = Vec::with_capacity(output.sends.len());
    for (index, route) in &output.sends {
        let out = output.batch.get(*index);
        let record = OutgoingRecord {
            topic: route.as_deref().unwrap_or(output_topic),
            key: out.key,
            value: out.value,
            timestamp: out.timestamp,
        };
        let delivery = producer.send(record, out.headers).await.map_err(|e| FaultInfo::new(FaultClass::Kafka, e.to_string()))?;
        deliveries.push(delivery);
    }
    Ok(deliveries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_runtime::Fault;

    #[test]
    fn an_instance_the_host_declined_because_its_connector_stops_is_a_shutdown_not_a_fault() {
        let status = LiveStatus::new("c", Arc::new(crate::events::Events::default()));
        assert!(matches!(Exit::of_create(&CreateError::Stopped, "p@1", &status), Exit::Shutdown));
        let trapped = CreateError::Fault(Fault::Trap { message: "boom".into() });
        match Exit::of_create(&trapped, "p@1", &status) {
            Exit::Failed(fault) => assert_eq!(fault.class, "trap"),
            Exit::Shutdown => panic!("a trap in create is a failure"),
        }
        let faults = status.snapshot(&turnpike_config::HostConfig::parse_connector_yaml("name: c\ntopics: [a]\noutput_topic: b\ntransforms: [{plugin: identity}]\n", "test").unwrap(), turnpike_config::ConnectorKind::Transform).faults;
        assert_eq!(faults, [("trap".to_owned(), 1)].into(), "only the trap is counted against the plugin");
    }
}
