//! Creating, changing, pausing, resuming, stopping, restarting and deleting connectors, and
//! switching a running one to other plugin versions.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use turnpike_config::{Connector, ConnectorConfig, Flow, PluginName};
use turnpike_state::Lifecycle;

use super::rules::host_rules;
use super::table::{transition, Action, Definition, Entry};
use super::{Applied, Host, HostError};

use crate::connector_state::ConnectorState;
use crate::events::EventKind;
use crate::resolve::resolve_connector;
use crate::status::LiveStatus;
use crate::selection::selector;
use crate::swap::{StageSpec, Stages};

/// How long a `PUT` waits for a running connector to switch plugin versions: its current
/// batch must finish first.
const SWAP_WAIT: Duration = Duration::from_secs(60);

impl Host {
    /// Restarts a connector now, with a fresh failure budget: its current run is stopped
    /// gracefully (in-flight work committed) and a new one started. With `only_failed`, a
    /// connector that is not failed is left alone (`Ok(false)`). A connector saved before the
    /// rules tightened must be changed before it runs again.
    pub(super) async fn restart_here(&self, name: &str, only_failed: bool) -> Result<bool, HostError> {
        self.refuse_while_closing()?;
        let _one_at_a_time = self.lock_existing(name).await?;
        let (state, config) = self.with(name, |r| (r.status.state(), r.definition.config().clone()))?;
        if only_failed && !matches!(state, ConnectorState::Failed | ConnectorState::Restarting) {
            return Ok(false);
        }
        let connector = self.validated(&config)?;
        self.halt(name).await?;
        self.shared.events.emit(name, EventKind::ManualRestart);
        self.with(name, |r| {
            r.lifecycle = transition(name, r.lifecycle, r.run.is_some(), Action::Restart)?;
            r.run = self.start_run(&connector, &r.status, r.lifecycle == Lifecycle::Paused);
            r.definition = Definition::Valid(connector);
            Ok::<_, HostError>(())
        })??;
        self.save(name)?;
        Ok(true)
    }

    /// Creates or replaces a connector, validated first (every problem at once). The same
    /// configuration again changes and restarts nothing (but saves it again if the last save
    /// failed). A changed one is restarted with the new configuration (in-flight work
    /// committed first), unless the connector is stopped, which it stays.
    pub(super) async fn put_here(&self, config: ConnectorConfig) -> Result<Applied, HostError> {
        self.put_here_as(config, Lifecycle::Running).await
    }

    /// [`Host::put_here`], creating a new connector in `initial` (a cluster's host starting
    /// one that is paused or stopped must not run it first).
    pub(super) async fn put_here_as(&self, config: ConnectorConfig, initial: Lifecycle) -> Result<Applied, HostError> {
        self.refuse_while_closing()?;
        let name = config.name.to_string();
        let _one_at_a_time = self.lock(&name).await;
        let connector = self.validated(&config)?;
        let existing = self.with(&name, |r| (r.definition.config() == connector.config(), r.lifecycle == Lifecycle::Stopped, r.unsaved)).ok();
        match existing {
            None => {
                let status = Arc::new(LiveStatus::new(&name, self.shared.events.clone()));
                {
                    // Checked again where the entry is added, so two creates at once cannot
                    // both pass the host-wide rules (groups, case, capacity).
                    let mut connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
                    let problems = host_rules(connector.config(), &connectors);
                    if !problems.is_empty() {
                        return Err(HostError::Invalid(problems));
                    }
                    self.check_capacity(connector.config(), &connectors)?;
                    let entry = match initial {
                        Lifecycle::Stopped => {
                            status.set(ConnectorState::Stopped, None);
                            Entry::idle(Definition::Valid(connector), status, Lifecycle::Stopped)
                        }
                        running_or_paused => self.start(connector, status, running_or_paused),
                    };
                    connectors.insert(name.clone(), entry);
                }
                self.save(&name)?;
                Ok(Applied::Created)
            }
            Some((true, _, unsaved)) => {
                if unsaved {
                    self.save(&name)?;
                }
                Ok(Applied::Unchanged)
            }
            Some((false, false, _)) if self.swappable(&name, &connector) => {
                self.check_capacity(connector.config(), &self.connectors.lock().unwrap_or_else(|p| p.into_inner()))?;
                let stages = self.resolve(&connector)?;
                self.swap(&name, stages, true).await?;
                self.with(&name, |r| {
                    // A later automatic restart builds what runs now, not the old chain.
                    if let Some(run) = &r.run {
                        run.connector.send_replace(connector.clone());
                    }
                    r.definition = Definition::Valid(connector);
                })?;
                self.save(&name)?;
                Ok(Applied::Swapped)
            }
            Some((false, stopped, _)) => {
                self.check_capacity(connector.config(), &self.connectors.lock().unwrap_or_else(|p| p.into_inner()))?;
                self.halt(&name).await?;
                self.with(&name, |r| {
                    if !stopped {
                        r.run = self.start_run(&connector, &r.status, r.lifecycle == Lifecycle::Paused);
                    }
                    r.definition = Definition::Valid(connector);
                })?;
                self.save(&name)?;
                Ok(Applied::Updated)
            }
        }
    }

