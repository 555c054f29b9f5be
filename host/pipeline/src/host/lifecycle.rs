//! Creating, changing, pausing, resuming, stopping, restarting and deleting connectors, and
//! switching a running one to other plugin versions.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use turnpike_config::{ConnectorConfig, ConnectorKind, PluginName};
use turnpike_kafka::{group_offsets, reset_group_offsets, PartitionOffsets, ResetTo};
use turnpike_state::Lifecycle;

use super::{Applied, Host, HostError, Running};

use crate::events::EventKind;
use crate::registry::{PluginInfo, RegistryError};
use crate::status::{ConnectorState, LiveStatus};
use crate::swap::SwapRequest;

/// How long a `PUT` waits for a running connector to switch plugin versions: its current
/// batch must finish first.
const SWAP_WAIT: Duration = Duration::from_secs(60);

impl Host {
    /// Restarts a connector now, with a fresh failure budget: its current run is stopped
    /// gracefully (in-flight work committed) and a new one started. With `only_failed`, a
    /// connector that is not failed is left alone (`Ok(false)`).
    pub async fn restart(&self, name: &str, only_failed: bool) -> Result<bool, HostError> {
        self.refuse_while_closing()?;
        let _one_at_a_time = self.lock_existing(name).await?;
        let (state, config) = self.with(name, |r| (r.status.state(), r.config.clone()))?;
        if only_failed && !matches!(state, ConnectorState::Failed | ConnectorState::Restarting) {
            return Ok(false);
        }
        self.refuse_broken_rules(&config)?;
        self.halt(name).await?;
        self.shared.events.emit(name, EventKind::ManualRestart);
        self.with(name, |r| {
            let paused = r.lifecycle == Lifecycle::Paused;
            *r = self.supervise(r.config.clone(), r.status.clone());
            if paused {
                r.paused.send_replace(true);
                r.lifecycle = Lifecycle::Paused;
            }
        })?;
        self.save(name)?;
        Ok(true)
    }

