//! The host: plugins, connectors, and a supervisor per connector that restarts what fails.
//!
//! [`Host`] orchestrates; each concern has a module: the connector table and which action
//! fits which state ([`table`]), the one validation every connector passes ([`rules`]),
//! lifecycle changes ([`lifecycle`]) and the runs they are stopping ([`halting`]), Kafka
//! offsets ([`offsets`]), the state directory ([`persist`]), the plugin catalogue
//! ([`plugins`]) and the secrets store ([`secrets`]).
//!
//! Lifecycle operations on one connector are serialised by that connector's own lock, so a
//! slow stop (a batch finishing, a retry ending) never holds up another connector's pause.

mod error;
mod halting;
mod lifecycle;
mod offsets;
mod persist;
mod plugins;
mod routing;
mod rules;
mod secrets;
mod table;
mod team_rules;
mod topics;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedMutexGuard, Semaphore};
use tokio_util::sync::CancellationToken;
use turnpike_config::{Connector, ConnectorConfig, PluginName, SandboxConfig, TeamName, TeamPolicy};
use turnpike_kafka::{ensure_positions_topic, GroupProtocol, DEFAULT_POSITIONS_TOPIC};
use turnpike_runtime::{Interrupt, Runtime};
use turnpike_state::{Lifecycle, SecretStore, StateStore};

pub use self::error::HostError;
pub use self::secrets::SecretEntry;
pub use self::topics::SAMPLE_VALUE_CAP;
use self::table::{Definition, Entry, Run};
use crate::events::Events;
use crate::registry::PluginRegistry;
use crate::status::{ConnectorStatus, LiveStatus};
use crate::stopping::STOP_GRACE;
use crate::supervisor::{supervise, Controls, Shared};
use crate::swap::SwapRequest;

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
    connectors: Mutex<BTreeMap<String, Entry>>,
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
    /// Topic listings and samples at once (each holds a Kafka client and a blocking thread,
    /// shared with connectors' commits, for up to seconds).
    topic_reads: Arc<Semaphore>,
    /// Where API changes are saved; `None` keeps everything in memory (the demo).
    store: Option<StateStore>,
    /// Where compiled plugins are kept across starts (`<state_dir>/compiled` with a store);
    /// `None` compiles every plugin at every start.
    compiled_cache: Option<std::path::PathBuf>,
    /// Set by [`Host::shutdown`]: nothing starts any more.
    closing: std::sync::atomic::AtomicBool,
    /// Runs that lifecycle calls are stopping, for a shutdown to wait for too.
    halting: halting::Halting,
    /// The teams of a shared host and the topics each may touch.
    teams: BTreeMap<TeamName, TeamPolicy>,
    /// The cluster's config log, once the host joined one: changes go there (`routing`).
    cluster: std::sync::OnceLock<Arc<dyn crate::cluster::ClusterLog>>,
    /// The consumer group protocol chosen at start, and why; `None` when nobody chose (the
    /// demo and tests: librdkafka's default, classic).
    group_protocol: Option<GroupProtocol>,
}

impl Host {
    /// A host with no plugins and no connectors. `kafka` are librdkafka settings shared by
    /// every connector's clients; `sandbox` bounds what connectors may ask for.
    pub fn new(runtime: Runtime, kafka: Vec<(String, String)>, sandbox: SandboxConfig) -> Self {
        let shared = Arc::new(Shared {
            registry: PluginRegistry::default(),
            probe: Arc::new(crate::broker_watch::BrokerProbe::new(kafka.clone())),
            kafka,
            events: Arc::new(Events::default()),
            positions_topic: DEFAULT_POSITIONS_TOPIC.to_owned(),
            secrets: SecretStore::in_memory(),
            producer: Default::default(),
            slots: std::sync::OnceLock::new(),
            idle_watch: Default::default(),
            close_deadline: Default::default(),
        });
        Self {
            runtime,
            compiles: Arc::new(Semaphore::new(sandbox.max_concurrent_compiles.get() as usize)),
            checks: Arc::new(Semaphore::new(sandbox.max_concurrent_checks.get() as usize)),
            topic_reads: Arc::new(Semaphore::new(topics::TOPIC_READS)),
            sandbox,
            shared,
            connectors: Mutex::new(BTreeMap::new()),
            locks: Mutex::new(HashMap::new()),
            plugin_locks: Mutex::new(HashMap::new()),
            store: None,
            compiled_cache: None,
            closing: std::sync::atomic::AtomicBool::new(false),
            halting: halting::Halting::default(),
            teams: BTreeMap::new(),
            cluster: std::sync::OnceLock::new(),
            group_protocol: None,
        }
    }