    /// Whether `connector` differs from the running one only in its plugin chain, and the
    /// connector's task is alive to switch.
    fn swappable(&self, name: &str, connector: &Connector) -> bool {
        self.with(name, |r| {
            let Some(current) = r.definition.connector() else { return false };
            let mut same = current.config().clone();
            same.transforms = connector.transforms().to_vec();
            let running = matches!(r.status.state(), ConnectorState::Running | ConnectorState::Paused);
            same == *connector.config() && matches!(connector.flow(), Flow::Transform { .. }) && running && r.run.is_some()
        })
        .unwrap_or(false)
    }

    /// The transform chain `connector` names: each plugin version, and its config with its
    /// references resolved (a reference that does not resolve is refused, naming it), both
    /// as its team may use them.
    fn resolve(&self, connector: &Connector) -> Result<Stages, HostError> {
        let resolved = resolve_connector(connector.config(), "connector", &self.shared.secrets).map_err(HostError::Invalid)?;
        let team = connector.config().team.as_ref();
        let mut steps = Vec::new();
        for (t, config) in connector.transforms().iter().zip(resolved.transforms) {
            let info = self.registry().resolve_for(&t.plugin, team)?;
            steps.push(StageSpec { info, config, selector: selector(t).map_err(HostError::Invalid)? });
        }
        Ok(Stages { steps, scrub: resolved.scrub })
    }

    /// Publishes new stages for a running connector. With `wait`, waits until its task has
    /// switched (or refused, keeping the old versions). A switch that does not happen in
    /// time is withdrawn: the connector is asked to run its configured versions again, so
    /// what runs and what the configuration says never disagree.
    async fn swap(&self, name: &str, stages: Stages, wait: bool) -> Result<(), HostError> {
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        let reply = Arc::new(Mutex::new(wait.then_some(tx)));
        let published = self.with(name, |r| match &r.run {
            Some(run) => {
                run.publish(stages, reply);
                true
            }
            None => false,
        })?;
        if !published {
            return Err(HostError::State(format!("connector {name:?} is not running; its plugins cannot be switched")));
        }
        if !wait {
            return Ok(());
        }
        match tokio::time::timeout(SWAP_WAIT, &mut rx).await {
            Ok(Ok(Ok(_))) => Ok(()),
            Ok(Ok(Err(reason))) => Err(HostError::SwapFailed(reason)),
            _ => {
                let configured = self.with(name, |r| r.definition.connector().cloned())?;
                if let Some(Ok(stages)) = configured.map(|c| self.resolve(&c)) {
                    self.with(name, |r| {
                        if let Some(run) = &r.run {
                            run.publish(stages, Arc::default());
                        }
                    })?;
                }
                Err(HostError::SwapFailed(format!("the connector did not take the new versions within {SWAP_WAIT:?}; the request was withdrawn")))
            }
        }
    }

