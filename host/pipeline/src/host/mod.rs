//! The host: plugins, connectors, and a supervisor per connector that restarts what fails.
//!
//! Lifecycle operations on one connector are serialised by that connector's own lock, so a
//! slow stop (a batch finishing, a retry ending) never holds up another connector's pause.

mod error;
mod lifecycle;
mod plugins;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedMutexGuard, Semaphore};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use turnpike_config::{ConnectorConfig, PluginName, Problem, SandboxConfig};
use turnpike_kafka::{ensure_positions_topic, DEFAULT_POSITIONS_TOPIC};
use turnpike_runtime::{FaultClass, Runtime};
use turnpike_state::{Lifecycle, StateStore};

pub use self::error::HostError;
use crate::events::Events;
use crate::registry::PluginRegistry;
use crate::status::{ConnectorState, ConnectorStatus, FaultInfo, LiveStatus};
use crate::supervisor::{supervise, Shared};
use crate::swap::SwapRequest;

struct Running {
    config: ConnectorConfig,
    status: Arc<LiveStatus>,
    cancel: CancellationToken,
    /// `None` while nothing runs: stopped, or refused at restore.
    supervisor: Option<JoinHandle<()>>,
    /// What the operator asked for; what is saved.
    lifecycle: Lifecycle,
    /// The last save of this entry failed: the next call that touches it saves again, even
    /// one that changes nothing, so a retry after a full disk is not lost at restart.
    unsaved: bool,
    paused: tokio::sync::watch::Sender<bool>,
    swaps: tokio::sync::watch::Sender<SwapRequest>,
    /// The configuration the supervisor builds each run from (changed by a hot swap).
    config_tx: tokio::sync::watch::Sender<ConnectorConfig>,
}

/// What `put_connector` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// A new connector was started.
    Created,
    /// The configuration changed; the connector was restarted with it.
    Updated,
    /// Only the plugin chain changed; the running connector switched to it between two
    /// batches, without a restart.
    Swapped,
    /// The same configuration again: nothing was restarted.
    Unchanged,
}

/// Runs connectors against one Kafka cluster.
pub struct Host {
    runtime: Runtime,
    sandbox: SandboxConfig,
    shared: Arc<Shared>,
    connectors: Mutex<BTreeMap<String, Running>>,
    /// One lock per connector name, held by every lifecycle change of that connector: two at
    /// once could each start a supervisor for it.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// One lock per plugin name, held from an upload's check through its compile to its save,
    /// so two uploads of one version cannot both succeed.
    plugin_locks: Mutex<HashMap<PluginName, Arc<tokio::sync::Mutex<()>>>>,
    /// Compiles of uploads at once.
    compiles: Arc<Semaphore>,
    /// Dry runs and validations at once.
    checks: Arc<Semaphore>,
    /// Where API changes are saved; `None` keeps everything in memory (the demo).
    store: Option<StateStore>,
    /// Set by [`Host::shutdown`]: nothing starts any more.
    closing: std::sync::atomic::AtomicBool,
}

impl Host {
    /// A host with no plugins and no connectors. `kafka` are librdkafka settings shared by
    /// every connector's clients; `sandbox` bounds what connectors may ask for.
    pub fn new(runtime: Runtime, kafka: Vec<(String, String)>, sandbox: SandboxConfig) -> Self {
        let shared = Arc::new(Shared {
            registry: PluginRegistry::default(),
            kafka,
            events: Arc::new(Events::default()),
            positions_topic: DEFAULT_POSITIONS_TOPIC.to_owned(),
        });
        Self {
            runtime,
            compiles: Arc::new(Semaphore::new(sandbox.max_concurrent_compiles.get() as usize)),
            checks: Arc::new(Semaphore::new(sandbox.max_concurrent_checks.get() as usize)),
            sandbox,
            shared,
            connectors: Mutex::new(BTreeMap::new()),
            locks: Mutex::new(HashMap::new()),
            plugin_locks: Mutex::new(HashMap::new()),
            store: None,
            closing: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Keeps source positions in `topic` instead of the default
    /// [`DEFAULT_POSITIONS_TOPIC`]. Call before any connector starts.
    pub fn positions_topic(mut self, topic: impl Into<String>) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.positions_topic = topic.into();
        }
        self
    }

    /// Creates the compacted source positions topic if it does not exist yet (a refusal only
    /// warns: the topic may be managed by someone else).
    pub async fn prepare_positions_topic(&self) {
        ensure_positions_topic(&self.shared.kafka, &self.shared.positions_topic).await;
    }

    /// Saves plugin uploads and connector changes in `store` from now on.
    pub fn persist_to(mut self, store: StateStore) -> Self {
        self.store = Some(store);
        self
    }

