//! The row-set layout of `wit/sql.wit` and the one text form per value kind that both
//! backends write into it: plugins compare and pass back values as text, so PostgreSQL and
//! MySQL must print a timestamp or a float the same way, whatever their own habits.

use chrono::{DateTime, Datelike, NaiveDateTime, Timelike};

use crate::{Column, RowSet, SqlError, NULL_CELL};

/// Builds a [`RowSet`] cell by cell, row by row.
#[derive(Debug)]
pub(crate) struct RowSetBuilder {
    columns: Vec<Column>,
    data: Vec<u8>,
    cells: Vec<u32>,
    rows: u32,
}

impl RowSetBuilder {
    pub(crate) fn new(columns: Vec<Column>) -> Self {
        RowSetBuilder { columns, data: Vec::new(), cells: Vec::new(), rows: 0 }
    }

    /// SQL `NULL`: the offset is where the next value would start, the length [`NULL_CELL`].
    pub(crate) fn push_null(&mut self) {
        // `data` never reaches NULL_CELL bytes (see `push_bytes`), so the offset fits.
        self.cells.push(self.data.len() as u32);
        self.cells.push(NULL_CELL);
    }

    /// A value, copied into `data`. Fails when the row set would pass 4 GiB, the most its
    /// `u32` offsets can address.
    pub(crate) fn push_bytes(&mut self, bytes: &[u8]) -> Result<(), SqlError> {
        let start = self.data.len();
        if start.saturating_add(bytes.len()) >= NULL_CELL as usize {
            return Err(SqlError::Refused(
                "the result holds more than 4 GiB of values: ask for fewer rows or fewer columns".to_owned(),
            ));
        }
        self.data.extend_from_slice(bytes);
        self.cells.push(start as u32);
        self.cells.push(bytes.len() as u32);
        Ok(())
    }

    pub(crate) fn push_text(&mut self, text: &str) -> Result<(), SqlError> {
        self.push_bytes(text.as_bytes())
    }

    /// Closes a row; the caller has pushed one cell per column.
    pub(crate) fn end_row(&mut self) {
        self.rows += 1;
    }

    pub(crate) fn finish(self) -> RowSet {
        RowSet { columns: self.columns, data: self.data, cells: self.cells, row_count: self.rows }
    }
}

/// A float as the shortest text that reads back the same: Rust's `Display` (shortest
/// round-trip digits) between 1e-7 and 1e21, exponent form outside, where `Display` would
/// write dozens of zeros; `NaN`, `inf`, `-inf` for the special values.
pub(crate) fn float_text(value: f64) -> String {
    match FloatForm::of(value) {
        FloatForm::Special(text) => text.to_owned(),
        FloatForm::Plain => format!("{value}"),
        FloatForm::Exponent => format!("{value:e}"),
    }
}

/// [`float_text`] for a single-precision value: the shortest text that reads back as the
/// same `f32` (widening it to `f64` first would print digits the column never held).
pub(crate) fn float32_text(value: f32) -> String {
    match FloatForm::of(f64::from(value)) {
        FloatForm::Special(text) => text.to_owned(),
        FloatForm::Plain => format!("{value}"),
        FloatForm::Exponent => format!("{value:e}"),
    }
}

/// How a float is written, the same for both widths (only the digits printed differ).
enum FloatForm {
    Special(&'static str),
    Plain,
    Exponent,
}

impl FloatForm {
    fn of(value: f64) -> Self {
        if value.is_nan() {
            FloatForm::Special("NaN")
        } else if value.is_infinite() {
            FloatForm::Special(if value > 0.0 { "inf" } else { "-inf" })
        } else if value == 0.0 || (1e-7..1e21).contains(&value.abs()) {
            FloatForm::Plain
        } else {
            FloatForm::Exponent
        }
    }
}

/// A calendar date and wall-clock time, however the database encoded it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Civil {
    pub year: i32,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub micros: u32,
}

