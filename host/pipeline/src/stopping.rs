//! Stopping all or part of a run without letting one plugin call hold the stop: what was told
//! to stop gets a grace period to finish the batch in hand, then its [`Interrupt`] ends the
//! call still running (the batch is not committed and is read again by whoever reads next).
//!
//! Why one helper: a run stops as a whole (stop, restart, update, delete, shutdown) or in
//! part (a task retired by autoscaling, a source whose cluster slot moved away), and each of
//! them used to wait for a stuck call's whole batch timeout.

use std::future::Future;
use std::time::Duration;

use turnpike_runtime::Interrupt;

/// How long a stopping connector's plugin calls may go on before the host ends them: a batch
/// in hand usually finishes in milliseconds, and one call may otherwise hold a stop for its
/// whole batch timeout. At shutdown, half of `shutdown_timeout_ms` if that is shorter.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(10);

/// The grace period at a shutdown that must be over within `within`: half of it at most,
/// so that the rest of the stop (the last commits, the consumers' close) has the other half.
pub(crate) fn shutdown_grace(within: Duration) -> Duration {
    STOP_GRACE.min(within / 2)
}

/// How long before the shutdown's end every consumer's close must be over: time for the
/// tasks to end and report once their consumers are closed or left behind (a quarter of a
/// shorter shutdown, so that its closes still get most of it).
pub(crate) const CLOSE_MARGIN: Duration = Duration::from_secs(1);

/// What is stopping, for the log line said when its grace period runs out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stopping<'a> {
    pub(crate) connector: &'a str,
    /// `Some(index)` when one task stops while the rest of the run goes on.
    pub(crate) task: Option<usize>,
}

/// Waits for `ended`, the end of something already told to stop (its cancellation token
/// cancelled). If it has not ended after `grace`, fires `interrupt`, which ends its plugin
/// calls at their next yield and refuses new ones, and waits on. What the calls had not
/// finished is read again: at the next start, by the run's other tasks (a task retired), or
/// by the slot's next owner (a source moved).
pub(crate) async fn end_within<F: Future>(what: Stopping<'_>, grace: Duration, interrupt: &Interrupt, ended: F) -> F::Output {
    let mut ended = std::pin::pin!(ended);
    match tokio::time::timeout(grace, &mut ended).await {
        Ok(output) => output,
        Err(_) => {
            // Said once per stuck call: an outer stop may have fired it already.
            if !interrupt.is_fired() {
                let task = what.task.map(|index| index + 1);
                tracing::warn!(connector = %what.connector, task, grace_ms = grace.as_millis() as u64, "still stopping after its grace period; ending its plugin calls (what they had not finished is not committed, and is read again)");
                interrupt.fire();
            }
            ended.await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WHAT: Stopping<'static> = Stopping { connector: "c", task: None };

    /// A task that stops at shutdown may use its grace period, then wait for its consumer to
    /// close. With the default shutdown timeout both fit whole, with the margin after them; at
    /// 20 s the close wait alone filled the default timeout, and a close that stalled
    /// (librdkafka's, during a rebalance) made the host exit as stuck. (A shorter timeout
    /// shortens the close: `turnpike_kafka::CloseDeadline`.)
    #[test]
    fn the_grace_period_and_a_stalled_close_fit_in_the_default_shutdown() {
        let default = Duration::from_millis(turnpike_config::DEFAULT_SHUTDOWN_TIMEOUT_MS);
        let worst = shutdown_grace(default) + turnpike_kafka::CLOSE_WAIT + CLOSE_MARGIN;
        assert!(worst < default, "{worst:?} of a {default:?} shutdown");
    }

    #[tokio::test(start_paused = true)]
    async fn what_ends_within_the_grace_period_is_not_interrupted() {
        let interrupt = Interrupt::default();
        let ended = async {
            tokio::time::sleep(Duration::from_secs(9)).await;
            "finished its batch"
        };
        assert_eq!(end_within(WHAT, Duration::from_secs(10), &interrupt, ended).await, "finished its batch");
        assert!(!interrupt.is_fired());
    }

    #[tokio::test(start_paused = true)]
    async fn what_is_still_running_after_the_grace_period_is_interrupted_then_awaited() {
        let interrupt = Interrupt::default();
        let started = tokio::time::Instant::now();
        // Like a plugin call that spins: it ends only when its interrupt fires.
        let stuck = async {
            interrupt.fired().await;
            "interrupted"
        };
        assert_eq!(end_within(WHAT, Duration::from_secs(10), &interrupt, stuck).await, "interrupted");
        assert!(interrupt.is_fired());
        assert_eq!(started.elapsed(), Duration::from_secs(10), "fired at the end of the grace period, not before");
    }

    #[tokio::test(start_paused = true)]
    async fn a_part_of_a_run_is_interrupted_alone() {
        let run = Interrupt::default();
        let (retired, staying) = (run.child(), run.child());
        let stuck = async {
            retired.fired().await;
        };
        end_within(Stopping { connector: "c", task: Some(1) }, Duration::from_secs(10), &retired, stuck).await;
        assert!(retired.is_fired());
        assert!(!run.is_fired() && !staying.is_fired(), "the rest of the run goes on");
        run.fire();
        assert!(staying.is_fired(), "a stop of the whole run reaches every part");
    }
}
