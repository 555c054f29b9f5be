//! What each plugin store holds: the core every instance has (a WASI context that grants
//! nothing and the resource table it shares with `wasi:http`, a memory limiter that remembers
//! whether it refused, the current call's deadline, and the tail of the plugin's stderr), then
//! one field per capability (see `capabilities`).

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use wasmtime::component::ResourceTable;
use wasmtime::ResourceLimiter;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtxView, WasiHttpView};

use crate::capabilities::http::{HttpCapability, HttpState};
use crate::capabilities::log::{LogCapability, LogState};
use crate::capabilities::object_store::{ObjectStoreCapability, StoreState};
use crate::capabilities::sink_progress::{ProgressState, SinkProgressCapability};
use crate::capabilities::sql::{SqlCapability, SqlState};
use crate::capabilities::{Capability, CapabilityStates};
use crate::labels::InstanceLabels;
use crate::lazy_input::BatchSlot;
use crate::limits::InstanceLimits;

/// How much of a plugin's error output is kept to explain a trap (a Rust panic message goes
/// there just before the trap).
const STDERR_TAIL_BYTES: usize = 4096;

/// The data of one plugin store.
pub(crate) struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limiter: MemoryLimiter,
    /// When the current call must stop; checked on every epoch tick.
    pub(crate) deadline: Instant,
    /// Whether the current call is instantiation + `create` (for reporting which limit hit).
    pub(crate) creating: bool,
    pub(crate) stderr: StderrTail,
    /// The batch a lazy transform's current call may fetch the bytes of (`batch-input`).
    pub(crate) lent: BatchSlot,
    // One field per capability, built by its `Capability::prepare`.
    pub(crate) log: LogState,
    pub(crate) http: HttpState,
    pub(crate) store: StoreState,
    pub(crate) progress: ProgressState,
    pub(crate) sql: SqlState,
}

impl HostState {
    pub(crate) fn new(labels: &InstanceLabels, limits: &InstanceLimits) -> Self {
        let stderr = StderrTail::default();
        // The builder's defaults deny everything: no preopened directories, no environment,
        // no arguments, stdin closed, no sockets and no name lookups. Only stderr is kept (a
        // bounded tail) so that a panic message can explain a trap.
        let wasi = WasiCtx::builder().stderr(stderr.clone()).build();
        Self {
            wasi,
            table: ResourceTable::new(),
            limiter: MemoryLimiter::new(limits.memory_bytes),
            deadline: Instant::now(),
            creating: false,
            stderr,
            lent: BatchSlot::default(),
            log: LogCapability::prepare(&limits.scrub, labels),
            http: HttpCapability::prepare(&limits.http, labels),
            store: ObjectStoreCapability::prepare(&limits.storage, labels),
            progress: SinkProgressCapability::prepare(&(), labels),
            sql: SqlCapability::prepare(&limits.sql, labels),
        }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// `wasi:http` works in the store's resource table, shared with the rest of WASI.
impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http.ctx, table: &mut self.table, hooks: &mut self.http.hooks }
    }
}

impl CapabilityStates for HostState {
    fn log(&mut self) -> &mut LogState {
        &mut self.log
    }

    fn object_store(&mut self) -> &mut StoreState {
        &mut self.store
    }

    fn sink_progress(&mut self) -> &mut ProgressState {
        &mut self.progress
    }

    fn sql(&mut self) -> &mut SqlState {
        &mut self.sql
    }
}

/// Caps each linear memory and remembers a refusal, so a trap that follows a refused growth
/// is reported as "memory limit" rather than a bare trap. Also remembers the largest memory
/// granted, so the host can replace an instance that is about to run out.
pub(crate) struct MemoryLimiter {
    max_bytes: usize,
    pub(crate) refused: bool,
    /// The largest size any of the instance's memories has been allowed to grow to.
    pub(crate) peak_bytes: usize,
    /// All the instance's memories together (each one's creation is a growth from 0).
    pub(crate) total_bytes: usize,
    /// The growth last allowed, taken back if wasmtime then fails it (the limiter is asked
    /// before the memory's own maximum is checked).
    pending_bytes: usize,
}

impl MemoryLimiter {
    fn new(max_bytes: usize) -> Self {
        Self { max_bytes, refused: false, peak_bytes: 0, total_bytes: 0, pending_bytes: 0 }
    }

    /// How full the fullest memory is, from 0 to 1.
    pub(crate) fn pressure(&self) -> f64 {
        self.peak_bytes as f64 / self.max_bytes.max(1) as f64
    }
}

/// Elements one table may grow to (the pooling allocator reserves the same per table, see
/// `engine.rs`). Like the counts below: generous for language runtimes, finite so a malicious
/// component cannot exhaust the host.
pub(crate) const MAX_TABLE_ELEMENTS: usize = 100_000;
/// Core module instances one store may create.
const MAX_INSTANCES: usize = 1_000;
/// Tables one store may create.
const MAX_TABLES: usize = 1_000;
/// Linear memories one store may create.
const MAX_MEMORIES: usize = 100;

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.refused = true;
            return Ok(false);
        }
        if maximum.is_some_and(|m| desired > m) {
            // Past the memory's declared maximum: wasmtime fails the growth itself.
            return Ok(true);
        }
        self.peak_bytes = self.peak_bytes.max(desired);
        self.pending_bytes = desired.saturating_sub(current);
        self.total_bytes += self.pending_bytes;
        Ok(true)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.total_bytes = self.total_bytes.saturating_sub(std::mem::take(&mut self.pending_bytes));
        tracing::debug!(error = %error, "a plugin's memory growth failed");
        Ok(())
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}

/// Keeps the last [`STDERR_TAIL_BYTES`] a plugin wrote to stderr. Never refuses a write: a
/// chatty plugin must not fail because of its own diagnostics.
#[derive(Clone, Default)]
pub(crate) struct StderrTail(Arc<Mutex<VecDeque<u8>>>);

impl StderrTail {
    /// The kept text, lossily decoded, trimmed.
    pub(crate) fn text(&self) -> String {
        let buf = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let (a, b) = buf.as_slices();
        let mut bytes = a.to_vec();
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).trim().to_owned()
    }

    fn push(&self, data: &[u8]) {
        let mut buf = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let data = &data[data.len().saturating_sub(STDERR_TAIL_BYTES)..];
        let overflow = (buf.len() + data.len()).saturating_sub(STDERR_TAIL_BYTES);
        buf.drain(..overflow);
        buf.extend(data);
    }
}

impl IsTerminal for StderrTail {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for StderrTail {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl tokio::io::AsyncWrite for StderrTail {
    fn poll_write(self: Pin<&mut Self>, _cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.push(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stderr_tail_keeps_only_the_end() {
        let tail = StderrTail::default();
        tail.push(&vec![b'a'; STDERR_TAIL_BYTES]);
        tail.push(b"panicked at boom");
        let text = tail.text();
        assert_eq!(text.len(), STDERR_TAIL_BYTES);
        assert!(text.ends_with("panicked at boom"));
    }
}