    /// Brings back the plugins and connectors saved in the state directory, each connector in
    /// its saved lifecycle state. A plugin that no longer loads fails only its connectors. A
    /// connector that breaks today's rules (the operator tightened a maximum, say) is not
    /// started: it shows `FAILED` with every problem until it is changed.
    pub async fn restore(&self) -> Result<(), HostError> {
        let Some(store) = &self.store else { return Ok(()) };
        let saved = store.load()?;
        for (name, version, bytes, saved_at) in saved.plugins {
            let _ = self.load_plugin_at(name, version, bytes, saved_at, true).await;
        }
        for (config, lifecycle) in saved.connectors {
            let name = config.name.to_string();
            let _one_at_a_time = self.lock(&name).await;
            let status = Arc::new(LiveStatus::new(&name, self.shared.events.clone()));
            let problems = self.rule_problems(&config);
            let running = if !problems.is_empty() {
                let detail = problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
                tracing::error!(connector = %name, problems = %detail, "saved connector breaks the host's rules; not started");
                status.set(ConnectorState::Failed, Some(FaultInfo::new(FaultClass::Config, format!("not started: {detail}"))));
                idle(config, status, lifecycle)
            } else {
                match lifecycle {
                    Lifecycle::Stopped => {
                        status.set(ConnectorState::Stopped, None);
                        idle(config, status, lifecycle)
                    }
                    Lifecycle::Paused => {
                        let mut running = self.supervise(config, status);
                        running.paused.send_replace(true);
                        running.lifecycle = Lifecycle::Paused;
                        running
                    }
                    Lifecycle::Running => self.supervise(config, status),
                }
            };
            tracing::info!(connector = %name, ?lifecycle, "connector restored");
            self.connectors.lock().unwrap_or_else(|p| p.into_inner()).insert(name, running);
        }
        Ok(())
    }

    /// The lock of one connector's lifecycle. Locks are never removed: a request waiting on
    /// one must not race another that would take a fresh lock for the same name.
    async fn lock(&self, name: &str) -> OwnedMutexGuard<()> {
        let lock = self.locks.lock().unwrap_or_else(|p| p.into_inner()).entry(name.to_owned()).or_default().clone();
        lock.lock_owned().await
    }

    /// The lock of an existing connector; `NotFound` (and no lock made) for an unknown name.
    async fn lock_existing(&self, name: &str) -> Result<OwnedMutexGuard<()>, HostError> {
        self.with(name, |_| ())?;
        let guard = self.lock(name).await;
        self.with(name, |_| ())?;
        Ok(guard)
    }

    /// Refuses to start anything once shutdown has begun (its list of connectors is taken).
    fn refuse_while_closing(&self) -> Result<(), HostError> {
        if self.closing.load(std::sync::atomic::Ordering::SeqCst) {
            Err(HostError::State("the host is shutting down".into()))
        } else {
            Ok(())
        }
    }

    /// Saves a connector's configuration and lifecycle, if persistence is on. A failure marks
    /// the entry unsaved, so the next call on it saves again.
    fn save(&self, name: &str) -> Result<(), HostError> {
        let Some(store) = &self.store else { return Ok(()) };
        let (config, lifecycle) = self.with(name, |r| (r.config.clone(), r.lifecycle))?;
        let saved = store.save_connector(&config, lifecycle);
        let _ = self.with(name, |r| r.unsaved = saved.is_err());
        Ok(saved?)
    }

    /// The plugin registry.
    pub fn registry(&self) -> &PluginRegistry {
        &self.shared.registry
    }

    /// The event hub (state changes, faults, restarts).
    pub fn events(&self) -> &Events {
        &self.shared.events
    }

    /// The connector's own rules, the operator's maxima, and the host's: internal topics are
    /// never a connector's output, and no two connectors share a consumer group or a name
    /// that differs only in case. Every problem, each with its key.
    fn rule_problems(&self, config: &ConnectorConfig) -> Vec<Problem> {
        let mut problems = turnpike_config::Connector::validate(config.clone(), &self.sandbox, "connector").err().unwrap_or_default();
        let positions = self.shared.positions_topic.as_str();
        let internal = |topic: &str| topic == positions;
        if config.output_topic.as_ref().is_some_and(|t| internal(t.as_str())) {
            problems.push(Problem::new("connector.output_topic", format!("{positions:?} is the host's internal source-positions topic")));
        }
        for (i, t) in config.routes.iter().enumerate().filter(|(_, t)| internal(t.as_str())) {
            problems.push(Problem::new(format!("connector.routes[{i}]"), format!("{:?} is the host's internal source-positions topic", t.as_str())));
        }
        if config.errors.dead_letter_topic.as_ref().is_some_and(|t| internal(t.as_str())) {
            problems.push(Problem::new("connector.errors.dead_letter_topic", format!("{positions:?} is the host's internal source-positions topic")));
        }
        problems.extend(host_rules(config, &self.connectors.lock().unwrap_or_else(|p| p.into_inner())));
        problems
    }