    /// After a new version of `name` is registered: running connectors that use
    /// `name@latest` switch to it at their next batch boundary. Each connector is checked
    /// under its own lock, so a concurrent `PUT` pinning a version is never overwritten.
    pub(super) async fn follow_latest(&self, name: &PluginName) {
        let users: Vec<String> = {
            let connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
            connectors.iter().filter(|(_, r)| following_latest(r, name).is_some()).map(|(n, _)| n.clone()).collect()
        };
        for connector in users {
            let _one_at_a_time = self.lock(&connector).await;
            let Ok(Some(following)) = self.with(&connector, |r| following_latest(r, name).cloned()) else { continue };
            match self.resolve(&following) {
                Ok(stages) => {
                    let labels: Vec<String> = stages.steps.iter().map(|s| s.info.label()).collect();
                    if self.with(&connector, |r| r.status.plugins() != labels).unwrap_or(false) {
                        // Without waiting: the outcome shows in the status and the events.
                        let _ = self.swap(&connector, stages, false).await;
                    }
                }
                Err(e) => tracing::warn!(%connector, error = %e, "cannot follow the latest plugin version"),
            }
        }
    }

    /// Stops and removes a connector; its committed offsets stay in Kafka. Its saved file is
    /// removed first: if that fails, nothing changed and the call can be retried.
    pub(super) async fn delete_here(&self, name: &str) -> Result<(), HostError> {
        let _one_at_a_time = self.lock_existing(name).await?;
        if let Some(store) = self.store.as_ref().filter(|_| self.cluster.get().is_none()) {
            store.remove_connector(name).map_err(HostError::NotSaved)?;
        }
        self.halt(name).await?;
        // The name's lock stays: a request waiting on it must not race one on a fresh lock.
        self.connectors.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
        Ok(())
    }

    /// Pauses a running connector: it stops consuming and keeps its instances and clients.
    pub(super) async fn pause_here(&self, name: &str) -> Result<(), HostError> {
        let _one_at_a_time = self.lock_existing(name).await?;
        self.with(name, |r| {
            r.lifecycle = transition(name, r.lifecycle, r.run.is_some(), Action::Pause)?;
            if let Some(run) = &r.run {
                run.paused.send_replace(true);
            }
            Ok::<_, HostError>(())
        })??;
        self.save(name)
    }

    /// Resumes a paused connector, or starts a stopped one (validated again first).
    pub(super) async fn resume_here(&self, name: &str) -> Result<(), HostError> {
        self.refuse_while_closing()?;
        let _one_at_a_time = self.lock_existing(name).await?;
        let (idle, config) = self.with(name, |r| (r.run.is_none(), r.definition.config().clone()))?;
        let fresh = if idle { Some(self.validated(&config)?) } else { None };
        self.with(name, |r| {
            r.lifecycle = transition(name, r.lifecycle, r.run.is_some(), Action::Resume)?;
            match fresh {
                Some(connector) => {
                    r.run = self.start_run(&connector, &r.status, false);
                    r.definition = Definition::Valid(connector);
                }
                None => {
                    if let Some(run) = &r.run {
                        run.paused.send_replace(false);
                    }
                }
            }
            Ok::<_, HostError>(())
        })??;
        self.save(name)
    }

    /// Stops a connector and releases everything it holds (instances, consumer, producer);
    /// its configuration and committed offsets stay. `resume` starts it again.
    pub(super) async fn stop_here(&self, name: &str) -> Result<(), HostError> {
        let _one_at_a_time = self.lock_existing(name).await?;
        self.halt(name).await?;
        self.with(name, |r| {
            if r.status.state() != ConnectorState::Stopped {
                r.status.set(ConnectorState::Stopped, None);
            }
            r.lifecycle = transition(name, r.lifecycle, r.run.is_some(), Action::Stop)?;
            Ok::<_, HostError>(())
        })??;
        self.save(name)
    }
}

/// The connector, if it is a running transform connector that names `name@latest`.
fn following_latest<'a>(r: &'a Entry, name: &PluginName) -> Option<&'a Connector> {
    let connector = r.definition.connector().filter(|c| matches!(c.flow(), Flow::Transform { .. }))?;
    let follows = r.run.is_some() && connector.transforms().iter().any(|t| t.plugin.name == *name && t.plugin.version.is_none());
    follows.then_some(connector)
}