impl Civil {
    pub(crate) fn from_naive(value: &NaiveDateTime) -> Civil {
        Civil {
            year: value.year(),
            month: value.month(),
            day: value.day(),
            hour: value.hour(),
            minute: value.minute(),
            second: value.second(),
            // A leap second shows as nanoseconds past 1e9: keep it within the second.
            micros: (value.nanosecond() / 1_000).min(999_999),
        }
    }

    /// `2026-12-01`.
    pub(crate) fn date_text(&self) -> String {
        let mut out = String::with_capacity(10);
        if self.year < 0 {
            out.push('-');
        }
        out.push_str(&format!("{:04}-{:02}-{:02}", self.year.unsigned_abs(), self.month, self.day));
        out
    }

    /// `2026-12-01T13:45:00.123456`, with `Z` after it for an instant in UTC; the fraction
    /// only when it is not zero, without trailing zeros.
    pub(crate) fn timestamp_text(&self, zulu: bool) -> String {
        let mut out = self.date_text();
        out.push_str(&format!("T{:02}:{:02}:{:02}", self.hour, self.minute, self.second));
        push_fraction(&mut out, self.micros);
        if zulu {
            out.push('Z');
        }
        out
    }
}

/// `13:45:00.123456`. Hours may pass 23 (MySQL `TIME` spans ±838 hours; PostgreSQL allows
/// `24:00:00`), and MySQL durations may be negative.
pub(crate) fn time_text(negative: bool, hours: u64, minutes: u32, seconds: u32, micros: u32) -> String {
    let mut out = String::with_capacity(16);
    if negative {
        out.push('-');
    }
    out.push_str(&format!("{hours:02}:{minutes:02}:{seconds:02}"));
    push_fraction(&mut out, micros);
    out
}

/// `.5`, `.123456`, or nothing for a whole second.
fn push_fraction(out: &mut String, micros: u32) {
    if micros == 0 {
        return;
    }
    let digits = format!("{:06}", micros.min(999_999));
    out.push('.');
    out.push_str(digits.trim_end_matches('0'));
}

