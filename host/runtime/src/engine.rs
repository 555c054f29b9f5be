//! The process-wide engine and the linker every plugin is checked against.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig};

use crate::capabilities;
use crate::error::LoadError;
use crate::state::{HostState, MAX_TABLE_ELEMENTS};

/// How often the epoch advances. A plugin's CPU deadline is checked at this granularity, and a
/// long-running call yields to the async runtime this often.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Host-wide sandbox capacity, set by the operator. Every connector's limits must fit inside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineLimits {
    /// Plugin instances that may be live at once (one per transform stage of each running
    /// connector). Default 1,000. The pooling allocator reserves address space for this many
    /// up front; instantiating beyond it fails with a clear error instead of exhausting memory.
    pub max_instances: u32,
    /// The largest linear memory any plugin may have, in bytes. Default 1 GiB.
    pub max_memory_bytes: usize,
}

impl Default for EngineLimits {
    fn default() -> Self {
        Self { max_instances: 1_000, max_memory_bytes: 1 << 30 }
    }
}

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
    /// Builds the engine with default [`EngineLimits`].
    pub fn new() -> Result<Self, LoadError> {
        Self::with_limits(&EngineLimits::default())
    }

    /// Builds the engine with a hardened configuration (following wasmtime's guidance for
    /// untrusted code) and starts the epoch ticker thread.
    pub fn with_limits(limits: &EngineLimits) -> Result<Self, LoadError> {
        Self::build(limits, true)
    }

    /// **For benchmarks only** (feature `unprotected`): an engine whose plugin calls cannot be
    /// interrupted, because its compiled code has no epoch checks. A plugin that loops then
    /// holds its call for good. It exists to measure what the checks cost (the transforms
    /// benchmark); nothing in Turnpike's binaries calls it.
    #[cfg(feature = "unprotected")]
    pub fn without_loop_protection() -> Result<Self, LoadError> {
        Self::build(&EngineLimits::default(), false)
    }

    /// `interruptible`: compile epoch checks into plugin code (at every function entry and
    /// loop), which is what lets a deadline stop a plugin that never returns.
    fn build(limits: &EngineLimits, interruptible: bool) -> Result<Self, LoadError> {
        let n = limits.max_instances.max(1);
        // Pooling: instances come from slots reserved at start, so instantiation is cheap and
        // the host's total is bounded. Core instances and memories are budgeted generously per
        // component: language runtimes (Python, JS) bring many core instances each.
        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(n)
            .total_core_instances(n.saturating_mul(20))
            .total_memories(n.saturating_mul(4))
            .total_tables(n.saturating_mul(8))
            .total_stacks(n)
            .max_memory_size(limits.max_memory_bytes)
            .max_component_instance_size(10 << 20)
            .max_core_instance_size(10 << 20)
            .max_core_instances_per_component(200)
            .max_memories_per_component(16)
            .max_tables_per_component(64)
            .table_elements(MAX_TABLE_ELEMENTS);
        let mut config = Config::new();
        config
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool))
            // Pooled fiber stacks are reused across plugins: zero them so that no plugin can
            // read what another left on its stack.
            .async_stack_zeroing(true)
            .epoch_interruption(interruptible)
            .cranelift_opt_level(OptLevel::Speed)
            // Wasm features the Turnpike worlds do not need stay off: less attack surface.
            // (threads, GC and stack switching are not even compiled in: see Cargo.toml.)
            .wasm_memory64(false)
            // 512 KiB of wasm stack; the fiber adds room for host functions on top.
            .max_wasm_stack(512 * 1024)
            .async_stack_size(2 * 1024 * 1024);
        // For profiling plugins with `perf`: wasmtime writes /tmp/perf-<pid>.map, which names
        // the compiled guest functions in `perf report`. Off unless asked for.
        if std::env::var_os("TURNPIKE_PERF_MAP").is_some() {
            config.profiler(wasmtime::ProfilingStrategy::PerfMap);
        }
        let engine = Engine::new(&config).map_err(LoadError::engine)?;

        let mut linker = Linker::<HostState>::new(&engine);
        // WASI is linked because language runtimes (Rust std, Python, JS) import it; the
        // context grants nothing: no files, sockets, environment, arguments or stdin.
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(LoadError::engine)?;
        // Then what plugins may import beyond WASI: `log`, and `wasi:http` behind the
        // connector's grant (see `capabilities`).
        capabilities::add_to_linker(&mut linker).map_err(LoadError::engine)?;
        // And a lazy transform's batch bytes (`batch-input`), which grant nothing new.
        crate::lazy_input::add_to_linker(&mut linker).map_err(LoadError::engine)?;

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
