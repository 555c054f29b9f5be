//! The connector table: one entry per connector, with its definition, what the operator
//! asked for (its lifecycle, which is what is saved), and, while it runs, the handles of its
//! supervisor. Which operator action fits which state is [`transition`].

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use turnpike_config::{Connector, ConnectorConfig, ConnectorKind};
use turnpike_runtime::Interrupt;
use turnpike_state::Lifecycle;

use super::HostError;
use crate::status::{ConnectorStatus, LiveStatus};
use crate::stopping::{end_within, Stopping};
use crate::swap::{Stages, SwapRequest};

/// One connector of the host.
pub(super) struct Entry {
    pub(super) definition: Definition,
    pub(super) status: Arc<LiveStatus>,
    /// What the operator asked for; what is saved.
    pub(super) lifecycle: Lifecycle,
    /// The last save of this entry failed: the next call that touches it saves again, even
    /// one that changes nothing, so a retry after a full disk is not lost at restart.
    pub(super) unsaved: bool,
    /// `None` while nothing runs: stopped, or refused at restore.
    pub(super) run: Option<Run>,
}

/// What a connector is defined as.
#[allow(clippy::large_enum_variant, reason = "one per connector, kept in the table and moved only when it changes")]
pub(super) enum Definition {
    /// Validated: what runs.
    Valid(Connector),
    /// Restored from the state directory but breaking today's rules (the operator tightened a
    /// maximum, say): shown `FAILED` with its problems and never run until it validates.
    Refused(ConnectorConfig),
}

impl Definition {
    /// The configuration as written: what is saved and shown.
    pub(super) fn config(&self) -> &ConnectorConfig {
        match self {
            Definition::Valid(connector) => connector.config(),
            Definition::Refused(config) => config,
        }
    }

    /// The validated connector, unless it was refused.
    pub(super) fn connector(&self) -> Option<&Connector> {
        match self {
            Definition::Valid(connector) => Some(connector),
            Definition::Refused(_) => None,
        }
    }

    fn kind(&self) -> ConnectorKind {
        match self {
            Definition::Valid(connector) => connector.kind(),
            Definition::Refused(config) => kind_as_written(config),
        }
    }
}

/// The kind a refused definition names, for its status only (it never runs). It was valid
/// when it was saved, so it names exactly one.
fn kind_as_written(config: &ConnectorConfig) -> ConnectorKind {
    match (&config.source, &config.sink) {
        (Some(_), _) => ConnectorKind::Source,
        (None, Some(_)) => ConnectorKind::Sink,
        (None, None) => ConnectorKind::Transform,
    }
}

/// The handles of a connector's current run.
pub(super) struct Run {
    pub(super) cancel: CancellationToken,
    /// Ends the run's plugin calls when a stop takes longer than its grace period.
    pub(super) interrupt: Interrupt,
    pub(super) supervisor: JoinHandle<()>,
    pub(super) paused: watch::Sender<bool>,
    pub(super) swaps: watch::Sender<SwapRequest>,
    /// The connector the supervisor builds each run from (changed by a hot swap).
    pub(super) connector: watch::Sender<Connector>,
}

impl Run {
    /// Publishes a new generation of stages for the running task.
    pub(super) fn publish(&self, stages: Stages, reply: crate::swap::Reply) {
        let generation = self.swaps.borrow().generation + 1;
        self.swaps.send_replace(SwapRequest { generation, stages, reply });
    }

    /// Stops the run and waits for its supervisor to end. Its tasks finish the batch in hand
    /// and commit it; a plugin call still running after `grace` is ended then (the batch is
    /// not committed, and is read again at the next start), so a plugin that spins or waits
    /// cannot hold the stop for its whole batch timeout.
    pub(super) async fn stop(self, name: &str, grace: Duration) -> Result<(), tokio::task::JoinError> {
        self.cancel.cancel();
        let interrupt = self.interrupt.clone();
        end_within(Stopping { connector: name, task: None }, grace, &interrupt, self.join()).await
    }

    /// Waits for the supervisor to end (after [`CancellationToken::cancel`]). The channels
    /// stay open until it has: the task must see a stop, not its controls vanishing.
    async fn join(self) -> Result<(), tokio::task::JoinError> {
        let Run { supervisor, paused: _paused, swaps: _swaps, connector: _connector, cancel: _cancel, interrupt: _interrupt } = self;
        supervisor.await
    }
}

