//! Operator events: connector state changes, plugin faults, restarts, give-ups. One place
//! logs, counts and broadcasts each event, so logs, metrics and the event stream agree.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::SystemTime;

use serde::Serialize;
use tokio::sync::broadcast;

use crate::connector_state::ConnectorState;

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EventKind {
    /// A connector changed state.
    StateChanged {
        /// The new state.
        state: ConnectorState,
        /// Why, when it failed.
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A plugin broke (trapped, timed out, hit a limit); its instance was replaced.
    PluginFault {
        /// `name@version`.
        plugin: String,
        /// The fault class (`trap`, `timeout`, `memory_limit`, `output_limit`, …).
        class: String,
        /// What happened.
        message: String,
    },
    /// A failed connector will be restarted after a delay.
    RestartScheduled {
        /// Failures counted in the current window, this one included.
        attempt: u32,
        /// The delay before the restart.
        delay_ms: u64,
    },
    /// A connector failed too often and stays failed until restarted by hand.
    GaveUp {
        /// Failures in the window.
        failures: u32,
        /// The window, in seconds.
        window_s: u64,
    },
    /// Someone asked for a restart.
    ManualRestart,
    /// A running connector switched plugin versions between two batches.
    PluginSwapped {
        /// Versions before.
        from: Vec<String>,
        /// Versions now.
        to: Vec<String>,
    },
    /// A switch was refused; the connector keeps its current versions.
    SwapFailed {
        /// The versions asked for.
        to: Vec<String>,
        /// Why they could not start.
        reason: String,
    },
    /// No broker answers the connector's Kafka clients: nothing is read or written until one
    /// does (nothing is lost either; the clients keep retrying). The state stays as it was.
    BrokerUnreachable {
        /// What the Kafka client said.
        message: String,
    },
    /// A broker answers again after an outage.
    BrokerReachable {
        /// How long no broker answered.
        unreachable_ms: u64,
    },
    /// A connector scaling by lag changed its task count.
    TasksScaled {
        /// Tasks before.
        from: usize,
        /// Tasks now.
        to: usize,
        /// Records behind when it decided.
        lag: i64,
    },
    /// A state-changing API request on a host with auth, allowed or refused. The event's
    /// `connector` is the one the request named, if any.
    Audit {
        /// The id of the token presented (never the token); none when it was missing or
        /// not valid.
        token: Option<String>,
        /// The token's team.
        team: Option<String>,
        /// The token's role.
        role: Option<String>,
        /// `METHOD /path`.
        action: String,
        /// The HTTP status of the answer.
        status: u16,
    },
}

impl EventKind {
    /// A short name for metrics labels.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::StateChanged { .. } => "state_changed",
            EventKind::PluginFault { .. } => "plugin_fault",
            EventKind::RestartScheduled { .. } => "restart_scheduled",
            EventKind::GaveUp { .. } => "gave_up",
            EventKind::ManualRestart => "manual_restart",
            EventKind::PluginSwapped { .. } => "plugin_swapped",
            EventKind::SwapFailed { .. } => "swap_failed",
            EventKind::BrokerUnreachable { .. } => "broker_unreachable",
            EventKind::BrokerReachable { .. } => "broker_reachable",
            EventKind::TasksScaled { .. } => "tasks_scaled",
            EventKind::Audit { .. } => "audit",
        }
    }
}

/// One event.
#[derive(Debug, Clone, Serialize)]
pub struct Event {
    /// When (RFC 3339).
    pub time: String,
    /// The connector concerned.
    pub connector: String,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// Events waiting for a slow subscriber, at most; a subscriber further behind misses the
/// oldest and is told how many.
const BACKLOG: usize = 1024;

/// The event hub.
pub struct Events {
    /// `None` once closed: streams end, so that an HTTP server shutting down is not held
    /// open by event subscribers.
    sender: Mutex<Option<broadcast::Sender<Event>>>,
    counts: Mutex<BTreeMap<&'static str, u64>>,
}

impl Default for Events {
    fn default() -> Self {
        Self { sender: Mutex::new(Some(broadcast::channel(BACKLOG).0)), counts: Mutex::new(BTreeMap::new()) }
    }
}

impl Events {
    /// Logs, counts and broadcasts an event.
    pub fn emit(&self, connector: &str, kind: EventKind) {
        match &kind {
            EventKind::StateChanged { state, error: Some(error) } => tracing::warn!(connector, ?state, %error, "connector state changed"),
            EventKind::StateChanged { state, error: None } => tracing::info!(connector, ?state, "connector state changed"),
            EventKind::PluginFault { plugin, class, message } => tracing::warn!(connector, %plugin, %class, %message, "plugin fault; instance replaced"),
            EventKind::RestartScheduled { attempt, delay_ms } => tracing::info!(connector, attempt, delay_ms, "restart scheduled"),
            EventKind::GaveUp { failures, window_s } => tracing::error!(connector, failures, window_s, "connector failed too often; staying FAILED until restarted by hand"),
            EventKind::ManualRestart => tracing::info!(connector, "manual restart"),
            EventKind::PluginSwapped { from, to } => tracing::info!(connector, ?from, ?to, "plugin versions swapped between batches"),
            EventKind::SwapFailed { to, reason } => tracing::warn!(connector, ?to, %reason, "plugin swap refused; keeping the running versions"),
            EventKind::BrokerUnreachable { message } => tracing::warn!(connector, %message, "no Kafka broker answers; the connector waits for one"),
            EventKind::BrokerReachable { unreachable_ms } => tracing::info!(connector, unreachable_ms, "a Kafka broker answers again"),
            EventKind::TasksScaled { from, to, lag } => tracing::info!(connector, from, to, lag, "task count scaled by lag"),
            EventKind::Audit { token, team, role, action, status } => tracing::info!(target: "turnpike::audit", connector, ?token, ?team, ?role, %action, status, "admin request"),
        }
        *self.counts.lock().unwrap_or_else(|p| p.into_inner()).entry(kind.name()).or_default() += 1;
        let event = Event { time: humantime::format_rfc3339_millis(SystemTime::now()).to_string(), connector: connector.to_owned(), kind };
        if let Some(sender) = self.sender.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            // No subscriber is fine: the event is still logged and counted.
            let _ = sender.send(event);
        }
    }

    /// A live feed of events from now on; it ends when the hub is closed.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        match self.sender.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(sender) => sender.subscribe(),
            None => broadcast::channel(1).1,
        }
    }

    /// Ends every feed (at shutdown). Events emitted later are still logged and counted.
    pub fn close(&self) {
        self.sender.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// How many events of each kind were emitted since start.
    pub fn counts(&self) -> BTreeMap<&'static str, u64> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}
