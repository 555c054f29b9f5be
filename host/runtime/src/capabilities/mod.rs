//! Host capabilities: what a plugin may import besides WASI (which is linked, but grants
//! nothing).
//!
//! Each capability is a folder of its own, in the shape of Spin's "factors": what a connector
//! grants (from its validated config), what one instance keeps in its store, the import's
//! implementation and how it is linked, and the limits and counters it keeps. [`Capability`]
//! is the shape every one of them has; [`add_to_linker`] is the one list of them.
//!
//! Adding a capability means adding a folder, a line in [`add_to_linker`], its state as a
//! field of the store's data (`HostState`) with an accessor in [`CapabilityStates`], and,
//! when connectors grant it, its grant as a field of `InstanceLimits`.
//!
//! Capabilities never name the store type: they reach their state through
//! [`CapabilityStates`], so the store depends on the capabilities and not the other way round.

pub(crate) mod http;
pub(crate) mod log;
pub(crate) mod object_store;
pub(crate) mod sink_progress;
pub(crate) mod sql;

use wasmtime::component::Linker;
use wasmtime_wasi_http::WasiHttpView;

use crate::labels::InstanceLabels;

/// One host capability.
pub(crate) trait Capability {
    /// What a connector grants its plugins, from its validated config; `()` for a capability
    /// every plugin has.
    type Grant;
    /// What one instance keeps in its store: the capability's view of the grant, its limits
    /// and its counters.
    type State;

    /// Builds one instance's state. Called once per instance, before it is instantiated.
    fn prepare(grant: &Self::Grant, labels: &InstanceLabels) -> Self::State;

    /// Adds the capability's imports to `linker`. Called once per engine, before any plugin
    /// is loaded: a plugin importing something no capability links fails to load.
    fn add_to_linker<T: CapabilityStates>(linker: &mut Linker<T>) -> wasmtime::Result<()>;
}

/// The store's data as the capabilities see it: each capability's state.
///
/// `wasi:http` keeps its resources in the table it shares with the rest of WASI, so the
/// `http` capability is reached through [`WasiHttpView`] (which lends it that table too)
/// rather than through an accessor of its own.
pub(crate) trait CapabilityStates: WasiHttpView + Send + 'static {
    /// The `log` capability's state.
    fn log(&mut self) -> &mut log::LogState;
    /// The `object-store` capability's state.
    fn object_store(&mut self) -> &mut object_store::StoreState;
    /// The `sink-progress` capability's state.
    fn sink_progress(&mut self) -> &mut sink_progress::ProgressState;
    /// The `sql` capability's state.
    fn sql(&mut self) -> &mut sql::SqlState;
}

/// Adds every capability's imports to `linker`. This is the one list of capabilities.
pub(crate) fn add_to_linker<T: CapabilityStates>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    log::LogCapability::add_to_linker(linker)?;
    http::HttpCapability::add_to_linker(linker)?;
    object_store::ObjectStoreCapability::add_to_linker(linker)?;
    sink_progress::SinkProgressCapability::add_to_linker(linker)?;
    sql::SqlCapability::add_to_linker(linker)?;
    Ok(())
}
