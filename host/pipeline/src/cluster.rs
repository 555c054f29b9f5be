//! The seam between a host and the cluster of hosts it may belong to (`turnpike-cluster`).
//!
//! On its own a host applies every change at once. In a cluster, a change made through any
//! host's API is written to the shared config log instead, and every host (this one included)
//! applies it when it reads it, in log order: so every host runs the same connectors, and the
//! API's answer is what applying the change did on the host that was asked.

use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};
use turnpike_config::{ConnectorConfig, PluginName, TeamName};
use turnpike_state::Lifecycle;

use crate::host::{Applied, HostError};
use crate::registry::PluginInfo;

/// A change to a connector, as the config log carries it.
#[derive(Debug, Clone)]
pub enum Change {
    /// Create or replace.
    Put(ConnectorConfig),
    /// Delete.
    Delete(String),
    /// Pause, resume (start) or stop.
    Lifecycle {
        /// The connector.
        name: String,
        /// What it should be doing.
        to: Lifecycle,
    },
    /// Restart now, with a fresh failure budget.
    Restart {
        /// The connector.
        name: String,
        /// Leave it alone unless it failed.
        only_failed: bool,
    },
}

impl Change {
    /// The connector it is about.
    pub fn connector(&self) -> &str {
        match self {
            Change::Put(config) => config.name.as_str(),
            Change::Delete(name) | Change::Lifecycle { name, .. } | Change::Restart { name, .. } => name,
        }
    }
}

/// What applying a [`Change`] did on one host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// What a put did.
    Put(Applied),
    /// Whether a restart restarted (`only_failed` leaves a healthy connector alone).
    Restarted(bool),
    /// A delete or a lifecycle change was made.
    Done,
}

/// A change on its way through the cluster's log.
pub type Pending<'a, T> = Pin<Box<dyn Future<Output = Result<T, HostError>> + Send + 'a>>;

/// The cluster's shared log, as a host writes to it and reads the other hosts' reports.
pub trait ClusterLog: Send + Sync {
    /// This host's id in the cluster.
    fn host_id(&self) -> &str;
    /// Waits until this host has applied every change written so far, so a change made here
    /// follows what any host's API already answered (a `PUT` through one host, then a pause
    /// through another, is no conflict).
    fn catch_up(&self) -> Pending<'_, ()>;
    /// Writes a connector change and waits until this host has applied it.
    fn change(&self, change: Change) -> Pending<'_, Outcome>;
    /// Writes a plugin upload (every host verifies its digest and loads it) and waits until
    /// this host has loaded it.
    fn upload(&self, name: PluginName, version: String, bytes: Vec<u8>, team: Option<TeamName>) -> Pending<'_, (PluginInfo, bool)>;
    /// Writes a plugin version's deletion and waits until this host has deleted it.
    fn delete_plugin(&self, name: PluginName, version: String) -> Pending<'_, ()>;
    /// Every host's last report on connector `name`, this one's included.
    fn reports(&self, name: &str) -> Vec<HostReport>;
    /// Every host that has reported, this one included.
    fn members(&self) -> Vec<Member>;
}

/// One host of the cluster, as its heartbeats say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Member {
    /// The host's id (`cluster.host_id`).
    pub host: String,
    /// Whether its last heartbeat is younger than three status intervals.
    pub alive: bool,
    /// Its last heartbeat (RFC 3339).
    pub reported_at: String,
    /// The connectors it reports on.
    pub connectors: usize,
    /// The consumer group protocol its connectors use (`consumer` or `classic`); each host
    /// chooses at start, so hosts started while the broker could not be asked may differ
    /// (Kafka 4.x lets a group mix them). Null from hosts that do not say.
    pub group_protocol: Option<String>,
}

/// One host's report on one connector, as the status topic carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct HostReport {
    /// The host's id (`cluster.host_id`).
    pub host: String,
    /// Whether the host reported within the last three status intervals (a host that stopped
    /// reporting crashed, or cannot reach Kafka).
    pub alive: bool,
    /// The connector's state on that host (`RUNNING`, `FAILED`, …).
    pub state: String,
    /// The config version (from the config log) that host runs.
    pub version: u64,
    /// The input partitions that host's tasks read.
    pub partitions: Vec<crate::TaskPartition>,
    /// Records consumed there in its current run.
    pub records_in: u64,
    /// Records written there in its current run.
    pub records_out: u64,
    /// Records not yet read in the partitions that host reads.
    pub lag: Option<i64>,
    /// When the host reported it (RFC 3339).
    pub reported_at: String,
}
