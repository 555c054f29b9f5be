//! Where a change goes: applied here at once on a host of its own, or, once the host joined
//! a cluster, checked here and written to the cluster's config log, which every host applies
//! in the same order (`crate::cluster`). The `*_here` methods are the applying side.

use std::sync::Arc;
use std::time::SystemTime;

use turnpike_config::{ConnectorConfig, PluginName, TeamName};
use turnpike_state::Lifecycle;

use super::table::{transition, Action};
use super::{Applied, Host, HostError};
use crate::cluster::{Change, ClusterLog, HostReport, Outcome};
use crate::registry::PluginInfo;

impl Host {
    /// Joins a cluster: from now on every change goes through `log`, and nothing is saved in
    /// the state directory but secrets, tokens and compiled code. Once only.
    pub fn join_cluster(&self, log: Arc<dyn ClusterLog>) -> Result<(), HostError> {
        self.cluster.set(log).map_err(|_| HostError::Internal("the host joined a cluster already".into()))
    }

    /// Runs each source connector only where its slot is owned (a cluster's source slots
    /// group decides), saving positions through a fenced writer. Once, before any source
    /// connector is applied.
    pub fn place_sources(&self, slots: Arc<turnpike_kafka::Slots>) -> Result<(), HostError> {
        self.shared.slots.set(slots).map_err(|_| HostError::Internal("the host places its sources already".into()))
    }

    /// Whether this host belongs to a cluster.
    pub fn in_cluster(&self) -> bool {
        self.cluster.get().is_some()
    }

    /// Every host's last report on `name`; empty outside a cluster.
    pub fn cluster_reports(&self, name: &str) -> Vec<HostReport> {
        self.cluster.get().map(|log| log.reports(name)).unwrap_or_default()
    }

    /// This host's id and every host of its cluster; `None` outside a cluster.
    pub fn cluster_members(&self) -> Option<(String, Vec<crate::cluster::Member>)> {
        self.cluster.get().map(|log| (log.host_id().to_owned(), log.members()))
    }

    /// Creates or replaces a connector, validated first (every problem at once). The same
    /// configuration again changes and restarts nothing. A changed one is restarted with the
    /// new configuration (in-flight work committed first), unless it is stopped, which it
    /// stays. In a cluster, every host does the same.
    pub async fn put_connector(&self, config: ConnectorConfig) -> Result<Applied, HostError> {
        let Some(log) = self.cluster.get() else { return self.put_here(config).await };
        self.refuse_while_closing()?;
        log.catch_up().await?;
        self.validated(&config)?;
        // The same config again: nothing to write (a new version would restart nothing anyway).
        if self.definition(config.name.as_str()).is_some_and(|(running, _)| running == config) {
            return Ok(Applied::Unchanged);
        }
        match log.change(Change::Put(config)).await? {
            Outcome::Put(applied) => Ok(applied),
            other => Err(HostError::Internal(format!("a put was applied as {other:?}"))),
        }
    }

    /// Stops and removes a connector; its committed offsets stay in Kafka.
    pub async fn delete_connector(&self, name: &str) -> Result<(), HostError> {
        let Some(log) = self.cluster.get() else { return self.delete_here(name).await };
        log.catch_up().await?;
        self.with(name, |_| ())?;
        log.change(Change::Delete(name.to_owned())).await.map(drop)
    }

    /// Pauses a running connector: it stops consuming and keeps its instances and clients.
    pub async fn pause(&self, name: &str) -> Result<(), HostError> {
        let Some(log) = self.cluster.get() else { return self.pause_here(name).await };
        self.routed_lifecycle(log.as_ref(), name, Action::Pause, Lifecycle::Paused).await
    }

    /// Resumes a paused connector, or starts a stopped one (validated again first).
    pub async fn resume(&self, name: &str) -> Result<(), HostError> {
        let Some(log) = self.cluster.get() else { return self.resume_here(name).await };
        self.refuse_while_closing()?;
        self.routed_lifecycle(log.as_ref(), name, Action::Resume, Lifecycle::Running).await
    }

    /// Stops a connector and releases everything it holds; its configuration and committed
    /// offsets stay. `resume` starts it again.
    pub async fn stop(&self, name: &str) -> Result<(), HostError> {
        let Some(log) = self.cluster.get() else { return self.stop_here(name).await };
        self.routed_lifecycle(log.as_ref(), name, Action::Stop, Lifecycle::Stopped).await
    }

