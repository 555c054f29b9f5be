//! Time for keys and rotation: fixed-offset time zones, calendar fields, `path.format`
//! patterns and RFC 3339 timestamps. No time-zone database: a zone is UTC or a fixed offset,
//! which keeps the component small and the keys independent of the host's tz data.

const MS_PER_DAY: i64 = 86_400_000;

/// A time zone: UTC or a fixed offset from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zone {
    offset_ms: i64,
}

impl Zone {
    /// UTC.
    pub const UTC: Zone = Zone { offset_ms: 0 };

    /// `UTC` or `±HH:MM`.
    pub fn parse(text: &str) -> Result<Zone, String> {
        if text.eq_ignore_ascii_case("UTC") || text == "Z" {
            return Ok(Zone::UTC);
        }
        parse_offset(text.as_bytes()).map(|offset_ms| Zone { offset_ms }).ok_or_else(|| {
            format!("{text:?} is not supported: only \"UTC\" or a fixed offset such as \"+02:00\" or \"-05:30\" (IANA names such as \"Europe/Paris\" are not)")
        })
    }

    /// `utc_ms` as local milliseconds (the epoch shifted by the offset).
    pub fn local(self, utc_ms: i64) -> i64 {
        utc_ms.saturating_add(self.offset_ms)
    }

    /// The first multiple of `interval_ms` in local time strictly after `utc_ms`, in UTC ms:
    /// when an object opened at `utc_ms` closes on a schedule.
    pub fn next_boundary(self, utc_ms: i64, interval_ms: i64) -> i64 {
        let local = self.local(utc_ms);
        let next = (local - local.rem_euclid(interval_ms)).saturating_add(interval_ms);
        next.saturating_sub(self.offset_ms)
    }
}

/// `±HH:MM` as milliseconds.
fn parse_offset(b: &[u8]) -> Option<i64> {
    let [sign, h1, h2, b':', m1, m2] = *b else { return None };
    let sign = match sign {
        b'+' => 1,
        b'-' => -1,
        _ => return None,
    };
    let hours = two_digits(h1, h2)?;
    let minutes = two_digits(m1, m2)?;
    (hours <= 18 && minutes < 60).then(|| sign * (hours * 60 + minutes) * 60_000)
}

fn two_digits(a: u8, b: u8) -> Option<i64> {
    (a.is_ascii_digit() && b.is_ascii_digit()).then(|| i64::from(a - b'0') * 10 + i64::from(b - b'0'))
}

/// Calendar fields of a local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl Civil {
    /// The fields of `local_ms` (milliseconds since the local epoch).
    pub fn of(local_ms: i64) -> Civil {
        let (year, month, day) = civil_from_days(local_ms.div_euclid(MS_PER_DAY));
        let secs = local_ms.rem_euclid(MS_PER_DAY) / 1000;
        // Below 86,400, so each fits a u32.
        let secs = secs as u32;
        Civil { year, month, day, hour: secs / 3600, minute: secs / 60 % 60, second: secs % 60 }
    }
}

/// Days since 1970-01-01 as (year, month, day), proleptic Gregorian (H. Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = (if mp < 10 { mp + 3 } else { mp - 9 }) as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// (year, month, day) as days since 1970-01-01.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let month = i64::from(month);
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// A piece of a `path.format` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Year,
    Month,
    Day,
    Hour,
    Minute,
    Second,
}

/// A Joda-style `path.format` such as `'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH`: `YYYY`
/// (or `yyyy`), `MM`, `dd`, `HH`, `mm`, `ss`, text in single quotes (`''` for a quote), and
/// any other character but a letter as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathFormat {
    pieces: Vec<Piece>,
}

impl PathFormat {
    pub fn parse(pattern: &str) -> Result<PathFormat, String> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    text.push('\'');
                    continue;
                }
                loop {
                    match chars.next() {
                        Some('\'') if chars.peek() == Some(&'\'') => {
                            chars.next();
                            text.push('\'');
                        }
                        Some('\'') => break,
                        Some(c) => text.push(c),
                        None => return Err(format!("{pattern:?} has a quote that is not closed")),
                    }
                }
            } else if c.is_ascii_alphabetic() {
                let mut run = c.to_string();
                while chars.peek() == Some(&c) {
                    run.push(c);
                    chars.next();
                }
                let piece = match run.as_str() {
                    "YYYY" | "yyyy" => Piece::Year,
                    "MM" => Piece::Month,
                    "dd" => Piece::Day,
                    "HH" => Piece::Hour,
                    "mm" => Piece::Minute,
                    "ss" => Piece::Second,
                    _ => return Err(format!("`{run}` is not supported: use YYYY, MM, dd, HH, mm, ss, and put text in single quotes ('year')")),
                };
                if !text.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut text)));
                }
                pieces.push(piece);
            } else {
                text.push(c);
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(PathFormat { pieces })
    }

    /// The path for local time `local_ms`.
    pub fn format(&self, local_ms: i64) -> String {
        use std::fmt::Write as _;
        let t = Civil::of(local_ms);
        let mut out = String::new();
        for piece in &self.pieces {
            // Writing to a String cannot fail.
            let _ = match piece {
                Piece::Text(s) => out.write_str(s),
                Piece::Year => write!(out, "{:04}", t.year),
                Piece::Month => write!(out, "{:02}", t.month),
                Piece::Day => write!(out, "{:02}", t.day),
                Piece::Hour => write!(out, "{:02}", t.hour),
                Piece::Minute => write!(out, "{:02}", t.minute),
                Piece::Second => write!(out, "{:02}", t.second),
            };
        }
        out
    }
}

