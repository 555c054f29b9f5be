//! Scaling a connector's tasks by its lag (`tasks: { min, max, target_lag_per_task }`): the
//! decision alone, pure, so it can be tested without Kafka; the supervisor acts on it.

use std::time::{Duration, Instant};

use turnpike_config::AutoScale;

/// How often the supervisor asks: often enough to react to a backlog within seconds, rarely
/// enough that the lag the consumers last heard of has moved.
pub(crate) const CHECK_EVERY: Duration = Duration::from_secs(2);

/// One connector's scaling state across checks.
pub(crate) struct Scaler {
    auto: AutoScale,
    /// Since when fewer tasks than are running would have been enough.
    enough_since: Option<Instant>,
}

impl Scaler {
    pub(crate) fn new(auto: AutoScale) -> Self {
        Self { auto, enough_since: None }
    }

    /// The task count to run now. `lag` is the records behind over this run's partitions
    /// (`None` before any is known), `partitions` how many input partitions its tasks read
    /// (0 while a rebalance is under way). Up at once; down only after fewer tasks were
    /// enough for the whole stabilisation window. Unknown lag or partitions change nothing.
    pub(crate) fn decide(&mut self, current: usize, lag: Option<i64>, partitions: usize, now: Instant) -> usize {
        let (Some(lag), true) = (lag, partitions > 0) else { return current };
        let (min, max) = (self.auto.min.get() as usize, self.auto.max.get() as usize);
        // A task beyond the partitions has nothing to read; `min` is the operator's floor.
        let most = max.min(partitions).max(min);
        let per_task = self.auto.target_lag_per_task.get();
        let needed = usize::try_from(lag.max(0).unsigned_abs().div_ceil(per_task)).unwrap_or(usize::MAX);
        let wanted = needed.clamp(min, most);
        if wanted >= current {
            self.enough_since = None;
            return wanted;
        }
        let since = *self.enough_since.get_or_insert(now);
        if now.duration_since(since) >= Duration::from_secs(self.auto.scale_down_after_s.get()) {
            self.enough_since = None;
            return wanted;
        }
        current
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_config::Ranged;

    fn scaler(min: u64, max: u64, target: u64, down_after_s: u64) -> Scaler {
        Scaler::new(AutoScale {
            min: Ranged::try_from(min).unwrap(),
            max: Ranged::try_from(max).unwrap(),
            target_lag_per_task: Ranged::try_from(target).unwrap(),
            scale_down_after_s: Ranged::try_from(down_after_s).unwrap(),
        })
    }

    #[test]
    fn up_at_once_to_what_the_lag_needs_within_max_and_the_partitions() {
        let now = Instant::now();
        let mut s = scaler(1, 8, 1_000, 60);
        assert_eq!(s.decide(1, Some(2_500), 12, now), 3, "2,500 behind at 1,000 each");
        assert_eq!(s.decide(3, Some(1_000_000), 12, now), 8, "never above max");
        assert_eq!(s.decide(1, Some(1_000_000), 4, now), 4, "never above the partitions read");
        assert_eq!(s.decide(2, None, 12, now), 2, "no lag known: unchanged");
        assert_eq!(s.decide(2, Some(50_000), 0, now), 2, "rebalancing: unchanged");
        assert_eq!(scaler(3, 8, 1_000, 60).decide(3, Some(0), 2, now), 3, "min is a floor even above the partitions");
    }

    #[test]
    fn down_only_after_fewer_were_enough_for_the_whole_window() {
        let t0 = Instant::now();
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut s = scaler(1, 8, 1_000, 30);
        assert_eq!(s.decide(8, Some(0), 12, at(0)), 8);
        assert_eq!(s.decide(8, Some(10), 12, at(20)), 8);
        // A burst in between starts the window again.
        assert_eq!(s.decide(8, Some(9_000), 12, at(25)), 9.min(8));
        assert_eq!(s.decide(8, Some(0), 12, at(40)), 8);
        assert_eq!(s.decide(8, Some(0), 12, at(69)), 8);
        assert_eq!(s.decide(8, Some(1_500), 12, at(70)), 2, "30 s after the burst: down to what the lag needs");
        assert_eq!(s.decide(2, Some(1_500), 12, at(71)), 2);
    }
}
