//! Closing a librdkafka client without letting it hold the host. A close blocks: a consumer
//! leaves its group (its revocation commits first), then the client stops its threads. It
//! does not always end. After a fatal error librdkafka (2.12) never finishes destroying a
//! consumer: its main thread waits for a group handler that does not end. Closing a consumer
//! in the middle of a rebalance can stall the same way (librdkafka issues #4527 and #4883).
//! A host whose close stalled never exited after SIGTERM. So a close runs on a thread of its
//! own and is waited for a bounded time; past it, the client is left behind with a warning
//! and whoever closed it goes on. A client left behind keeps its threads (and, a consumer,
//! its group membership) until its close ends, if ever: the warning counts those still closing.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Clients left behind whose close has not ended (yet).
static LEFT_BEHIND: AtomicUsize = AtomicUsize::new(0);

/// How long a close is waited for. A healthy one takes milliseconds, and about 5 s against a
/// broker that stopped answering; a stalled one never ends. It has to fit in a shutdown with
/// the plugins' grace period before it (10 s at most): at 20 s, a consumer whose close
/// stalled as autoscaling retired its task right before SIGTERM was left behind 45 ms
/// after the default 20 s `shutdown_timeout_ms` ran out, and the host exited as stuck.
pub const CLOSE_WAIT: Duration = Duration::from_secs(8);

/// When a host's closes must be over, once its shutdown has begun: a close that stalls is
/// then left behind in time for the host to exit as it planned, not as stuck (a short
/// `shutdown_timeout_ms` leaves less than [`CLOSE_WAIT`] after the plugins' grace period).
/// One per host, shared by its consumers ([`crate::ConsumerOptions::close_deadline`]): tests
/// run several hosts in one process.
#[derive(Debug, Default)]
pub struct CloseDeadline(Mutex<Option<Instant>>);

impl CloseDeadline {
    /// Waits for every later close until `deadline` at most (the earliest one set holds).
    pub fn set(&self, deadline: Instant) {
        let mut end = self.0.lock().unwrap_or_else(|p| p.into_inner());
        *end = Some(end.map_or(deadline, |set| set.min(deadline)));
    }

    /// `wait`, or what is left until the deadline if that is shorter.
    pub(crate) fn bound(&self, wait: Duration) -> Duration {
        bounded(wait, *self.0.lock().unwrap_or_else(|p| p.into_inner()), Instant::now())
    }
}

/// `wait`, or what is left until `deadline` if that is shorter.
fn bounded(wait: Duration, deadline: Option<Instant>, now: Instant) -> Duration {
    deadline.map_or(wait, |end| wait.min(end.saturating_duration_since(now)))
}

/// How often a waiting close looks at its host's deadline: a shutdown that begins while a
/// close is under way (a task autoscaling retired just before) shortens that wait too.
const DEADLINE_CHECK: Duration = Duration::from_millis(100);

/// Drops `client` on a thread of its own and waits up to `wait` for that to finish, or until
/// `deadline` if that is set sooner, even while waiting. Past that the client is left behind,
/// still closing, and a warning says so. Returns whether it finished closing.
pub(crate) fn close_within<T: Send + 'static>(client: T, what: &str, wait: Duration, deadline: &CloseDeadline) -> bool {
    close_counted(client, what, wait, deadline, &LEFT_BEHIND)
}

/// Where a close stands, between the thread that closes and the caller that waits for it.
const WAITED_FOR: u8 = 0;
const FINISHED: u8 = 1;
const LEFT: u8 = 2;

