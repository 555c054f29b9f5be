//! Forwarded parts (`forwarding-transform`, contract `0.1.4`): an output may say that its
//! key, value or headers are its input's own, so that those bytes are never copied out of the
//! plugin and back. The host resolves them once, against the batch it sent, into an ordinary
//! output batch; everything after that (chains, sinks, the producer) reads outputs as before.

use crate::span::{header_entries, len_u32, optional};
use crate::writer::append_opt;
use crate::{InputView, LayoutError, ABSENT, HEADER_STRIDE, INPUT_STRIDE, OUTPUT_STRIDE};

/// The output's key is its input's key.
pub const FORWARD_KEY: u32 = 1;
/// The output's value is its input's value.
pub const FORWARD_VALUE: u32 = 2;
/// The output's headers are its input's headers.
pub const FORWARD_HEADERS: u32 = 4;
/// The input unchanged: key, value and headers.
pub const FORWARD_ALL: u32 = FORWARD_KEY | FORWARD_VALUE | FORWARD_HEADERS;

/// The mutable columns of an output batch that resolving touches (a side's bindgen type lends
/// them field by field).
pub struct OutputParts<'a> {
    /// Every key, value and header byte.
    pub data: &'a mut Vec<u8>,
    /// [`OUTPUT_STRIDE`] entries per output.
    pub records: &'a mut [u32],
    /// [`HEADER_STRIDE`] entries per header.
    pub headers: &'a mut Vec<u32>,
}

/// Checks the `forwarded` column of an output batch already checked by
/// [`crate::validate_output`] against `input`, the batch it answers, then copies every
/// forwarded part from `input` into the output batch, so that it reads as if the plugin had
/// written those bytes itself. On `Err` the batch is left unchanged.
///
/// `max_bytes` caps what the resolved batch carries (its `data` and header column, in bytes):
/// a plugin that forwards one input many times would otherwise make the host allocate far more
/// than the plugin could ever have returned itself ([`LayoutError::ForwardedTooLarge`]).
pub fn resolve_forwarded(out: OutputParts<'_>, forwarded: &[u32], input: InputView<'_>, max_bytes: usize) -> Result<(), LayoutError> {
    let rows = out.records.len() / OUTPUT_STRIDE;
    check_forwarded(out.records, forwarded, rows)?;
    let mut extra = Growth::default();
    for (r, &flags) in out.records.chunks_exact(OUTPUT_STRIDE).zip(forwarded) {
        if flags != 0 {
            extra = extra.plus(forwarded_growth(flags, input, r[0] as usize));
        }
    }
    let bytes = out.data.len().saturating_add(extra.data).saturating_add(out.headers.len().saturating_add(extra.header_entries).saturating_mul(4));
    // Spans are `u32`s: a `data` of 4 GiB or more cannot be addressed.
    let max_bytes = max_bytes.min(u32::MAX as usize);
    if bytes > max_bytes {
        return Err(LayoutError::ForwardedTooLarge { bytes, max: max_bytes });
    }
    out.data.reserve(extra.data);
    out.headers.reserve(extra.header_entries);
    for (r, &flags) in out.records.chunks_exact_mut(OUTPUT_STRIDE).zip(forwarded) {
        if flags == 0 {
            continue;
        }
        let from = &input.records[r[0] as usize * INPUT_STRIDE..][..INPUT_STRIDE];
        if flags & FORWARD_KEY != 0 {
            (r[1], r[2]) = copy_span(out.data, input.data, from[0], from[1]);
        }
        if flags & FORWARD_VALUE != 0 {
            (r[3], r[4]) = copy_span(out.data, input.data, from[2], from[3]);
        }
        if flags & FORWARD_HEADERS != 0 {
            r[5] = len_u32(out.headers.len() / HEADER_STRIDE);
            r[6] = from[5];
            for h in header_entries(input.headers, from[4], from[5]).chunks_exact(HEADER_STRIDE) {
                let (ko, kl) = copy_span(out.data, input.data, h[0], h[1]);
                let (vo, vl) = copy_span(out.data, input.data, h[2], h[3]);
                out.headers.extend_from_slice(&[ko, kl, vo, vl]);
            }
        }
    }
    Ok(())
}

