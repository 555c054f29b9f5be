//! The host: plugins, connectors, and a supervisor per connector that restarts what fails.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use turnpike_config::{ConnectorConfig, ConnectorKind, PluginName, PluginRef, Problem, SandboxConfig};
use turnpike_kafka::{ensure_positions_topic, group_offsets, reset_group_offsets, KafkaError, PartitionOffsets, ResetTo, DEFAULT_POSITIONS_TOPIC};
use turnpike_runtime::{LoadError, Runtime};
use turnpike_state::{Lifecycle, StateError, StateStore};

use crate::dry_run::{DryRunResult, SampleRecord};
use crate::events::{EventKind, Events};
use crate::registry::{BrokenPlugin, PluginInfo, PluginRegistry, RegistryError};
use crate::status::{ConnectorState, ConnectorStatus, LiveStatus};
use crate::supervisor::{supervise, Shared};
use crate::swap::SwapRequest;

/// Why the host refused an operation.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The connector configuration breaks rules; every problem is listed.
    #[error("invalid connector configuration: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<Problem>),
    /// No connector has this name.
    #[error("no connector named {0:?}")]
    NotFound(String),
    /// The operation does not fit the connector's state.
    #[error("{0}")]
    State(String),
    /// A plugin reference does not resolve.
    #[error(transparent)]
    Plugin(#[from] RegistryError),
    /// A component could not be loaded.
    #[error("plugin {name}: {source}")]
    Load {
        /// The plugin.
        name: String,
        /// Why.
        source: LoadError,
    },
    /// Kafka clients could not be created.
    #[error(transparent)]
    Kafka(#[from] KafkaError),
    /// A plugin version is already registered with other bytes.
    #[error("{0} already exists with different content; upload under a new version")]
    VersionExists(String),
    /// A plugin version is still used.
    #[error("{plugin} is used by connectors {connectors:?}; point them at another version first")]
    InUse {
        /// `name@version`.
        plugin: String,
        /// The connectors using it.
        connectors: Vec<String>,
    },
    /// A dry run could not run.
    #[error(transparent)]
    DryRun(#[from] crate::dry_run::DryRunError),
    /// The connector refused to switch plugin versions and keeps running the old ones.
    #[error("the new plugin versions could not start: {0}")]
    SwapFailed(String),
    /// The change was made but could not be saved to the state directory.
    #[error("the change is live but was not saved, so a restart would lose it: {0}")]
    Persist(#[from] StateError),
}


struct Running {
    config: ConnectorConfig,
    status: Arc<LiveStatus>,
    cancel: CancellationToken,
    /// `None` while stopped: nothing runs and nothing is held.
    supervisor: Option<JoinHandle<()>>,
    paused: tokio::sync::watch::Sender<bool>,
    swaps: tokio::sync::watch::Sender<SwapRequest>,
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
    /// Serialises lifecycle changes: two at once could each start a supervisor for one
    /// connector.
    lifecycle: tokio::sync::Mutex<()>,
    /// Where API changes are saved; `None` keeps everything in memory (the demo).
    store: Option<StateStore>,
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
        Self { runtime, sandbox, shared, connectors: Mutex::new(BTreeMap::new()), lifecycle: tokio::sync::Mutex::new(()), store: None }
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
    /// its saved lifecycle state. A plugin that no longer loads fails only its connectors.
    pub async fn restore(&self) -> Result<(), HostError> {
        let Some(store) = &self.store else { return Ok(()) };
        let saved = store.load()?;
        for (name, version, bytes, saved_at) in saved.plugins {
            let _ = self.load_plugin_at(name, version, bytes, saved_at).await;
        }
        let _one_at_a_time = self.lifecycle.lock().await;
        for (config, lifecycle) in saved.connectors {
            let name = config.name.to_string();
            let status = Arc::new(LiveStatus::new(&name, self.shared.events.clone()));
            let running = match lifecycle {
                Lifecycle::Stopped => {
                    status.set(ConnectorState::Stopped, None);
                    let (paused, _) = tokio::sync::watch::channel(false);
                    let (swaps, _) = tokio::sync::watch::channel(SwapRequest::default());
                    Running { config, status, cancel: CancellationToken::new(), supervisor: None, paused, swaps }
                }
                Lifecycle::Paused => {
                    let running = self.supervise(config, status);
                    running.paused.send_replace(true);
                    running
                }
                Lifecycle::Running => self.supervise(config, status),
            };
            tracing::info!(connector = %name, ?lifecycle, "connector restored");
            self.connectors.lock().unwrap_or_else(|p| p.into_inner()).insert(name, running);
        }
        Ok(())
    }

    /// Saves a connector's configuration and lifecycle, if persistence is on.
    fn save(&self, name: &str) -> Result<(), HostError> {
        let Some(store) = &self.store else { return Ok(()) };
        let saved = self.with(name, |r| {
            let lifecycle = match (&r.supervisor, *r.paused.borrow()) {
                (None, _) => Lifecycle::Stopped,
                (Some(_), true) => Lifecycle::Paused,
                (Some(_), false) => Lifecycle::Running,
            };
            (r.config.clone(), lifecycle)
        })?;
        Ok(store.save_connector(&saved.0, saved.1)?)
    }

    /// The plugin registry.
    pub fn registry(&self) -> &PluginRegistry {
        &self.shared.registry
    }

    /// The event hub (state changes, faults, restarts).
    pub fn events(&self) -> &Events {
        &self.shared.events
    }

    /// Compiles a component (on a blocking thread) and registers it as `name@version`. A
    /// component that fails to load is registered as broken, so connectors using it fail
    /// with the reason, and the error is returned.
    pub async fn load_plugin(&self, name: PluginName, version: String, bytes: Vec<u8>) -> Result<PluginInfo, HostError> {
        self.load_plugin_at(name, version, bytes, std::time::SystemTime::now()).await
    }

    async fn load_plugin_at(&self, name: PluginName, version: String, bytes: Vec<u8>, uploaded_at: std::time::SystemTime) -> Result<PluginInfo, HostError> {
        let runtime = self.runtime.clone();
        let label = format!("{name}@{version}");
        let cache = self.store.as_ref().map(StateStore::compiled_dir);
        let started = Instant::now();
        let loaded = tokio::task::spawn_blocking(move || runtime.load_cached(&bytes, cache.as_deref()))
            .await
            .unwrap_or_else(|e| Err(LoadError::Engine(format!("compile task: {e}"))));
        let load_ms = started.elapsed().as_millis() as u64;
        let plugin = match loaded {
            Ok(plugin) => plugin,
            Err(source) => {
                tracing::error!(plugin = %label, class = source.class(), error = %source, "plugin could not be loaded");
                let broken = BrokenPlugin { version, class: source.class(), reason: source.to_string() };
                self.registry().register_broken(name, broken);
                return Err(HostError::Load { name: label, source });
            }
        };
        let info = PluginInfo { name, version, plugin, uploaded_at };
        tracing::info!(plugin = %info.label(), digest = info.plugin.digest(), size = info.plugin.size(), kind = info.plugin.kind().as_str(), load_ms, "plugin registered");
        self.registry().register(info.clone());
        Ok(info)
    }

    /// The connector's own rules and the operator's maxima: every problem, each with its key.
    fn rule_problems(&self, config: &ConnectorConfig) -> Vec<Problem> {
        let mut problems = config.validate("connector");
        problems.extend(self.sandbox.check(config, "connector"));
        problems
    }

    fn supervise(&self, config: ConnectorConfig, status: Arc<LiveStatus>) -> Running {
        let cancel = CancellationToken::new();
        let (paused, paused_rx) = tokio::sync::watch::channel(false);
        let (swaps, swaps_rx) = tokio::sync::watch::channel(SwapRequest::default());
        let channels = (paused_rx, swaps_rx);
        let supervisor = tokio::spawn(supervise(self.shared.clone(), config.clone(), status.clone(), cancel.clone(), channels));
        Running { config, status, cancel, supervisor: Some(supervisor), paused, swaps }
    }

    /// Stops the connector's current run gracefully (in-flight work committed) and waits.
    async fn halt(&self, name: &str) -> Result<(), HostError> {
        let (cancel, supervisor) = {
            let mut connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
            let r = connectors.get_mut(name).ok_or_else(|| HostError::NotFound(name.to_owned()))?;
            (r.cancel.clone(), r.supervisor.take())
        };
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

    /// Restarts a connector now, with a fresh failure budget: its current run is stopped
    /// gracefully (in-flight work committed) and a new one started. With `only_failed`, a
    /// connector that is not failed is left alone (`Ok(false)`).
    pub async fn restart(&self, name: &str, only_failed: bool) -> Result<bool, HostError> {
        let _one_at_a_time = self.lifecycle.lock().await;
        let state = self.with(name, |r| r.status.state())?;
        if only_failed && !matches!(state, ConnectorState::Failed | ConnectorState::Restarting) {
            return Ok(false);
        }
        self.halt(name).await?;
        self.shared.events.emit(name, EventKind::ManualRestart);
        self.with(name, |r| *r = self.supervise(r.config.clone(), r.status.clone()))?;
        self.save(name)?;
        Ok(true)
    }

    /// Creates or replaces a connector. The same configuration again changes and restarts
    /// nothing. A changed one is restarted with the new configuration (in-flight work
    /// committed first), unless the connector is stopped, which it stays.
    pub async fn put_connector(&self, config: ConnectorConfig) -> Result<Applied, HostError> {
        let _one_at_a_time = self.lifecycle.lock().await;
        let problems = self.rule_problems(&config);
        if !problems.is_empty() {
            return Err(HostError::Invalid(problems));
        }
        let name = config.name.to_string();
        let existing = self.with(&name, |r| (r.config == config, r.supervisor.is_none())).ok();
        match existing {
            None => {
                let status = Arc::new(LiveStatus::new(&name, self.shared.events.clone()));
                let running = self.supervise(config, status);
                self.connectors.lock().unwrap_or_else(|p| p.into_inner()).insert(name.clone(), running);
                self.save(&name)?;
                Ok(Applied::Created)
            }
            Some((true, _)) => Ok(Applied::Unchanged),
            Some((false, false)) if self.swappable(&name, &config) => {
                let stages = self.resolve(&config)?;
                self.swap(&name, stages, true).await?;
                self.with(&name, |r| r.config = config)?;
                self.save(&name)?;
                Ok(Applied::Swapped)
            }
            Some((false, stopped)) => {
                self.halt(&name).await?;
                self.with(&name, |r| {
                    if stopped {
                        r.config = config;
                    } else {
                        *r = self.supervise(config, r.status.clone());
                    }
                })?;
                self.save(&name)?;
                Ok(Applied::Updated)
            }
        }
    }

    /// Whether `config` differs from the running one only in its plugin chain, and the
    /// connector's task is alive to switch.
    fn swappable(&self, name: &str, config: &ConnectorConfig) -> bool {
        self.with(name, |r| {
            let mut same = r.config.clone();
            same.transforms = config.transforms.clone();
            same == *config && config.kind() == ConnectorKind::Transform && matches!(r.status.state(), ConnectorState::Running | ConnectorState::Paused)
        })
        .unwrap_or(false)
    }

    fn resolve(&self, config: &ConnectorConfig) -> Result<Vec<(PluginInfo, serde_json::Value)>, HostError> {
        Ok(config.transforms.iter().map(|t| Ok((self.registry().resolve(&t.plugin)?, t.config.clone()))).collect::<Result<_, RegistryError>>()?)
    }

    /// Publishes new stages for a running connector. With `wait`, waits until its task has
    /// switched (or refused, keeping the old versions).
    async fn swap(&self, name: &str, stages: Vec<(PluginInfo, serde_json::Value)>, wait: bool) -> Result<(), HostError> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let reply = Arc::new(Mutex::new(wait.then_some(tx)));
        self.with(name, |r| {
            let generation = r.swaps.borrow().generation + 1;
            r.swaps.send_replace(SwapRequest { generation, stages, reply });
        })?;
        if !wait {
            return Ok(());
        }
        match tokio::time::timeout(SWAP_WAIT, rx).await {
            Ok(Ok(Ok(_))) => Ok(()),
            Ok(Ok(Err(reason))) => Err(HostError::SwapFailed(reason)),
            _ => Err(HostError::SwapFailed(format!("the connector did not take the new versions within {SWAP_WAIT:?}"))),
        }
    }

    /// After a new version of `name` is registered: running connectors that use
    /// `name@latest` switch to it at their next batch boundary.
    async fn follow_latest(&self, name: &PluginName) {
        let users: Vec<(String, ConnectorConfig)> = {
            let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
            connectors
                .iter()
                .filter(|(_, r)| r.supervisor.is_some() && r.config.kind() == ConnectorKind::Transform)
                .filter(|(_, r)| r.config.transforms.iter().any(|t| t.plugin.name == *name && t.plugin.version.is_none()))
                .map(|(n, r)| (n.clone(), r.config.clone()))
                .collect()
        };
        for (connector, config) in users {
            match self.resolve(&config) {
                Ok(stages) => {
                    let labels: Vec<String> = stages.iter().map(|(i, _)| i.label()).collect();
                    if self.with(&connector, |r| r.status.plugins() != labels).unwrap_or(false) {
                        // Without waiting: the outcome shows in the status and the events.
                        let _ = self.swap(&connector, stages, false).await;
                    }
                }
                Err(e) => tracing::warn!(%connector, error = %e, "cannot follow the latest plugin version"),
            }
        }
    }

    /// Stops and removes a connector; its committed offsets stay in Kafka.
    pub async fn delete_connector(&self, name: &str) -> Result<(), HostError> {
        let _one_at_a_time = self.lifecycle.lock().await;
        self.halt(name).await?;
        self.connectors.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
        if let Some(store) = &self.store {
            store.remove_connector(name)?;
        }
        Ok(())
    }

    /// Pauses a running connector: it stops consuming and keeps its instances and clients.
    pub async fn pause(&self, name: &str) -> Result<(), HostError> {
        let _one_at_a_time = self.lifecycle.lock().await;
        self.with(name, |r| {
            if r.supervisor.is_none() {
                return Err(HostError::State(format!("connector {name:?} is stopped; resume it instead of pausing")));
            }
            r.paused.send_replace(true);
            Ok(())
        })??;
        self.save(name)
    }

    /// Resumes a paused connector, or starts a stopped one.
    pub async fn resume(&self, name: &str) -> Result<(), HostError> {
        let _one_at_a_time = self.lifecycle.lock().await;
        self.with(name, |r| {
            if r.supervisor.is_none() {
                *r = self.supervise(r.config.clone(), r.status.clone());
            } else {
                r.paused.send_replace(false);
            }
        })?;
        self.save(name)
    }

    /// Stops a connector and releases everything it holds (instances, consumer, producer);
    /// its configuration and committed offsets stay. `resume` starts it again.
    pub async fn stop(&self, name: &str) -> Result<(), HostError> {
        let _one_at_a_time = self.lifecycle.lock().await;
        self.halt(name).await?;
        self.with(name, |r| {
            if r.status.state() != ConnectorState::Stopped {
                r.status.set(ConnectorState::Stopped, None);
            }
        })?;
        self.save(name)
    }

    /// The connector's consumer group and where it stands on every input partition.
    pub async fn offsets(&self, name: &str) -> Result<(String, Vec<PartitionOffsets>), HostError> {
        let config = self.with(name, |r| r.config.clone())?;
        let (kafka, group, topics) = (self.shared.kafka.clone(), config.group_id(), topic_names(&config));
        let g = group.clone();
        let read = tokio::task::spawn_blocking(move || group_offsets(&kafka, &g, &topics)).await;
        Ok((group, read.map_err(|e| HostError::State(format!("offsets task: {e}")))??))
    }

    /// Moves a stopped connector's committed offsets; it reads from there when resumed.
    pub async fn reset_offsets(&self, name: &str, to: ResetTo) -> Result<Vec<(String, i32, i64)>, HostError> {
        let _one_at_a_time = self.lifecycle.lock().await;
        let (config, stopped) = self.with(name, |r| (r.config.clone(), r.supervisor.is_none()))?;
        if !stopped {
            return Err(HostError::State(format!(
                "connector {name:?} is not stopped: stop it first (POST /v1/connectors/{name}/stop), so no consumer commits over the reset"
            )));
        }
        let (kafka, group, topics) = (self.shared.kafka.clone(), config.group_id(), topic_names(&config));
        let done = tokio::task::spawn_blocking(move || reset_group_offsets(&kafka, &group, &topics, &to)).await;
        let targets = done.map_err(|e| HostError::State(format!("offsets task: {e}")))??;
        tracing::info!(connector = %name, ?targets, "offsets reset");
        Ok(targets)
    }

    /// A connector's configuration and status.
    pub fn connector(&self, name: &str) -> Option<(ConnectorConfig, ConnectorStatus)> {
        let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        connectors.get(name).map(|r| (r.config.clone(), snapshot(r)))
    }

    /// Checks a connector without creating or changing anything: its rules, the operator's
    /// maxima, that every plugin resolves, and that every plugin accepts its configuration
    /// (each plugin's `create` runs in a fresh instance). Every problem is returned at once;
    /// on success, the plugin versions it would run.
    pub async fn validate_connector(&self, config: &ConnectorConfig) -> Result<Vec<String>, HostError> {
        let mut problems = self.rule_problems(config);
        let (labels, plugin_problems) = crate::validation::check_plugins(self.registry(), config).await;
        problems.extend(plugin_problems);
        if problems.is_empty() {
            Ok(labels)
        } else {
            Err(HostError::Invalid(problems))
        }
    }

    /// Runs a transform plugin on sample records, in a fresh instance, with no broker.
    pub async fn dry_run(&self, plugin: &PluginRef, config: &serde_json::Value, samples: &[SampleRecord]) -> Result<DryRunResult, HostError> {
        let info = self.registry().resolve(plugin)?;
        Ok(crate::dry_run::dry_run(&info, config, samples).await?)
    }

    /// Uploads a component as `name@version`. The same bytes again are accepted without
    /// change (`Ok(false)`); other bytes under an existing version are refused.
    pub async fn upload_plugin(&self, name: PluginName, version: String, bytes: Vec<u8>) -> Result<(PluginInfo, bool), HostError> {
        let reference = PluginRef { name: name.clone(), version: Some(version.clone()) };
        if let Ok(existing) = self.registry().resolve(&reference) {
            return if existing.plugin.digest() == turnpike_runtime::digest(&bytes) {
                Ok((existing, false))
            } else {
                Err(HostError::VersionExists(existing.label()))
            };
        }
        let info = self.load_plugin(name.clone(), version.clone(), bytes.clone()).await?;
        if let Some(store) = &self.store {
            store.save_plugin(&name, &version, &bytes)?;
        }
        self.follow_latest(&name).await;
        Ok((info, true))
    }

    /// Connectors whose current run uses `name@version`, or whose config names that version.
    pub fn plugin_users(&self, name: &PluginName, version: &str) -> Vec<String> {
        let label = format!("{name}@{version}");
        let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        connectors
            .values()
            .filter(|r| {
                r.status.plugins().contains(&label)
                    || r.config.plugin_refs().iter().any(|(_, p)| p.name == *name && p.version.as_deref() == Some(version))
            })
            .map(|r| r.config.name.to_string())
            .collect()
    }

    /// Deletes a plugin version that no connector uses.
    pub fn delete_plugin(&self, name: &PluginName, version: &str) -> Result<(), HostError> {
        let users = self.plugin_users(name, version);
        if !users.is_empty() {
            return Err(HostError::InUse { plugin: format!("{name}@{version}"), connectors: users });
        }
        if self.registry().remove(name, version) {
            if let Some(store) = &self.store {
                store.remove_plugin(name, version)?;
            }
            Ok(())
        } else {
            Err(HostError::Plugin(RegistryError::UnknownVersion { name: name.to_string(), version: version.to_owned(), known: String::new() }))
        }
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

fn topic_names(config: &ConnectorConfig) -> Vec<String> {
    config.topics.iter().map(ToString::to_string).collect()
}

fn snapshot(r: &Running) -> ConnectorStatus {
    r.status.snapshot(&r.config)
}

/// How long a `PUT` waits for a running connector to switch plugin versions: its current
/// batch must finish first.
const SWAP_WAIT: Duration = Duration::from_secs(60);