/// An RFC 3339 timestamp (`2024-05-01T12:30:00Z`, `2024-05-01T14:30:00.250+02:00`) as UTC
/// milliseconds since the epoch.
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let num = |i: usize| two_digits(b[i], b[i + 1]);
    let year = num(0)? * 100 + num(2)?;
    let (month, day, hour, minute, second) = (num(5)?, num(8)?, num(11)?, num(14)?, num(17)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut i = 19;
    let mut millis = 0;
    if b[i] == b'.' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            // The first three digits are milliseconds; finer digits are dropped.
            if i - start < 3 {
                millis = millis * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        if i == start {
            return None;
        }
        for _ in (i - start)..3 {
            millis *= 10;
        }
    }
    let offset = match b.get(i..)? {
        [b'Z' | b'z'] => 0,
        rest => parse_offset(rest)?,
    };
    // Both months and days were range-checked, so the casts keep their values.
    let days = days_from_civil(year, month as u32, day as u32);
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis - offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calendar_fields_round_trip() {
        for days in [-719_468, -1, 0, 1, 59, 365, 10_957, 19_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
        }
        // 2024-02-29T13:45:30Z
        let t = Civil::of(1_709_214_330_000);
        assert_eq!((t.year, t.month, t.day, t.hour, t.minute, t.second), (2024, 2, 29, 13, 45, 30));
        let t = Civil::of(-1);
        assert_eq!((t.year, t.month, t.day, t.hour, t.minute, t.second), (1969, 12, 31, 23, 59, 59));
    }

    #[test]
    fn path_formats_render_quoted_text_and_fields() {
        let f = PathFormat::parse("'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH").unwrap();
        assert_eq!(f.format(1_709_214_330_000), "year=2024/month=02/day=29/hour=13");
        let f = PathFormat::parse("yyyy-MM-dd'T'HH.mm.ss/'it''s'").unwrap();
        assert_eq!(f.format(1_709_214_330_000), "2024-02-29T13.45.30/it's");
        assert!(PathFormat::parse("YYYY/EEE").unwrap_err().contains("`EEE`"));
        assert!(PathFormat::parse("'year=YYYY").is_err());
        assert!(PathFormat::parse("YY").is_err());
    }

    #[test]
    fn zones_are_utc_or_fixed_offsets() {
        assert_eq!(Zone::parse("UTC"), Ok(Zone::UTC));
        assert_eq!(Zone::parse("+02:00").unwrap().local(0), 7_200_000);
        assert_eq!(Zone::parse("-05:30").unwrap().local(0), -19_800_000);
        assert!(Zone::parse("Europe/Paris").unwrap_err().contains("IANA"));
        assert!(Zone::parse("+2:00").is_err());
        assert!(Zone::parse("+25:00").is_err());
    }

    #[test]
    fn schedule_boundaries_align_to_local_midnight() {
        let day = MS_PER_DAY;
        // 23:00 UTC is 01:00 the next day at +02:00: the next local midnight is 22:00 UTC then.
        let plus2 = Zone::parse("+02:00").unwrap();
        assert_eq!(plus2.next_boundary(23 * 3_600_000, day), day + 22 * 3_600_000);
        assert_eq!(Zone::UTC.next_boundary(0, 60_000), 60_000);
        assert_eq!(Zone::UTC.next_boundary(59_999, 60_000), 60_000);
        assert_eq!(Zone::UTC.next_boundary(60_000, 60_000), 120_000);
    }

    #[test]
    fn rfc3339_timestamps_parse_with_offsets_and_fractions() {
        assert_eq!(parse_rfc3339("2024-02-29T13:45:30Z"), Some(1_709_214_330_000));
        assert_eq!(parse_rfc3339("2024-02-29T15:45:30.25+02:00"), Some(1_709_214_330_250));
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00.123456Z"), Some(123));
        assert_eq!(parse_rfc3339("2024-02-29"), None);
        assert_eq!(parse_rfc3339("2024-13-01T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("2024-01-01T00:00:00"), None);
    }
}
