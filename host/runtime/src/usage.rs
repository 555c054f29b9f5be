//! What an instance costs the host: CPU time spent in its calls and the linear memory it
//! holds, for the operator's metrics.
//!
//! Why the thread's CPU clock around a poll of a call: a call's future runs on whichever
//! tokio worker polls it and yields at every epoch tick, but each poll runs on one thread
//! from start to end. The thread's CPU clock across a poll is the guest's work (and its
//! synchronous host calls'); time spent waiting on the network (HTTP, SQL, object storage)
//! is not CPU time and is not counted.
//!
//! Why not around every poll: reading the thread's CPU clock is a system call (no vDSO), about
//! 0.9 µs on this project's machine, so two per call were most of what a small batch cost
//! (identity through the sandbox, one record: ~3.2 µs per call, ~1.9 µs without them). A
//! short poll is timed by the wall clock instead (~25 ns); see [`CpuMeter`].

use std::future::Future;
use std::time::{Duration, Instant};

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

/// Polls from this long on are timed by the thread's CPU clock: its two reads then cost
/// well under 1 % of the poll.
const PRECISE_FROM: Duration = Duration::from_micros(250);

/// The CPU time one instance's calls used. Each poll is timed by the thread's CPU clock
/// after a poll of the instance that took [`PRECISE_FROM`] or more (and for its first), by
/// the wall clock after a shorter one: an instance's calls tend to look alike, so the costly
/// clock is read where it is cheap relative to the call, and where waiting inside a poll (a
/// blocked thread) could matter. What this gives up: a short poll's time includes any time
/// its thread was preempted (on a host short of CPU, short calls count more than they
/// computed), and a poll that blocks right after short ones is counted whole, once.
#[derive(Debug)]
pub(crate) struct CpuMeter {
    spent: Duration,
    precise: bool,
}

impl Default for CpuMeter {
    fn default() -> Self {
        Self { spent: Duration::ZERO, precise: true }
    }
}

impl CpuMeter {
    /// The time counted since the last take.
    pub(crate) fn take(&mut self) -> Duration {
        std::mem::take(&mut self.spent)
    }
}

/// Runs `call`, adding the time its polls compute to `meter`.
///
/// The call goes into a box first: a wasmtime call's future is about 2 KiB, and moving it by
/// value into this wrapper, the timeout around it and the caller's future cost ~200 ns of a
/// ~2 µs call in copies (a transform's call of one record: 2,033–2,197 ns unboxed, 1,812–1,921
/// boxed, in paired runs); the box costs one allocation.
pub(crate) fn cpu_timed<'a, F: Future + 'a>(meter: &'a mut CpuMeter, call: F) -> impl Future<Output = F::Output> + 'a {
    let mut call = Box::pin(call);
    std::future::poll_fn(move |cx| {
        let (wall, cpu) = (Instant::now(), meter.precise.then(thread_cpu_time));
        let polled = call.as_mut().poll(cx);
        let took = wall.elapsed();
        meter.spent += match cpu {
            Some(before) => thread_cpu_time().saturating_sub(before),
            None => took,
        };
        meter.precise = took >= PRECISE_FROM;
        polled
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Computes for `busy` by the thread's CPU clock, then blocks the thread for `blocked`.
    fn compute_then_block(busy: Duration, blocked: Duration) {
        let start = thread_cpu_time();
        let mut x = 0u64;
        while thread_cpu_time().saturating_sub(start) < busy {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        std::thread::sleep(blocked);
    }

    /// Busy work is counted; waiting is not, whether between polls (an await) or inside one
    /// (a blocked thread): a call that computes 30 ms of CPU and waits 400 ms costs ~30 ms.
    #[tokio::test]
    async fn only_the_time_a_call_computes_is_counted() {
        let mut meter = CpuMeter::default();
        cpu_timed(&mut meter, async {
            compute_then_block(Duration::from_millis(30), Duration::from_millis(200));
            tokio::time::sleep(Duration::from_millis(200)).await;
        })
        .await;
        let spent = meter.take();
        assert!(spent >= Duration::from_millis(30), "30 ms of computing counted as {spent:?}");
        assert!(spent < Duration::from_millis(150), "the waits were counted: {spent:?}");
    }

    /// After short polls (timed by the wall clock, without the thread clock's system calls) a
    /// long one is counted whole once; the next long one is timed by the CPU clock again, and
    /// short ones are still counted.
    #[tokio::test]
    async fn short_polls_are_timed_by_the_wall_clock_and_long_ones_by_the_cpu_clock() {
        let mut meter = CpuMeter::default();
        cpu_timed(&mut meter, async {}).await;
        assert!(!meter.precise, "a short poll leaves the wall clock to the next one");
        for _ in 0..1_000 {
            cpu_timed(&mut meter, async { compute_then_block(Duration::from_micros(20), Duration::ZERO) }).await;
        }
        let short = meter.take();
        assert!(short >= Duration::from_millis(20), "1,000 polls of 20 µs counted as {short:?}");
        // As after a short poll (one of the thousand may have been preempted past the bound).
        meter.precise = false;
        cpu_timed(&mut meter, async { compute_then_block(Duration::from_millis(5), Duration::from_millis(100)) }).await;
        let first = meter.take();
        assert!(first >= Duration::from_millis(100), "the first long poll after short ones is timed by the wall clock: {first:?}");
        assert!(meter.precise, "a long poll leaves the CPU clock to the next one");
        cpu_timed(&mut meter, async { compute_then_block(Duration::from_millis(5), Duration::from_millis(100)) }).await;
        let second = meter.take();
        assert!(second >= Duration::from_millis(5) && second < Duration::from_millis(60), "the next one by the CPU clock: {second:?}");
    }
}
