//! Retrying what a plugin reports as `retriable`: pauses from 100 ms, doubling up to the
//! connector's `retry_max_delay_ms`, for at most `retry_timeout_ms` in all.

use std::time::Duration;

use tokio::time::Instant;

use turnpike_config::ErrorsConfig;

/// The first pause between two attempts.
const FIRST_DELAY: Duration = Duration::from_millis(100);

/// The retry budget of one operation (one batch at one stage). Create one per operation.
pub(crate) struct Retry {
    deadline: Instant,
    next_delay: Duration,
    max_delay: Duration,
    attempts: u32,
}

impl Retry {
    pub(crate) fn new(errors: &ErrorsConfig) -> Self {
        Self::with(Duration::from_millis(errors.retry_timeout_ms.get()), Duration::from_millis(errors.retry_max_delay_ms.get()))
    }

    pub(crate) fn with(timeout: Duration, max_delay: Duration) -> Self {
        Self { deadline: Instant::now() + timeout, next_delay: FIRST_DELAY.min(max_delay), max_delay, attempts: 0 }
    }

    /// Waits before the next attempt; `false` (at once) when the budget would be exceeded.
    pub(crate) async fn pause(&mut self) -> bool {
        let Some(left) = self.deadline.checked_duration_since(Instant::now()) else { return false };
        if left.is_zero() {
            return false;
        }
        let delay = self.next_delay.min(left);
        self.next_delay = (self.next_delay * 2).min(self.max_delay);
        self.attempts += 1;
        tokio::time::sleep(delay).await;
        true
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
        let mut retry = Retry::with(Duration::from_millis(1_000), Duration::from_millis(300));
        let start = tokio::time::Instant::now();
        let mut pauses = Vec::new();
        loop {
            let before = tokio::time::Instant::now();
            if !retry.pause().await {
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
        let mut retry = Retry::with(Duration::ZERO, Duration::from_millis(300));
        assert!(!retry.pause().await);
    }
}
