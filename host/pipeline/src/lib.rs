//! Runs connectors: Kafka in → a chain of WebAssembly transforms → Kafka out, at least once.
//!
//! [`Host`] owns the plugin registry and the running connectors. Each connector is one task
//! ([`tasks`]) feeding batches through its [`chain`], and a committer ([`committer`]) that
//! commits input offsets only once every output derived from them is acknowledged.

mod autoscale;
mod batches;
mod broker_watch;
mod chain;
mod cluster;
mod committer;
mod connector_state;
mod dry_run;
mod events;
mod failures;
mod grant_status;
mod host;
mod measures;
mod memory_trim;
mod placement;
mod registry;
mod resolve;
mod retry;
mod selection;
mod shared_producer;
mod status;
mod stopping;
mod database;
mod storage;
mod supervisor;
mod swap;
mod task_pool;
mod tasks;
mod throughput;
mod validation;

pub use cluster::{Change, ClusterLog, HostReport, Member, Outcome, Pending};
pub use connector_state::ConnectorState;
pub use dry_run::{DryRunError, DryRunResult, SampleError, SampleOutput, SampleRecord, MAX_SAMPLE_RECORDS};
pub use events::{Event, EventKind, Events};
pub use host::{Applied, Host, HostError, SecretEntry, SAMPLE_VALUE_CAP};
pub use registry::{BrokenPlugin, PluginInfo, PluginRegistry, RegistryError};
pub use grant_status::{DatabaseStatus, StorageStatus};
pub use measures::{BatchDurations, BrokerUnreachable, InstanceMemory, PartitionLag, TaskPartition, TaskStatus, BATCH_BUCKETS};
pub use status::{ConnectorStatus, FailingRecord, FaultInfo};
/// Re-exported so that callers can build a [`Host`] without depending on the runtime crate.
pub use turnpike_runtime::{CallError, CreateError, EngineLimits, Fault, HttpGrant, Runtime};
/// Re-exported: offsets as the API reports and resets them.
pub use turnpike_kafka::{GroupProtocol, KafkaError, PartitionOffsets, ResetTo, SampledRecord, TopicInfo, DEFAULT_POSITIONS_TOPIC};
/// Re-exported: the operator limits a [`Host`] is built with.
pub use turnpike_config::SandboxConfig;
