//! Host bindings generated from `wit/`, the one contract. No logic lives here.
//!
//! One module per world; the shared interfaces (`types`, `log`) are generated once, in
//! `transform`, and reused by the others so that a batch type is the same Rust type for
//! every plugin kind.

pub mod transform {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "transform-plugin",
        // Calls into plugins are async so that epoch interruption can yield to tokio and a
        // deadline can stop a runaway plugin without blocking a worker thread.
        exports: { default: async },
        additional_derives: [PartialEq],
    });
}

/// Since `0.1.4`: a transform that also exports `forwarding-transform`, the one the host calls.
pub mod forwarding {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "forwarding-transform-plugin",
        exports: { default: async },
        with: {
            "turnpike:plugin/types": crate::bindings::transform::turnpike::plugin::types,
            "turnpike:plugin/log": crate::bindings::transform::turnpike::plugin::log,
        },
    });
}

/// Since `0.1.5`: a forwarding transform whose batches arrive without their bytes. Its
/// `batch-input` import is linked by hand (`crate::lazy_input`), not through these bindings.
pub mod lazy {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "lazy-transform-plugin",
        exports: { default: async },
        with: {
            "turnpike:plugin/types": crate::bindings::transform::turnpike::plugin::types,
            "turnpike:plugin/log": crate::bindings::transform::turnpike::plugin::log,
        },
    });
}

/// Since `0.1.6`: a lazy transform whose result may also list inputs passed on whole. It
/// exports `lazy-transform` too, which this host does not call.
pub mod passing {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "passing-transform-plugin",
        exports: { default: async },
        with: {
            "turnpike:plugin/types": crate::bindings::transform::turnpike::plugin::types,
            "turnpike:plugin/log": crate::bindings::transform::turnpike::plugin::log,
        },
    });
}

pub mod source {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "source-plugin",
        exports: { default: async },
        // Queries wait for the database, so the SQL imports are async.
        imports: { "turnpike:plugin/sql": async },
        with: {
            "turnpike:plugin/types": crate::bindings::transform::turnpike::plugin::types,
            "turnpike:plugin/log": crate::bindings::transform::turnpike::plugin::log,
        },
    });
}

pub mod sink {
    wasmtime::component::bindgen!({
        path: "../../wit",
        world: "sink-plugin",
        exports: { default: async },
        // Object storage waits for upload budget, so its imports are async.
        imports: { "turnpike:plugin/object-store": async },
        with: {
            "turnpike:plugin/types": crate::bindings::transform::turnpike::plugin::types,
            "turnpike:plugin/log": crate::bindings::transform::turnpike::plugin::log,
            "turnpike:plugin/object-store.upload": crate::capabilities::object_store::UploadSlot,
        },
    });
}

pub use transform::turnpike::plugin::types;
pub use source::exports::turnpike::plugin::source::SourceBatch;

impl types::ErrorKind {
    /// The kind's one spelling outside WIT and Rust: in the API, the CLI, the SDKs and the docs.
    pub fn as_str(self) -> &'static str {
        match self {
            types::ErrorKind::InvalidRecord => "invalid_record",
            types::ErrorKind::Retriable => "retriable",
            types::ErrorKind::Fatal => "fatal",
        }
    }
}
