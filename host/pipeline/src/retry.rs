//! Retrying what a plugin reports as `retriable`: pauses from 100 ms, doubling up to the
//! connector's `retry_max_delay_ms`, for at most `retry_timeout_ms` in all.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use turnpike_config::ErrorsConfig;

/// The first pause between two attempts.
const FIRST_DELAY: Duration = Duration::from_millis(100);

/// The retry budget of one operation (one batch at one stage). Create one per operation.
/// A pause ends early when the connector is being stopped: a stop, a delete or a restart
/// must not wait out a long retry budget (up to a day) before it can act.
pub(crate) struct Retry {
    deadline: Instant,
    next_delay: Duration,
    max_delay: Duration,
    attempts: u32,
    cancel: CancellationToken,
}

/// What to do after a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Next {
    /// Try again now.
    Again,
    /// The budget is spent: the operation failed.
    GiveUp,
    /// The connector is stopping: neither retry nor count the operation as failed (its
    /// input is not committed, so it is read again at the next start).
    Stop,
}

impl Retry {
    pub(crate) fn new(errors: &ErrorsConfig, cancel: &CancellationToken) -> Self {
        Self::with(Duration::from_millis(errors.retry_timeout_ms.get()), Duration::from_millis(errors.retry_max_delay_ms.get()), cancel.clone())
    }

    pub(crate) fn with(timeout: Duration, max_delay: Duration, cancel: CancellationToken) -> Self {
        Self { deadline: Instant::now() + timeout, next_delay: FIRST_DELAY.min(max_delay), max_delay, attempts: 0, cancel }
    }

    /// Waits before the next attempt: [`Next::GiveUp`] at once when the budget would be
    /// exceeded, [`Next::Stop`] as soon as the connector is being stopped.
    pub(crate) async fn pause(&mut self) -> Next {
        if self.cancel.is_cancelled() {
            return Next::Stop;
        }
        let Some(left) = self.deadline.checked_duration_since(Instant::now()) else { return Next::GiveUp };
        if left.is_zero() {
            return Next::GiveUp;
        }
        let delay = self.next_delay.min(left);
        self.next_delay = (self.next_delay * 2).min(self.max_delay);
        self.attempts += 1;
        tokio::select! {
            _ = tokio::time::sleep(delay) => Next::Again,
            _ = self.cancel.cancelled() => Next::Stop,
        }
    }

    /// Retries made so far.
    pub(crate) fn attempts(&self) -> u32 {
        self.attempts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn doubles_up_to_the_cap_and_stops_at_the_timeout() {
        let mut retry = Retry::with(Duration::from_millis(1_000), Duration::from_millis(300), CancellationToken::new());
        let start = tokio::time::Instant::now();
        let mut pauses = Vec::new();
        loop {
            let before = tokio::time::Instant::now();
            if retry.pause().await != Next::Again {
                break;
            }
            pauses.push(before.elapsed().as_millis());
        }
        // 100 + 200 + 300 + 300 = 900; the last pause is cut to what is left (100).
        assert_eq!(pauses, [100, 200, 300, 300, 100]);
        assert!(start.elapsed() <= Duration::from_millis(1_001));
        assert_eq!(retry.attempts(), 5);
    }

    #[tokio::test(start_paused = true)]
    async fn zero_timeout_means_no_retry() {
        let mut retry = Retry::with(Duration::ZERO, Duration::from_millis(300), CancellationToken::new());
        assert_eq!(retry.pause().await, Next::GiveUp);
    }

    #[tokio::test(start_paused = true)]
    async fn a_stop_ends_a_long_pause_at_once() {
        let cancel = CancellationToken::new();
        let mut retry = Retry::with(Duration::from_secs(86_400), Duration::from_secs(3_600), cancel.clone());
        assert_eq!(retry.pause().await, Next::Again);
        assert_eq!(retry.pause().await, Next::Again);
        let stopper = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            stopper.cancel();
        });
        let before = tokio::time::Instant::now();
        assert_eq!(retry.pause().await, Next::Stop);
        assert!(before.elapsed() < Duration::from_millis(100), "stopped after {:?}", before.elapsed());
    }
}
