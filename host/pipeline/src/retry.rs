//! Retrying what a plugin reports as `retriable`: pauses from 100 ms, doubling up to the
//! connector's `retry_max_delay_ms`, for at most `retry_timeout_ms` in all.
//!
//! Every operation that retries (a chain stage, a sink write, a sink flush, a source poll)
//! hands each attempt's result to [`Retry::settle`], which pauses, counts and logs the retry,
//! so that they all retry, stop and give up the same way.

use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use turnpike_config::ErrorsConfig;
use turnpike_runtime::{CallError, ErrorKind};

use crate::status::LiveStatus;

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

    /// Decides what follows one attempt's `result`. A `retriable` plugin error waits out the
    /// next pause; when it ends the retry is counted and logged, and the caller tries again.
    pub(crate) async fn settle<T>(&mut self, result: Result<T, CallError>, log: RetryLog<'_>) -> Attempt<T> {
        match result {
            Ok(value) => Attempt::Done(value),
            Err(CallError::Plugin { kind: ErrorKind::Retriable, message }) => match self.pause().await {
                Next::Again => {
                    LiveStatus::add(&log.status.retries, 1);
                    tracing::info!(connector = log.connector, plugin = log.plugin, %message, attempt = self.attempts(), "{}", log.what);
                    Attempt::Again
                }
                Next::Stop => Attempt::Stopped,
                Next::GiveUp => Attempt::GaveUp(message),
            },
            Err(other) => Attempt::Failed(other),
        }
    }
}

/// What became of one attempt.
#[derive(Debug)]
pub(crate) enum Attempt<T> {
    /// It succeeded.
    Done(T),
    /// It asked to be retried and the pause is over: try again.
    Again,
    /// It kept asking to be retried until the budget was spent; the plugin's last message.
    GaveUp(String),
    /// The connector is stopping: neither retry nor count the operation as failed.
    Stopped,
    /// It failed in a way retrying does not help (a fault, or a plugin error that is not
    /// `retriable`): the caller's policy applies.
    Failed(CallError),
}

/// Who retries what, for the counter and the log line.
#[derive(Clone, Copy)]
pub(crate) struct RetryLog<'a> {
    pub(crate) status: &'a LiveStatus,
    pub(crate) connector: &'a str,
    /// `name@version`.
    pub(crate) plugin: &'a str,
    /// The log message, e.g. "sink asked to retry the write".
    pub(crate) what: &'static str,
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
    async fn settle_retries_only_what_asks_for_it_and_counts_each_retry() {
        let status = LiveStatus::new("c", std::sync::Arc::new(crate::events::Events::default()));
        let log = RetryLog { status: &status, connector: "c", plugin: "p@1", what: "plugin asked to retry the batch" };
        let retriable = || Err::<(), _>(CallError::Plugin { kind: ErrorKind::Retriable, message: "busy".into() });
        let mut retry = Retry::with(Duration::from_millis(250), Duration::from_millis(100), CancellationToken::new());
        assert!(matches!(retry.settle(Ok(7), log).await, Attempt::Done(7)));
        assert!(matches!(retry.settle(retriable(), log).await, Attempt::Again));
        assert!(matches!(retry.settle(retriable(), log).await, Attempt::Again));
        assert!(matches!(retry.settle(retriable(), log).await, Attempt::Again), "the last pause is cut to what is left");
        assert!(matches!(retry.settle(retriable(), log).await, Attempt::GaveUp(m) if m == "busy"));
        assert_eq!(status.retries.load(std::sync::atomic::Ordering::Relaxed), 3, "each retry made is counted, the give-up is not");
        let fatal = Err::<(), _>(CallError::Plugin { kind: ErrorKind::Fatal, message: "no".into() });
        assert!(matches!(retry.settle(fatal, log).await, Attempt::Failed(CallError::Plugin { kind: ErrorKind::Fatal, .. })));
        let cancel = CancellationToken::new();
        let mut stopping = Retry::with(Duration::from_secs(60), Duration::from_secs(1), cancel.clone());
        cancel.cancel();
        assert!(matches!(stopping.settle(retriable(), log).await, Attempt::Stopped));
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
