//! A connector definition: where records come from, which plugins transform them, where they
//! go, and the limits and error policy that apply.

use serde::{Deserialize, Serialize};

use crate::ranged::Ranged;
use crate::database::DatabaseAccess;
use crate::storage::StorageAccess;
use crate::{ConnectorName, PluginRef, TeamName, TopicName, Tasks};

/// A connector. Its kind follows from what it names:
/// - **transform**: `topics` → `transforms` → `output_topic`;
/// - **source**: `source` plugin → `transforms` (optional) → `output_topic`;
/// - **sink**: `topics` → `transforms` (optional) → `sink` plugin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ConnectorConfig {
    /// Unique connector name.
    pub name: ConnectorName,
    /// The team that owns it on a host with `admin.auth` (set from the token that created it;
    /// only an admin may name another team). Its topics must match the team's patterns
    /// (`teams.<team>.topics`). None: owned by the operator (admins only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<TeamName>,
    /// Topics to consume (transform and sink connectors).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<TopicName>,
    /// Where outputs go unless a plugin names another topic for a record (transform and
    /// source connectors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_topic: Option<TopicName>,
    /// A source plugin to read from, instead of `topics`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceStep>,
    /// The transform chain, applied in order. Each step's outputs are the next step's inputs.
    /// Required for transform connectors; optional for sources and sinks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub transforms: Vec<TransformStep>,
    /// A sink plugin to write to, instead of `output_topic`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink: Option<SinkStep>,
    /// Topics a plugin may send a record to instead of `output_topic` (transform and source
    /// connectors). Default: none, so plugins write only to `output_topic`; a record routed
    /// anywhere else fails under the error policy. The host's internal topics are never
    /// allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<TopicName>,
    /// Outgoing HTTP the connector's plugins may make. Default: none.
    #[serde(default, skip_serializing_if = "HttpAccess::is_default")]
    pub http: HttpAccess,
    /// Object storage the sink plugin may write to (sink connectors only). Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<StorageAccess>,
    /// The database the source plugin may query, read-only (source connectors only).
    /// Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<DatabaseAccess>,
    /// Consumer group id; defaults to `turnpike-<name>` so each connector has its own group.
    /// Must start with `turnpike-` (so a connector cannot read or reset another
    /// application's group) and may not be another connector's group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// Where a new consumer group starts: `earliest` (default) or `latest`.
    #[serde(default)]
    pub start_from: StartFrom,
    /// Pipelines (a consumer and its own plugin instances) the connector runs, so one busy
    /// connector uses several cores; its consumer group spreads the input partitions over
    /// them (a task beyond the partition count has none and waits). A number (default 1; 1
    /// to 64), or `{ min, max, target_lag_per_task }` to scale by lag. A source connector
    /// runs one.
    #[serde(default, skip_serializing_if = "Tasks::is_one")]
    pub tasks: Tasks,
    /// How records are grouped into batches for the plugins.
    #[serde(default)]
    pub batch: BatchConfig,
    /// What happens when a plugin rejects a record.
    #[serde(default)]
    pub errors: ErrorsConfig,
    /// Sandbox limits for every plugin instance of this connector.
    #[serde(default)]
    pub limits: Limits,
    /// Automatic restart after a failure.
    #[serde(default)]
    pub restart: RestartPolicy,
}

/// Where a consumer group without committed offsets starts reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StartFrom {
    /// The oldest record still in the topic (default: nothing is skipped).
    #[default]
    Earliest,
    /// Only records produced after the connector starts.
    Latest,
}

impl StartFrom {
    /// The librdkafka `auto.offset.reset` value.
    pub fn as_str(self) -> &'static str {
        match self {
            StartFrom::Earliest => "earliest",
            StartFrom::Latest => "latest",
        }
    }
}

/// One step of a transform chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TransformStep {
    /// The plugin: `name`, `name@latest` or `name@VERSION`.
    pub plugin: PluginRef,
    /// The plugin's own configuration, handed to its `create` as JSON. Checked by the plugin.
    #[serde(default = "empty_object")]
    #[schema(value_type = Object)]
    pub config: serde_json::Value,
    /// Runs the step only on the records this selects; the others pass it unchanged.
    /// Default: every record.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicate: Option<crate::Predicate>,
}

fn empty_object() -> serde_json::Value {
    serde_json::Value::Object(serde_json::Map::new())
}

