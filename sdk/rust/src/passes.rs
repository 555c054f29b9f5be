//! Inputs a transform passes on whole (contract `0.1.6`): listed by index instead of written,
//! as long as the host's placement of them gives back the order the outputs were sent in.
//!
//! The host puts a pass after the written outputs of every input up to its own and before the
//! rest. That is the order they were sent in when the outputs went out in input order, with
//! no output for an input after its pass: what the default per-record loop does. A plugin's
//! own `transform_batch` may send them in any order (0.1.5 kept it); then every pass is written
//! out as a forwarded output where it was sent, and none is listed.

use turnpike_batch_layout::{passed_row, passed_timestamp, FORWARD_ALL, OUTPUT_STRIDE};

/// The passes of one batch, with what it takes to write them out after all.
pub(crate) struct Passes {
    /// Passed inputs, in the order sent.
    inputs: Vec<u32>,
    /// Per pass, how many outputs were written before it: its place among them.
    written_before: Vec<u32>,
    /// The highest input an output was sent for yet.
    highest: Option<u32>,
    /// Whether the host's placement still gives the order sent (see the module doc). Not
    /// restored by a rollback: an order broken by outputs rolled back since only costs the
    /// listing.
    in_place: bool,
}

impl Passes {
    pub(crate) fn with_capacity(records: usize) -> Self {
        Self { inputs: Vec::with_capacity(records), written_before: Vec::with_capacity(records), highest: None, in_place: true }
    }

    /// Notes an output sent for `input`, written or passed, in the order sent.
    pub(crate) fn sent(&mut self, input: u32) {
        if self.highest.is_some_and(|h| input < h) || self.inputs.last() == Some(&input) {
            self.in_place = false;
        }
        self.highest = Some(self.highest.map_or(input, |h| h.max(input)));
    }

    /// Input `input` passed on whole, after `written` written outputs.
    pub(crate) fn pass(&mut self, input: u32, written: usize) {
        self.sent(input);
        self.inputs.push(input);
        self.written_before.push(u32::try_from(written).unwrap_or(u32::MAX));
    }

    pub(crate) fn len(&self) -> usize {
        self.inputs.len()
    }

    /// Forgets the passes after the first `len`.
    pub(crate) fn truncate(&mut self, len: usize) {
        self.inputs.truncate(len);
        self.written_before.truncate(len);
    }

    /// The passes to list, with the written outputs (`records`, `timestamps` and their
    /// `forwarded` flags) as they are; or, when listing them would change the outputs' order,
    /// none, with each pass written out among them where it was sent (its timestamp the input's,
    /// from `positions`).
    pub(crate) fn finish(self, records: &mut Vec<u32>, timestamps: &mut Vec<i64>, forwarded: &mut Vec<u32>, positions: &[i64]) -> Vec<u32> {
        if self.in_place || self.inputs.is_empty() {
            return self.inputs;
        }
        let total = forwarded.len() + self.inputs.len();
        let (mut rows, mut times, mut flags) = (Vec::with_capacity(total * OUTPUT_STRIDE), Vec::with_capacity(total), Vec::with_capacity(total));
        let mut passes = self.inputs.iter().zip(&self.written_before).peekable();
        for (row, ((r, &t), &f)) in records.chunks_exact(OUTPUT_STRIDE).zip(timestamps.iter()).zip(forwarded.iter()).enumerate() {
            while let Some((&input, _)) = passes.next_if(|(_, &before)| before as usize <= row) {
                push_whole(&mut rows, &mut times, &mut flags, input, positions);
            }
            rows.extend_from_slice(r);
            times.push(t);
            flags.push(f);
        }
        for (&input, _) in passes {
            push_whole(&mut rows, &mut times, &mut flags, input, positions);
        }
        (*records, *timestamps, *forwarded) = (rows, times, flags);
        Vec::new()
    }
}

/// Input `input` unchanged, written as a forwarded output (the row the host makes of a pass).
fn push_whole(rows: &mut Vec<u32>, times: &mut Vec<i64>, flags: &mut Vec<u32>, input: u32, positions: &[i64]) {
    rows.extend_from_slice(&passed_row(input));
    times.push(passed_timestamp(positions, input));
    flags.push(FORWARD_ALL);
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_batch_layout::ABSENT;

    /// Outputs sent in input order, none after its input's pass: listed as they are.
    #[test]
    fn passes_in_input_order_are_listed() {
        let mut p = Passes::with_capacity(4);
        p.sent(0); // a written output of input 0
        p.pass(0, 1);
        p.pass(2, 1);
        p.sent(3);
        let (mut records, mut timestamps, mut forwarded) = (vec![0; 2 * OUTPUT_STRIDE], vec![5, 6], vec![0, 0]);
        assert_eq!(p.finish(&mut records, &mut timestamps, &mut forwarded, &[]), [0, 2]);
        assert_eq!(forwarded, [0, 0], "the written outputs as they were");
    }

    /// Each way of breaking the order writes every pass out where it was sent.
    #[test]
    fn passes_out_of_order_are_written_out_where_they_were_sent() {
        let positions = [10, 100, 11, 101, 12, 102];
        // Inputs in reverse (a plugin's own loop), an output after its input's pass, and an
        // input passed twice.
        let cases: [&[(u32, bool)]; 3] = [&[(2, true), (1, false), (0, true)], &[(0, true), (0, false)], &[(1, true), (1, true)]];
        for sends in cases {
            let mut p = Passes::with_capacity(3);
            let (mut records, mut timestamps, mut forwarded) = (Vec::new(), Vec::new(), Vec::new());
            for &(input, passed) in sends {
                if passed {
                    p.pass(input, forwarded.len());
                } else {
                    p.sent(input);
                    records.extend_from_slice(&[input, 0, 1, 0, 1, 0, 0, ABSENT]);
                    timestamps.push(7);
                    forwarded.push(0);
                }
            }
            assert!(p.finish(&mut records, &mut timestamps, &mut forwarded, &positions).is_empty(), "{sends:?}");
            let inputs: Vec<u32> = records.chunks_exact(OUTPUT_STRIDE).map(|r| r[0]).collect();
            assert_eq!(inputs, sends.iter().map(|s| s.0).collect::<Vec<_>>(), "the order sent");
            let expected: Vec<(u32, i64)> = sends.iter().map(|&(i, passed)| if passed { (FORWARD_ALL, positions[i as usize * 2 + 1]) } else { (0, 7) }).collect();
            assert_eq!(forwarded.iter().copied().zip(timestamps.iter().copied()).collect::<Vec<_>>(), expected, "{sends:?}");
        }
    }
}
