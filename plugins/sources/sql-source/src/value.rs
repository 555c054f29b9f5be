//! Rows to JSON: a record's value is an object of the row's columns in result order, its key
//! an object of the key columns. Written by hand rather than through `serde_json::Value`, so
//! that decimals keep every digit (`numeric.mapping: best_fit` writes `12.50`, not `12.5`)
//! and embedded JSON columns are copied as they are.

use turnpike_sdk::sql::{Column, Row, ValueKind};

use crate::config::{NumericMapping, TimestampMapping};
use crate::time;

/// How values are written.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Mapping {
    pub numeric: NumericMapping,
    pub timestamps: TimestampMapping,
}

/// The JSON keys of a result's columns: their names, a repeated name (a join's two `id`s)
/// suffixed `_2`, `_3`… so that no key is lost.
pub(crate) fn keys(columns: &[Column]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::with_capacity(columns.len());
    for c in columns {
        let mut key = c.name.clone();
        let mut n = 1;
        while keys.contains(&key) {
            n += 1;
            key = format!("{}_{n}", c.name);
        }
        keys.push(key);
    }
    keys
}

/// `{"col": value, …}` of the columns at `indices` (all of them for a value) under `keys`.
pub(crate) fn object(row: &Row<'_>, columns: &[Column], keys: &[String], indices: impl IntoIterator<Item = usize>, mapping: Mapping) -> String {
    let mut out = String::from("{");
    for i in indices {
        let (Some(column), Some(key)) = (columns.get(i), keys.get(i)) else { continue };
        if out.len() > 1 {
            out.push(',');
        }
        push_string(&mut out, key);
        out.push(':');
        push_value(&mut out, column.kind, row.get(i), mapping);
    }
    out.push('}');
    out
}

/// One value, per the mapping table in the README.
fn push_value(out: &mut String, kind: ValueKind, value: Option<&[u8]>, mapping: Mapping) {
    let Some(bytes) = value else {
        out.push_str("null");
        return;
    };
    if kind == ValueKind::Bytes {
        out.push('"');
        out.push_str(&base64(bytes));
        out.push('"');
        return;
    }
    let text = String::from_utf8_lossy(bytes);
    let text = text.as_ref();
    let raw = match kind {
        ValueKind::Boolean => matches!(text, "true" | "false"),
        ValueKind::Integer | ValueKind::Float => is_json_number(text),
        ValueKind::Decimal => mapping.numeric == NumericMapping::BestFit && is_json_number(text),
        ValueKind::Json => serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok(),
        ValueKind::Timestamp | ValueKind::TimestampTz => {
            match (mapping.timestamps, time::epoch_ms(text)) {
                (TimestampMapping::EpochMs, Some(ms)) => out.push_str(&ms.to_string()),
                // Without a zone the database means UTC here (see the README): say so.
                (TimestampMapping::Iso8601, Some(_)) if kind == ValueKind::Timestamp && !text.ends_with('Z') => {
                    push_string(out, &format!("{}Z", text.replacen(' ', "T", 1)));
                }
                _ => push_string(out, text),
            }
            return;
        }
        _ => false,
    };
    if raw {
        out.push_str(text.trim());
    } else {
        push_string(out, text);
    }
}

