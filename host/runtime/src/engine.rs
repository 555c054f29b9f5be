//! The process-wide engine and the linker every plugin is checked against.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Engine, OptLevel};

use crate::bindings::TransformPlugin;
use crate::error::LoadError;
use crate::state::HostState;

/// How often the epoch advances. A plugin's CPU deadline is checked at this granularity, and a
/// long-running call yields to the async runtime this often.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Compiles and instantiates plugins. Create one per process and share it: wasmtime warns that
/// stores must not mix engines, and one engine shares compiled code and the epoch ticker.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    linker: Linker<HostState>,
}

impl Runtime {
    /// Builds the engine with a hardened configuration and starts the epoch ticker thread.
    pub fn new() -> Result<Self, LoadError> {
        let mut config = Config::new();
        config
            .epoch_interruption(true)
            .cranelift_opt_level(OptLevel::Speed)
            // Wasm features the Turnpike worlds do not need stay off: less attack surface.
            // (threads, GC and stack switching are not even compiled in: see Cargo.toml.)
            .wasm_memory64(false)
            // 512 KiB of wasm stack; the fiber adds room for host functions on top.
            .max_wasm_stack(512 * 1024)
            .async_stack_size(2 * 1024 * 1024);
        let engine = Engine::new(&config).map_err(LoadError::engine)?;

        let mut linker = Linker::<HostState>::new(&engine);
        // WASI is linked because language runtimes (Rust std, Python, JS) import it; the
        // context grants nothing: no files, sockets, environment, arguments or stdin.
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(LoadError::engine)?;
        TransformPlugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |s| s).map_err(LoadError::engine)?;

        spawn_epoch_ticker(&engine);
        Ok(Self { inner: Arc::new(Inner { engine, linker }) })
    }

    pub(crate) fn engine(&self) -> &Engine {
        &self.inner.engine
    }

    pub(crate) fn linker(&self) -> &Linker<HostState> {
        &self.inner.linker
    }
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until the engine is dropped. A thread (not
/// a tokio task) so that a busy async runtime cannot delay deadlines.
fn spawn_epoch_ticker(engine: &Engine) {
    let weak = engine.weak();
    let spawned = std::thread::Builder::new().name("turnpike-epoch".into()).spawn(move || loop {
        std::thread::sleep(EPOCH_TICK);
        match weak.upgrade() {
            Some(engine) => engine.increment_epoch(),
            None => break,
        }
    });
    if let Err(e) = spawned {
        // Without the ticker deadlines never fire; a plugin call then only stops at the
        // tokio timeout that wraps every call.
        tracing::error!(error = %e, "could not start the epoch ticker thread");
    }
}
