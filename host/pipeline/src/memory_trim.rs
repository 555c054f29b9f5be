//! Gives memory freed by closed Kafka clients back to the operating system.
//!
//! glibc's allocator keeps what a thread freed in that thread's arena for reuse, and a
//! librdkafka client allocates on threads of its own: 1,000 idle consumers given up left
//! about 0.4 MiB each resident though free (the density bench: 659 MiB, then 233 MiB after
//! one trim; measured before the `turnpike` binary moved its own allocations to mimalloc,
//! which leaves glibc's to librdkafka). A trim walks every arena, so it runs once,
//! [`TRIM_AFTER`] after the first of a wave of closes, on a blocking thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long a trim waits for more clients to close, so a wave of them shares one.
const TRIM_AFTER: Duration = Duration::from_secs(5);

/// One pending trim at most.
#[derive(Default)]
pub(crate) struct MemoryTrim {
    pending: Arc<AtomicBool>,
}

impl MemoryTrim {
    /// Clients were closed: memory is trimmed [`TRIM_AFTER`] from now, unless a trim is
    /// already due (then that one covers these too).
    pub(crate) fn clients_closed(&self) {
        if self.pending.swap(true, Ordering::AcqRel) {
            return;
        }
        let pending = self.pending.clone();
        tokio::spawn(async move {
            tokio::time::sleep(TRIM_AFTER).await;
            pending.store(false, Ordering::Release);
            if let Err(e) = tokio::task::spawn_blocking(trim).await {
                tracing::warn!(error = %e, "trimming freed memory did not complete");
            }
        });
    }
}

/// Returns glibc's free memory to the system: librdkafka's (the `turnpike` binary's own
/// allocations are mimalloc's, which returns its free memory by itself).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn trim() {
    #[allow(unsafe_code)]
    // SAFETY: malloc_trim takes no pointer from us; it walks glibc's own arenas under their
    // locks and only releases pages no allocation uses.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Other C libraries' allocators return free memory on their own, or offer no such call.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn trim() {}
