//! What a connector reports about itself: state, counters, the last fault.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;

/// A connector's lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ConnectorState {
    /// Defined, its task not yet running.
    Unassigned,
    /// Consuming and producing.
    Running,
    /// Stopped on purpose; nothing held.
    Stopped,
    /// Stopped by an error; see `error`.
    Failed,
}

/// Why a connector failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FaultInfo {
    /// A stable class: `config`, `plugin_config`, `trap`, `timeout`, `memory_limit`,
    /// `invalid_output`, `record_error`, `kafka`.
    pub class: String,
    /// What happened, for a person.
    pub message: String,
}

/// A snapshot of a connector's status, as the admin API shows it.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectorStatus {
    /// Connector name.
    pub name: String,
    /// Current state.
    pub state: ConnectorState,
    /// When the state last changed (RFC 3339).
    pub state_since: String,
    /// Records consumed.
    pub records_in: u64,
    /// Records produced and acknowledged.
    pub records_out: u64,
    /// Records that failed and were skipped (`errors.tolerance: all`).
    pub records_failed: u64,
    /// Plugin instances re-created after a fault.
    pub instance_restarts: u64,
    /// Plugins of the chain, as `name@version`.
    pub plugins: Vec<String>,
    /// Input topics.
    pub topics: Vec<String>,
    /// Output topic.
    pub output_topic: String,
    /// Why the connector failed, when it did.
    pub error: Option<FaultInfo>,
}

/// Live, shared status that the task updates and the API reads.
pub(crate) struct LiveStatus {
    pub(crate) records_in: AtomicU64,
    pub(crate) records_out: AtomicU64,
    pub(crate) records_failed: AtomicU64,
    pub(crate) instance_restarts: AtomicU64,
    state: Mutex<(ConnectorState, SystemTime, Option<FaultInfo>)>,
}

impl LiveStatus {
    pub(crate) fn new() -> Self {
        Self {
            records_in: AtomicU64::new(0),
            records_out: AtomicU64::new(0),
            records_failed: AtomicU64::new(0),
            instance_restarts: AtomicU64::new(0),
            state: Mutex::new((ConnectorState::Unassigned, SystemTime::now(), None)),
        }
    }

    pub(crate) fn set(&self, state: ConnectorState, error: Option<FaultInfo>) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        *s = (state, SystemTime::now(), error);
    }

    pub(crate) fn state(&self) -> ConnectorState {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).0
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, name: &str, plugins: Vec<String>, topics: Vec<String>, output_topic: String) -> ConnectorStatus {
        let (state, since, error) = self.state.lock().unwrap_or_else(|p| p.into_inner()).clone();
        ConnectorStatus {
            name: name.to_owned(),
            state,
            state_since: humantime::format_rfc3339_millis(since).to_string(),
            records_in: self.records_in.load(Ordering::Relaxed),
            records_out: self.records_out.load(Ordering::Relaxed),
            records_failed: self.records_failed.load(Ordering::Relaxed),
            instance_restarts: self.instance_restarts.load(Ordering::Relaxed),
            plugins,
            topics,
            output_topic,
            error,
        }
    }
}
