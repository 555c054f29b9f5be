//! A compiled, type-checked plugin version, ready to instantiate cheaply.

use std::path::Path;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use wasmtime::component::Component;
use wasmtime::Engine;

use crate::bindings::forwarding::ForwardingTransformPluginPre;
use crate::bindings::lazy::LazyTransformPluginPre;
use crate::bindings::passing::PassingTransformPluginPre;
use crate::bindings::sink::SinkPluginPre;
use crate::bindings::source::SourcePluginPre;
use crate::bindings::transform::TransformPluginPre;
use crate::error::LoadError;
use crate::state::HostState;
use crate::Runtime;

/// Which Turnpike world a plugin implements; inferred from the component, never declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginKind {
    /// `turnpike:plugin/transform-plugin`
    Transform,
    /// `turnpike:plugin/source-plugin`
    Source,
    /// `turnpike:plugin/sink-plugin`
    Sink,
}

impl PluginKind {
    /// The kind as shown to users.
    pub fn as_str(self) -> &'static str {
        match self {
            PluginKind::Transform => "transform",
            PluginKind::Source => "source",
            PluginKind::Sink => "sink",
        }
    }
}

/// A plugin version: compiled once, its imports resolved and its world checked once. Cheap
/// to clone and share between tasks.
#[derive(Clone)]
pub struct Plugin {
    inner: Arc<Inner>,
    /// For a component that holds several transforms (the Kafka Connect ones): which one
    /// this name runs. See [`Plugin::preset`].
    preset: Option<Arc<str>>,
}

struct Inner {
    runtime: Runtime,
    digest: String,
    size: usize,
    pre: Pre,
}

/// The pre-instance of whichever world the component implements.
pub(crate) enum Pre {
    Transform(TransformPre),
    Source(SourcePluginPre<HostState>),
    Sink(SinkPluginPre<HostState>),
}

/// A transform's pre-instance: one that may list inputs passed on whole (since `0.1.6`; lazy
/// too), one whose batches come without their bytes until it asks (since `0.1.5`; it forwards
/// too), one whose outputs may forward parts of their input (since `0.1.4`), or one that copies
/// every output byte.
pub(crate) enum TransformPre {
    Passing(PassingTransformPluginPre<HostState>),
    Lazy(LazyTransformPluginPre<HostState>),
    Forwarding(ForwardingTransformPluginPre<HostState>),
    Plain(TransformPluginPre<HostState>),
}

impl Pre {
    /// Finds the world a component implements by trying each in turn; a transform is run
    /// through the newest transform interface it exports.
    fn of(pre: wasmtime::component::InstancePre<HostState>) -> Result<Self, LoadError> {
        match PassingTransformPluginPre::new(pre.clone()) {
            Ok(p) => return Ok(Pre::Transform(TransformPre::Passing(p))),
            // A component that exports the interface but does not match it is broken: say
            // why rather than quietly run an older export.
            Err(e) if exports(&pre, "passing-transform") => return Err(LoadError::WrongWorld(format!("passing transform: {e:#}"))),
            Err(_) => {}
        }
        match LazyTransformPluginPre::new(pre.clone()) {
            Ok(p) => return Ok(Pre::Transform(TransformPre::Lazy(p))),
            Err(e) if exports(&pre, "lazy-transform") => return Err(LoadError::WrongWorld(format!("lazy transform: {e:#}"))),
            Err(_) => {}
        }
        match ForwardingTransformPluginPre::new(pre.clone()) {
            Ok(p) => return Ok(Pre::Transform(TransformPre::Forwarding(p))),
            Err(e) if exports(&pre, "forwarding-transform") => return Err(LoadError::WrongWorld(format!("forwarding transform: {e:#}"))),
            Err(_) => {}
        }
        let mut why = Vec::new();
        match TransformPluginPre::new(pre.clone()) {
            Ok(p) => return Ok(Pre::Transform(TransformPre::Plain(p))),
            Err(e) => why.push(format!("transform: {e:#}")),
        }
        match SourcePluginPre::new(pre.clone()) {
            Ok(p) => return Ok(Pre::Source(p)),
            Err(e) => why.push(format!("source: {e:#}")),
        }
        match SinkPluginPre::new(pre) {
            Ok(p) => Ok(Pre::Sink(p)),
            Err(e) => {
                why.push(format!("sink: {e:#}"));
                Err(LoadError::WrongWorld(why.join("; ")))
            }
        }
    }

