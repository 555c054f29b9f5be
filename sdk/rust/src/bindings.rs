//! Raw bindings generated from `wit/`. Plugin authors use the facade instead.

wit_bindgen::generate!({
    path: "../../wit",
    world: "transform-plugin",
    pub_export_macro: true,
    export_macro_name: "export_transform_world",
    default_bindings_module: "::turnpike_sdk::bindings",
    generate_all,
});
