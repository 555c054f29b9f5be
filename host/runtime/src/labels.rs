//! The names an instance goes by in the host's log. A module of its own because the sandbox
//! and every capability log for an instance, and none of them owns the names.

/// Labels attached to everything an instance logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceLabels {
    /// The connector running the instance.
    pub connector: String,
    /// The plugin, as `name@version`.
    pub plugin: String,
}