    fn kind(&self) -> PluginKind {
        match self {
            Pre::Transform(_) => PluginKind::Transform,
            Pre::Source(_) => PluginKind::Source,
            Pre::Sink(_) => PluginKind::Sink,
        }
    }

    pub(crate) fn transform(&self) -> Option<&TransformPre> {
        if let Pre::Transform(p) = self { Some(p) } else { None }
    }

    pub(crate) fn source(&self) -> Option<&SourcePluginPre<HostState>> {
        if let Pre::Source(p) = self { Some(p) } else { None }
    }

    pub(crate) fn sink(&self) -> Option<&SinkPluginPre<HostState>> {
        if let Pre::Sink(p) = self { Some(p) } else { None }
    }
}

/// Whether the component exports `interface` of the `turnpike:plugin` package (any `0.1.x`).
fn exports(pre: &wasmtime::component::InstancePre<HostState>, interface: &str) -> bool {
    let engine = pre.component().engine();
    let prefix = format!("turnpike:plugin/{interface}@0.1.");
    pre.component().component_type().exports(engine).any(|(name, _)| name.starts_with(&prefix))
}

const WASM_MAGIC: &[u8; 4] = b"\0asm";

/// The file name of a component's compiled artefact: its content digest and a hash of
/// everything that makes compiled code compatible (wasmtime version, target, settings).
fn artefact_name(engine: &Engine, digest: &str) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut h);
    env!("CARGO_PKG_VERSION").hash(&mut h);
    format!("{digest}-{:016x}.cwasm", h.finish())
}
const CORE_MODULE_VERSION: [u8; 4] = [1, 0, 0, 0];

impl Runtime {
    /// Compiles a component and checks that it implements a Turnpike world. CPU-heavy (tens of
    /// milliseconds to seconds): call it from a blocking thread, not an async task.
    pub fn load(&self, bytes: &[u8]) -> Result<Plugin, LoadError> {
        self.load_cached(bytes, None)
    }

    /// Like [`Runtime::load`], keeping compiled code in `cache_dir` so that the same component
    /// is compiled once across host restarts.
    ///
    /// Only the host writes that directory, and it only ever deserializes artefacts named by
    /// the digest of the component it was given: compiled code is machine code and is never
    /// accepted from anyone else. An artefact that does not deserialize (another wasmtime
    /// version, a damaged file) is recompiled and replaced.
    pub fn load_cached(&self, bytes: &[u8], cache_dir: Option<&Path>) -> Result<Plugin, LoadError> {
        if Engine::detect_precompiled(bytes).is_some() {
            return Err(LoadError::Precompiled);
        }
        if bytes.len() >= 8 && &bytes[..4] == WASM_MAGIC && bytes[4..8] == CORE_MODULE_VERSION {
            return Err(LoadError::CoreModule);
        }
        let component = match cache_dir {
            Some(dir) => self.compile_cached(bytes, dir)?,
            None => Component::from_binary(self.engine(), bytes).map_err(|e| LoadError::Invalid(format!("{e:#}")))?,
        };
        let pre = self
            .linker()
            .instantiate_pre(&component)
            .map_err(|e| LoadError::WrongWorld(format!("{e:#}")))?;
        let pre = Pre::of(pre)?;
        Ok(Plugin {
            inner: Arc::new(Inner {
                runtime: self.clone(),
                digest: digest(bytes),
                size: bytes.len(),
                pre,
            }),
            preset: None,
        })
    }
}

