//! The `log` import: admit the line under the instance's rate, hide the connector's secrets in
//! it, bound and escape it, then write it into the host's `tracing` log under the `plugin`
//! target.

use std::time::Instant;

use super::line::Line;
use super::state::LogState;
use crate::bindings::transform::turnpike::plugin::log::{Host, Level};
use crate::bindings::types;

/// The shared `types` interface has no functions; the world's linker wants a host for it all
/// the same (see [`super::LogCapability`]).
impl types::Host for LogState {}

impl LogState {
    /// One line as the host writes it: the connector's secrets hidden first, on the text as
    /// the plugin wrote it (cutting or escaping could split one), then bounded and escaped.
    fn line(&self, message: &str, fields: Vec<(String, String)>) -> Line {
        let fields: Vec<(String, String)> = fields.into_iter().map(|(k, v)| (self.scrub.clean_string(k), self.scrub.clean_string(v))).collect();
        Line::of(&self.scrub.clean(message), &fields)
    }
}

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
        let Line { message, fields } = self.line(&message, fields);
        match level {
            Level::Trace => tracing::trace!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Debug => tracing::debug!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Info => tracing::info!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Warn => tracing::warn!(target: "plugin", %connector, %plugin, %fields, "{message}"),
            Level::Error => tracing::error!(target: "plugin", %connector, %plugin, %fields, "{message}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::InstanceLabels;
    use crate::scrub::Scrub;

    #[test]
    fn a_secret_in_a_line_or_its_fields_is_hidden_before_it_is_cut() {
        let labels = InstanceLabels { connector: "c".into(), plugin: "p@1".into() };
        let state = LogState::new(labels, Scrub::new(["tok-8d7e6f".to_owned()]));
        let fields = vec![("auth".to_owned(), "Bearer tok-8d7e6f".to_owned()), ("tok-8d7e6f".to_owned(), "x".to_owned())];
        let line = state.line("calling with tok-8d7e6f\nnext", fields);
        assert_eq!(line.message, "calling with ***\\nnext");
        assert_eq!(line.fields, "auth=Bearer *** ***=x");
    }
}