/// One flag word per output, no unknown bit, and a forwarded part left empty by the plugin
/// (a plugin that both forwards and writes a part has a bug worth reporting).
fn check_forwarded(records: &[u32], forwarded: &[u32], rows: usize) -> Result<(), LayoutError> {
    if forwarded.len() != rows {
        return Err(LayoutError::ForwardedCount { forwarded: forwarded.len(), rows });
    }
    for (row, (r, &flags)) in records.chunks_exact(OUTPUT_STRIDE).zip(forwarded).enumerate() {
        if flags & !FORWARD_ALL != 0 {
            return Err(LayoutError::ForwardFlags { row, flags });
        }
        let written = (flags & FORWARD_KEY != 0 && r[2] != ABSENT)
            || (flags & FORWARD_VALUE != 0 && r[4] != ABSENT)
            || (flags & FORWARD_HEADERS != 0 && r[6] != 0);
        if written {
            return Err(LayoutError::ForwardedPartWritten { row });
        }
    }
    Ok(())
}

/// What resolving adds to a batch: `data` bytes and header column entries (`u32`s).
#[derive(Debug, Default, Clone, Copy)]
struct Growth {
    data: usize,
    header_entries: usize,
}

impl Growth {
    fn plus(self, other: Growth) -> Growth {
        Growth { data: self.data.saturating_add(other.data), header_entries: self.header_entries.saturating_add(other.header_entries) }
    }
}

/// What the forwarded parts of one output add, to check the cap and grow the columns once.
fn forwarded_growth(flags: u32, input: InputView<'_>, i: usize) -> Growth {
    let from = &input.records[i * INPUT_STRIDE..][..INPUT_STRIDE];
    let len = |l: u32| if l == ABSENT { 0 } else { l as usize };
    let mut g = Growth::default();
    if flags & FORWARD_KEY != 0 {
        g.data = g.data.saturating_add(len(from[1]));
    }
    if flags & FORWARD_VALUE != 0 {
        g.data = g.data.saturating_add(len(from[3]));
    }
    if flags & FORWARD_HEADERS != 0 {
        let entries = header_entries(input.headers, from[4], from[5]);
        g.header_entries = entries.len();
        g.data = entries.chunks_exact(HEADER_STRIDE).fold(g.data, |n, h| n.saturating_add(len(h[1])).saturating_add(len(h[3])));
    }
    g
}

