//! A compiled, type-checked plugin version, ready to instantiate cheaply.

use std::sync::Arc;

use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::Engine;

use crate::bindings::TransformPluginPre;
use crate::error::LoadError;
use crate::state::HostState;
use crate::Runtime;

/// Which Turnpike world a plugin implements; inferred from the component, never declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginKind {
    /// `turnpike:plugin/transform-plugin`
    Transform,
}

impl PluginKind {
    /// The kind as shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::Transform => "transform",
        }
    }
}

/// A plugin version: compiled once, its imports resolved and its world checked once. Cheap
/// to clone and share between tasks.
#[derive(Clone)]
pub struct Plugin {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: Runtime,
    digest: String,
    size: usize,
    kind: PluginKind,
    pre: TransformPluginPre<HostState>,
}

const WASM_MAGIC: &[u8; 4] = b"\0asm";
const CORE_MODULE_VERSION: [u8; 4] = [1, 0, 0, 0];

impl Runtime {
    /// Compiles a component and checks that it implements a Turnpike world. CPU-heavy (tens of
    /// milliseconds to seconds): call it from a blocking thread, not an async task.
    pub fn load(&self, bytes: &[u8]) -> Result<Plugin, LoadError> {
        if Engine::detect_precompiled(bytes).is_some() {
            return Err(LoadError::Precompiled);
        }
        if bytes.len() >= 8 && &bytes[..4] == WASM_MAGIC && bytes[4..8] == CORE_MODULE_VERSION {
            return Err(LoadError::CoreModule);
        }
        let component =
            Component::from_binary(self.engine(), bytes).map_err(|e| LoadError::Invalid(format!("{e:#}")))?;
        let pre = self
            .linker()
            .instantiate_pre(&component)
            .map_err(|e| LoadError::WrongWorld(format!("{e:#}")))?;
        let pre = TransformPluginPre::new(pre).map_err(|e| LoadError::WrongWorld(format!("{e:#}")))?;
        Ok(Plugin {
            inner: Arc::new(Inner {
                runtime: self.clone(),
                digest: digest(bytes),
                size: bytes.len(),
                kind: PluginKind::Transform,
                pre,
            }),
        })
    }
}

/// The identity of a component's bytes: `sha256`, hex-encoded.
pub fn digest(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl Plugin {
    /// `sha256` of the component bytes, hex-encoded: the plugin version's identity.
    pub fn digest(&self) -> &str {
        &self.inner.digest
    }

    /// Size of the component in bytes.
    pub fn size(&self) -> usize {
        self.inner.size
    }

    /// The world the plugin implements.
    pub fn kind(&self) -> PluginKind {
        self.inner.kind
    }

    pub(crate) fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }

    pub(crate) fn pre(&self) -> &TransformPluginPre<HostState> {
        &self.inner.pre
    }
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin").field("digest", &self.inner.digest).field("kind", &self.inner.kind).finish()
    }
}
