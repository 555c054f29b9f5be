//! What one instance's `log` keeps: the labels its lines carry, the secret values its lines
//! must not show, and its line rate with the count of lines it dropped.

use std::time::{Duration, Instant};

use crate::labels::InstanceLabels;
use crate::scrub::Scrub;

/// Lines a plugin instance may log per second; the rest are counted and reported as dropped.
const LINES_PER_SECOND: u32 = 100;
/// How long one rate window lasts.
const WINDOW: Duration = Duration::from_secs(1);

/// One instance's `log` state.
pub(crate) struct LogState {
    /// Attached to every line the instance logs.
    pub(super) labels: InstanceLabels,
    /// Replaced by `***` in every line.
    pub(super) scrub: Scrub,
    pub(super) rate: LineRate,
}

impl LogState {
    pub(super) fn new(labels: InstanceLabels, scrub: Scrub) -> Self {
        Self { labels, scrub, rate: LineRate::starting_at(Instant::now()) }
    }
}

/// The rate limit on one instance's lines: [`LINES_PER_SECOND`] per window of [`WINDOW`],
/// and the lines dropped in the current window, reported when the next one opens.
pub(super) struct LineRate {
    /// Lines left in the current window.
    budget: u32,
    window_start: Instant,
    /// Lines dropped in the current window.
    dropped: u64,
}

/// Whether one line may be written.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Admission {
    /// Whether to write the line (else it was counted as dropped).
    pub(super) write: bool,
    /// When the line opened a new window: the lines the window before dropped, to report.
    pub(super) dropped_before: u64,
}

impl LineRate {
    /// A rate whose first window opens at `start` with its full budget, so what a plugin
    /// logs from `create` on is written (a budget of 0 here once dropped every line of an
    /// instance's first second, its `create` messages included).
    pub(super) fn starting_at(start: Instant) -> Self {
        Self { budget: LINES_PER_SECOND, window_start: start, dropped: 0 }
    }

    /// Admits or drops one line logged at `now`.
    pub(super) fn admit(&mut self, now: Instant) -> Admission {
        let mut dropped_before = 0;
        if now.duration_since(self.window_start) >= WINDOW {
            dropped_before = std::mem::take(&mut self.dropped);
            self.window_start = now;
            self.budget = LINES_PER_SECOND;
        }
        if self.budget == 0 {
            self.dropped += 1;
            return Admission { write: false, dropped_before };
        }
        self.budget -= 1;
        Admission { write: true, dropped_before }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_window_admits_lines_from_the_start() {
        let start = Instant::now();
        let mut rate = LineRate::starting_at(start);
        assert_eq!(rate.admit(start), Admission { write: true, dropped_before: 0 }, "what `create` logs is written");
        for _ in 1..LINES_PER_SECOND {
            assert!(rate.admit(start + WINDOW / 2).write);
        }
        assert!(!rate.admit(start + WINDOW / 2).write, "past the budget");
    }

    #[test]
    fn each_window_admits_its_budget_then_counts_what_it_drops() {
        let start = Instant::now();
        let mut rate = LineRate::starting_at(start);
        let second = start + WINDOW;
        let first = rate.admit(second);
        assert_eq!(first, Admission { write: true, dropped_before: 0 });
        for _ in 1..LINES_PER_SECOND {
            assert!(rate.admit(second).write);
        }
        assert_eq!(rate.admit(second), Admission { write: false, dropped_before: 0 }, "past the budget");
        assert_eq!(rate.admit(second + WINDOW / 2), Admission { write: false, dropped_before: 0 }, "same window");

        let third = second + WINDOW;
        assert_eq!(rate.admit(third), Admission { write: true, dropped_before: 2 }, "the next window reports the drops");
        assert_eq!(rate.admit(third), Admission { write: true, dropped_before: 0 }, "and reports them once");
    }
}