/// Appends `s` as a JSON string.
pub(crate) fn push_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Whether `s` is a JSON number as it stands (`-12.50`, `1e30`), so it may be copied as is:
/// `NaN`, `inf`, `+1`, `.5`, `01` are not.
pub(crate) fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(b.first() == Some(&b'-'));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    let int_start = i;
    let n = digits(&mut i);
    if n == 0 || (n > 1 && b[int_start] == b'0') {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Standard base64 (RFC 4648, with padding): no base64 crate in this workspace, and this is
/// all that is needed.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16) | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8) | u32::from(*chunk.get(2).unwrap_or(&0));
        let sextet = |shift: u32| char::from(ALPHABET[((n >> shift) & 63) as usize]);
        out.push(sextet(18));
        out.push(sextet(12));
        out.push(if chunk.len() > 1 { sextet(6) } else { '=' });
        out.push(if chunk.len() > 2 { sextet(0) } else { '=' });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnpike_sdk::sql::RowSet;

    fn one(kind: ValueKind, text: Option<&str>, numeric: NumericMapping, timestamps: TimestampMapping) -> String {
        let columns = vec![Column::new("v", kind, "t")];
        let set = RowSet::builder(columns.clone()).row([text]).build();
        let row = set.row(0).expect("one row");
        let json = object(&row, &columns, &keys(&columns), [0], Mapping { numeric, timestamps });
        json.strip_prefix("{\"v\":").and_then(|s| s.strip_suffix('}')).expect("one key").to_owned()
    }

    fn default(kind: ValueKind, text: &str) -> String {
        one(kind, Some(text), NumericMapping::None, TimestampMapping::Iso8601)
    }

    #[test]
    fn each_kind_maps_as_documented() {
        use ValueKind as K;
        let cases = [
            (K::Integer, "-42", "-42"),
            (K::Float, "1.5", "1.5"),
            (K::Float, "NaN", "\"NaN\""),
            (K::Float, "-inf", "\"-inf\""),
            (K::Decimal, "12.50", "\"12.50\""),
            (K::Boolean, "true", "true"),
            (K::Text, "say \"hi\"\n", "\"say \\\"hi\\\"\\n\""),
            (K::Date, "2026-12-01", "\"2026-12-01\""),
            (K::Time, "13:45:00.123456", "\"13:45:00.123456\""),
            (K::Timestamp, "2026-12-01T13:45:00.123456", "\"2026-12-01T13:45:00.123456Z\""),
            (K::TimestampTz, "2026-12-01T13:45:00Z", "\"2026-12-01T13:45:00Z\""),
            (K::Timestamp, "infinity", "\"infinity\""),
            (K::Json, r#"{"a": [1, 2.50]}"#, r#"{"a": [1, 2.50]}"#),
            (K::Json, "{broken", "\"{broken\""),
            (K::Uuid, "67e55044-10b1-426f-9247-bb680e5fe0c8", "\"67e55044-10b1-426f-9247-bb680e5fe0c8\""),
            (K::Other, "{1,2}", "\"{1,2}\""),
        ];
        for (kind, text, json) in cases {
            assert_eq!(default(kind, text), json, "{kind:?} {text}");
        }
        assert_eq!(one(K::Text, None, NumericMapping::None, TimestampMapping::Iso8601), "null");
    }

    #[test]
    fn best_fit_decimals_keep_their_digits_and_epoch_ms_counts_milliseconds() {
        let best = |text: &str| one(ValueKind::Decimal, Some(text), NumericMapping::BestFit, TimestampMapping::Iso8601);
        assert_eq!(best("12345678901234567890.1234567890"), "12345678901234567890.1234567890");
        assert_eq!(best("-0.50"), "-0.50");
        assert_eq!(best("NaN"), "\"NaN\"");
        let epoch = |kind, text: &str| one(kind, Some(text), NumericMapping::None, TimestampMapping::EpochMs);
        assert_eq!(epoch(ValueKind::TimestampTz, "2026-12-01T13:45:00.123456Z"), "1796132700123");
        assert_eq!(epoch(ValueKind::Timestamp, "1970-01-01T00:00:01"), "1000");
        assert_eq!(epoch(ValueKind::Date, "2026-12-01"), "\"2026-12-01\"", "dates stay dates");
    }

    #[test]
    fn bytes_are_base64() {
        let cases: [(&[u8], &str); 5] = [(b"", ""), (b"f", "Zg=="), (b"fo", "Zm8="), (b"foo", "Zm9v"), (b"foobar", "Zm9vYmFy")];
        for (bytes, text) in cases {
            assert_eq!(base64(bytes), text);
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
        let columns = vec![Column::new("b", ValueKind::Bytes, "bytea")];
        let set = RowSet::builder(columns.clone()).row([Some(&[0xff_u8, 0xfe, 0x00][..])]).build();
        let json = object(&set.row(0).expect("a row"), &columns, &keys(&columns), [0], Mapping { numeric: NumericMapping::None, timestamps: TimestampMapping::Iso8601 });
        assert_eq!(json, r#"{"b":"//4A"}"#);
    }

    #[test]
    fn json_numbers_are_recognised_strictly() {
        for ok in ["0", "-1", "12.50", "1e30", "1.5E-7", "-0.0"] {
            assert!(is_json_number(ok), "{ok}");
        }
        for bad in ["", "-", "01", "+1", ".5", "1.", "1e", "NaN", "inf", "1 ", "0x10"] {
            assert!(!is_json_number(bad), "{bad}");
        }
    }

    #[test]
    fn repeated_column_names_get_suffixes_and_escapes_hold() {
        let columns = vec![Column::new("id", ValueKind::Integer, "int8"), Column::new("id", ValueKind::Integer, "int8"), Column::new("a\u{1}", ValueKind::Text, "text")];
        assert_eq!(keys(&columns), ["id", "id_2", "a\u{1}"]);
        let mut out = String::new();
        push_string(&mut out, "a\u{1}\\");
        assert_eq!(out, r#""a\u0001\\""#);
    }
}