/// The plugin a source connector reads from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceStep {
    /// The plugin: `name`, `name@latest` or `name@VERSION`.
    pub plugin: PluginRef,
    /// The plugin's own configuration, handed to its `create` as JSON.
    #[serde(default = "empty_object")]
    #[schema(value_type = Object)]
    pub config: serde_json::Value,
    /// How long to wait before polling again after a poll returned nothing. Default 1,000 ms;
    /// 1 to 3,600,000. A poll that returns records is followed by the next at once (as long
    /// as Kafka keeps up).
    #[serde(default = "default_interval")]
    pub poll_interval_ms: Ranged<1, 3_600_000>,
}

/// The plugin a sink connector writes to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SinkStep {
    /// The plugin: `name`, `name@latest` or `name@VERSION`.
    pub plugin: PluginRef,
    /// The plugin's own configuration, handed to its `create` as JSON.
    #[serde(default = "empty_object")]
    #[schema(value_type = Object)]
    pub config: serde_json::Value,
    /// How often the sink is flushed and, after a successful flush, consumer offsets
    /// committed. Default 1,000 ms; 1 to 3,600,000. Also flushed at shutdown and before
    /// partitions are given up.
    #[serde(default = "default_interval")]
    pub flush_interval_ms: Ranged<1, 3_600_000>,
}

fn default_interval() -> Ranged<1, 3_600_000> {
    Ranged::constant(1_000)
}

/// Outgoing HTTP (`wasi:http`) granted to the connector's plugins. Nothing is granted by
/// default. Entries are hosts — `api.example.com`, `*.example.com`, an IP address — with an
/// optional `:PORT` or `:*` (no port: 80 and 443). A name that resolves to a private,
/// loopback or link-local address is refused unless the address itself is listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct HttpAccess {
    /// Hosts the plugins may call.
    pub allow: Vec<String>,
    /// Longest wait to connect, in ms. Default 5,000; 1 to 60,000.
    pub connect_timeout_ms: Ranged<1, 60_000>,
    /// Longest wait for a response (first byte, and between body chunks), in ms. Default
    /// 30,000; 1 to 600,000. A plugin may ask for shorter timeouts, never longer.
    pub timeout_ms: Ranged<1, 600_000>,
}

impl Default for HttpAccess {
    fn default() -> Self {
        Self { allow: Vec::new(), connect_timeout_ms: Ranged::constant(5_000), timeout_ms: Ranged::constant(30_000) }
    }
}

impl HttpAccess {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// What a connector connects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ConnectorKind {
    /// Topics → transforms → topic.
    Transform,
    /// Source plugin → transforms → topic.
    Source,
    /// Topics → transforms → sink plugin.
    Sink,
}

/// Batching. A batch closes when it has `max_records` records or `max_bytes` bytes, or
/// `max_wait_ms` has passed since its first record, whichever comes first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BatchConfig {
    /// Default 500; 1 to 100,000.
    pub max_records: Ranged<1, 100_000>,
    /// Default 20 ms; 0 to 60,000.
    pub max_wait_ms: Ranged<0, 60_000>,
    /// Bytes of keys, values and headers one batch may hold; the batch closes at the record
    /// that reaches it. Default 16 MiB; 1 KiB to 1 GiB.
    pub max_bytes: Ranged<1_024, 1_073_741_824>,
    /// After this long with no record, a transform or sink connector's task gives its
    /// consumer up (a sink flushes and everything read is committed first; the task leaves
    /// its group) and the host watches its partitions through one reader shared by every
    /// idle task, taking a consumer again when a record arrives: an idle connector then
    /// holds no librdkafka client, threads or timers. The first record after the wait pays
    /// a group join (about 0.1 to 3 s). Default 60,000 ms; 0 keeps the consumer for ever;
    /// 0 to 86,400,000.
    pub idle_after_ms: Ranged<0, 86_400_000>,
}

impl Default for BatchConfig {
    fn default() -> Self {
        Self { max_records: Ranged::constant(500), max_wait_ms: Ranged::constant(20), max_bytes: Ranged::constant(16 << 20), idle_after_ms: Ranged::constant(60_000) }
    }
}

/// Whether record errors stop the connector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ErrorTolerance {
    /// Default: the first record error fails the connector (nothing is silently dropped).
    #[default]
    None,
    /// Record errors are logged and counted, and the record is skipped.
    All,
}

