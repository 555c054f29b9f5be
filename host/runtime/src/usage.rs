//! What an instance costs the host: CPU time spent in its calls and the linear memory it
//! holds, for the operator's metrics.
//!
//! Why the thread's CPU clock around each poll of a call: a call's future runs on whichever
//! tokio worker polls it and yields at every epoch tick, but each poll runs on one thread
//! from start to end. The thread's CPU clock across a poll is the guest's work (and its
//! synchronous host calls'); time spent waiting on the network (HTTP, SQL, object storage)
//! is not CPU time and is not counted.

use std::future::Future;
use std::time::Duration;

use nix::time::{clock_gettime, ClockId};

/// An instance's cost since the last time it was taken.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    /// CPU time spent in the instance's calls (`create` included) since the last take.
    pub cpu: Duration,
    /// Bytes of linear memory the instance holds now: every memory of the component, summed
    /// (memories never shrink, so this is also the most it has held).
    pub memory_bytes: u64,
}

/// CPU time the current thread has used.
fn thread_cpu_time() -> Duration {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map(Duration::from).unwrap_or_default()
}

/// Runs `call`, adding the CPU time its polls take to `spent`.
pub(crate) async fn cpu_timed<F: Future>(spent: &mut Duration, call: F) -> F::Output {
    let mut call = std::pin::pin!(call);
    std::future::poll_fn(|cx| {
        let before = thread_cpu_time();
        let polled = call.as_mut().poll(cx);
        *spent += thread_cpu_time().saturating_sub(before);
        polled
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Busy work is counted; waiting is not, whether between polls (an await) or inside one
    /// (a blocked thread): a call that computes 30 ms of CPU and waits 400 ms costs ~30 ms.
    #[tokio::test]
    async fn only_the_time_a_call_computes_is_counted() {
        let mut spent = Duration::ZERO;
        cpu_timed(&mut spent, async {
            let start = thread_cpu_time();
            let mut x = 0u64;
            while thread_cpu_time().saturating_sub(start) < Duration::from_millis(30) {
                x = std::hint::black_box(x.wrapping_add(1));
            }
            std::thread::sleep(Duration::from_millis(200));
            tokio::time::sleep(Duration::from_millis(200)).await;
        })
        .await;
        assert!(spent >= Duration::from_millis(30), "30 ms of computing counted as {spent:?}");
        assert!(spent < Duration::from_millis(150), "the waits were counted: {spent:?}");
    }
}
