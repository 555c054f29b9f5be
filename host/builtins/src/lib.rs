//! Turnpike's built-in plugins, compiled from `plugins/` by this crate's build script and
//! embedded in it: the host registers them from memory, so the `turnpike` binary runs on a
//! machine with no source checkout and no Rust toolchain.

/// A built-in plugin.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    /// Name users refer to it by.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// The WebAssembly component.
    pub wasm: &'static [u8],
    /// For a component holding several transforms, the one this name runs (the host loads
    /// the component once and registers it under each name with
    /// `turnpike_runtime::Plugin::preset`).
    pub preset: Option<&'static str>,
}

include!(concat!(env!("OUT_DIR"), "/builtins.rs"));

/// The built-in plugin called `name`.
pub fn get(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_is_an_embedded_component() {
        assert_eq!(BUILTINS.len(), 23);
        for b in BUILTINS {
            // The component-model preamble: magic, then version 0x0d with layer 1.
            assert_eq!(&b.wasm[..8], b"\0asm\x0d\0\x01\0", "{} is not a component", b.name);
        }
        assert!(get("pii-mask").is_some() && get("nope").is_none());
        let (cast, flatten) = (get("cast").unwrap(), get("flatten").unwrap());
        assert!(std::ptr::eq(cast.wasm, flatten.wasm), "the Kafka Connect transforms share one embedded component");
        assert_eq!((cast.preset, get("identity").unwrap().preset), (Some("cast"), None));
    }
}