/// [`close_within`], counting the clients left behind and still closing in `still_closing`.
fn close_counted<T: Send + 'static>(client: T, what: &str, wait: Duration, deadline: &CloseDeadline, still_closing: &'static AtomicUsize) -> bool {
    let (finished, closed) = mpsc::channel::<()>();
    let state = Arc::new(AtomicU8::new(WAITED_FOR));
    let ended = state.clone();
    if !spawn_close(client, what, move || {
        // A close left behind that ends after all is no longer counted.
        if ended.swap(FINISHED, Ordering::AcqRel) == LEFT {
            still_closing.fetch_sub(1, Ordering::Relaxed);
        }
        let _ = finished.send(());
    }) {
        return true;
    }
    let began = Instant::now();
    loop {
        let left = deadline.bound(wait.saturating_sub(began.elapsed()));
        if left.is_zero() {
            // Counted before it is marked left behind, so that an end right after never
            // takes away a count not yet added.
            let count = still_closing.fetch_add(1, Ordering::Relaxed) + 1;
            if state.compare_exchange(WAITED_FOR, LEFT, Ordering::AcqRel, Ordering::Acquire).is_err() {
                still_closing.fetch_sub(1, Ordering::Relaxed);
                return true; // It ended just now.
            }
            tracing::warn!(waited = ?began.elapsed(), still_closing = count, "closing the {what} did not finish in time; it is left behind, still closing, and this host goes on without it");
            return false;
        }
        match closed.recv_timeout(left.min(DEADLINE_CHECK)) {
            // Disconnected: the close panicked, and is over either way.
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return true,
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

/// Drops `client` on a new thread, left behind: for a client that may never finish closing.
pub(crate) fn close_left_behind<T: Send + 'static>(client: T, what: &str) {
    LEFT_BEHIND.fetch_add(1, Ordering::Relaxed);
    if !spawn_close(client, what, || {
        LEFT_BEHIND.fetch_sub(1, Ordering::Relaxed);
    }) {
        LEFT_BEHIND.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Drops `client` on a new thread, then calls `then`, even if the drop panics (the close is
/// over either way). Returns whether the thread started; if it could not, the client was
/// dropped here, with the refused closure.
fn spawn_close<T: Send + 'static>(client: T, what: &str, then: impl FnOnce() + Send + 'static) -> bool {
    let close = move || {
        let _then = OnEnd(Some(then));
        drop(client);
    };
    match std::thread::Builder::new().name("turnpike-close".into()).spawn(close) {
        Ok(_) => true,
        Err(e) => {
            tracing::error!(error = %e, "could not start a thread to close the {what}; closed here");
            false
        }
    }
}

/// Calls its closure when dropped, as a scope ends or unwinds.
struct OnEnd<F: FnOnce()>(Option<F>);

impl<F: FnOnce()> Drop for OnEnd<F> {
    fn drop(&mut self) {
        if let Some(f) = self.0.take() {
            f();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks its drop until `release` is sent to, or dropped.
    struct StallingClient(mpsc::Receiver<()>);

    impl Drop for StallingClient {
        fn drop(&mut self) {
            let _ = self.0.recv();
        }
    }

    #[test]
    fn a_close_that_stalls_is_left_behind_after_the_wait() {
        let (release, stalls) = mpsc::channel();
        let began = Instant::now();
        assert!(!close_within(StallingClient(stalls), "test client", Duration::from_millis(300), &CloseDeadline::default()));
        let waited = began.elapsed();
        assert!(waited >= Duration::from_millis(300) && waited < Duration::from_secs(5), "waited {waited:?}");
        drop(release);
    }

    /// Once the shutdown has a deadline, a close waits no longer than what is left of it.
    #[test]
    fn a_shutdown_deadline_shortens_the_wait() {
        let now = Instant::now();
        let wait = Duration::from_secs(8);
        assert_eq!(bounded(wait, None, now), wait);
        assert_eq!(bounded(wait, Some(now + Duration::from_secs(3)), now), Duration::from_secs(3));
        assert_eq!(bounded(wait, Some(now + Duration::from_secs(30)), now), wait);
        assert_eq!(bounded(wait, Some(now - Duration::from_secs(1)), now), Duration::ZERO);
    }

    /// A shutdown that begins while a close is already waiting shortens that wait too.
    #[test]
    fn a_deadline_set_during_the_wait_ends_it() {
        let (release, stalls) = mpsc::channel();
        let deadline = std::sync::Arc::new(CloseDeadline::default());
        let began = Instant::now();
        let setter = std::thread::spawn({
            let deadline = deadline.clone();
            move || {
                std::thread::sleep(Duration::from_millis(200));
                deadline.set(Instant::now() + Duration::from_millis(200));
            }
        });
        assert!(!close_within(StallingClient(stalls), "test client", Duration::from_secs(10), &deadline));
        let waited = began.elapsed();
        assert!(waited >= Duration::from_millis(400) && waited < Duration::from_secs(3), "waited {waited:?}");
        setter.join().expect("setter");
        drop(release);
    }

    /// A close left behind is counted while it goes on, and no longer once it ends (the
    /// warning's count said more were closing than were).
    #[test]
    fn a_close_left_behind_is_counted_until_it_ends() {
        static STILL_CLOSING: AtomicUsize = AtomicUsize::new(0);
        let (release, stalls) = mpsc::channel();
        assert!(!close_counted(StallingClient(stalls), "test client", Duration::from_millis(100), &CloseDeadline::default(), &STILL_CLOSING));
        assert_eq!(STILL_CLOSING.load(Ordering::Relaxed), 1);
        drop(release);
        let deadline = Instant::now() + Duration::from_secs(10);
        while STILL_CLOSING.load(Ordering::Relaxed) != 0 {
            assert!(Instant::now() < deadline, "the close ended but is still counted");
            std::thread::sleep(Duration::from_millis(10));
        }
        let (release, stalls) = mpsc::channel::<()>();
        drop(release);
        assert!(close_counted(StallingClient(stalls), "test client", Duration::from_secs(10), &CloseDeadline::default(), &STILL_CLOSING));
        assert_eq!(STILL_CLOSING.load(Ordering::Relaxed), 0, "a close that ended in time is never counted");

        // A close that ends by panicking has ended too.
        let (release, stalls) = mpsc::channel();
        assert!(!close_counted(PanickingClient(stalls), "test client", Duration::from_millis(100), &CloseDeadline::default(), &STILL_CLOSING));
        assert_eq!(STILL_CLOSING.load(Ordering::Relaxed), 1);
        drop(release);
        let deadline = Instant::now() + Duration::from_secs(10);
        while STILL_CLOSING.load(Ordering::Relaxed) != 0 {
            assert!(Instant::now() < deadline, "the close panicked but is still counted");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Blocks its drop until `release` is sent to, or dropped, then panics.
    struct PanickingClient(mpsc::Receiver<()>);

    impl Drop for PanickingClient {
        fn drop(&mut self) {
            let _ = self.0.recv();
            panic!("the test client's close panics");
        }
    }

    #[test]
    fn a_close_that_finishes_is_waited_for() {
        let (release, stalls) = mpsc::channel();
        let began = Instant::now();
        let releaser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            drop(release);
        });
        assert!(close_within(StallingClient(stalls), "test client", Duration::from_secs(10), &CloseDeadline::default()));
        assert!(began.elapsed() >= Duration::from_millis(200), "returned before the close finished");
        releaser.join().expect("releaser");
    }
}
