//! The host configuration file: Kafka settings, plugin locations and connectors.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::serde_words::in_users_words;
use crate::{AdminConfig, ConfigError, Connector, ConnectorConfig, PluginName, Problem, Ranged, TeamName, TeamPolicy};

/// The whole host configuration (`turnpike run -c FILE`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostConfig {
    /// librdkafka settings shared by every connector's consumer and producer.
    pub kafka: KafkaSettings,
    /// The admin API.
    #[serde(default)]
    pub admin: AdminConfig,
    /// Host-wide sandbox capacity and the most any connector may ask for.
    #[serde(default)]
    pub sandbox: SandboxConfig,
    /// Where uploaded plugins and connector changes made through the API are kept, so that
    /// a restarted host comes back as it was. Relative to the config file. Default
    /// `turnpike-state`.
    #[serde(default = "default_state_dir")]
    pub state_dir: PathBuf,
    /// The compacted Kafka topic where source connectors' positions are kept (created on
    /// start if missing). Default `turnpike-source-positions`.
    #[serde(default = "default_positions_topic")]
    pub source_positions_topic: String,
    /// How long a stopping host (SIGTERM, Ctrl-C) waits for its connectors to finish their
    /// in-flight batches and commit. Past it the host exits anyway, naming the connectors
    /// still stopping: what they had not committed is read again at the next start. A plugin
    /// call may run for up to its `limits.batch_timeout_ms` and an unreachable broker holds
    /// deliveries for minutes, so without this bound a stop could outlast any supervisor's
    /// patience. Default 20,000 (a supervisor's grace period should exceed it by some 10 s:
    /// leaving a cluster and closing the API come after); 1,000 to 3,600,000.
    #[serde(default = "default_shutdown_timeout")]
    pub shutdown_timeout_ms: Ranged<1_000, 3_600_000>,
    /// Plugins loaded from files, by name. Built-in plugins (`pii-mask`, `identity`) need no
    /// entry.
    #[serde(default)]
    pub plugins: BTreeMap<PluginName, PluginSource>,
    /// The connectors to run.
    #[serde(default)]
    pub connectors: Vec<ConnectorConfig>,
    /// Teams on a shared host (`admin.auth: true`), each with the topics its connectors may
    /// read and write: `teams: { analytics: { topics: ["analytics.*"] } }`. Default: none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub teams: BTreeMap<TeamName, TeamPolicy>,
    /// Run as one host of a cluster that shares its connectors and plugins through Kafka
    /// topics (README, "Running a cluster"). Default: a host of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<crate::ClusterConfig>,
}

fn default_positions_topic() -> String {
    "turnpike-source-positions".into()
}

/// `shutdown_timeout_ms` when the config does not set it (and for `turnpike dev`).
pub const DEFAULT_SHUTDOWN_TIMEOUT_MS: u64 = 20_000;

fn default_shutdown_timeout() -> Ranged<1_000, 3_600_000> {
    Ranged::constant(DEFAULT_SHUTDOWN_TIMEOUT_MS)
}

fn default_state_dir() -> PathBuf {
    PathBuf::from("turnpike-state")
}

/// librdkafka client settings, passed through as given (e.g. `bootstrap.servers`,
/// `security.protocol`). Values may be written as strings, numbers or booleans.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct KafkaSettings(pub BTreeMap<String, Scalar>);

/// A YAML scalar, kept as the text librdkafka expects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    /// `"text"`
    Text(String),
    /// `5`
    Int(i64),
    /// `true`
    Bool(bool),
}

