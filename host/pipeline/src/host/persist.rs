//! The state directory: connectors saved as they were written, with their lifecycle, and
//! plugin uploads with their teams, brought back at start.

use std::sync::Arc;

use turnpike_runtime::FaultClass;
use turnpike_state::Lifecycle;

use super::table::{Definition, Entry};
use super::{Host, HostError};
use crate::connector_state::ConnectorState;
use crate::status::{FaultInfo, LiveStatus};

impl Host {
    /// Brings back the plugins and connectors saved in the state directory, each connector in
    /// its saved lifecycle state. A plugin that no longer loads fails only its connectors. A
    /// connector that breaks today's rules (the operator tightened a maximum, say) is not
    /// started: it shows `FAILED` with every problem until it is changed.
    pub async fn restore(&self) -> Result<(), HostError> {
        let Some(store) = &self.store else { return Ok(()) };
        let saved = store.load()?;
        for p in saved.plugins {
            // With the team that uploaded it: a restart neither shares a team's plugin nor
            // frees its name.
            let _ = self.load_plugin_at(p.name, p.version, p.bytes, p.uploaded_at, p.team, true).await;
        }
        for (config, lifecycle) in saved.connectors {
            let name = config.name.to_string();
            let _one_at_a_time = self.lock(&name).await;
            let status = Arc::new(LiveStatus::new(&name, self.shared.events.clone()));
            let entry = match self.checked(&config) {
                Err(problems) => {
                    let detail = problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ");
                    tracing::error!(connector = %name, problems = %detail, "saved connector breaks the host's rules; not started");
                    status.set(ConnectorState::Failed, Some(FaultInfo::new(FaultClass::Config, format!("not started: {detail}"))));
                    Entry::idle(Definition::Refused(config), status, lifecycle)
                }
                Ok(connector) if lifecycle == Lifecycle::Stopped => {
                    status.set(ConnectorState::Stopped, None);
                    Entry::idle(Definition::Valid(connector), status, lifecycle)
                }
                Ok(connector) => self.start(connector, status, lifecycle),
            };
            tracing::info!(connector = %name, ?lifecycle, "connector restored");
            self.connectors.lock().unwrap_or_else(|p| p.into_inner()).insert(name, entry);
        }
        Ok(())
    }

    /// Saves a connector's configuration and lifecycle, if persistence is on. A failure marks
    /// the entry unsaved, so the next call on it saves again.
    pub(super) fn save(&self, name: &str) -> Result<(), HostError> {
        // In a cluster the config log is what is kept.
        let Some(store) = self.store.as_ref().filter(|_| self.cluster.get().is_none()) else { return Ok(()) };
        let (config, lifecycle) = self.with(name, |r| (r.definition.config().clone(), r.lifecycle))?;
        let saved = store.save_connector(&config, lifecycle);
        let _ = self.with(name, |r| r.unsaved = saved.is_err());
        Ok(saved?)
    }
}