impl Entry {
    /// An entry with nothing running.
    pub(super) fn idle(definition: Definition, status: Arc<LiveStatus>, lifecycle: Lifecycle) -> Self {
        Self { definition, status, lifecycle, unsaved: false, run: None }
    }

    /// The status as the API shows it.
    pub(super) fn snapshot(&self) -> ConnectorStatus {
        self.status.snapshot(self.definition.config(), self.definition.kind())
    }
}

/// What the operator asks of a connector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    Pause,
    Resume,
    Stop,
    Restart,
    ResetOffsets,
}

/// The lifecycle `action` leads to for a connector whose saved lifecycle is `saved` and that
/// has a run in place (`running`) or not, or [`HostError::State`] when the action does not
/// fit: only a connector that runs can be paused, and only one that does not can have its
/// offsets reset (no consumer may commit over the reset). A restart keeps a pause.
pub(super) fn transition(name: &str, saved: Lifecycle, running: bool, action: Action) -> Result<Lifecycle, HostError> {
    match action {
        Action::Pause if !running => Err(HostError::State(format!("connector {name:?} is not running; resume it instead of pausing"))),
        Action::Pause => Ok(Lifecycle::Paused),
        Action::Resume => Ok(Lifecycle::Running),
        Action::Stop => Ok(Lifecycle::Stopped),
        Action::Restart if saved == Lifecycle::Paused => Ok(Lifecycle::Paused),
        Action::Restart => Ok(Lifecycle::Running),
        Action::ResetOffsets if running => Err(HostError::State(format!(
            "connector {name:?} is not stopped: stop it first (POST /v1/connectors/{name}/stop), so no consumer commits over the reset"
        ))),
        Action::ResetOffsets => Ok(saved),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_action_fits_the_states_it_names_and_no_other() {
        use Lifecycle::{Paused, Running, Stopped};
        // (saved, a run in place, action) → the lifecycle after, or `None` for a wrong state.
        let cases = [
            (Running, true, Action::Pause, Some(Paused)),
            (Paused, true, Action::Pause, Some(Paused)),
            (Stopped, false, Action::Pause, None),
            (Running, false, Action::Pause, None),
            (Paused, true, Action::Resume, Some(Running)),
            (Stopped, false, Action::Resume, Some(Running)),
            (Running, true, Action::Stop, Some(Stopped)),
            (Paused, true, Action::Restart, Some(Paused)),
            (Paused, false, Action::Restart, Some(Paused)),
            (Stopped, false, Action::Restart, Some(Running)),
            (Running, true, Action::Restart, Some(Running)),
            (Stopped, false, Action::ResetOffsets, Some(Stopped)),
            (Running, false, Action::ResetOffsets, Some(Running)),
            (Paused, true, Action::ResetOffsets, None),
        ];
        for (saved, running, action, after) in cases {
            match (transition("c", saved, running, action), after) {
                (Ok(got), Some(want)) => assert_eq!(got, want, "{saved:?} {running} {action:?}"),
                (Err(HostError::State(why)), None) => assert!(why.contains("\"c\""), "{why}"),
                (got, want) => panic!("{saved:?} {running} {action:?}: {got:?}, wanted {want:?}"),
            }
        }
    }

    #[test]
    fn a_refused_definition_shows_the_kind_it_names() {
        let parse = |yaml: &str| turnpike_config::HostConfig::parse_connector_yaml(yaml, "test").unwrap();
        let source = parse("name: g\noutput_topic: o\nsource: {plugin: datagen}\n");
        let sink = parse("name: s\ntopics: [a]\nsink: {plugin: http-sink}\n");
        let transform = parse("name: t\ntopics: [a]\noutput_topic: b\ntransforms: [{plugin: identity}]\n");
        let kinds: Vec<_> = [source, sink, transform].into_iter().map(|c| Definition::Refused(c).kind()).collect();
        assert_eq!(kinds, [ConnectorKind::Source, ConnectorKind::Sink, ConnectorKind::Transform]);
    }
}
