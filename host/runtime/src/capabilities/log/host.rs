//! The `log` import: admit the line under the instance's rate, bound and escape it, then write
//! it into the host's `tracing` log under the `plugin` target.

use std::time::Instant;

use super::line::Line;
use super::state::LogState;
use crate::bindings::transform::turnpike::plugin::log::{Host, Level};
use crate::bindings::types;

/// The shared `types` interface has no functions; the world's linker wants a host for it all
/// the same (see [`super::LogCapability`]).
impl types::Host for LogState {}

impl Host for LogState {
    fn log(&mut self, level: Level, message: String, fields: Vec<(String, String)>) {
        let admission = self.rate.admit(Instant::now());
        let (connector, plugin) = (&self.labels.connector, &self.labels.plugin);
        if admission.dropped_before > 0 {
            tracing::warn!(%connector, %plugin, dropped = admission.dropped_before, "plugin log lines dropped by the rate limit");
        }
        if !admission.write {
            return;
        }
        let Line { message, fields } = Line::of(&message, &fields);
        match level {
            Level::Trace => tracing::trace!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Debug => tracing::debug!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Info => tracing::info!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Warn => tracing::warn!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Error => tracing::error!(target: "plugin", %connector, %plugin, %fields, "{message}"),
        }
    }
}