/// The connector's error policy, applied at every stage (source poll, each transform, sink
/// write).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ErrorsConfig {
    /// `none` (default) or `all`.
    pub tolerance: ErrorTolerance,
    /// With `tolerance: all`, failed records are written here unchanged, with headers saying
    /// where they came from and why they failed. Without it they are skipped and counted.
    pub dead_letter_topic: Option<TopicName>,
    /// How long an operation a plugin reports as `retriable` is retried, in ms, before it
    /// counts as failed. Default 60,000; 0 (no retries) to 86,400,000.
    pub retry_timeout_ms: Ranged<0, 86_400_000>,
    /// Longest pause between two retries, in ms; pauses start at 100 ms and double. Default
    /// 10,000; 1 to 3,600,000.
    pub retry_max_delay_ms: Ranged<1, 3_600_000>,
}

impl Default for ErrorsConfig {
    fn default() -> Self {
        Self {
            tolerance: ErrorTolerance::None,
            dead_letter_topic: None,
            retry_timeout_ms: Ranged::constant(60_000),
            retry_max_delay_ms: Ranged::constant(10_000),
        }
    }
}

/// Sandbox limits per plugin instance. Defaults are chosen for JSON transforms of ordinary
/// records; raise them for heavy plugins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Linear memory cap in MiB. Default 64; 1 to 4096. A plugin that grows beyond it gets a
    /// failed allocation (most languages then trap).
    pub memory_mib: Ranged<1, 4096>,
    /// CPU time one batch may take, in milliseconds. Default 5,000; 1 to 600,000. A plugin
    /// that runs longer is interrupted and its instance discarded.
    pub batch_timeout_ms: Ranged<1, 600_000>,
    /// Time `create` may take, in milliseconds. Default 10,000; 1 to 600,000.
    pub create_timeout_ms: Ranged<1, 600_000>,
    /// Output one batch may carry from the plugin, in MiB. Default 64; 1 to 4096.
    pub max_output_mib: Ranged<1, 4096>,
    /// Output records one batch may produce. Default 100,000; 1 to 10,000,000.
    pub max_output_records: Ranged<1, 10_000_000>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            memory_mib: Ranged::constant(64),
            batch_timeout_ms: Ranged::constant(5_000),
            create_timeout_ms: Ranged::constant(10_000),
            max_output_mib: Ranged::constant(64),
            max_output_records: Ranged::constant(100_000),
        }
    }
}

/// How a failed connector is restarted: after `base_ms`, doubling up to `max_ms`, each delay
/// varied by up to `jitter_percent` so that many connectors do not restart in lockstep. After
/// `max_failures` failures within `window_s` seconds it stays `FAILED` until restarted by hand.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RestartPolicy {
    /// Default true.
    pub enabled: bool,
    /// First delay. Default 1,000 ms.
    pub base_ms: Ranged<1, 3_600_000>,
    /// Longest delay. Default 60,000 ms.
    pub max_ms: Ranged<1, 86_400_000>,
    /// Random variation of each delay, in percent. Default 20.
    pub jitter_percent: Ranged<0, 100>,
    /// Failures tolerated within the window before giving up. Default 5.
    pub max_failures: Ranged<1, 1_000>,
    /// The window, in seconds. Default 600.
    pub window_s: Ranged<1, 604_800>,
}

impl Default for RestartPolicy {
    fn default() -> Self {
        Self {
            enabled: true,
            base_ms: Ranged::constant(1_000),
            max_ms: Ranged::constant(60_000),
            jitter_percent: Ranged::constant(20),
            max_failures: Ranged::constant(5),
            window_s: Ranged::constant(600),
        }
    }
}

impl ConnectorConfig {
    /// The consumer group this connector uses.
    pub fn group_id(&self) -> String {
        self.group_id.clone().unwrap_or_else(|| format!("turnpike-{}", self.name))
    }

    /// What the connector connects, from the fields it sets, for the rules only (which
    /// report a connector naming both a source and a sink; here it counts as a source).
    /// Everything downstream asks the validated [`crate::Connector`].
    pub(crate) fn kind(&self) -> ConnectorKind {
        match (&self.source, &self.sink) {
            (Some(_), _) => ConnectorKind::Source,
            (None, Some(_)) => ConnectorKind::Sink,
            (None, None) => ConnectorKind::Transform,
        }
    }

    /// Every plugin the connector runs, with the key its reference is written under.
    pub fn plugin_refs(&self) -> Vec<(String, &PluginRef)> {
        let mut refs = Vec::new();
        if let Some(s) = &self.source {
            refs.push(("source.plugin".to_owned(), &s.plugin));
        }
        refs.extend(self.transforms.iter().enumerate().map(|(i, t)| (format!("transforms[{i}].plugin"), &t.plugin)));
        if let Some(s) = &self.sink {
            refs.push(("sink.plugin".to_owned(), &s.plugin));
        }
        refs
    }
}