    /// Records the consumer group protocol chosen for this host's Kafka settings (see
    /// `turnpike_kafka::choose_group_protocol`), for `GET /v1/cluster`.
    pub fn with_group_protocol(mut self, chosen: GroupProtocol) -> Self {
        self.group_protocol = Some(chosen);
        self
    }

    /// The consumer group protocol this host's connectors use, and why.
    pub fn group_protocol(&self) -> Option<&GroupProtocol> {
        self.group_protocol.as_ref()
    }

    /// The teams of a shared host (`teams:` in the host config): a connector that names a
    /// team must be one of them and touch only its topics. Call before any connector starts.
    pub fn with_teams(mut self, teams: BTreeMap<TeamName, TeamPolicy>) -> Self {
        self.teams = teams;
        self
    }

    /// The teams of this host.
    pub fn teams(&self) -> &BTreeMap<TeamName, TeamPolicy> {
        &self.teams
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

    /// Saves plugin uploads and connector changes in `store` from now on, and keeps secrets
    /// there (`<state_dir>/secrets`; without a store they live in memory). Call before any
    /// connector starts.
    pub fn persist_to(mut self, store: StateStore) -> Self {
        match Arc::get_mut(&mut self.shared) {
            Some(shared) => shared.secrets = store.secrets(),
            None => tracing::error!("the state directory was given after connectors started; secrets stay in memory"),
        }
        self.compiled_cache.get_or_insert_with(|| store.compiled_dir());
        self.store = Some(store);
        self
    }

    /// Keeps compiled plugins in `dir`, so the same component is compiled once across starts
    /// (compiling the built-ins takes seconds of CPU). Only this program may write there: its
    /// files are machine code the host runs.
    pub fn compiled_cache(mut self, dir: std::path::PathBuf) -> Self {
        self.compiled_cache = Some(dir);
        self
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

    /// The plugin registry.
    pub fn registry(&self) -> &PluginRegistry {
        &self.shared.registry
    }

    /// The event hub (state changes, faults, restarts).
    pub fn events(&self) -> &Events {
        &self.shared.events
    }

    /// Starts a supervisor for `connector`, paused from the start if `paused`; none once a
    /// shutdown has begun, whose sweep of the table may be over (a run started now would be
    /// left running). Called under the table's lock (but at restore, which comes before any
    /// shutdown can), which the sweep takes after it sets `closing`: a run is either started
    /// before the sweep, which then stops it, or not at all.
    fn start_run(&self, connector: &Connector, status: &Arc<LiveStatus>, paused: bool) -> Option<Run> {
        if self.closing.load(std::sync::atomic::Ordering::SeqCst) {
            tracing::info!(connector = %connector.name(), "not started: the host is shutting down");
            return None;
        }
        let cancel = CancellationToken::new();
        let (paused, paused_rx) = tokio::sync::watch::channel(paused);
        let (swaps, swaps_rx) = tokio::sync::watch::channel(SwapRequest::default());
        let (connector, connector_rx) = tokio::sync::watch::channel(connector.clone());
        let interrupt = Interrupt::default();
        let controls = Controls { paused: paused_rx, swaps: swaps_rx, interrupt: interrupt.clone() };
        let run = supervise(self.shared.clone(), connector_rx, status.clone(), cancel.clone(), controls);
        let supervisor = tokio::spawn(crate::supervisor::guarded(status.clone(), run));
        Some(Run { cancel, interrupt, supervisor, paused, swaps, connector })
    }

    /// A new entry for `connector`, running (or paused, as `lifecycle` says).
    fn start(&self, connector: Connector, status: Arc<LiveStatus>, lifecycle: Lifecycle) -> Entry {
        let run = self.start_run(&connector, &status, lifecycle == Lifecycle::Paused);
        Entry { run, ..Entry::idle(Definition::Valid(connector), status, lifecycle) }
    }

    /// Stops the connector's current run gracefully (in-flight work committed, a plugin call
    /// ended after [`STOP_GRACE`]) and waits. The stop goes on if the caller is dropped, and a
    /// shutdown meanwhile waits for it too (see [`halting`]).
    async fn halt(&self, name: &str) -> Result<(), HostError> {
        let halt = self.with(name, |r| r.run.take().map(|run| self.halting.begin(name, run, STOP_GRACE)))?;
        if let Some(halt) = halt {
            tracing::info!(connector = %name, "stopping the connector's run");
            halt.ended(name).await;
        }
        Ok(())
    }

    /// Runs `f` on a connector's entry.
    fn with<T>(&self, name: &str, f: impl FnOnce(&mut Entry) -> T) -> Result<T, HostError> {
        let mut connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        connectors.get_mut(name).map(f).ok_or_else(|| HostError::NotFound(name.to_owned()))
    }

    /// The team that owns connector `name`: `None` if there is no such connector,
    /// `Some(None)` for the operator's.
    pub fn connector_team(&self, name: &str) -> Option<Option<TeamName>> {
        self.connectors.lock().unwrap_or_else(|p| p.into_inner()).get(name).map(|e| e.definition.config().team.clone())
    }

    /// A connector's configuration and status.
    pub fn connector(&self, name: &str) -> Option<(ConnectorConfig, ConnectorStatus)> {
        let found = {
            let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
            connectors.get(name).map(|r| (r.definition.config().clone(), r.snapshot()))
        };
        found.map(|(config, status)| (config, self.with_reports(status)))
    }

    /// Status of every connector, by name.
    pub fn statuses(&self) -> Vec<ConnectorStatus> {
        let statuses: Vec<ConnectorStatus> = {
            let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
            connectors.values().map(Entry::snapshot).collect()
        };
        statuses.into_iter().map(|s| self.with_reports(s)).collect()
    }

    /// Status of one connector.
    pub fn status(&self, name: &str) -> Option<ConnectorStatus> {
        let status = {
            let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
            connectors.get(name).map(Entry::snapshot)
        };
        status.map(|s| self.with_reports(s))
    }

    /// `status` with every host's report on it, in a cluster.
    fn with_reports(&self, mut status: ConnectorStatus) -> ConnectorStatus {
        status.hosts = self.cluster_reports(&status.name);
        status
    }

    /// This host's own statuses, without the cluster's reports: what it reports to them.
    pub fn local_statuses(&self) -> Vec<ConnectorStatus> {
        let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        connectors.values().map(Entry::snapshot).collect()
    }

    /// Stops every connector gracefully: in-flight batches are finished, their outputs
    /// acknowledged and their offsets committed; a plugin call still running after
    /// [`STOP_GRACE`] or half of `within` (the shorter) is ended. Runs that a lifecycle call
    /// is stopping already are waited for too, under the same grace. Waits at most `within`
    /// for all of them together, and returns the names of those still stopping then: their
    /// runs are left to the process's exit, and what they had not committed is read again at
    /// the next start (a delivery to an unreachable broker can take minutes).
    pub async fn shutdown(&self, within: std::time::Duration) -> Vec<String> {
        self.closing.store(true, std::sync::atomic::Ordering::SeqCst);
        let grace = crate::stopping::shutdown_grace(within);
        // A consumer whose close stalls is left behind in time for the shutdown to end.
        self.shared.close_deadline.set(std::time::Instant::now() + within.saturating_sub(crate::stopping::CLOSE_MARGIN.min(within / 4)));
        let (runs, halting): (Vec<(String, Run)>, _) = {
            // One lock for both: a run a lifecycle call takes out is registered as halting
            // under it (`halt`), so every run is in one list or the other.
            let mut connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
            let runs = connectors
                .iter_mut()
                .filter_map(|(name, r)| {
                    let run = r.run.take()?;
                    run.cancel.cancel();
                    Some((name.clone(), run))
                })
                .collect();
            (runs, self.halting.snapshot(grace))
        };
        let mut stops: Vec<(String, halting::Ending)> = runs
            .into_iter()
            .map(|(name, run)| {
                let stopping = name.clone();
                let ended: halting::Ending = Box::pin(async move { run.stop(&stopping, grace).await.map_err(crate::supervisor::panic_message) });
                (name, ended)
            })
            .collect();
        stops.extend(halting);
        let left = halting::wait_for(stops, within).await;
        self.shared.events.close();
        left
    }
}