    fn supervise(&self, config: ConnectorConfig, status: Arc<LiveStatus>) -> Running {
        let cancel = CancellationToken::new();
        let (paused, paused_rx) = tokio::sync::watch::channel(false);
        let (swaps, swaps_rx) = tokio::sync::watch::channel(SwapRequest::default());
        let (config_tx, config_rx) = tokio::sync::watch::channel(config.clone());
        let channels = (paused_rx, swaps_rx);
        let run = supervise(self.shared.clone(), config_rx, status.clone(), cancel.clone(), channels);
        let supervisor = tokio::spawn(crate::supervisor::guarded(status.clone(), run));
        Running { config, status, cancel, supervisor: Some(supervisor), lifecycle: Lifecycle::Running, unsaved: false, paused, swaps, config_tx }
    }

    /// Stops the connector's current run gracefully (in-flight work committed) and waits.
    async fn halt(&self, name: &str) -> Result<(), HostError> {
        let (cancel, supervisor) = self.with(name, |r| (r.cancel.clone(), r.supervisor.take()))?;
        cancel.cancel();
        if let Some(s) = supervisor {
            let _ = s.await;
        }
        Ok(())
    }

    /// Runs `f` on a connector's entry.
    fn with<T>(&self, name: &str, f: impl FnOnce(&mut Running) -> T) -> Result<T, HostError> {
        let mut connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        connectors.get_mut(name).map(f).ok_or_else(|| HostError::NotFound(name.to_owned()))
    }

    /// A connector's configuration and status.
    pub fn connector(&self, name: &str) -> Option<(ConnectorConfig, ConnectorStatus)> {
        let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        connectors.get(name).map(|r| (r.config.clone(), snapshot(r)))
    }

    /// Status of every connector, by name.
    pub fn statuses(&self) -> Vec<ConnectorStatus> {
        let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        connectors.values().map(snapshot).collect()
    }

    /// Status of one connector.
    pub fn status(&self, name: &str) -> Option<ConnectorStatus> {
        let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        connectors.get(name).map(snapshot)
    }

    /// Stops every connector gracefully: in-flight batches are finished, their outputs
    /// acknowledged and their offsets committed.
    pub async fn shutdown(&self) {
        self.closing.store(true, std::sync::atomic::Ordering::SeqCst);
        let tasks: Vec<(String, JoinHandle<()>)> = {
            let mut connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
            connectors
                .iter_mut()
                .filter_map(|(name, r)| {
                    r.cancel.cancel();
                    r.supervisor.take().map(|t| (name.clone(), t))
                })
                .collect()
        };
        for (name, task) in tasks {
            if let Err(e) = task.await {
                tracing::error!(connector = %name, error = %e, "connector supervisor ended abnormally");
            }
        }
        self.shared.events.close();
    }
}

/// An entry for a connector that does not run (stopped, or refused at restore).
fn idle(config: ConnectorConfig, status: Arc<LiveStatus>, lifecycle: Lifecycle) -> Running {
    let (paused, _) = tokio::sync::watch::channel(false);
    let (swaps, _) = tokio::sync::watch::channel(SwapRequest::default());
    let (config_tx, _) = tokio::sync::watch::channel(config.clone());
    Running { config, status, cancel: CancellationToken::new(), supervisor: None, lifecycle, unsaved: false, paused, swaps, config_tx }
}

/// The rules across connectors: no two share a consumer group, nor a name that differs only
/// in case (one file on a case-insensitive file system).
fn host_rules(config: &ConnectorConfig, connectors: &BTreeMap<String, Running>) -> Vec<Problem> {
    let mut problems = Vec::new();
    let name = config.name.as_str();
    let group = config.group_id();
    for (other, r) in connectors.iter().filter(|(other, _)| other.as_str() != name) {
        if r.config.group_id() == group {
            problems.push(Problem::new("connector.group_id", format!("consumer group {group:?} is already used by connector {other:?}; each connector needs its own")));
        }
    }
    if let Some(other) = turnpike_state::case_collision(name, connectors.keys().map(String::as_str)) {
        problems.push(Problem::new("connector.name", format!("{name:?} differs from the existing connector {other:?} only in case; choose another name")));
    }
    problems
}

fn snapshot(r: &Running) -> ConnectorStatus {
    r.status.snapshot(&r.config)
}