impl Scalar {
    fn to_text(&self) -> String {
        match self {
            Scalar::Text(s) => s.clone(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

impl KafkaSettings {
    /// Settings from `bootstrap.servers` alone.
    pub fn bootstrap(servers: impl Into<String>) -> Self {
        Self(BTreeMap::from([("bootstrap.servers".to_owned(), Scalar::Text(servers.into()))]))
    }

    /// The settings as librdkafka key/value text pairs.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.0.iter().map(|(k, v)| (k.clone(), v.to_text())).collect()
    }
}

/// Where a plugin's compiled component is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSource {
    /// Path of the `.wasm` component, relative to the config file.
    pub path: PathBuf,
}

/// The operator's sandbox settings: capacity of the host, and maxima for connector limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SandboxConfig {
    /// Plugin instances live at once (one per transform stage of each running connector).
    /// Default 1,000.
    pub max_instances: Ranged<1, 100_000>,
    /// The most `limits.memory_mib` a connector may ask for. Default 1,024.
    pub max_memory_mib: Ranged<1, 4096>,
    /// The most `limits.batch_timeout_ms` a connector may ask for. Default 60,000.
    pub max_batch_timeout_ms: Ranged<1, 600_000>,
    /// The most `limits.max_output_mib` a connector may ask for. Default 256.
    pub max_output_mib: Ranged<1, 4096>,
    /// Linear memory all connectors together may ask for: the sum over connectors of
    /// `limits.memory_mib` times their plugin count. A connector that would pass it is
    /// refused. Default 16,384 (16 GiB); 1 to 16,777,216.
    pub max_total_memory_mib: Ranged<1, 16_777_216>,
    /// Connectors on the host. Default 10,000.
    pub max_connectors: Ranged<1, 1_000_000>,
    /// Plugin versions on the host (all plugins together). Default 1,000.
    pub max_plugin_versions: Ranged<1, 1_000_000>,
    /// Uploads compiled at once; more are answered `429`. Default 2.
    pub max_concurrent_compiles: Ranged<1, 64>,
    /// Dry runs and validations run at once; more are answered `429`. Default 4.
    pub max_concurrent_checks: Ranged<1, 256>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            max_instances: Ranged::constant(1_000),
            max_memory_mib: Ranged::constant(1_024),
            max_batch_timeout_ms: Ranged::constant(60_000),
            max_output_mib: Ranged::constant(256),
            max_total_memory_mib: Ranged::constant(16_384),
            max_connectors: Ranged::constant(10_000),
            max_plugin_versions: Ranged::constant(1_000),
            max_concurrent_compiles: Ranged::constant(2),
            max_concurrent_checks: Ranged::constant(4),
        }
    }
}

impl SandboxConfig {
    /// Problems with a connector's limits against these maxima; `key` is the connector's path.
    pub(crate) fn check(&self, connector: &ConnectorConfig, key: &str) -> Vec<Problem> {
        let l = &connector.limits;
        let mut problems = Vec::new();
        let mut over = |field: &str, asked: u64, max: u64, setting: &str| {
            if asked > max {
                problems.push(Problem::new(
                    format!("{key}.limits.{field}"),
                    format!("{asked} is above the operator's maximum of {max} (sandbox.{setting})"),
                ));
            }
        };
        over("memory_mib", l.memory_mib.get(), self.max_memory_mib.get(), "max_memory_mib");
        over("batch_timeout_ms", l.batch_timeout_ms.get(), self.max_batch_timeout_ms.get(), "max_batch_timeout_ms");
        over("max_output_mib", l.max_output_mib.get(), self.max_output_mib.get(), "max_output_mib");
        problems
    }
}

impl HostConfig {
    /// Parses YAML text and checks every rule. `origin` names the text in messages.
    pub fn from_yaml(text: &str, origin: &str) -> Result<Self, ConfigError> {
        let config: HostConfig = parse_yaml(text, origin)?;
        let problems = config.validate();
        if problems.is_empty() {
            Ok(config)
        } else {
            Err(ConfigError::Invalid { origin: origin.to_owned(), problems })
        }
    }

    /// Parses one connector definition (YAML) without checking its rules: the host validates
    /// what it is given ([`Connector::validate`]), together with its own rules.
    pub fn parse_connector_yaml(text: &str, origin: &str) -> Result<ConnectorConfig, ConfigError> {
        parse_yaml(text, origin)
    }