/// Appends the bytes of span `(offset, len)` of `from` to `data`; an absent span stays absent.
fn copy_span(data: &mut Vec<u8>, from: &[u8], offset: u32, len: u32) -> (u32, u32) {
    append_opt(data, optional(from, offset, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{validate_output, InputWriter, OutputRef, OutputView, OutputWriter, RecordRef};

    fn input() -> crate::InputColumns {
        let mut w = InputWriter::new();
        w.push(RecordRef { key: Some(b"k0"), value: Some(b"value zero"), timestamp: Some(1), topic: "t", partition: 0, offset: 10 }, [("h", &b"x"[..])]);
        w.push(RecordRef { key: None, value: None, timestamp: None, topic: "t", partition: 1, offset: 11 }, []);
        w.finish()
    }

    fn resolve(out: &mut crate::OutputColumns, forwarded: &[u32], input: &crate::InputColumns) -> Result<(), LayoutError> {
        let parts = OutputParts { data: &mut out.data, records: &mut out.records, headers: &mut out.headers };
        resolve_forwarded(parts, forwarded, InputView::new(input), 1 << 20)
    }

    /// An output as `(input, key, value, headers)`.
    type Read<'a> = (u32, Option<&'a [u8]>, Option<&'a [u8]>, Vec<(&'a str, &'a [u8])>);

    fn read(out: &crate::OutputColumns) -> Vec<Read<'_>> {
        let view = OutputView::new(out);
        validate_output(view, 2, std::iter::empty::<u32>()).expect("a resolved batch keeps to the contract");
        view.iter().map(|p| (p.input, p.key, p.value, view.headers(&p).collect())).collect()
    }

    #[test]
    fn forwarded_parts_read_as_the_inputs_own_and_written_parts_as_written() {
        let input = input();
        let mut w = OutputWriter::new();
        let empty = |i| OutputRef { input: i, key: None, value: None, timestamp: None, topic: None };
        w.push(empty(0), []); // input 0 unchanged
        w.push(OutputRef { value: Some(b"new"), ..empty(0) }, []); // input 0 with a new value
        w.push(empty(1), []); // input 1 (null key and value) unchanged
        w.push(OutputRef { key: Some(b"own"), ..empty(0) }, [("mine", &b"1"[..])]); // nothing forwarded
        let mut out = w.finish();
        resolve(&mut out, &[FORWARD_ALL, FORWARD_KEY | FORWARD_HEADERS, FORWARD_ALL, 0], &input).unwrap();
        let h = vec![("h", &b"x"[..])];
        assert_eq!(
            read(&out),
            [
                (0, Some(&b"k0"[..]), Some(&b"value zero"[..]), h.clone()),
                (0, Some(&b"k0"[..]), Some(&b"new"[..]), h),
                (1, None, None, vec![]),
                (0, Some(&b"own"[..]), None, vec![("mine", &b"1"[..])]),
            ]
        );
    }

    #[test]
    fn forwarding_one_input_many_times_past_the_cap_is_refused() {
        let input = input();
        let mut w = OutputWriter::new();
        for _ in 0..3 {
            w.push(OutputRef { input: 0, key: None, value: None, timestamp: None, topic: None }, []);
        }
        let mut out = w.finish();
        let parts = OutputParts { data: &mut out.data, records: &mut out.records, headers: &mut out.headers };
        // Each copy of input 0 is 2 + 10 + 1 + 1 = 14 bytes of data and one header entry of 16.
        let err = resolve_forwarded(parts, &[FORWARD_ALL; 3], InputView::new(&input), 89).unwrap_err();
        assert_eq!(err, LayoutError::ForwardedTooLarge { bytes: 90, max: 89 });
        let parts = OutputParts { data: &mut out.data, records: &mut out.records, headers: &mut out.headers };
        resolve_forwarded(parts, &[FORWARD_ALL; 3], InputView::new(&input), 90).expect("exactly at the cap");
    }

    /// Headers cost the host a column entry each even when empty: forwarding a record of many
    /// empty headers many times must hit the cap too.
    #[test]
    fn forwarded_header_entries_count_against_the_cap() {
        let mut w = InputWriter::new();
        let empty: Vec<(&str, &[u8])> = vec![("", &b""[..]); 100];
        w.push(RecordRef { key: None, value: None, timestamp: None, topic: "t", partition: 0, offset: 0 }, empty);
        let input = w.finish();
        let mut out = OutputWriter::new();
        for _ in 0..10 {
            out.push(OutputRef { input: 0, key: None, value: None, timestamp: None, topic: None }, []);
        }
        let mut out = out.finish();
        let parts = OutputParts { data: &mut out.data, records: &mut out.records, headers: &mut out.headers };
        let err = resolve_forwarded(parts, &[FORWARD_HEADERS; 10], InputView::new(&input), 15_999).unwrap_err();
        assert_eq!(err, LayoutError::ForwardedTooLarge { bytes: 16_000, max: 15_999 });
    }

    #[test]
    fn a_bad_forwarded_column_is_refused_and_changes_nothing() {
        let input = input();
        let mut w = OutputWriter::new();
        w.push(OutputRef { input: 0, key: None, value: Some(b"v"), timestamp: None, topic: None }, []);
        let out = w.finish();
        let cases: [(&[u32], &str); 4] = [
            (&[], "0 forwarded flags for 1 outputs"),
            (&[7, 7], "2 forwarded flags for 1 outputs"),
            (&[8], "output 0: unknown forwarded flags 0x8"),
            (&[FORWARD_VALUE], "output 0: a part is both forwarded and written"),
        ];
        for (forwarded, message) in cases {
            let mut copy = out.clone();
            assert_eq!(resolve(&mut copy, forwarded, &input).unwrap_err().to_string(), message);
            assert_eq!(copy, out);
        }
        // A key or headers both written and forwarded.
        let mut w = OutputWriter::new();
        w.push(OutputRef { input: 0, key: Some(b"k"), value: None, timestamp: None, topic: None }, [("h", &b"v"[..])]);
        let out = w.finish();
        for flags in [FORWARD_KEY, FORWARD_HEADERS] {
            let mut copy = out.clone();
            assert_eq!(resolve(&mut copy, &[flags], &input).unwrap_err().to_string(), "output 0: a part is both forwarded and written");
        }
    }
}
