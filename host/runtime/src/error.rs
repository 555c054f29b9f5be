//! What can go wrong when loading, creating and calling a plugin. "The plugin said no"
//! ([`CreateError::Config`], a plugin error in a batch) is kept apart from "the plugin broke"
//! ([`Fault`]), because the pipeline treats them differently.

use std::fmt;

use crate::fault_class::FaultClass;

/// A component could not be loaded as a plugin.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The bytes are precompiled machine code. Only components are accepted: deserializing
    /// foreign machine code would let it run unchecked.
    #[error("this is a precompiled artefact, not a WebAssembly component: upload the .wasm component itself")]
    Precompiled,
    /// A core wasm module, not a component.
    #[error("this is a core WebAssembly module, not a component: build for wasm32-wasip2 or wrap it with `wasm-tools component new`")]
    CoreModule,
    /// Not WebAssembly at all, or invalid.
    #[error("not a valid WebAssembly component: {0}")]
    Invalid(String),
    /// A valid component that implements none of the Turnpike worlds.
    #[error("the component does not implement a Turnpike plugin world (turnpike:plugin/transform-plugin, source-plugin or sink-plugin @0.1.0): {0}")]
    WrongWorld(String),
    /// The engine itself could not be set up.
    #[error("the WebAssembly engine could not be set up: {0}")]
    Engine(String),
}

impl LoadError {
    pub(crate) fn engine(e: impl fmt::Display) -> Self {
        Self::Engine(format!("{e:#}"))
    }

    /// The class status pages and metrics labels show.
    pub fn class(&self) -> FaultClass {
        match self {
            LoadError::Precompiled => FaultClass::Precompiled,
            LoadError::CoreModule => FaultClass::CoreModule,
            LoadError::Invalid(_) => FaultClass::InvalidComponent,
            LoadError::WrongWorld(_) => FaultClass::WrongWorld,
            LoadError::Engine(_) => FaultClass::Engine,
        }
    }
}

/// A plugin instance could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    /// The plugin refused its configuration.
    #[error("the plugin refused its configuration{}: {message}", key.as_deref().map(|k| format!(" at key `{k}`")).unwrap_or_default())]
    Config {
        /// The offending key, if the plugin named one.
        key: Option<String>,
        /// The plugin's explanation.
        message: String,
    },
    /// The plugin implements another world than the stage needs (a sink used as a transform).
    #[error("this is a {actual} plugin; this stage needs a {wanted} plugin")]
    WrongKind {
        /// The kind the stage needs.
        wanted: &'static str,
        /// The plugin's kind.
        actual: &'static str,
    },
    /// Instantiation or `create` failed by a fault.
    #[error(transparent)]
    Fault(#[from] Fault),
    /// The connector is stopping: the host ended instantiation or `create` (its
    /// `InstanceLimits::interrupt` fired). Not the plugin's doing.
    #[error("{STOPPED}")]
    Stopped,
}

impl CreateError {
    /// The class status pages and metrics labels show.
    pub fn class(&self) -> FaultClass {
        match self {
            CreateError::Config { .. } => FaultClass::PluginConfig,
            CreateError::WrongKind { .. } => FaultClass::WrongKind,
            CreateError::Fault(f) => f.class(),
            CreateError::Stopped => FaultClass::Stopping,
        }
    }
}

/// A plugin call failed as a whole.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The plugin reported an error for the whole batch; the instance is still usable.
    #[error("the plugin failed the batch ({}): {message}", kind.as_str())]
    Plugin {
        /// How the plugin asks the host to treat it.
        kind: crate::ErrorKind,
        /// The plugin's message.
        message: String,
    },
    /// The plugin broke; the instance has been discarded.
    #[error(transparent)]
    Fault(#[from] Fault),
    /// The connector is stopping: the host ended the call (its `InstanceLimits::interrupt`
    /// fired) and discarded the instance. Not the plugin's doing: nothing of the call's input
    /// is to be committed or failed.
    #[error("{STOPPED}")]
    Stopped,
}

const STOPPED: &str = "the host ended the plugin call because its connector is stopping";

/// Why a call into a sandbox gave no answer: the plugin broke, or the host stopped it. Either
/// way the instance is poisoned.
#[derive(Debug)]
pub(crate) enum Unanswered {
    Fault(Fault),
    Stopped,
}

impl From<Fault> for Unanswered {
    fn from(fault: Fault) -> Self {
        Unanswered::Fault(fault)
    }
}

impl From<Unanswered> for CallError {
    fn from(u: Unanswered) -> Self {
        match u {
            Unanswered::Fault(fault) => CallError::Fault(fault),
            Unanswered::Stopped => CallError::Stopped,
        }
    }
}

impl From<Unanswered> for CreateError {
    fn from(u: Unanswered) -> Self {
        match u {
            Unanswered::Fault(fault) => CreateError::Fault(fault),
            Unanswered::Stopped => CreateError::Stopped,
        }
    }
}

/// A plugin broke: it trapped, ran out of time or memory, or returned malformed data. The
/// instance that did it is unusable and must be re-created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// The plugin trapped (a panic, an invalid operation).
    #[error("the plugin trapped: {message}")]
    Trap {
        /// The trap and, when the plugin wrote one, its last error output (panic message).
        message: String,
    },
    /// The call ran past its CPU deadline and was interrupted.
    #[error("the plugin ran longer than its limit of {limit_ms} ms and was interrupted")]
    Timeout {
        /// The limit that applied.
        limit_ms: u64,
    },
    /// The plugin tried to grow its memory past the cap, then failed.
    #[error("the plugin exceeded its memory limit of {limit_mib} MiB")]
    MemoryLimit {
        /// The cap that applied.
        limit_mib: u32,
    },
    /// The plugin tried to return more output than one batch may carry.
    #[error("the plugin tried to return more than its output limit of {limit}")]
    OutputLimit {
        /// The limit that applied, with its unit.
        limit: String,
    },
    /// The host has no room for another instance (the operator's `max_instances`).
    #[error("the host cannot create another plugin instance: {0}")]
    HostCapacity(String),
    /// The plugin returned data that breaks the contract (a span out of range, an unknown
    /// input index). A plugin bug.
    #[error("the plugin returned invalid output: {0}")]
    InvalidOutput(String),
}

impl Fault {
    /// The class status pages and metrics labels show.
    pub fn class(&self) -> FaultClass {
        match self {
            Fault::Trap { .. } => FaultClass::Trap,
            Fault::Timeout { .. } => FaultClass::Timeout,
            Fault::MemoryLimit { .. } => FaultClass::MemoryLimit,
            Fault::OutputLimit { .. } => FaultClass::OutputLimit,
            Fault::HostCapacity(_) => FaultClass::HostCapacity,
            Fault::InvalidOutput(_) => FaultClass::InvalidOutput,
        }
    }
}
