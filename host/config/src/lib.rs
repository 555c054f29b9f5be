//! Turnpike's configuration: the host config file and connector definitions.
//!
//! Everything here is pure data and pure checks, with no I/O and no dependency on wasmtime,
//! rdkafka or axum, so the file loader, the admin API and a dry-run share one `validate()`.
//! The one exception is [`resolve`], which reads the environment, files and the secrets store
//! behind `${env:…}`, `${file:…}` and `${secret:…}` references, and runs only where the host
//! is about to start a plugin (`references.rs`).
//! Names are parsed into newtypes while deserializing ("parse, don't validate"), which lets the
//! YAML parser point at the line and column of a bad value.

mod admin;
mod cluster;
mod connector;
mod connector_rules;
mod database;
mod error;
mod host;
mod http_allow;
mod names;
mod predicate;
mod ranged;
mod references;
mod serde_words;
mod storage;
mod tasks;
mod teams;
mod validated;

pub use connector::{
    BatchConfig, ConnectorConfig, ConnectorKind, ErrorTolerance, ErrorsConfig, HttpAccess, Limits, RestartPolicy, SinkStep, SourceStep, StartFrom,
    TransformStep,
};
pub use connector_rules::GROUP_PREFIX;
pub use database::{DatabaseAccess, DatabaseTls};
pub use error::{ConfigError, Problem};
pub use http_allow::AllowedHost;
pub use cluster::ClusterConfig;
pub use admin::{check_listen, AdminConfig, AdminTls, ApiLimits};
pub use host::{HostConfig, KafkaSettings, PluginSource, SandboxConfig, DEFAULT_SHUTDOWN_TIMEOUT_MS};
pub use predicate::{Predicate, RecordFacts, RecordSelector};
pub use names::{ConnectorName, NameError, PluginName, PluginRef, TeamName, TopicName};
pub use ranged::{OutOfRange, Ranged};
pub use references::{
    check_secret_value, check_syntax, is_only_references, referenced_secrets, resolve, resolve_at, resolve_str, Resolved, SecretLookup, SecretName, MIN_SECRET_CHARS,
};
pub use storage::{StorageAccess, StorageCredentials};
pub use tasks::{AutoScale, Tasks, MAX_TASKS};
pub use serde_words::in_users_words;
pub use teams::{glob_matches, Role, TeamPolicy};
pub use validated::{Connector, Flow, HttpGrantSpec, Output};