    /// Checks a lifecycle change against this host's state, then writes it to the log.
    async fn routed_lifecycle(&self, log: &dyn ClusterLog, name: &str, action: Action, to: Lifecycle) -> Result<(), HostError> {
        log.catch_up().await?;
        self.with(name, |r| transition(name, r.lifecycle, r.run.is_some(), action))??;
        log.change(Change::Lifecycle { name: name.to_owned(), to }).await.map(drop)
    }

    /// Restarts a connector now, with a fresh failure budget (on every host of a cluster).
    /// With `only_failed`, a connector that is not failed is left alone (`Ok(false)`).
    pub async fn restart(&self, name: &str, only_failed: bool) -> Result<bool, HostError> {
        let Some(log) = self.cluster.get() else { return self.restart_here(name, only_failed).await };
        self.refuse_while_closing()?;
        log.catch_up().await?;
        self.with(name, |_| ())?;
        match log.change(Change::Restart { name: name.to_owned(), only_failed }).await? {
            Outcome::Restarted(restarted) => Ok(restarted),
            other => Err(HostError::Internal(format!("a restart was applied as {other:?}"))),
        }
    }

    /// Uploads a component as `name@version` for `team` (`None`: shared with every team); see
    /// `upload_here` for what is refused. In a cluster, every host loads it from the log.
    pub async fn upload_plugin(&self, name: PluginName, version: String, bytes: Vec<u8>, team: Option<TeamName>) -> Result<(PluginInfo, bool), HostError> {
        match self.cluster.get() {
            Some(log) => {
                log.catch_up().await?;
                log.upload(name, version, bytes, team).await
            }
            None => self.upload_here(name, version, bytes, team, SystemTime::now()).await,
        }
    }

    /// Deletes a plugin version that no connector uses (on every host of a cluster).
    pub async fn delete_plugin(&self, name: &PluginName, version: &str) -> Result<(), HostError> {
        let Some(log) = self.cluster.get() else { return self.delete_plugin_here(name, version) };
        log.catch_up().await?;
        let users = self.plugin_users(name, version);
        if !users.is_empty() {
            return Err(HostError::InUse { plugin: format!("{name}@{version}"), connectors: users });
        }
        log.delete_plugin(name.clone(), version.to_owned()).await
    }

    /// Applies a change read from the cluster's log, here.
    pub async fn apply(&self, change: Change) -> Result<Outcome, HostError> {
        match change {
            Change::Put(config) => self.put_here(config).await.map(Outcome::Put),
            Change::Delete(name) => match self.delete_here(&name).await {
                Ok(()) | Err(HostError::NotFound(_)) => Ok(Outcome::Done),
                Err(e) => Err(e),
            },
            Change::Restart { name, only_failed } => self.restart_here(&name, only_failed).await.map(Outcome::Restarted),
            Change::Lifecycle { name, to } => {
                let now = self.with(&name, |r| r.lifecycle)?;
                match (now, to) {
                    (a, b) if a == b => {}
                    (_, Lifecycle::Stopped) => self.stop_here(&name).await?,
                    (_, Lifecycle::Running) => self.resume_here(&name).await?,
                    (Lifecycle::Stopped, Lifecycle::Paused) => {
                        // Started paused: it holds its instances and clients, reading nothing.
                        self.resume_here(&name).await?;
                        self.pause_here(&name).await?;
                    }
                    (_, Lifecycle::Paused) => self.pause_here(&name).await?,
                }
                Ok(Outcome::Done)
            }
        }
    }

    /// Applies a connector's config and lifecycle read from the cluster's log, here: a new
    /// one is created directly in `lifecycle`.
    pub async fn apply_put(&self, config: ConnectorConfig, lifecycle: Lifecycle) -> Result<Applied, HostError> {
        let name = config.name.to_string();
        let applied = self.put_here_as(config, lifecycle).await?;
        self.apply(Change::Lifecycle { name, to: lifecycle }).await?;
        Ok(applied)
    }

    /// Loads a plugin upload read from the cluster's log, here, with the upload's time (so
    /// every host agrees on which version is `@latest`).
    pub async fn apply_upload(&self, name: PluginName, version: String, bytes: Vec<u8>, team: Option<TeamName>, uploaded_at: SystemTime) -> Result<(PluginInfo, bool), HostError> {
        self.upload_here(name, version, bytes, team, uploaded_at).await
    }

    /// Deletes a plugin version, as the cluster's log says.
    pub fn apply_plugin_deletion(&self, name: &PluginName, version: &str) -> Result<(), HostError> {
        self.delete_plugin_here(name, version)
    }

    /// A connector's configuration and lifecycle here, for the log's writer.
    pub fn definition(&self, name: &str) -> Option<(ConnectorConfig, Lifecycle)> {
        self.with(name, |r| (r.definition.config().clone(), r.lifecycle)).ok()
    }
}
