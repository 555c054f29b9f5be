//! Raw bindings generated from `wit/`. Plugin authors use the facade instead.
//!
//! The transform world (`passing-transform-plugin`) is generated here at the root (with the
//! shared `types` and `log` interfaces); the source and sink worlds in submodules reuse those, so a record type is
//! the same Rust type for every plugin kind.

wit_bindgen::generate!({
    path: "../../wit",
    world: "passing-transform-plugin",
    pub_export_macro: true,
    export_macro_name: "export_transform_world",
    default_bindings_module: "::turnpike_sdk::bindings",
    generate_all,
});

/// The source world, with the sql import only sources have.
pub mod source {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "source-plugin",
        pub_export_macro: true,
        export_macro_name: "export_source_world",
        default_bindings_module: "::turnpike_sdk::bindings::source",
        with: {
            "turnpike:plugin/types@0.1.6": crate::bindings::turnpike::plugin::types,
            "turnpike:plugin/log@0.1.6": crate::bindings::turnpike::plugin::log,
            // Only sources import it (`crate::sql`), so it is generated here.
            "turnpike:plugin/sql@0.1.6": generate,
        },
    });
}

/// The sink world, with the object-store and sink-progress imports only sinks have.
pub mod sink {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "sink-plugin",
        pub_export_macro: true,
        export_macro_name: "export_sink_world",
        default_bindings_module: "::turnpike_sdk::bindings::sink",
        with: {
            "turnpike:plugin/types@0.1.6": crate::bindings::turnpike::plugin::types,
            "turnpike:plugin/log@0.1.6": crate::bindings::turnpike::plugin::log,
            // Only sinks import these (`crate::storage`), so they are generated here.
            "turnpike:plugin/object-store@0.1.6": generate,
            "turnpike:plugin/sink-progress@0.1.6": generate,
        },
    });
}
