//! `cluster:` in the host config: this host is one of several sharing their connectors
//! through Kafka topics (README, "Running a cluster").

use serde::{Deserialize, Serialize};

use crate::{Problem, Ranged, TopicName};

/// How this host joins a cluster of hosts. Absent: a host of its own, keeping its state in
/// its state directory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    /// This host's id, unique in the cluster and stable across restarts (its statuses are
    /// keyed by it): letters, digits, `.`, `_`, `-`, at most 64.
    pub host_id: String,
    /// The compacted topic that holds connector configs, lifecycles and plugin uploads
    /// (created on start if missing). Default `turnpike-config`.
    #[serde(default = "default_config_topic")]
    pub config_topic: TopicName,
    /// The compacted topic each host writes its connectors' statuses to (created on start if
    /// missing). Default `turnpike-status`.
    #[serde(default = "default_status_topic")]
    pub status_topic: TopicName,
    /// How often this host reports its statuses; a host silent for three intervals shows as
    /// not alive. Default 2,000.
    #[serde(default = "default_status_interval")]
    pub status_interval_ms: Ranged<200, 60_000>,
    /// The data-less topic whose partitions are the cluster's source slots: a source runs on
    /// the host that owns its slot (created on start if missing, with
    /// [`ClusterConfig::SOURCE_SLOTS`] partitions). Default `<config_topic>-slots`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slots_topic: Option<TopicName>,
}

fn default_config_topic() -> TopicName {
    TopicName::parse("turnpike-config").expect("a valid topic name")
}

fn default_status_topic() -> TopicName {
    TopicName::parse("turnpike-status").expect("a valid topic name")
}

fn default_status_interval() -> Ranged<200, 60_000> {
    Ranged::constant(2_000)
}

impl ClusterConfig {
    /// Partitions of a slots topic the host creates: sources spread over at most this many
    /// hosts.
    pub const SOURCE_SLOTS: i32 = 12;

    /// The slots topic: as set, or `<config_topic>-slots`, so each cluster has its own.
    pub fn slots_topic(&self) -> String {
        self.slots_topic.as_ref().map_or_else(|| format!("{}-slots", self.config_topic.as_str()), |t| t.as_str().to_owned())
    }

    /// Problems with the cluster section.
    pub(crate) fn check(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        let id = &self.host_id;
        if id.is_empty() || id.len() > 64 || !id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')) {
            problems.push(Problem::new("cluster.host_id", format!("{id:?} is not an id: use 1 to 64 letters, digits, '.', '_' or '-'")));
        }
        if self.config_topic == self.status_topic {
            problems.push(Problem::new("cluster.status_topic", "must differ from cluster.config_topic"));
        }
        let slots = self.slots_topic();
        if slots == self.config_topic.as_str() || slots == self.status_topic.as_str() {
            problems.push(Problem::new("cluster.slots_topic", "must differ from cluster.config_topic and cluster.status_topic"));
        }
        problems
    }
}