/// The identity of a component's bytes: `sha256`, hex-encoded.
pub fn digest(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

impl Runtime {
    fn compile_cached(&self, bytes: &[u8], dir: &Path) -> Result<Component, LoadError> {
        let path = dir.join(artefact_name(self.engine(), &digest(bytes)));
        if path.exists() {
            match deserialize_own_artefact(self.engine(), &path) {
                Ok(component) => return Ok(component),
                Err(e) => tracing::warn!(path = %path.display(), error = %e, "cached compiled plugin unusable; recompiling"),
            }
        }
        let component = Component::from_binary(self.engine(), bytes).map_err(|e| LoadError::Invalid(format!("{e:#}")))?;
        match component.serialize() {
            Ok(compiled) => {
                if let Err(e) = write_atomically(dir, &path, &compiled) {
                    tracing::warn!(path = %path.display(), error = %e, "could not cache the compiled plugin; it will be compiled again next time");
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not serialize the compiled plugin"),
        }
        Ok(component)
    }
}

/// Deserializes compiled code the host wrote itself. Read into memory rather than mapped
/// (`deserialize_file`): a mapped file truncated by anyone while the host runs would crash
/// the process with SIGBUS.
#[allow(unsafe_code, reason = "deserializing compiled code is unsafe by nature; see the safety comment")]
fn deserialize_own_artefact(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    let compiled = std::fs::read(path)?;
    // SAFETY: wasmtime requires that only trusted artefacts are deserialized, as they are
    // machine code. This file is in the cache directory the operator gave the host (its state
    // directory, or the user's own cache directory for `turnpike dev`: as trusted as the
    // binary itself), under a name derived from the digest of the component being loaded,
    // and was written by `compile_cached` from code this engine compiled; uploads can never
    // place bytes there (they are rejected if precompiled, and stored only as components).
    // Incompatible artefacts fail safely.
    unsafe { Component::deserialize(engine, &compiled) }
}

fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".tmp-{}-{}", std::process::id(), path.file_name().and_then(|n| n.to_str()).unwrap_or("artefact")));
    std::fs::write(&tmp, bytes)?;
    std::fs::File::open(&tmp)?.sync_all()?;
    std::fs::rename(&tmp, path)
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
        self.inner.pre.kind()
    }

    /// Whether this is a transform whose outputs name the input parts they forward
    /// (`forwarding-transform`, since contract `0.1.4`) instead of copying them back.
    pub fn forwards(&self) -> bool {
        matches!(self.inner.pre, Pre::Transform(TransformPre::Forwarding(_) | TransformPre::Lazy(_) | TransformPre::Passing(_)))
    }

    /// Whether this is a transform whose batches arrive without their bytes, which it fetches
    /// only if it reads them (`lazy-transform`, since contract `0.1.5`, or `passing-transform`).
    pub fn is_lazy(&self) -> bool {
        matches!(self.inner.pre, Pre::Transform(TransformPre::Lazy(_) | TransformPre::Passing(_)))
    }

    /// Whether this is a transform that may list inputs passed on whole instead of writing an
    /// output for each (`passing-transform`, since contract `0.1.6`).
    pub fn passes(&self) -> bool {
        matches!(self.inner.pre, Pre::Transform(TransformPre::Passing(_)))
    }

    pub(crate) fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }

    pub(crate) fn pre(&self) -> &Pre {
        &self.inner.pre
    }

    /// The same compiled component, run as its transform `name`: `create` receives
    /// `{"transform": name, "config": <the step's config>}`. One component (compiled once)
    /// then serves many built-in names without each user writing the envelope.
    ///
    /// # Panics
    /// If `name` is not a plugin name (lower-case letters, digits and `-`): presets are the
    /// host's own constants.
    pub fn preset(&self, name: &str) -> Plugin {
        assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'), "preset {name:?} is not a plugin name");
        Plugin { inner: self.inner.clone(), preset: Some(name.into()) }
    }

    /// The preset this plugin runs, if any.
    pub fn preset_name(&self) -> Option<&str> {
        self.preset.as_deref()
    }

    /// The config text `create` receives: the step's, wrapped for a preset.
    pub(crate) fn create_config(&self, config_json: &str) -> String {
        match &self.preset {
            None => config_json.to_owned(),
            Some(name) => {
                let config = if config_json.trim().is_empty() { "{}" } else { config_json };
                format!("{{\"transform\":\"{name}\",\"config\":{config}}}")
            }
        }
    }
}

impl std::fmt::Debug for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Plugin").field("digest", &self.inner.digest).field("kind", &self.kind()).finish()
    }
}
