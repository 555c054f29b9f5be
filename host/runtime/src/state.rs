//! What each plugin store holds: a WASI context that grants nothing, a memory limiter that
//! remembers whether it refused, and the labels the host logs with.

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
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::http::{GuardedHooks, HttpGrant};
use crate::instance::InstanceLabels;

/// How much of a plugin's error output is kept to explain a trap (a Rust panic message goes
/// there just before the trap).
const STDERR_TAIL_BYTES: usize = 4096;

/// The data of one plugin store.
pub(crate) struct HostState {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    pub(crate) http_hooks: GuardedHooks,
    table: ResourceTable,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) labels: InstanceLabels,
    /// When the current call must stop; checked on every epoch tick.
    pub(crate) deadline: Instant,
    /// Whether the current call is instantiation + `create` (for reporting which limit hit).
    pub(crate) creating: bool,
    pub(crate) stderr: StderrTail,
    /// Log lines left in the current rate window (see `log.rs`).
    pub(crate) log_budget: u32,
    pub(crate) log_window_start: Instant,
    pub(crate) log_dropped: u64,
}

impl HostState {
    pub(crate) fn new(labels: InstanceLabels, memory_bytes: usize, grant: Arc<HttpGrant>) -> Self {
        let stderr = StderrTail::default();
        // The builder's defaults deny everything: no preopened directories, no environment,
        // no arguments, stdin closed, no sockets and no name lookups. Only stderr is kept (a
        // bounded tail) so that a panic message can explain a trap.
        let wasi = WasiCtx::builder().stderr(stderr.clone()).build();
        let http_hooks = GuardedHooks { grant, refusal: Arc::default(), labels: labels.clone() };
        Self {
            wasi,
            http: WasiHttpCtx::new(),
            http_hooks,
            table: ResourceTable::new(),
            limiter: MemoryLimiter::new(memory_bytes),
            labels,
            deadline: Instant::now(),
            creating: false,
            stderr,
            log_budget: 0,
            log_window_start: Instant::now(),
            log_dropped: 0,
        }
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for HostState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.http_hooks }
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
}

impl MemoryLimiter {
    fn new(max_bytes: usize) -> Self {
        Self { max_bytes, refused: false, peak_bytes: 0 }
    }

    /// How full the fullest memory is, from 0 to 1.
    pub(crate) fn pressure(&self) -> f64 {
        self.peak_bytes as f64 / self.max_bytes.max(1) as f64
    }
}

/// Table, instance and memory counts a plugin may create; generous for language runtimes,
/// finite so a malicious component cannot exhaust the host.
const MAX_TABLE_ELEMENTS: usize = 100_000;

impl ResourceLimiter for MemoryLimiter {
    fn memory_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired > self.max_bytes {
            self.refused = true;
            return Ok(false);
        }
        self.peak_bytes = self.peak_bytes.max(desired);
        Ok(true)
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        Ok(desired <= MAX_TABLE_ELEMENTS)
    }

    fn instances(&self) -> usize {
        1_000
    }

    fn tables(&self) -> usize {
        1_000
    }

    fn memories(&self) -> usize {
        100
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
