//! Host bindings generated from `wit/`, the one contract. No logic lives here.

wasmtime::component::bindgen!({
    path: "../../wit",
    world: "transform-plugin",
    // Calls into plugins are async so that epoch interruption can yield to tokio and a
    // deadline can stop a runaway plugin without blocking a worker thread.
    exports: { default: async },
    additional_derives: [PartialEq],
});

pub use turnpike::plugin::types;