/// Reads a timestamp a plugin passes back: the canonical forms (`2026-12-01T13:45:00.5`,
/// with `Z` for an instant), a space instead of the `T`, and numeric offsets (`+00:00`,
/// `+0100`, `+01`). With an offset the result is in UTC and the flag is `true`.
pub(crate) fn parse_timestamp(text: &str) -> Option<(NaiveDateTime, bool)> {
    let text = text.trim();
    let normalized = match text.as_bytes().get(10) {
        Some(b' ') => format!("{}T{}", &text[..10], &text[11..]),
        _ => text.to_owned(),
    };
    if let Ok(instant) = DateTime::parse_from_str(&normalized, "%Y-%m-%dT%H:%M:%S%.f%#z") {
        return Some((instant.naive_utc(), true));
    }
    NaiveDateTime::parse_from_str(&normalized, "%Y-%m-%dT%H:%M:%S%.f").ok().map(|naive| (naive, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ValueKind;

    fn column(name: &str) -> Column {
        Column { name: name.to_owned(), kind: ValueKind::Text, type_name: "text".to_owned() }
    }

    #[test]
    fn cells_hold_offset_and_length_row_by_row_with_null_as_max_length() {
        let mut rows = RowSetBuilder::new(vec![column("a"), column("b")]);
        rows.push_text("one").unwrap();
        rows.push_null();
        rows.end_row();
        rows.push_text("").unwrap();
        rows.push_bytes(&[0xff, 0x00]).unwrap();
        rows.end_row();
        let set = rows.finish();
        assert_eq!(set.row_count, 2);
        assert_eq!(set.data, b"one\xff\x00");
        assert_eq!(set.cells, vec![0, 3, 3, NULL_CELL, 3, 0, 3, 2]);
        assert_eq!(set.cells.len(), 2 * set.row_count as usize * set.columns.len());
        assert_eq!(set.value(0, 0), Some(&b"one"[..]));
        assert_eq!(set.value(0, 1), None);
        assert_eq!(set.value(1, 0), Some(&b""[..]));
        assert_eq!(set.value(1, 1), Some(&[0xff, 0x00][..]));
        assert_eq!(set.value(2, 0), None);
    }

    #[test]
    fn floats_print_the_shortest_text_that_reads_back() {
        for (value, text) in [
            (0.1, "0.1"),
            (1.0, "1"),
            (-2.5, "-2.5"),
            (0.0, "0"),
            (123456.789, "123456.789"),
            (1e21, "1e21"),
            (1.5e-8, "1.5e-8"),
            (f64::MAX, "1.7976931348623157e308"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ] {
            assert_eq!(float_text(value), text);
        }
        for value in [0.1, 1.0 / 3.0, 2e-300, 6.02214076e23, -1e-7, 9.999999999999999e20] {
            let text = float_text(value);
            assert_eq!(text.parse::<f64>().unwrap(), value, "{text}");
        }
        assert_eq!(float32_text(0.1f32), "0.1");
        assert_eq!(float32_text(f32::NAN), "NaN");
        assert_eq!(float32_text(f32::NEG_INFINITY), "-inf");
        assert_eq!(float32_text(3.4e38f32), "3.4e38");
        assert_eq!(float32_text(16777216.0f32), "16777216");
    }

    #[test]
    fn timestamps_show_a_fraction_only_when_not_zero_and_utc_with_z() {
        let whole = Civil { year: 2026, month: 12, day: 1, hour: 13, minute: 45, second: 0, micros: 0 };
        assert_eq!(whole.date_text(), "2026-12-01");
        assert_eq!(whole.timestamp_text(false), "2026-12-01T13:45:00");
        assert_eq!(whole.timestamp_text(true), "2026-12-01T13:45:00Z");
        let fine = Civil { micros: 123_456, ..whole };
        assert_eq!(fine.timestamp_text(false), "2026-12-01T13:45:00.123456");
        assert_eq!(fine.timestamp_text(true), "2026-12-01T13:45:00.123456Z");
        let half = Civil { micros: 500_000, ..whole };
        assert_eq!(half.timestamp_text(true), "2026-12-01T13:45:00.5Z");
        let early = Civil { year: 7, month: 1, day: 2, ..whole };
        assert_eq!(early.date_text(), "0007-01-02");
        assert_eq!(time_text(false, 13, 45, 0, 123_456), "13:45:00.123456");
        assert_eq!(time_text(false, 9, 5, 7, 0), "09:05:07");
        assert_eq!(time_text(true, 838, 59, 59, 10), "-838:59:59.00001");
    }

    #[test]
    fn timestamps_read_back_in_every_accepted_spelling() {
        let expected = NaiveDateTime::parse_from_str("2026-12-01T13:45:00.123456", "%Y-%m-%dT%H:%M:%S%.f").unwrap();
        for (text, offset) in [
            ("2026-12-01T13:45:00.123456", false),
            ("2026-12-01 13:45:00.123456", false),
            ("2026-12-01T13:45:00.123456Z", true),
            ("2026-12-01 13:45:00.123456Z", true),
            ("2026-12-01T13:45:00.123456+00:00", true),
            ("2026-12-01T14:45:00.123456+01:00", true),
            ("2026-12-01T14:45:00.123456+01", true),
        ] {
            assert_eq!(parse_timestamp(text), Some((expected, offset)), "{text}");
        }
        let whole = parse_timestamp("2026-12-01T13:45:00Z").unwrap();
        assert_eq!(Civil::from_naive(&whole.0).timestamp_text(true), "2026-12-01T13:45:00Z");
        assert_eq!(parse_timestamp("yesterday"), None);
        assert_eq!(parse_timestamp("2026-12-01"), None);
    }
}
