//! A connector's throughput over the last minute, in twelve 5-second slots: records and bytes
//! in and out per second, and a short history for the console's chart.
//!
//! Why slots counted as batches pass, not a sampling timer: a thousand idle connectors must
//! cost nothing, so nothing wakes up to sample them; rates are worked out when read.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long one slot covers.
const SLOT: Duration = Duration::from_secs(5);
/// Slots kept: one minute.
const SLOTS: usize = 12;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// Which 5-second slot since `start` this is; a slot from a lap ago is stale.
    index: u64,
    records_in: u64,
    records_out: u64,
    bytes_in: u64,
    bytes_out: u64,
}

/// Rates over the last minute (or since the connector's first count, when younger).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Rates {
    pub(crate) records_in_per_s: f64,
    pub(crate) records_out_per_s: f64,
    pub(crate) bytes_in_per_s: f64,
    pub(crate) bytes_out_per_s: f64,
    /// Records out per second in each slot of the last minute, oldest first.
    pub(crate) history: Vec<f64>,
}

/// Counts per slot; cheap to update once per batch.
#[derive(Debug)]
pub(crate) struct Throughput {
    start: Instant,
    slots: Mutex<[Slot; SLOTS]>,
}

impl Throughput {
    pub(crate) fn new() -> Self {
        Self::starting_at(Instant::now())
    }

    fn starting_at(start: Instant) -> Self {
        Self { start, slots: Mutex::new([Slot::default(); SLOTS]) }
    }

    fn index_at(&self, now: Instant) -> u64 {
        (now.saturating_duration_since(self.start).as_millis() / SLOT.as_millis()) as u64
    }

    /// Adds `records` and `bytes` read (`incoming`) or written.
    pub(crate) fn count(&self, incoming: bool, records: u64, bytes: u64) {
        self.count_at(Instant::now(), incoming, records, bytes);
    }

    fn count_at(&self, now: Instant, incoming: bool, records: u64, bytes: u64) {
        let index = self.index_at(now);
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let slot = &mut slots[(index % SLOTS as u64) as usize];
        if slot.index != index {
            *slot = Slot { index, ..Slot::default() };
        }
        if incoming {
            slot.records_in += records;
            slot.bytes_in += bytes;
        } else {
            slot.records_out += records;
            slot.bytes_out += bytes;
        }
    }

    /// The rates now.
    pub(crate) fn rates(&self) -> Rates {
        self.rates_at(Instant::now())
    }

    fn rates_at(&self, now: Instant) -> Rates {
        let current = self.index_at(now);
        let slots = *self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let oldest = current.saturating_sub(SLOTS as u64 - 1);
        let live = |s: &&Slot| s.index >= oldest && s.index <= current && (s.records_in | s.records_out | s.bytes_in | s.bytes_out) != 0;
        let sum = |f: fn(&Slot) -> u64| slots.iter().filter(live).map(f).sum::<u64>() as f64;
        // The window: from the start of the oldest slot counted (or the start, for a young
        // connector, so its rate is not diluted by a minute it did not exist) until now.
        let window_start = self.start + SLOT * oldest as u32;
        let window = now.saturating_duration_since(window_start).as_secs_f64().max(1.0);
        let history = (oldest..=current)
            .map(|i| slots.iter().find(|s| s.index == i).map_or(0.0, |s| s.records_out as f64 / SLOT.as_secs_f64()))
            .collect();
        Rates {
            records_in_per_s: sum(|s| s.records_in) / window,
            records_out_per_s: sum(|s| s.records_out) / window,
            bytes_in_per_s: sum(|s| s.bytes_in) / window,
            bytes_out_per_s: sum(|s| s.bytes_out) / window,
            history,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_cover_the_last_minute_and_forget_what_is_older() {
        let start = Instant::now();
        let t = Throughput::starting_at(start);
        t.count_at(start, true, 590, 5_900);
        t.count_at(start + Duration::from_secs(30), false, 295, 8_850);
        let at_59_s = t.rates_at(start + Duration::from_secs(59));
        assert_eq!(at_59_s.records_in_per_s, 10.0, "590 records over the 59 s so far");
        assert_eq!(at_59_s.records_out_per_s, 5.0);
        assert_eq!(at_59_s.bytes_out_per_s, 150.0);
        assert_eq!(at_59_s.history.len(), SLOTS);
        assert_eq!(at_59_s.history[6], 59.0, "295 records in the 5-second slot at 30 s: {:?}", at_59_s.history);
        // 70 s in, the first slot (0–5 s) is more than a minute old; the window is 15–70 s.
        let later = t.rates_at(start + Duration::from_secs(70));
        assert_eq!(later.records_in_per_s, 0.0);
        assert_eq!(later.records_out_per_s, 295.0 / 55.0);
        // A slot reused a lap later starts from zero.
        t.count_at(start + Duration::from_secs(62), true, 55, 0);
        assert_eq!(t.rates_at(start + Duration::from_secs(60)).records_in_per_s, 55.0 / 55.0, "window 5–60 s");
    }

    #[test]
    fn a_young_connector_is_measured_over_its_age() {
        let start = Instant::now();
        let t = Throughput::starting_at(start);
        t.count_at(start + Duration::from_secs(1), true, 100, 0);
        assert_eq!(t.rates_at(start + Duration::from_secs(10)).records_in_per_s, 10.0);
    }
}