    /// A connector saved before the rules tightened must be changed before it runs again.
    fn refuse_broken_rules(&self, config: &ConnectorConfig) -> Result<(), HostError> {
        let problems = self.rule_problems(config);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(HostError::Invalid(problems))
        }
    }

    /// Creates or replaces a connector. The same configuration again changes and restarts
    /// nothing (but saves it again if the last save failed). A changed one is restarted with
    /// the new configuration (in-flight work committed first), unless the connector is
    /// stopped, which it stays.
    pub async fn put_connector(&self, config: ConnectorConfig) -> Result<Applied, HostError> {
        self.refuse_while_closing()?;
        let name = config.name.to_string();
        let _one_at_a_time = self.lock(&name).await;
        self.refuse_broken_rules(&config)?;
        let existing = self.with(&name, |r| (r.config == config, r.lifecycle == Lifecycle::Stopped, r.unsaved)).ok();
        match existing {
            None => {
                let status = Arc::new(LiveStatus::new(&name, self.shared.events.clone()));
                {
                    // Checked again where the entry is added, so two creates at once cannot
                    // both pass the host-wide rules (groups, case, capacity).
                    let mut connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
                    let problems = super::host_rules(&config, &connectors);
                    if !problems.is_empty() {
                        return Err(HostError::Invalid(problems));
                    }
                    self.check_capacity(&config, &connectors)?;
                    connectors.insert(name.clone(), self.supervise(config, status));
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
            Some((false, false, _)) if self.swappable(&name, &config) => {
                self.check_capacity(&config, &self.connectors.lock().unwrap_or_else(|p| p.into_inner()))?;
                let stages = self.resolve(&config)?;
                self.swap(&name, stages, true).await?;
                self.with(&name, |r| {
                    r.config = config.clone();
                    // A later automatic restart builds what runs now, not the old chain.
                    r.config_tx.send_replace(config);
                })?;
                self.save(&name)?;
                Ok(Applied::Swapped)
            }
            Some((false, stopped, _)) => {
                self.check_capacity(&config, &self.connectors.lock().unwrap_or_else(|p| p.into_inner()))?;
                self.halt(&name).await?;
                self.with(&name, |r| {
                    if stopped {
                        r.config = config;
                    } else {
                        let (paused, lifecycle) = (*r.paused.borrow(), r.lifecycle);
                        *r = self.supervise(config, r.status.clone());
                        if paused {
                            r.paused.send_replace(true);
                        }
                        r.lifecycle = lifecycle;
                    }
                })?;
                self.save(&name)?;
                Ok(Applied::Updated)
            }
        }
    }

    /// Refuses a connector that would take the host past its connector count or its memory
    /// budget for instances (each plugin of each connector may grow to `limits.memory_mib`).
    /// A change that asks for no more than the connector had is always allowed, so lowering
    /// a maximum below what runs never blocks a change that shrinks.
    fn check_capacity(&self, config: &ConnectorConfig, connectors: &BTreeMap<String, Running>) -> Result<(), HostError> {
        let weight = |c: &ConnectorConfig| c.limits.memory_mib.get() * c.plugin_refs().len() as u64;
        let before = connectors.get(config.name.as_str()).map(|r| weight(&r.config));
        let others = connectors.iter().filter(|(n, _)| n.as_str() != config.name.as_str());
        let (count, memory) = others.fold((0u64, 0u64), |(n, m), (_, r)| (n + 1, m + weight(&r.config)));
        let max = self.sandbox.max_connectors.get();
        if before.is_none() && count + 1 > max {
            return Err(HostError::Full(format!("the host already runs {count} connectors, its maximum (sandbox.max_connectors = {max}); delete one or raise the maximum")));
        }
        let (asked, budget) = (weight(config), self.sandbox.max_total_memory_mib.get());
        if before.is_none_or(|b| asked > b) && memory + asked > budget {
            return Err(HostError::Full(format!(
                "this connector may use {asked} MiB of plugin memory and the others {memory} MiB, over the host's budget of {budget} MiB (sandbox.max_total_memory_mib); lower limits.memory_mib or raise the budget"
            )));
        }
        Ok(())
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
    /// switched (or refused, keeping the old versions). A switch that does not happen in
    /// time is withdrawn: the connector is asked to run its configured versions again, so
    /// what runs and what the configuration says never disagree.
    async fn swap(&self, name: &str, stages: Vec<(PluginInfo, serde_json::Value)>, wait: bool) -> Result<(), HostError> {
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        let reply = Arc::new(Mutex::new(wait.then_some(tx)));
        self.with(name, |r| {
            let generation = r.swaps.borrow().generation + 1;
            r.swaps.send_replace(SwapRequest { generation, stages, reply });
        })?;
        if !wait {
            return Ok(());
        }
        match tokio::time::timeout(SWAP_WAIT, &mut rx).await {
            Ok(Ok(Ok(_))) => Ok(()),
            Ok(Ok(Err(reason))) => Err(HostError::SwapFailed(reason)),
            _ => {
                let configured = self.with(name, |r| r.config.clone())?;
                if let Ok(stages) = self.resolve(&configured) {
                    self.with(name, |r| {
                        let generation = r.swaps.borrow().generation + 1;
                        r.swaps.send_replace(SwapRequest { generation, stages, reply: Arc::default() });
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
            connectors.iter().filter(|(_, r)| uses_latest(r, name)).map(|(n, _)| n.clone()).collect()
        };
        for connector in users {
            let _one_at_a_time = self.lock(&connector).await;
            let Ok(Some(config)) = self.with(&connector, |r| uses_latest(r, name).then(|| r.config.clone())) else { continue };
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

    /// Stops and removes a connector; its committed offsets stay in Kafka. Its saved file is
    /// removed first: if that fails, nothing changed and the call can be retried.
    pub async fn delete_connector(&self, name: &str) -> Result<(), HostError> {
        let _one_at_a_time = self.lock_existing(name).await?;
        if let Some(store) = &self.store {
            store.remove_connector(name).map_err(HostError::NotSaved)?;
        }
        self.halt(name).await?;
        // The name's lock stays: a request waiting on it must not race one on a fresh lock.
        self.connectors.lock().unwrap_or_else(|p| p.into_inner()).remove(name);
        Ok(())
    }

    /// Pauses a running connector: it stops consuming and keeps its instances and clients.
    pub async fn pause(&self, name: &str) -> Result<(), HostError> {
        let _one_at_a_time = self.lock_existing(name).await?;
        self.with(name, |r| {
            if r.supervisor.is_none() {
                return Err(HostError::State(format!("connector {name:?} is not running; resume it instead of pausing")));
            }
            r.paused.send_replace(true);
            r.lifecycle = Lifecycle::Paused;
            Ok(())
        })??;
        self.save(name)
    }

    /// Resumes a paused connector, or starts a stopped one.
    pub async fn resume(&self, name: &str) -> Result<(), HostError> {
        self.refuse_while_closing()?;
        let _one_at_a_time = self.lock_existing(name).await?;
        let (idle, config) = self.with(name, |r| (r.supervisor.is_none(), r.config.clone()))?;
        if idle {
            self.refuse_broken_rules(&config)?;
        }
        self.with(name, |r| {
            if r.supervisor.is_none() {
                *r = self.supervise(r.config.clone(), r.status.clone());
            } else {
                r.paused.send_replace(false);
            }
            r.lifecycle = Lifecycle::Running;
        })?;
        self.save(name)
    }

    /// Stops a connector and releases everything it holds (instances, consumer, producer);
    /// its configuration and committed offsets stay. `resume` starts it again.
    pub async fn stop(&self, name: &str) -> Result<(), HostError> {
        let _one_at_a_time = self.lock_existing(name).await?;
        self.halt(name).await?;
        self.with(name, |r| {
            if r.status.state() != ConnectorState::Stopped {
                r.status.set(ConnectorState::Stopped, None);
            }
            r.lifecycle = Lifecycle::Stopped;
        })?;
        self.save(name)
    }

    /// The connector's consumer group and where it stands on every input partition.
    pub async fn offsets(&self, name: &str) -> Result<(String, Vec<PartitionOffsets>), HostError> {
        let config = self.with(name, |r| r.config.clone())?;
        let (kafka, group, topics) = (self.shared.kafka.clone(), config.group_id(), topic_names(&config));
        let g = group.clone();
        let read = tokio::task::spawn_blocking(move || group_offsets(&kafka, &g, &topics)).await;
        Ok((group, read.map_err(|e| HostError::Internal(format!("offsets task: {e}")))??))
    }

    /// Moves a stopped connector's committed offsets; it reads from there when resumed.
    pub async fn reset_offsets(&self, name: &str, to: ResetTo) -> Result<Vec<(String, i32, i64)>, HostError> {
        let _one_at_a_time = self.lock_existing(name).await?;
        let (config, stopped) = self.with(name, |r| (r.config.clone(), r.supervisor.is_none()))?;
        if !stopped {
            return Err(HostError::State(format!(
                "connector {name:?} is not stopped: stop it first (POST /v1/connectors/{name}/stop), so no consumer commits over the reset"
            )));
        }
        let (kafka, group, topics) = (self.shared.kafka.clone(), config.group_id(), topic_names(&config));
        let done = tokio::task::spawn_blocking(move || reset_group_offsets(&kafka, &group, &topics, &to)).await;
        let targets = done.map_err(|e| HostError::Internal(format!("offsets task: {e}")))??;
        tracing::info!(connector = %name, ?targets, "offsets reset");
        Ok(targets)
    }
}

/// Whether a running transform connector names `name@latest`.
fn uses_latest(r: &Running, name: &PluginName) -> bool {
    r.supervisor.is_some() && r.config.kind() == ConnectorKind::Transform && r.config.transforms.iter().any(|t| t.plugin.name == *name && t.plugin.version.is_none())
}

fn topic_names(config: &ConnectorConfig) -> Vec<String> {
    config.topics.iter().map(ToString::to_string).collect()
}