    /// Parses one connector definition sent as JSON (the admin API) without checking its
    /// rules, as [`HostConfig::parse_connector_yaml`].
    pub fn parse_connector_json(text: &[u8], origin: &str) -> Result<ConnectorConfig, ConfigError> {
        let mut de = serde_json::Deserializer::from_slice(text);
        let connector: ConnectorConfig = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let path = e.path().to_string();
            let about_a_value = e.inner().classify() == serde_json::error::Category::Data;
            let message = e.into_inner().to_string();
            let message = in_users_words(message.rfind(" at line ").map_or(message.as_str(), |i| &message[..i]));
            // A value of the wrong type or range names its key, as a problem, so that a form
            // (the console's editor) can show it at its field like any other problem.
            match path.as_str() {
                "." => ConfigError::Syntax { origin: origin.to_owned(), message },
                _ if about_a_value => ConfigError::Invalid { origin: origin.to_owned(), problems: vec![Problem::new(format!("connector.{path}"), message)] },
                _ => ConfigError::Syntax { origin: origin.to_owned(), message: format!("{path}: {message}") },
            }
        })?;
        Ok(connector)
    }

    /// Every rule broken by this configuration, each with its key.
    fn validate(&self) -> Vec<Problem> {
        let mut problems = Vec::new();
        match self.kafka.0.get("bootstrap.servers") {
            Some(Scalar::Text(s)) if !s.trim().is_empty() => {}
            _ => problems.push(Problem::new("kafka.bootstrap.servers", "set the broker addresses, e.g. `127.0.0.1:9092`")),
        }
        problems.extend(self.admin.validate());
        problems.extend(self.cluster.iter().flat_map(crate::ClusterConfig::check));
        for (team, policy) in &self.teams {
            problems.extend(policy.validate(&format!("teams.{team}")));
        }
        let mut names = BTreeSet::new();
        for (i, c) in self.connectors.iter().enumerate() {
            let key = format!("connectors[{i}]");
            if !names.insert(&c.name) {
                problems.push(Problem::new(format!("{key}.name"), format!("connector {:?} is defined twice", c.name.as_str())));
            }
            if let Err(found) = Connector::validate(c.clone(), &self.sandbox, &key) {
                problems.extend(found);
            }
        }
        problems
    }
}

/// Parses YAML into `T`. An error names the exact key (`connectors[0].limits.memory_mib`),
/// which the YAML parser alone reports only up to the enclosing mapping, and its position.
fn parse_yaml<T: DeserializeOwned>(text: &str, origin: &str) -> Result<T, ConfigError> {
    serde_path_to_error::deserialize(serde_yaml_ng::Deserializer::from_str(text)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let at = inner.location().map(|l| format!(" at line {} column {}", l.line(), l.column())).unwrap_or_default();
        let message = bare_message(&inner.to_string());
        let message = if path.is_empty() || path == "." { format!("{message}{at}") } else { format!("{path}: {message}{at}") };
        ConfigError::Syntax { origin: origin.to_owned(), message }
    })
}

/// The parser's message without its own (shorter) key path and position.
fn bare_message(text: &str) -> String {
    let text = text.rfind(" at line ").map_or(text, |i| &text[..i]);
    match text.split_once(": ") {
        Some((head, rest)) if !head.is_empty() && !head.contains(char::is_whitespace) => in_users_words(rest),
        _ => in_users_words(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
kafka:
  bootstrap.servers: 127.0.0.1:9092
  linger.ms: 5
connectors:
  - name: mask
    topics: [customers]
    output_topic: customers.masked
    transforms:
      - plugin: pii-mask
        config: { fields: [email] }
"#;

    #[test]
    fn a_good_file_parses_with_defaults() {
        let c = HostConfig::from_yaml(GOOD, "t.yaml").unwrap();
        assert_eq!(c.connectors[0].batch.max_records.get(), 500);
        assert_eq!(c.connectors[0].limits.memory_mib.get(), 64);
        assert_eq!(c.connectors[0].group_id(), "turnpike-mask");
        assert!(c.kafka.pairs().contains(&("linger.ms".into(), "5".into())));
    }
}
