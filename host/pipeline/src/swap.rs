//! Switching a running connector to other plugin versions between two batches.
//!
//! The host publishes the wanted stages on a watch channel with a generation number; the
//! connector's task applies a new generation at its next batch boundary (or at once while
//! idle or paused): it creates every new instance first and only then replaces the old
//! ones, so a version that fails to start leaves the connector running what it ran. The
//! batch in flight finishes, and is committed, on the versions it started with.

use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

use turnpike_config::RecordSelector;
use turnpike_runtime::Scrub;

use crate::registry::PluginInfo;

/// The outcome sent back to whoever asked: the versions now running, or why not.
pub(crate) type SwapReply = Result<Vec<String>, String>;

/// Who waits for the outcome, if anyone. Behind a mutex because watch values are cloned.
pub(crate) type Reply = Arc<Mutex<Option<oneshot::Sender<SwapReply>>>>;

/// Plugin versions to switch to, each with its config, references resolved, and the values
/// those resolved to, which the new instances must hide.
#[derive(Clone, Default)]
pub(crate) struct Stages {
    pub(crate) steps: Vec<StageSpec>,
    pub(crate) scrub: Scrub,
}

/// One stage to switch to: the plugin version, its resolved config and its predicate.
#[derive(Clone)]
pub(crate) struct StageSpec {
    pub(crate) info: PluginInfo,
    pub(crate) config: serde_json::Value,
    pub(crate) selector: Option<RecordSelector>,
}

/// A wanted set of stages.
#[derive(Clone, Default)]
pub(crate) struct SwapRequest {
    /// Increases with each request; the task applies a generation once.
    pub(crate) generation: u64,
    pub(crate) stages: Stages,
    pub(crate) reply: Reply,
}

impl SwapRequest {
    /// Sends the outcome to the waiter, if there is one still waiting.
    pub(crate) fn answer(&self, outcome: SwapReply) {
        if let Some(tx) = self.reply.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = tx.send(outcome);
        }
    }
}
