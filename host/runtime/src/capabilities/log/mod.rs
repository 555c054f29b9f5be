//! The `log` capability: plugin log lines go into the host's `tracing` log with the connector
//! and plugin attached, rate-limited per instance so a plugin cannot flood the host's log
//! (`state.rs`), and bounded and escaped per line so one line can neither grow without limit
//! nor pass for a host line (`line.rs`): a newline in plugin text would start a forged one; an
//! escape sequence would reach the operator's terminal. `host.rs` is the import itself.
//!
//! Every plugin has it: there is nothing to grant. What it is prepared with is what to hide:
//! the connector's secret values are replaced by `***` in each line before anything else.

mod host;
mod line;
mod state;

use wasmtime::component::{HasSelf, Linker};

pub use line::escape_control;
pub(crate) use state::LogState;

use super::{Capability, CapabilityStates};
use crate::bindings::transform::TransformPlugin;
use crate::labels::InstanceLabels;
use crate::scrub::Scrub;

/// The `log` capability.
pub(crate) struct LogCapability;

impl Capability for LogCapability {
    /// Not a permission: the secret values to hide from the instance's lines.
    type Grant = Scrub;
    type State = LogState;

    fn prepare(scrub: &Scrub, labels: &InstanceLabels) -> LogState {
        LogState::new(labels.clone(), scrub.clone())
    }

    /// Links the Turnpike world's imports: `log`, and the shared `types` interface, which
    /// has no functions but must be linked all the same. One world's linking serves all
    /// three, since they share both interfaces (see `bindings.rs`).
    fn add_to_linker<T: CapabilityStates>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        TransformPlugin::add_to_linker::<T, HasSelf<LogState>>(linker, T::log)
    }
}
