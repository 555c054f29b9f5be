//! Inputs passed on whole (`passing-transform`, contract `0.1.6`): a plugin may list the inputs
//! whose one output is the input itself, instead of writing a row for each. The host turns the
//! list into forwarded rows ([`merge_passed`]) and resolves them as any other
//! ([`crate::resolve_forwarded`]); a plugin on an older host does the same before returning.

use crate::{InputView, LayoutError, ABSENT, FORWARD_ALL, NO_TIMESTAMP, OUTPUT_STRIDE, POSITION_STRIDE};

/// The columns of an output batch that merging grows: a row, a timestamp and a flag word per
/// output (a side's bindgen type lends them field by field).
pub struct PassParts<'a> {
    /// [`OUTPUT_STRIDE`] entries per output.
    pub records: &'a mut Vec<u32>,
    /// One per output.
    pub timestamps: &'a mut Vec<i64>,
    /// One flag word per output, as `forwarding-transform` returns them.
    pub forwarded: &'a mut Vec<u32>,
}

/// Checks `passed` against `input` (increasing input indices of the batch) and adds a
/// forwarded row for each: the whole input, with its timestamp, to the connector's output
/// topic. A pass goes after every row of an input up to its own and before the rest, so
/// outputs stay in input order. On `Err` the batch is left unchanged.
///
/// The rows written must already hold one flag word each ([`LayoutError::ForwardedCount`]
/// otherwise); their own checks are [`crate::validate_output`]'s, before this.
pub fn merge_passed(out: PassParts<'_>, passed: &[u32], input: InputView<'_>) -> Result<(), LayoutError> {
    check_passed(passed, input.len())?;
    let rows = out.records.len() / OUTPUT_STRIDE;
    if out.forwarded.len() != rows {
        return Err(LayoutError::ForwardedCount { forwarded: out.forwarded.len(), rows });
    }
    if passed.is_empty() {
        return Ok(());
    }
    if rows == 0 {
        // The common case (an identity, a filter, a router that keeps the topic): no rows to
        // interleave with.
        out.records.reserve(passed.len() * OUTPUT_STRIDE);
        out.timestamps.reserve(passed.len());
        for &i in passed {
            push_pass(out.records, out.timestamps, i, input);
        }
        out.forwarded.resize(passed.len(), FORWARD_ALL);
        return Ok(());
    }
    let total = rows + passed.len();
    let (mut records, mut timestamps, mut forwarded) = (Vec::with_capacity(total * OUTPUT_STRIDE), Vec::with_capacity(total), Vec::with_capacity(total));
    let mut next = passed.iter().copied().peekable();
    for ((row, &timestamp), &flags) in out.records.chunks_exact(OUTPUT_STRIDE).zip(out.timestamps.iter()).zip(out.forwarded.iter()) {
        while let Some(i) = next.next_if(|&i| i < row[0]) {
            push_pass(&mut records, &mut timestamps, i, input);
            forwarded.push(FORWARD_ALL);
        }
        records.extend_from_slice(row);
        timestamps.push(timestamp);
        forwarded.push(flags);
    }
    for i in next {
        push_pass(&mut records, &mut timestamps, i, input);
        forwarded.push(FORWARD_ALL);
    }
    (*out.records, *out.timestamps, *out.forwarded) = (records, timestamps, forwarded);
    Ok(())
}

/// Increasing, and every one an input of the batch.
fn check_passed(passed: &[u32], inputs: usize) -> Result<(), LayoutError> {
    let mut previous = None;
    for (index, &input) in passed.iter().enumerate() {
        if input as usize >= inputs {
            return Err(LayoutError::PassedInput { index, input, inputs });
        }
        if previous.is_some_and(|p| p >= input) {
            return Err(LayoutError::PassedOrder { index, input });
        }
        previous = Some(input);
    }
    Ok(())
}

/// The forwarded row of input `i` passed on whole: its parts are left for resolving, its
/// topic is the connector's.
pub fn passed_row(i: u32) -> [u32; OUTPUT_STRIDE] {
    [i, 0, ABSENT, 0, ABSENT, 0, 0, ABSENT]
}

/// The timestamp of input `i` passed on whole: the input's, from the batch's `positions`.
pub fn passed_timestamp(positions: &[i64], i: u32) -> i64 {
    positions.get(i as usize * POSITION_STRIDE + 1).copied().unwrap_or(NO_TIMESTAMP)
}

