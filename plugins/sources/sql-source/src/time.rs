//! Timestamp texts as the host gives them (`2026-12-01T13:45:00.123456`, with a `Z` for
//! instants) to epoch milliseconds and back, for `timestamp.mapping: epoch_ms` and
//! `timestamp.initial`. Proleptic Gregorian calendar, no leap seconds; no date library.

use turnpike_sdk::sql::ValueKind;

const MS_PER_DAY: i64 = 86_400_000;

/// Days since 1970-01-01 of a date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day since 1970-01-01 (Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// A cursor over the text, reading fixed-width numbers.
struct Scan<'a> {
    b: &'a [u8],
    at: usize,
}

impl Scan<'_> {
    fn digits(&mut self, n: usize) -> Option<i64> {
        let part = self.b.get(self.at..self.at + n)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return None;
        }
        self.at += n;
        Some(part.iter().fold(0, |acc, d| acc * 10 + i64::from(d - b'0')))
    }

    fn eat(&mut self, c: &[u8]) -> Option<u8> {
        let got = *self.b.get(self.at)?;
        c.contains(&got).then(|| {
            self.at += 1;
            got
        })
    }

    fn done(&self) -> bool {
        self.at == self.b.len()
    }
}

/// Milliseconds since the epoch of `YYYY-MM-DD[T| ]HH:MM:SS[.fraction][Z|±HH:MM]`, a date
/// and time without a zone taken as UTC; `None` for anything else (`infinity`, BC dates).
/// Fractions below a millisecond are dropped (towards the past).
pub(crate) fn epoch_ms(text: &str) -> Option<i64> {
    let mut s = Scan { b: text.as_bytes(), at: 0 };
    let year = s.digits(4)?;
    s.eat(b"-")?;
    let month = s.digits(2)?;
    s.eat(b"-")?;
    let day = s.digits(2)?;
    s.eat(b"T ")?;
    let (hour, minute) = (s.digits(2)?, s.eat(b":").and_then(|_| s.digits(2))?);
    let second = s.eat(b":").and_then(|_| s.digits(2))?;
    let mut millis = 0;
    if s.eat(b".").is_some() {
        let mut n = 0;
        while let Some(d) = s.digits(1) {
            if n < 3 {
                millis = millis * 10 + d;
            }
            n += 1;
        }
        if n == 0 {
            return None;
        }
        millis *= 10_i64.pow(3_u32.saturating_sub(n));
    }
    let mut offset_min = 0;
    if s.eat(b"Z").is_none() {
        if let Some(sign) = s.eat(b"+-") {
            let (h, m) = (s.digits(2)?, s.eat(b":").and_then(|_| s.digits(2)).unwrap_or(0));
            offset_min = (h * 60 + m) * if sign == b'-' { -1 } else { 1 };
        }
    }
    let valid = (1..=12).contains(&month) && (1..=31).contains(&day) && hour <= 23 && minute <= 59 && second <= 60;
    if !valid || !s.done() {
        return None;
    }
    let time = ((hour * 60 + minute - offset_min) * 60 + second) * 1000 + millis;
    Some(days_from_civil(year, month, day) * MS_PER_DAY + time)
}

/// `ms` as the text the host gives for a value of `kind`: `2026-12-01` for a date,
/// `2026-12-01T13:45:00.123` for a timestamp, with a `Z` for an instant.
pub(crate) fn format_ms(ms: i64, kind: ValueKind) -> String {
    let (days, rem) = (ms.div_euclid(MS_PER_DAY), ms.rem_euclid(MS_PER_DAY));
    let (y, mo, d) = civil_from_days(days);
    if kind == ValueKind::Date {
        return format!("{y:04}-{mo:02}-{d:02}");
    }
    let (h, mi, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    let zone = if kind == ValueKind::TimestampTz { "Z" } else { "" };
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{milli:03}{zone}")
}

/// The database's current time (`SELECT CURRENT_TIMESTAMP`, whatever kind it came as) as the
/// text of a value of `kind`, for comparing with a column of that kind.
pub(crate) fn fit(text: &str, kind: ValueKind) -> String {
    match kind {
        ValueKind::TimestampTz if epoch_ms(text).is_some() && !has_zone(text) => format!("{text}Z"),
        ValueKind::Timestamp => text.strip_suffix('Z').unwrap_or(text).to_owned(),
        ValueKind::Date => text.get(..10).unwrap_or(text).to_owned(),
        _ => text.to_owned(),
    }
}

/// Whether a date-time text ends with a zone (`Z`, `+02:00`, `-05`).
fn has_zone(text: &str) -> bool {
    let time = text.get(11..).unwrap_or("");
    time.ends_with('Z') || time.contains(['+', '-'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_read_as_epoch_milliseconds() {
        assert_eq!(epoch_ms("1970-01-01T00:00:00"), Some(0));
        assert_eq!(epoch_ms("2026-12-01T13:45:00.123456Z"), Some(1_796_132_700_123));
        assert_eq!(epoch_ms("2026-12-01 13:45:00.1"), Some(1_796_132_700_100));
        assert_eq!(epoch_ms("2026-12-01T15:45:00+02:00"), Some(1_796_132_700_000));
        assert_eq!(epoch_ms("1969-12-31T23:59:59.999Z"), Some(-1));
        assert_eq!(epoch_ms("2000-02-29T00:00:00"), Some(951_782_400_000));
        for bad in ["infinity", "2026-13-01T00:00:00", "2026-12-01", "2026-12-01T13:45:00.", "2026-12-01T13:45:00 BC"] {
            assert_eq!(epoch_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn milliseconds_format_per_kind_and_read_back() {
        assert_eq!(format_ms(1_796_132_700_123, ValueKind::Timestamp), "2026-12-01T13:45:00.123");
        assert_eq!(format_ms(1_796_132_700_123, ValueKind::TimestampTz), "2026-12-01T13:45:00.123Z");
        assert_eq!(format_ms(1_796_132_700_123, ValueKind::Date), "2026-12-01");
        assert_eq!(format_ms(-1, ValueKind::TimestampTz), "1969-12-31T23:59:59.999Z");
        for ms in [0, 1, 951_782_400_000, 4_102_444_800_000, -86_400_001] {
            assert_eq!(epoch_ms(&format_ms(ms, ValueKind::Timestamp)), Some(ms), "{ms}");
        }
    }

    #[test]
    fn the_database_clock_fits_the_column() {
        assert_eq!(fit("2026-12-01T13:45:00.5Z", ValueKind::Timestamp), "2026-12-01T13:45:00.5");
        assert_eq!(fit("2026-12-01T13:45:00", ValueKind::TimestampTz), "2026-12-01T13:45:00Z");
        assert_eq!(fit("2026-12-01T13:45:00Z", ValueKind::TimestampTz), "2026-12-01T13:45:00Z");
        assert_eq!(fit("2026-12-01T13:45:00Z", ValueKind::Date), "2026-12-01");
    }
}
