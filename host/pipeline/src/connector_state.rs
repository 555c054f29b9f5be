//! A connector's lifecycle state as the API shows it. A module of its own because both the
//! status (which holds it) and the events (which announce its changes) name it, and neither
//! should import the other for it.

use serde::Serialize;

/// A connector's lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ConnectorState {
    /// Defined, its task not yet running.
    Unassigned,
    /// Consuming and producing.
    Running,
    /// Not consuming; plugin instances and clients kept, so resuming is immediate.
    Paused,
    /// Stopped on purpose; nothing held.
    Stopped,
    /// Stopped by an error; see `error`.
    Failed,
    /// Failed, and waiting to be restarted automatically.
    Restarting,
}
