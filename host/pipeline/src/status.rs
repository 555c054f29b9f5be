//! What a connector reports about itself: state, counters, the last fault.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde::Serialize;
use turnpike_config::{ConnectorConfig, ConnectorKind, DatabaseTls};
use turnpike_object_store::Bucket;
use turnpike_sql::Database;
use turnpike_runtime::FaultClass;

use crate::connector_state::ConnectorState;
use crate::events::{EventKind, Events};
use crate::grant_status::{DatabaseStatus, StorageStatus};
use crate::measures::{BatchDurations, BrokerUnreachable, InstanceMemory, Measures, PartitionLag, TaskStatus};
use crate::throughput::Throughput;

/// Why a connector failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FaultInfo {
    /// A stable class (`trap`, `record_error`, `kafka`, …); README.md lists every one under
    /// "Fault classes" (`turnpike_runtime::FaultClass`).
    pub class: String,
    /// What happened, for a person.
    pub message: String,
    /// The record that failed the connector, when one did (`errors.tolerance: none` or a
    /// fatal record error): where it is and what it held, as text, capped.
    /// Boxed: most faults have none, and every `Result<_, FaultInfo>` would carry its size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<Box<FailingRecord>>,
}

/// The record a connector failed on, as its status shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FailingRecord {
    /// Its topic (for a source: the topic it was bound for).
    pub topic: String,
    /// Partition, for a record read from Kafka.
    pub partition: Option<i32>,
    /// Offset, for a record read from Kafka.
    pub offset: Option<i64>,
    /// The key as UTF-8 text (lossy), at most 4 KiB.
    pub key: Option<String>,
    /// The value as UTF-8 text (lossy), at most 4 KiB.
    pub value: Option<String>,
}

/// How much of a failing record's key and value the status shows.
const FAILING_RECORD_CAP: usize = 4096;

impl FailingRecord {
    /// The record, its key and value cut at the cap.
    pub(crate) fn new(topic: &str, at: Option<(i32, i64)>, key: Option<&[u8]>, value: Option<&[u8]>) -> Self {
        let text = |b: &[u8]| String::from_utf8_lossy(&b[..b.len().min(FAILING_RECORD_CAP)]).into_owned();
        Self { topic: topic.to_owned(), partition: at.map(|a| a.0), offset: at.map(|a| a.1), key: key.map(text), value: value.map(text) }
    }
}

impl FaultInfo {
    /// A fault of `class`, explained by `message`.
    pub(crate) fn new(class: FaultClass, message: impl Into<String>) -> Self {
        Self { class: class.into(), message: message.into(), record: None }
    }

    /// Why a plugin instance could not be created; a fault in `create` is also counted
    /// against the plugin.
    pub(crate) fn of_create(error: &turnpike_runtime::CreateError, plugin: &str, status: &LiveStatus) -> Self {
        if let turnpike_runtime::CreateError::Fault(f) = error {
            status.fault(plugin, f.class(), &f.to_string());
        }
        Self::new(error.class(), format!("plugin {plugin}: {error}"))
    }
}

