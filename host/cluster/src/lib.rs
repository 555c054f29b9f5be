//! Several Turnpike hosts as one, with no leader: what they share lives in two compacted
//! Kafka topics that every host reads from the start.
//!
//! - The **config log** (`cluster.config_topic`): connector configs and lifecycles, restart
//!   requests and plugin uploads ([`records`]). Any host's API writes a change there; every
//!   host applies it when it reads it ([`apply`]), in log order, so all run the same
//!   connectors. Two writes from the same version: the first in the log wins everywhere, the
//!   second is answered `409` ([`view`]).
//! - The **status log** (`cluster.status_topic`): each host's report on each of its
//!   connectors and a heartbeat ([`reports`]), so any host answers for the whole cluster.
//!
//! Work is spread by Kafka itself: every host joins each transform and sink connector's
//! consumer group, and the broker gives each its share of the partitions. Sources, which read
//! no partitions, run where their slot is: every host joins one group reading the data-less
//! slots topic (`cluster.slots_topic`), and runs the sources whose slot the broker gave it.

mod apply;
mod records;
mod reports;
mod view;
mod writes;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::oneshot;
use turnpike_config::ClusterConfig;
use turnpike_kafka::{ensure_log_topic, tail, KafkaError, LogWriter, SlotOwner};
use turnpike_pipeline::{Host, HostError};

use self::reports::Reports;
use self::view::View;
use self::writes::Reply;

/// Why a host could not join its cluster.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// A log topic could not be created, written or read.
    #[error("cluster: {0}")]
    Kafka(#[from] KafkaError),
    /// The host is in a cluster already.
    #[error("cluster: {0}")]
    Host(#[from] HostError),
}

/// How long compaction leaves a config record alone: long enough for a refused write's
/// writer to write the winning record again after it (`apply`), so compaction never keeps
/// the loser alone.
const CONFIG_COMPACTION_LAG_MS: &str = "86400000";

/// How long a leaving host tries to withdraw its reports.
const WITHDRAW_WAIT: Duration = Duration::from_secs(10);

/// This host's membership of a cluster.
pub struct Cluster {
    host_id: String,
    config_log: LogWriter,
    status_log: LogWriter,
    view: Mutex<View>,
    /// Writes of this host waiting to be read back and applied, by write id.
    waiting: Mutex<HashMap<String, oneshot::Sender<Reply>>>,
    reports: Mutex<Reports>,
    /// The offset after the last config record applied here.
    applied: tokio::sync::watch::Sender<i64>,
    /// The config version each connector runs here (applied without error).
    running_versions: Mutex<HashMap<String, u64>>,
    /// The status publisher, stopped before this host withdraws its reports.
    publisher: Mutex<Option<tokio::task::JoinHandle<()>>>,
    interval: Duration,
    stop: Arc<AtomicBool>,
    /// This host's membership of the source slots group; left after the host shut down.
    slot_owner: Mutex<Option<SlotOwner>>,
}

impl Cluster {
    /// Joins the cluster `settings` name: creates its topics if missing, makes `host` route
    /// every change through the config log, applies the log up to its end (so the host runs
    /// what the cluster runs before its API answers), then keeps applying it and reporting.
    pub async fn join(host: Arc<Host>, kafka: Vec<(String, String)>, settings: &ClusterConfig) -> Result<Arc<Self>, ClusterError> {
        let (config_topic, status_topic) = (settings.config_topic.as_str(), settings.status_topic.as_str());
        ensure_log_topic(&kafka, config_topic, &[("min.compaction.lag.ms", CONFIG_COMPACTION_LAG_MS)]).await?;
        ensure_log_topic(&kafka, status_topic, &[]).await?;
        // Before any connector is applied: every source waits for its slot from the start.
        let slots_group = format!("turnpike-slots-{config_topic}");
        let slot_owner = SlotOwner::join(&kafka, &settings.slots_topic(), ClusterConfig::SOURCE_SLOTS, &slots_group).await?;
        host.place_sources(slot_owner.slots())?;
        let stop = Arc::new(AtomicBool::new(false));
        let cluster = Arc::new(Self {
            host_id: settings.host_id.clone(),
            config_log: LogWriter::new(&kafka, config_topic)?,
            status_log: LogWriter::new(&kafka, status_topic)?,
            view: Mutex::default(),
            waiting: Mutex::default(),
            reports: Mutex::default(),
            applied: tokio::sync::watch::channel(0).0,
            running_versions: Mutex::default(),
            publisher: Mutex::default(),
            interval: Duration::from_millis(settings.status_interval_ms.get()),
            stop: stop.clone(),
            slot_owner: Mutex::new(Some(slot_owner)),
        });
        host.join_cluster(cluster.clone())?;
        let group = format!("turnpike-cluster-{}", settings.host_id);
        let statuses = tail(&kafka, status_topic, &group, stop.clone())?;
        tokio::spawn(reports::read(cluster.clone(), statuses));
        let changes = tail(&kafka, config_topic, &group, stop)?;
        let (caught_up, read_to_end) = oneshot::channel();
        tokio::spawn(apply::run(cluster.clone(), host.clone(), changes, caught_up));
        tracing::info!(host = %settings.host_id, topic = %config_topic, "reading the cluster's config log");
        if read_to_end.await.is_err() {
            return Err(ClusterError::Host(HostError::Internal("the config log reader ended before it read the log to its end".into())));
        }
        tracing::info!(host = %settings.host_id, connectors = host.local_statuses().len(), "applied the cluster's config log; joined");
        let publisher = tokio::spawn(reports::publish(cluster.clone(), host));
        *cluster.publisher.lock().unwrap_or_else(|p| p.into_inner()) = Some(publisher);
        Ok(cluster)
    }

    /// Leaves the cluster after the host shut down: stops reporting, removes this host's
    /// reports (so the others stop showing it) and stops reading.
    pub async fn leave(&self) {
        let publisher = self.publisher.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(publisher) = publisher {
            publisher.abort();
            let _ = publisher.await;
        }
        // A broker that stopped answering would hold each write for minutes: the others
        // then show this host as not alive once its heartbeat is old.
        if tokio::time::timeout(WITHDRAW_WAIT, reports::withdraw(self)).await.is_err() {
            tracing::warn!(waited = ?WITHDRAW_WAIT, "could not withdraw this host's reports from the status log in time; the other hosts show it as not alive once its last heartbeat is old");
        }
        self.stop.store(true, Ordering::Relaxed);
        // The host's sources have stopped: their slots go to the other hosts at once.
        let slot_owner = self.slot_owner.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(mut slot_owner) = slot_owner {
            let _ = tokio::task::spawn_blocking(move || slot_owner.leave()).await;
        }
    }

    fn view(&self) -> std::sync::MutexGuard<'_, View> {
        self.view.lock().unwrap_or_else(|p| p.into_inner())
    }
}