fn push_pass(records: &mut Vec<u32>, timestamps: &mut Vec<i64>, i: u32, input: InputView<'_>) {
    records.extend_from_slice(&passed_row(i));
    timestamps.push(passed_timestamp(input.positions, i));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{INPUT_STRIDE, resolve_forwarded, validate_output, InputWriter, OutputParts, OutputRef, OutputView, OutputWriter, RecordRef, FORWARD_KEY};

    fn input() -> crate::InputColumns {
        let mut w = InputWriter::new();
        for (i, v) in ["zero", "one", "two"].into_iter().enumerate() {
            w.push(RecordRef { key: Some(b"k"), value: Some(v.as_bytes()), timestamp: Some(100 + i as i64), topic: "t", partition: 0, offset: i as i64 }, [("h", &b"x"[..])]);
        }
        w.push(RecordRef { key: None, value: None, timestamp: None, topic: "t", partition: 0, offset: 3 }, []);
        w.finish()
    }

    /// Merges and resolves as the host does; the outputs as `(input, value, timestamp)`.
    fn run(out: &mut crate::OutputColumns, forwarded: &mut Vec<u32>, passed: &[u32], input: &crate::InputColumns) -> Result<Vec<(u32, Option<Vec<u8>>, Option<i64>)>, LayoutError> {
        merge_passed(PassParts { records: &mut out.records, timestamps: &mut out.timestamps, forwarded }, passed, InputView::new(input))?;
        resolve_forwarded(OutputParts { data: &mut out.data, records: &mut out.records, headers: &mut out.headers }, forwarded, InputView::new(input), 1 << 20)?;
        let view = OutputView::new(&*out);
        validate_output(view, input.records.len() / INPUT_STRIDE, std::iter::empty()).expect("a merged batch keeps to the contract");
        Ok(view.iter().map(|p| (p.input, p.value.map(<[u8]>::to_vec), p.timestamp)).collect())
    }

    #[test]
    fn passes_alone_read_as_their_inputs() {
        let input = input();
        let mut out = OutputWriter::new().finish();
        let read = run(&mut out, &mut Vec::new(), &[0, 2, 3], &input).unwrap();
        assert_eq!(read, [(0, Some(b"zero".to_vec()), Some(100)), (2, Some(b"two".to_vec()), Some(102)), (3, None, None)]);
        let view = OutputView::new(&out);
        let first = view.iter().next().unwrap();
        assert_eq!((first.key, view.headers(&first).collect::<Vec<_>>()), (Some(&b"k"[..]), vec![("h", &b"x"[..])]));
    }

    /// A pass goes after the rows of inputs up to its own and before the rest, whatever the
    /// rows forward.
    #[test]
    fn passes_take_their_inputs_place_among_written_rows() {
        let input = input();
        let mut w = OutputWriter::new();
        let row = |i: u32, value: &'static [u8]| OutputRef { input: i, key: None, value: Some(value), timestamp: Some(7), topic: None };
        w.push(row(1, b"new one"), []);
        w.push(row(2, b"before two's pass"), []);
        let mut out = w.finish();
        let mut forwarded = vec![FORWARD_KEY, 0];
        let read = run(&mut out, &mut forwarded, &[0, 2, 3], &input).unwrap();
        let values: Vec<_> = read.iter().map(|(i, v, _)| (*i, v.clone().map(String::from_utf8).map(Result::unwrap))).collect();
        assert_eq!(
            values,
            [(0, Some("zero".into())), (1, Some("new one".into())), (2, Some("before two's pass".into())), (2, Some("two".into())), (3, None)]
        );
        assert_eq!(forwarded, [FORWARD_ALL, FORWARD_KEY, 0, FORWARD_ALL, FORWARD_ALL]);
    }

    #[test]
    fn a_pass_out_of_order_or_out_of_range_is_refused_and_changes_nothing() {
        let input = input();
        let mut out = OutputWriter::new().finish();
        let mut forwarded = Vec::new();
        let mut merge = |passed: &[u32]| merge_passed(PassParts { records: &mut out.records, timestamps: &mut out.timestamps, forwarded: &mut forwarded }, passed, InputView::new(&input));
        assert_eq!(merge(&[0, 4]), Err(LayoutError::PassedInput { index: 1, input: 4, inputs: 4 }));
        assert_eq!(merge(&[1, 1]), Err(LayoutError::PassedOrder { index: 1, input: 1 }));
        assert_eq!(merge(&[2, 0]), Err(LayoutError::PassedOrder { index: 1, input: 0 }));
        assert!(out.records.is_empty() && out.timestamps.is_empty() && forwarded.is_empty());
    }

    #[test]
    fn rows_without_their_flags_are_refused() {
        let input = input();
        let mut w = OutputWriter::new();
        w.push(OutputRef { input: 0, key: None, value: Some(b"v"), timestamp: None, topic: None }, []);
        let mut out = w.finish();
        let err = merge_passed(PassParts { records: &mut out.records, timestamps: &mut out.timestamps, forwarded: &mut Vec::new() }, &[1], InputView::new(&input));
        assert_eq!(err, Err(LayoutError::ForwardedCount { forwarded: 0, rows: 1 }));
    }
}