/// A snapshot of a connector's status, as the admin API shows it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct ConnectorStatus {
    /// Connector name.
    pub name: String,
    /// `transform`, `source` or `sink`.
    pub kind: ConnectorKind,
    /// Current state.
    pub state: ConnectorState,
    /// When the state last changed (RFC 3339).
    pub state_since: String,
    /// Records consumed (or polled from the source).
    pub records_in: u64,
    /// Records produced and acknowledged (or, for a sink, written and flushed).
    pub records_out: u64,
    /// Bytes read (keys, values and headers of the records consumed or polled).
    pub bytes_in: u64,
    /// Bytes written (keys, values and headers produced; for a sink, of the batches it was
    /// given, records it refused included).
    pub bytes_out: u64,
    /// Records in per second over the last minute (or since start, when younger).
    pub records_in_per_s: f64,
    /// Records out per second over the last minute.
    pub records_out_per_s: f64,
    /// Bytes in per second over the last minute.
    pub bytes_in_per_s: f64,
    /// Bytes out per second over the last minute.
    pub bytes_out_per_s: f64,
    /// Records out per second in each 5-second slot of the last minute, oldest first.
    pub history: Vec<f64>,
    /// Records in the assigned input partitions not yet read (transforms and sinks), as the
    /// consumer last heard from the broker; none before the first read, for a source, and
    /// when not running.
    pub lag: Option<i64>,
    /// `lag` per input partition read so far (empty when `lag` is none).
    pub lag_by_partition: Vec<PartitionLag>,
    /// The tasks of a running or paused connector (transforms and sinks; see `tasks` in the
    /// config): each one's partitions (while paused, as last assigned), reads and lag (none
    /// while paused).
    pub tasks: Vec<TaskStatus>,
    /// CPU time the connector's plugin instances spent in calls since the host started.
    pub plugin_cpu_seconds: f64,
    /// Linear memory held by the connector's plugin instances now: the sum of `instances`.
    pub plugin_memory_bytes: u64,
    /// Each plugin instance's memory (0 for one that is gone).
    pub instances: Vec<InstanceMemory>,
    /// Set while no Kafka broker answers the connector's clients (the state stays as it
    /// was: nothing is lost, nothing moves); null otherwise.
    pub broker_unreachable: Option<BrokerUnreachable>,
    /// Times no broker answered, since the host started.
    pub broker_outages: u64,
    /// Input partitions the consumer group revoked from this connector's tasks on this host
    /// since it started, to move them to another member (another host, or another task of
    /// the connector); not those a task gave up by stopping. Each stops reading until its new
    /// owner starts. The cooperative assignor and KIP-848 revoke only partitions that change
    /// owner; an eager assignor revokes every one at each rebalance.
    pub partitions_revoked: u64,
    /// Input partitions this host's tasks lost since it started: the group went on without
    /// the task's consumer (its session or `max.poll.interval.ms` ran out, as in a pause
    /// longer than that interval), so another member may have read them meanwhile.
    pub partitions_lost: u64,
    /// In a cluster: every host's last report on this connector (its state there, the config
    /// version it runs, the partitions it reads); absent on a host of its own.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<crate::cluster::HostReport>,
    /// How long batches took (for `/metrics`; not in the JSON).
    #[serde(skip)]
    pub batch_durations: BatchDurations,
    /// Records that failed and were let go (`errors.tolerance: all`): skipped, or written to
    /// the dead-letter topic (counted in `records_dead_lettered` too).
    pub records_failed: u64,
    /// Failed records written to the dead-letter topic.
    pub records_dead_lettered: u64,
    /// Retries of operations a plugin reported as retriable.
    pub retries: u64,
    /// Plugin instances re-created after a fault.
    pub instance_restarts: u64,
    /// Transform instances replaced between batches because their memory neared its cap
    /// (language runtimes that collect late or leak at the boundary); not faults.
    pub instance_replacements: u64,
    /// Automatic restarts of the connector after a failure.
    pub restarts: u64,
    /// Plugin faults by class since start (`trap`, `timeout`, `memory_limit`, …); each
    /// replaced the instance.
    pub faults: BTreeMap<String, u64>,
    /// Times the connector failed, by class, since start.
    pub failures: BTreeMap<String, u64>,
    /// Plugins of the connector (source, transforms, sink, in order): `name@version` as
    /// resolved by the current run (as configured, e.g. `name@latest`, before the first run
    /// resolves them).
    pub plugins: Vec<String>,
    /// Input topics (none for a source).
    pub topics: Vec<String>,
    /// Output topic (none for a sink).
    pub output_topic: Option<String>,
    /// Other topics the connector's plugins may route records to (`routes`): with
    /// `output_topic`, every topic it can write. Internal topics are never among them.
    pub routes: Vec<String>,
    /// Why the connector failed, when it did.
    pub error: Option<FaultInfo>,
    /// Why the last attempt to switch plugin versions was refused, until one succeeds.
    pub swap_error: Option<String>,
    /// The object storage granted to the sink (`storage`), never with its credentials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub storage: Option<StorageStatus>,
    /// The database granted to the source (`database`), never with its password.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub database: Option<DatabaseStatus>,
}

/// Live, shared status that the task updates and the API reads.
pub(crate) struct LiveStatus {
    name: String,
    events: Arc<Events>,
    pub(crate) records_in: AtomicU64,
    pub(crate) records_out: AtomicU64,
    bytes_in: AtomicU64,
    bytes_out: AtomicU64,
    /// Plugin costs, batch times, lag and broker reachability.
    pub(crate) measures: Measures,
    throughput: Throughput,
    pub(crate) records_failed: AtomicU64,
    pub(crate) records_dead_lettered: AtomicU64,
    pub(crate) retries: AtomicU64,
    pub(crate) instance_restarts: AtomicU64,
    pub(crate) instance_replacements: AtomicU64,
    pub(crate) restarts: AtomicU64,
    faults: Mutex<BTreeMap<String, u64>>,
    failures: Mutex<BTreeMap<String, u64>>,
    /// The plugin versions of the current run, once resolved.
    plugins: Mutex<Option<Vec<String>>>,
    swap_error: Mutex<Option<String>>,
    state: Mutex<(ConnectorState, SystemTime, Option<FaultInfo>)>,
    /// The current run's store client, for its retry count.
    bucket: Mutex<Option<Arc<Bucket>>>,
    database: Mutex<Option<Arc<Database>>>,
}

