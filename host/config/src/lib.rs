//! Turnpike's configuration: the host config file and connector definitions.
//!
//! Everything here is pure data and pure checks, with no I/O and no dependency on wasmtime,
//! rdkafka or axum, so the file loader, the admin API and a dry-run share one `validate()`.
//! Names are parsed into newtypes while deserializing ("parse, don't validate"), which lets the
//! YAML parser point at the line and column of a bad value.

mod admin;
mod connector;
mod connector_rules;
mod error;
mod host;
mod http_allow;
mod names;
mod ranged;
mod serde_words;
mod validated;

pub use connector::{
    BatchConfig, ConnectorConfig, ConnectorKind, ErrorTolerance, ErrorsConfig, HttpAccess, Limits, RestartPolicy, SinkStep, SourceStep, StartFrom,
    TransformStep,
};
pub use connector_rules::GROUP_PREFIX;
pub use error::{ConfigError, Problem};
pub use http_allow::AllowedHost;
pub use admin::{check_listen, AdminConfig, ApiLimits};
pub use host::{HostConfig, KafkaSettings, PluginSource, SandboxConfig};
pub use names::{ConnectorName, NameError, PluginName, PluginRef, TopicName};
pub use ranged::{OutOfRange, Ranged};
pub use validated::{Connector, Flow, HttpGrantSpec, Output};
