//! A connector definition: where records come from, which plugins transform them, where they
//! go, and the limits and error policy that apply.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::{ConnectorName, PluginRef, Problem, TopicName};

/// A transform connector: input topics → a chain of transform plugins → output topic.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectorConfig {
    /// Unique connector name.
    pub name: ConnectorName,
    /// Topics to consume.
    pub topics: Vec<TopicName>,
    /// Where outputs go unless a plugin names another topic for a record.
    pub output_topic: TopicName,
    /// The transform chain, applied in order. Each step's outputs are the next step's inputs.
    pub transforms: Vec<TransformStep>,
    /// Consumer group id; defaults to `turnpike-<name>` so each connector has its own group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// Where a new consumer group starts: `earliest` (default) or `latest`.
    #[serde(default = "default_start_from")]
    pub start_from: String,
    /// How records are grouped into batches for the plugins.
    #[serde(default)]
    pub batch: BatchConfig,
    /// What happens when a plugin rejects a record.
    #[serde(default)]
    pub errors: ErrorsConfig,
    /// Sandbox limits for every plugin instance of this connector.
    #[serde(default)]
    pub limits: Limits,
}

fn default_start_from() -> String {
    "earliest".to_owned()
}

/// One step of a transform chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransformStep {
    /// The plugin: `name`, `name@latest` or `name@VERSION`.
    pub plugin: PluginRef,
    /// The plugin's own configuration, handed to its `create` as JSON. Checked by the plugin.
    #[serde(default = "empty_object")]
    pub config: serde_json::Value,
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}

/// Batching. A batch closes when it has `max_records` records or `max_wait_ms` has passed
/// since its first record, whichever comes first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BatchConfig {
    /// Default 500; 1 to 100,000.
    pub max_records: u32,
    /// Default 20 ms; at most 60,000.
    pub max_wait_ms: u64,
}

impl Default for BatchConfig {
    fn default() -> Self {
        Self { max_records: 500, max_wait_ms: 20 }
    }
}

/// Whether record errors stop the connector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum ErrorTolerance {
    /// Default: the first record error fails the connector (nothing is silently dropped).
    #[default]
    None,
    /// Record errors are logged and counted, and the record is skipped.
    All,
}

/// The connector's error policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct ErrorsConfig {
    /// `none` (default) or `all`.
    pub tolerance: ErrorTolerance,
}

/// Sandbox limits per plugin instance. Defaults are chosen for JSON transforms of ordinary
/// records; raise them for heavy plugins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Linear memory cap in MiB. Default 64; 1 to 4096. A plugin that grows beyond it gets a
    /// failed allocation (most languages then trap).
    pub memory_mib: u32,
    /// CPU time one batch may take, in milliseconds. Default 5,000. A plugin that runs longer
    /// is interrupted and its instance discarded.
    pub batch_timeout_ms: u64,
    /// Time `create` may take, in milliseconds. Default 10,000.
    pub create_timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self { memory_mib: 64, batch_timeout_ms: 5_000, create_timeout_ms: 10_000 }
    }
}

impl ConnectorConfig {
    /// The consumer group this connector uses.
    pub fn group_id(&self) -> String {
        self.group_id.clone().unwrap_or_else(|| format!("turnpike-{}", self.name))
    }

    /// Checks the rules that types alone cannot express. `key` is the path of this connector
    /// in its document (e.g. `connectors[2]`); every problem is returned, none is fatal alone.
    pub fn validate(&self, key: &str) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut add = |field: &str, msg: String| problems.push(Problem::new(format!("{key}.{field}"), msg));
        if self.topics.is_empty() {
            add("topics", "list at least one topic to consume".into());
        }
        let mut seen = BTreeSet::new();
        for (i, t) in self.topics.iter().enumerate() {
            if !seen.insert(t) {
                add(&format!("topics[{i}]"), format!("topic {t:?} is listed twice"));
            }
        }
        if self.topics.contains(&self.output_topic) {
            add("output_topic", format!("{:?} is also an input topic: the connector would consume its own output", self.output_topic.as_str()));
        }
        if self.transforms.is_empty() {
            add("transforms", "list at least one transform step (use the `identity` plugin to copy records)".into());
        }
        for (i, step) in self.transforms.iter().enumerate() {
            if !step.config.is_object() {
                add(&format!("transforms[{i}].config"), "must be a mapping of keys to values".into());
            }
        }
        if !matches!(self.start_from.as_str(), "earliest" | "latest") {
            add("start_from", format!("{:?} is not one of `earliest`, `latest`", self.start_from));
        }
        if let Some(g) = &self.group_id {
            if g.trim().is_empty() {
                add("group_id", "must not be empty".into());
            }
        }
        if !(1..=100_000).contains(&self.batch.max_records) {
            add("batch.max_records", format!("{} is out of range 1..=100000", self.batch.max_records));
        }
        if self.batch.max_wait_ms > 60_000 {
            add("batch.max_wait_ms", format!("{} is above the maximum of 60000", self.batch.max_wait_ms));
        }
        if !(1..=4096).contains(&self.limits.memory_mib) {
            add("limits.memory_mib", format!("{} is out of range 1..=4096", self.limits.memory_mib));
        }
        if !(1..=600_000).contains(&self.limits.batch_timeout_ms) {
            add("limits.batch_timeout_ms", format!("{} is out of range 1..=600000", self.limits.batch_timeout_ms));
        }
        if !(1..=600_000).contains(&self.limits.create_timeout_ms) {
            add("limits.create_timeout_ms", format!("{} is out of range 1..=600000", self.limits.create_timeout_ms));
        }
        problems
    }
}
