//! Why the host refused an operation.

use turnpike_config::Problem;
use turnpike_kafka::KafkaError;
use turnpike_runtime::LoadError;
use turnpike_state::StateError;

use crate::registry::RegistryError;

/// Why the host refused an operation.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The connector configuration breaks rules; every problem is listed.
    #[error("invalid connector configuration: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<Problem>),
    /// No connector has this name.
    #[error("no connector named {0:?}")]
    NotFound(String),
    /// The operation does not fit the connector's state (the caller can fix it: resume
    /// instead of pause, wait for the stop to finish).
    #[error("{0}")]
    State(String),
    /// The host itself broke while doing it (a task panicked or was lost): not the caller's
    /// doing, and worth a look at the host log.
    #[error("internal error: {0}")]
    Internal(String),
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
    /// The plugin name has versions of another team (the owner is not named): upload under
    /// another name.
    #[error("plugin name {0:?} is taken; choose another name")]
    NameTaken(String),
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
    /// The change was refused because the state directory could not be written; nothing
    /// changed.
    #[error("nothing was changed: the state directory could not be written: {0}")]
    NotSaved(StateError),
    /// Too many expensive operations (compiles, dry runs, validations) at once: try again.
    #[error("{0}")]
    Busy(String),
    /// The host is at one of its operator-set capacities (connectors, plugin versions,
    /// memory for instances).
    #[error("{0}")]
    Full(String),
    /// Another host changed the same connector or plugin first (cluster): read it again and
    /// decide whether to change it still.
    #[error("{0}")]
    Conflict(String),
    /// The cluster's config log could not be written or read in time: nothing may have
    /// changed, or the change may still arrive; read the connector again.
    #[error("the cluster's config log: {0}")]
    Cluster(String),
}
