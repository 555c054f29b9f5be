//! Spans (an offset and a length into a batch's `data`) and reading them without trusting
//! them.

use std::ops::Range;
use std::slice::ChunksExact;

use crate::{ABSENT, HEADER_STRIDE};

/// The byte range of a span, if it lies inside `data`; `None` for an absent span.
pub fn span(data: &[u8], offset: u32, len: u32) -> Option<Range<usize>> {
    if len == ABSENT {
        return None;
    }
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    (end <= data.len()).then_some(start..end)
}

/// The bytes of a span; empty when it is absent or out of range, so that reading a batch
/// never panics on what it holds.
pub fn bytes(data: &[u8], offset: u32, len: u32) -> &[u8] {
    span(data, offset, len).and_then(|r| data.get(r)).unwrap_or_default()
}

/// The bytes of a span that may be absent: `None` for "absent".
pub fn optional(data: &[u8], offset: u32, len: u32) -> Option<&[u8]> {
    (len != ABSENT).then(|| bytes(data, offset, len))
}

/// A size as a column entry. Batches are capped far below 4 GiB (the host's batch byte cap; a
/// guest's 32-bit memory), so a size that does not fit means a cap is broken: worth stopping
/// for rather than writing spans that point elsewhere.
pub(crate) fn len_u32(n: usize) -> u32 {
    u32::try_from(n).expect("batch larger than 4 GiB: the batch size cap is broken")
}

/// Header entries `[first, first + count)` of a header column; empty when out of range.
pub(crate) fn header_entries(headers: &[u32], first: u32, count: u32) -> &[u32] {
    let (first, count) = (first as usize, count as usize);
    let start = first.checked_mul(HEADER_STRIDE);
    let end = first.checked_add(count).and_then(|end| end.checked_mul(HEADER_STRIDE));
    match (start, end) {
        (Some(start), Some(end)) => headers.get(start..end).unwrap_or_default(),
        _ => &[],
    }
}

/// The headers of one record, as `(key, value)`, in order. A key that is not UTF-8 reads as
/// empty: the host only sends UTF-8 keys and refuses plugin output with any other.
#[derive(Debug, Clone)]
pub struct Headers<'a> {
    data: &'a [u8],
    entries: ChunksExact<'a, u32>,
}

impl<'a> Headers<'a> {
    /// The `count` headers from `first` of a header column whose spans point into `data`.
    pub(crate) fn new(data: &'a [u8], headers: &'a [u32], first: u32, count: u32) -> Self {
        Self { data, entries: header_entries(headers, first, count).chunks_exact(HEADER_STRIDE) }
    }
}

impl<'a> Iterator for Headers<'a> {
    type Item = (&'a str, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let h = self.entries.next()?;
        let key = std::str::from_utf8(bytes(self.data, h[0], h[1])).unwrap_or_default();
        Some((key, bytes(self.data, h[2], h[3])))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.entries.size_hint()
    }
}

impl ExactSizeIterator for Headers<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_inside_the_data_only() {
        let data = b"abcd";
        assert_eq!(span(data, 1, 3), Some(1..4));
        assert_eq!(span(data, 4, 0), Some(4..4));
        assert_eq!(span(data, 2, 3), None);
        assert_eq!(span(data, u32::MAX - 1, 5), None, "offset + length must not wrap");
        assert_eq!(span(data, 0, ABSENT), None);
    }

    #[test]
    fn reads_are_lenient_and_absent_is_null() {
        let data = b"abcd";
        assert_eq!(bytes(data, 1, 2), b"bc");
        assert_eq!(bytes(data, 3, 9), b"");
        assert_eq!(optional(data, 0, ABSENT), None);
        assert_eq!(optional(data, 0, 0), Some(&b""[..]));
        assert_eq!(optional(data, 9, 1), Some(&b""[..]));
    }

    #[test]
    fn headers_read_a_range_and_tolerate_a_bad_one() {
        // "k1" "v1" "k2" "" and a key that is not UTF-8.
        let data = b"k1v1k2\xff";
        let column = [0, 2, 2, 2, 4, 2, 6, 0, 6, 1, 0, 0];
        assert_eq!(Headers::new(data, &column, 1, 1).collect::<Vec<_>>(), [("k2", &b""[..])]);
        assert_eq!(Headers::new(data, &column, 0, 2).len(), 2);
        assert_eq!(Headers::new(data, &column, 2, 1).collect::<Vec<_>>(), [("", &b""[..])]);
        assert_eq!(Headers::new(data, &column, 2, 5).count(), 0, "past the column");
        assert_eq!(Headers::new(data, &column, u32::MAX, u32::MAX).count(), 0, "overflowing range");
    }
}
