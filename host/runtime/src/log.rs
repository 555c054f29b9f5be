//! The `log` import: plugin log lines go into the host's `tracing` log with the connector and
//! plugin attached, rate-limited per instance so a plugin cannot flood the host's log.

use std::time::{Duration, Instant};

use crate::bindings::transform::turnpike::plugin::log::{Host, Level};
use crate::bindings::types;
use crate::state::HostState;

/// Lines a plugin instance may log per second; the rest are counted and reported as dropped.
const LINES_PER_SECOND: u32 = 100;
/// Longest message kept; longer ones are cut.
const MAX_MESSAGE_CHARS: usize = 4096;

impl types::Host for HostState {}

impl Host for HostState {
    fn log(&mut self, level: Level, message: String, fields: Vec<(String, String)>) {
        let now = Instant::now();
        if now.duration_since(self.log_window_start) >= Duration::from_secs(1) {
            if self.log_dropped > 0 {
                tracing::warn!(connector = %self.labels.connector, plugin = %self.labels.plugin,
                    dropped = self.log_dropped, "plugin log lines dropped by the rate limit");
            }
            self.log_window_start = now;
            self.log_budget = LINES_PER_SECOND;
            self.log_dropped = 0;
        }
        if self.log_budget == 0 {
            self.log_dropped += 1;
            return;
        }
        self.log_budget -= 1;
        let message: String = message.chars().take(MAX_MESSAGE_CHARS).collect();
        let fields = fields.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(" ");
        let (connector, plugin) = (&self.labels.connector, &self.labels.plugin);
        match level {
            Level::Trace => tracing::trace!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Debug => tracing::debug!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Info => tracing::info!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Warn => tracing::warn!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Error => tracing::error!(target: "plugin", %connector, %plugin, %fields, "{message}"),
        }
    }
}