impl LiveStatus {
    pub(crate) fn new(name: &str, events: Arc<Events>) -> Self {
        Self {
            name: name.to_owned(),
            events,
            records_in: AtomicU64::new(0),
            records_out: AtomicU64::new(0),
            bytes_in: AtomicU64::new(0),
            bytes_out: AtomicU64::new(0),
            measures: Measures::default(),
            throughput: Throughput::new(),
            records_failed: AtomicU64::new(0),
            records_dead_lettered: AtomicU64::new(0),
            retries: AtomicU64::new(0),
            instance_restarts: AtomicU64::new(0),
            instance_replacements: AtomicU64::new(0),
            restarts: AtomicU64::new(0),
            faults: Mutex::new(BTreeMap::new()),
            failures: Mutex::new(BTreeMap::new()),
            plugins: Mutex::new(None),
            swap_error: Mutex::new(None),
            state: Mutex::new((ConnectorState::Unassigned, SystemTime::now(), None)),
            bucket: Mutex::new(None),
            database: Mutex::new(None),
        }
    }

    /// The class of the error the status shows, if any.
    pub(crate) fn error_class(&self) -> Option<String> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).2.as_ref().map(|e| e.class.clone())
    }

    /// Changes state and emits the event. `RESTARTING` and `FAILED` without a new error keep
    /// the last one, so the status still says why.
    pub(crate) fn set(&self, state: ConnectorState, error: Option<FaultInfo>) {
        if let (ConnectorState::Failed, Some(e)) = (state, &error) {
            *self.failures.lock().unwrap_or_else(|p| p.into_inner()).entry(e.class.clone()).or_default() += 1;
        }
        {
            let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
            // The tasks of one run each say `RUNNING` (or `PAUSED`): one change, one event.
            if s.0 == state && error.is_none() && matches!(state, ConnectorState::Running | ConnectorState::Paused) {
                return;
            }
            let keeps_error = matches!(state, ConnectorState::Restarting | ConnectorState::Failed);
            let error = error.clone().or_else(|| if keeps_error { s.2.clone() } else { None });
            *s = (state, SystemTime::now(), error);
        }
        self.events.emit(&self.name, EventKind::StateChanged { state, error: error.map(|e| format!("{}: {}", e.class, e.message)) });
    }

    /// Counts and reports a plugin fault (in `create` or in a batch).
    pub(crate) fn fault(&self, plugin: &str, class: FaultClass, message: &str) {
        *self.faults.lock().unwrap_or_else(|p| p.into_inner()).entry(class.into()).or_default() += 1;
        self.events.emit(&self.name, EventKind::PluginFault { plugin: plugin.to_owned(), class: class.into(), message: message.to_owned() });
    }

    /// Records the plugin versions the current run resolved (`name@version`).
    pub(crate) fn set_plugins(&self, plugins: Vec<String>) {
        *self.plugins.lock().unwrap_or_else(|p| p.into_inner()) = Some(plugins);
    }

    /// Forgets the resolved versions: the status shows the configured references again.
    pub(crate) fn forget_plugins(&self) {
        *self.plugins.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// The plugin versions of the current run.
    pub(crate) fn plugins(&self) -> Vec<String> {
        self.plugins.lock().unwrap_or_else(|p| p.into_inner()).clone().unwrap_or_default()
    }

    /// Keeps the current run's store client, whose retries the status shows.
    pub(crate) fn set_bucket(&self, bucket: Arc<Bucket>) {
        *self.bucket.lock().unwrap_or_else(|p| p.into_inner()) = Some(bucket);
    }

    /// Keeps the current run's database client, whose reconnects the status shows.
    pub(crate) fn set_database(&self, database: Arc<Database>) {
        *self.database.lock().unwrap_or_else(|p| p.into_inner()) = Some(database);
    }

    /// Records the outcome of a swap: `None` when it succeeded.
    pub(crate) fn set_swap_error(&self, error: Option<String>) {
        *self.swap_error.lock().unwrap_or_else(|p| p.into_inner()) = error;
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn events(&self) -> &Events {
        &self.events
    }

    pub(crate) fn state(&self) -> ConnectorState {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// Counts `records` of `bytes` task `task` read (consumed or polled).
    pub(crate) fn count_in(&self, task: usize, records: u64, bytes: u64) {
        self.measures.task_read(task, records, bytes);
        Self::add(&self.records_in, records);
        Self::add(&self.bytes_in, bytes);
        self.throughput.count(true, records, bytes);
    }

    /// Counts `records` of `bytes` task `task` wrote safely (acknowledged, or flushed by a
    /// sink).
    pub(crate) fn count_out(&self, task: usize, records: u64, bytes: u64) {
        self.measures.task_wrote(task, records, bytes);
        Self::add(&self.records_out, records);
        Self::add(&self.bytes_out, bytes);
        self.throughput.count(false, records, bytes);
    }

    /// The status of the connector `config` defines, of `kind`. Its plugin references are
    /// shown as written until a run resolves them.
    pub(crate) fn snapshot(&self, config: &ConnectorConfig, kind: ConnectorKind) -> ConnectorStatus {
        let configured = config.plugin_refs().into_iter().map(|(_, r)| r.to_string()).collect();
        let plugins = self.plugins.lock().unwrap_or_else(|p| p.into_inner()).clone().unwrap_or(configured);
        let (state, since, error) = self.state.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let rates = self.throughput.rates();
        // Lag only while a consumer reads: a paused, failed or stopped connector's last figure
        // would be stale, or say it is caught up while it is stuck (`offsets` has the lag from
        // its committed offsets).
        let lag_by_partition = if state == ConnectorState::Running { self.measures.partition_lag() } else { Vec::new() };
        let instances = self.measures.instances();
        ConnectorStatus {
            name: config.name.to_string(),
            kind,
            state,
            state_since: humantime::format_rfc3339_millis(since).to_string(),
            records_in: self.records_in.load(Ordering::Relaxed),
            records_out: self.records_out.load(Ordering::Relaxed),
            bytes_in: self.bytes_in.load(Ordering::Relaxed),
            bytes_out: self.bytes_out.load(Ordering::Relaxed),
            records_in_per_s: rates.records_in_per_s,
            records_out_per_s: rates.records_out_per_s,
            bytes_in_per_s: rates.bytes_in_per_s,
            bytes_out_per_s: rates.bytes_out_per_s,
            history: rates.history,
            lag: (!lag_by_partition.is_empty()).then(|| lag_by_partition.iter().map(|p| p.lag).sum()),
            lag_by_partition,
            tasks: match state {
                ConnectorState::Running => self.measures.tasks(),
                // A paused connector's tasks are shown with their partitions as last assigned
                // (a pause longer than `max.poll.interval.ms` hands them back to the group
                // unseen), and without lag, which no read updates while paused.
                ConnectorState::Paused => self.measures.tasks().into_iter().map(|t| TaskStatus { lag: None, ..t }).collect(),
                _ => Vec::new(),
            },
            plugin_cpu_seconds: self.measures.cpu_seconds(),
            plugin_memory_bytes: instances.iter().map(|i| i.memory_bytes).sum(),
            instances,
            // A stopped connector has no run to end an outage it saw: not shown. A connector
            // still starting (UNASSIGNED until its first run is up) shows it.
            broker_unreachable: self.measures.outage().filter(|_| state != ConnectorState::Stopped).map(|u| BrokerUnreachable { since: humantime::format_rfc3339_millis(u.since).to_string(), message: u.message }),
            broker_outages: self.measures.broker_outages.load(Ordering::Relaxed),
            partitions_revoked: self.measures.partitions_taken.revoked.load(Ordering::Relaxed),
            partitions_lost: self.measures.partitions_taken.lost.load(Ordering::Relaxed),
            hosts: Vec::new(),
            batch_durations: self.measures.batch_durations(),
            records_failed: self.records_failed.load(Ordering::Relaxed),
            records_dead_lettered: self.records_dead_lettered.load(Ordering::Relaxed),
            retries: self.retries.load(Ordering::Relaxed),
            instance_restarts: self.instance_restarts.load(Ordering::Relaxed),
            instance_replacements: self.instance_replacements.load(Ordering::Relaxed),
            restarts: self.restarts.load(Ordering::Relaxed),
            faults: self.faults.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            failures: self.failures.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            plugins,
            topics: config.topics.iter().map(ToString::to_string).collect(),
            output_topic: config.output_topic.as_ref().map(ToString::to_string),
            routes: config.routes.iter().map(ToString::to_string).collect(),
            error,
            swap_error: self.swap_error.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            storage: config.storage.as_ref().map(|s| StorageStatus {
                bucket: s.bucket.clone(),
                prefix: s.prefix.clone(),
                endpoint: s.endpoint.clone(),
                region: s.region.clone(),
                credentials: if s.credentials.is_some() { "static" } else { "host chain" }.to_owned(),
                retries: self.bucket.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map_or(0, |b| b.retries()),
            }),
            database: config.database.as_ref().map(|d| DatabaseStatus {
                url: d.url.clone(),
                user: d.user.clone(),
                tables: d.tables.clone(),
                tls: match d.effective_tls() {
                    DatabaseTls::Disable => "disable",
                    DatabaseTls::Require => "require",
                }
                .to_owned(),
                reconnects: self.database.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map_or(0, |db| db.retries()),
            }),
        }
    }
}
