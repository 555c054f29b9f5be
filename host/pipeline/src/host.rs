//! The host: plugins, connectors, and their lifecycle.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use turnpike_config::{ConnectorConfig, PluginName, Problem};
use turnpike_kafka::{Consumer, ConsumerOptions, KafkaError, Producer};
use turnpike_runtime::{InstanceLimits, LoadError, Runtime};

use crate::chain::{Chain, Stage};
use crate::registry::{PluginInfo, PluginRegistry, RegistryError};
use crate::status::{ConnectorStatus, LiveStatus};
use crate::task::ConnectorTask;

/// Why the host refused an operation.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The connector configuration breaks rules; every problem is listed.
    #[error("invalid connector configuration: {}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Invalid(Vec<Problem>),
    /// A connector with this name already runs.
    #[error("a connector named {0:?} already exists")]
    Duplicate(String),
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
}

struct Running {
    config: ConnectorConfig,
    plugins: Vec<String>,
    status: Arc<LiveStatus>,
    cancel: CancellationToken,
    task: Option<JoinHandle<()>>,
}

/// Runs connectors against one Kafka cluster.
pub struct Host {
    runtime: Runtime,
    registry: PluginRegistry,
    kafka: Vec<(String, String)>,
    connectors: Mutex<BTreeMap<String, Running>>,
}

impl Host {
    /// A host with no plugins and no connectors. `kafka` are librdkafka settings shared by
    /// every connector's clients.
    pub fn new(runtime: Runtime, kafka: Vec<(String, String)>) -> Self {
        Self { runtime, registry: PluginRegistry::default(), kafka, connectors: Mutex::new(BTreeMap::new()) }
    }

    /// The plugin registry.
    pub fn registry(&self) -> &PluginRegistry {
        &self.registry
    }

    /// Compiles a component (on a blocking thread) and registers it as `name@version`.
    pub async fn load_plugin(&self, name: PluginName, version: String, bytes: Vec<u8>) -> Result<PluginInfo, HostError> {
        let runtime = self.runtime.clone();
        let label = format!("{name}@{version}");
        let plugin = tokio::task::spawn_blocking(move || runtime.load(&bytes))
            .await
            .map_err(|e| HostError::Load { name: label.clone(), source: LoadError::Engine(e.to_string()) })?
            .map_err(|source| HostError::Load { name: label, source })?;
        let info = PluginInfo { name, version, plugin };
        tracing::info!(plugin = %info.label(), digest = info.plugin.digest(), size = info.plugin.size(), kind = info.plugin.kind().as_str(), "plugin registered");
        self.registry.register(info.clone());
        Ok(info)
    }

    /// Validates a connector, resolves its plugins, creates its Kafka clients and starts it.
    pub fn start_connector(&self, config: ConnectorConfig) -> Result<(), HostError> {
        let problems = config.validate("connector");
        if !problems.is_empty() {
            return Err(HostError::Invalid(problems));
        }
        let name = config.name.to_string();
        let mut connectors = self.connectors.lock().unwrap_or_else(|p| p.into_inner());
        if connectors.contains_key(&name) {
            return Err(HostError::Duplicate(name));
        }
        let stages = config
            .transforms
            .iter()
            .map(|step| Ok(Stage::new(self.registry.resolve(&step.plugin)?, &step.config)))
            .collect::<Result<Vec<_>, RegistryError>>()?;
        let options = ConsumerOptions {
            group_id: config.group_id(),
            start_from: config.start_from.clone(),
            topics: config.topics.iter().map(ToString::to_string).collect(),
        };
        let consumer = Arc::new(Consumer::new(&self.kafka, &options)?);
        let producer = Producer::new(&self.kafka)?;
        let status = Arc::new(LiveStatus::new());
        let limits = InstanceLimits {
            memory_bytes: (config.limits.memory_mib as usize) << 20,
            batch_timeout: Duration::from_millis(config.limits.batch_timeout_ms),
            create_timeout: Duration::from_millis(config.limits.create_timeout_ms),
        };
        let chain = Chain::new(stages, name.clone(), limits, status.clone());
        let plugins = chain.plugin_labels();
        let cancel = CancellationToken::new();
        let task = ConnectorTask { config: config.clone(), chain, consumer, producer, status: status.clone(), cancel: cancel.clone() };
        let handle = tokio::spawn(task.run());
        connectors.insert(name, Running { config, plugins, status, cancel, task: Some(handle) });
        Ok(())
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
                    r.task.take().map(|t| (name.clone(), t))
                })
                .collect()
        };
        for (name, task) in tasks {
            if let Err(e) = task.await {
                tracing::error!(connector = %name, error = %e, "connector task ended abnormally");
            }
        }
    }
}

fn snapshot(r: &Running) -> ConnectorStatus {
    r.status.snapshot(
        r.config.name.as_str(),
        r.plugins.clone(),
        r.config.topics.iter().map(ToString::to_string).collect(),
        r.config.output_topic.to_string(),
    )
}
