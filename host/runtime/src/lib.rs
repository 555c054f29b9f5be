//! The only crate that talks to wasmtime.
//!
//! Lifecycle, following wasmtime's guidance for untrusted plugins:
//! one [`Runtime`] (one `Engine`) per process → each plugin version compiled once into a
//! [`Plugin`] (which also type-checks the world and keeps the pre-instance) → one
//! [`TransformInstance`] (one `Store`) per running task, reused across batches and thrown away
//! after a trap. Every instance runs under a memory cap and a per-call CPU deadline.

mod batch;
mod bindings;
mod engine;
mod error;
mod http;
mod instance;
mod log;
mod plugin;
mod sandbox;
mod sink;
mod source;
mod source_batch;
mod state;

pub use batch::{
    input_len, input_record, input_source, next_stage_input, passthrough, single, BatchBuilder, OutputMerger, OutputView, Produced, RecordRef, Source,
};
pub use bindings::types::{ConfigError, ErrorKind, InputBatch, OutputBatch, PluginError, RecordError, TopicPartition};
pub use http::HttpGrant;
pub use sink::SinkInstance;
pub use source::SourceInstance;
pub use source_batch::Polled;
pub use engine::{EngineLimits, Runtime};
pub use error::{CallError, CreateError, Fault, LoadError};
pub use instance::{InstanceLimits, InstanceLabels, TransformInstance};
pub use log::escape_control;
pub use plugin::{digest, Plugin, PluginKind};
