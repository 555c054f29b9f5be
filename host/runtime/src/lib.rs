//! The only crate that talks to wasmtime.
//!
//! Lifecycle, following wasmtime's guidance for untrusted plugins:
//! one [`Runtime`] (one `Engine`) per process → each plugin version compiled once into a
//! [`Plugin`] (which also type-checks the world and keeps the pre-instance) → one
//! [`TransformInstance`] (one `Store`) per running task, reused across batches and thrown away
//! after a trap. Every instance runs under a memory cap and a per-call CPU deadline.
//!
//! What a plugin may import besides WASI (which grants nothing) is a set of capabilities
//! (`capabilities/`: `log`, and `http` behind the connector's grant), each a folder with its
//! grant, its per-instance state and its linking; the store (`state.rs`) holds the core pieces
//! and one field per capability.
//!
//! Modules, from the top down; each imports only modules below it, so there are no cycles (a
//! `crate::X` path counts as an import of the module that defines `X`):
//! 1. `instance.rs`, `source.rs`, `sink.rs`: one live instance of each plugin kind;
//! 2. `sandbox.rs`: one `Store` under limits, and how a call's outcome is classified;
//! 3. `plugin.rs`: a compiled plugin and its pre-instance;
//! 4. `engine.rs`: the `Engine`, and the `Linker` with WASI and every capability;
//! 5. `state.rs`: the store's data;
//! 6. `limits.rs`: [`InstanceLimits`], the limits and grants of one instance;
//! 7. `capabilities/`: `log` and `http`, each reaching the store through a trait of its own
//!    rather than `state.rs`;
//! 8. the leaves: `labels.rs` ([`InstanceLabels`]); `scrub.rs` ([`Scrub`]); `interrupt.rs`
//!    ([`Interrupt`], and the guard every call runs under); `error.rs`, then
//!    `fault_class.rs` ([`FaultClass`]); `source_batch.rs`, then `batch.rs` (the batch layout), then
//!    `bindings.rs` (generated from `wit/`).

mod batch;
mod bindings;
mod capabilities;
mod engine;
mod error;
mod fault_class;
mod instance;
mod interrupt;
mod labels;
mod lazy_input;
mod limits;
mod plugin;
mod sandbox;
mod scrub;
mod sink;
mod source;
mod source_batch;
mod state;
mod usage;

pub use batch::{input_len, input_record, BatchBuilder, OutputView, Produced, RecordRef};
pub use bindings::types::{ConfigError, ErrorKind, InputBatch, OutputBatch, PluginError, RecordError, TopicPartition};
pub use capabilities::http::HttpGrant;
pub use capabilities::object_store::StorageGrant;
pub use capabilities::sink_progress::Holds;
pub use capabilities::sql::SqlGrant;
pub use sink::SinkInstance;
pub use source::SourceInstance;
pub use source_batch::Polled;
pub use engine::{EngineLimits, Runtime};
pub use error::{CallError, CreateError, Fault, LoadError};
pub use capabilities::log::escape_control;
pub use fault_class::FaultClass;
pub use instance::TransformInstance;
pub use interrupt::Interrupt;
pub use labels::InstanceLabels;
pub use limits::InstanceLimits;
pub use usage::Usage;
pub use scrub::Scrub;
pub use plugin::{digest, Plugin, PluginKind};
