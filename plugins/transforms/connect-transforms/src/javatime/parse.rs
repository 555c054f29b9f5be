//! Reading a time with a parsed pattern: Java's rules for where numbers end, names in any
//! case, offsets converted to UTC; strict where Java is lenient (no 30 February, no text left
//! over), because a wrong time is worse than a record error.

use chrono::{DateTime, NaiveDate, NaiveTime, TimeDelta, Utc};

use super::{name, numeric, Token, DAYS, MONTHS};

/// Fields read so far; what is missing defaults to 1970-01-01 00:00:00 UTC, as in Java.
#[derive(Default)]
struct Read {
    year: Option<i64>,
    month: Option<i64>,
    day: Option<i64>,
    day_of_year: Option<i64>,
    hour: Option<i64>,
    /// From `h` (1–12) or `K` (0–11), to combine with `a`.
    half_day_hour: Option<i64>,
    pm: bool,
    minute: i64,
    second: i64,
    nanos: i64,
    offset_seconds: i64,
}

pub(super) fn parse_tokens(tokens: &[Token], input: &str) -> Result<DateTime<Utc>, String> {
    let s: Vec<char> = input.chars().collect();
    let mut i = 0;
    let mut r = Read::default();
    for (k, token) in tokens.iter().enumerate() {
        let at = i + 1;
        match token {
            Token::Text(t) => {
                for c in t.chars() {
                    if s.get(i) != Some(&c) {
                        return Err(format!("expected {t:?} at character {at}"));
                    }
                    i += 1;
                }
            }
            &Token::Field(letter, n) if numeric(letter, n) => {
                // Java's rule: the letter count is a width only when another number follows
                // directly (yyyyMMdd); otherwise all the digits there are belong to the field.
                let abutting = matches!(tokens.get(k + 1), Some(&Token::Field(l, m)) if numeric(l, m));
                let max = if abutting { n } else { 18 };
                let start = i;
                while i < s.len() && i - start < max && s[i].is_ascii_digit() {
                    i += 1;
                }
                let digits: String = s[start..i].iter().collect();
                let v: i64 = digits.parse().map_err(|_| format!("expected a number for '{letter}' at character {at}"))?;
                match letter {
                    // Java reads a two-digit year for y or yy within a century of today; with
                    // no clock, the POSIX pivot: 00-68 are 2000-2068, 69-99 are 1969-1999.
                    'y' if n <= 2 && digits.len() == 2 => r.year = Some(if v < 69 { 2000 + v } else { 1900 + v }),
                    'y' => r.year = Some(v),
                    'M' => r.month = Some(v),
                    'd' => r.day = Some(v),
                    'D' => r.day_of_year = Some(v),
                    'H' => r.hour = Some(v),
                    'k' => r.hour = Some(if v == 24 { 0 } else { v }),
                    'h' => r.half_day_hour = Some(if v == 12 { 0 } else { v }),
                    'K' => r.half_day_hour = Some(v),
                    'm' => r.minute = v,
                    's' => r.second = v,
                    // The digits are a fraction of a second: "5" is 500 ms, "123456" 123.456 ms.
                    _ => r.nanos = format!("{digits:0<9}").get(..9).and_then(|d| d.parse().ok()).unwrap_or(0),
                }
            }
            &Token::Field('M', _) => r.month = Some(pick(&s, &mut i, &MONTHS).ok_or(format!("expected a month name at character {at}"))? as i64 + 1),
            &Token::Field('E', _) => {
                pick(&s, &mut i, &DAYS).ok_or(format!("expected a day name at character {at}"))?;
            }
            &Token::Field('a', _) => r.pm = pick(&s, &mut i, &["AM", "PM"]).ok_or(format!("expected AM or PM at character {at}"))? == 1,
            &Token::Field('z', _) => {
                if pick(&s, &mut i, &["UTC", "GMT"]).is_none() && s.get(i) != Some(&'Z') {
                    return Err(format!("expected a zone such as UTC at character {at}"));
                }
                if s.get(i) == Some(&'Z') || matches!(s.get(i), Some('+' | '-')) {
                    r.offset_seconds = offset(&s, &mut i).ok_or(format!("expected an offset such as +01:00 at character {}", i + 1))?;
                }
            }
            _ => r.offset_seconds = offset(&s, &mut i).ok_or(format!("expected an offset such as Z or +01:00 at character {at}"))?,
        }
    }
    if i < s.len() {
        let rest: String = s[i..].iter().collect();
        return Err(format!("unexpected {rest:?} after the end of the pattern"));
    }
    r.instant()
}

impl Read {
    fn instant(self) -> Result<DateTime<Utc>, String> {
        let small = |v: i64| u32::try_from(v).ok();
        let year = self.year.unwrap_or(1970);
        let date = i32::try_from(year).ok().and_then(|y| match (self.day_of_year, self.month, self.day) {
            (Some(doy), None, None) => NaiveDate::from_yo_opt(y, small(doy)?),
            (_, month, day) => NaiveDate::from_ymd_opt(y, small(month.unwrap_or(1))?, small(day.unwrap_or(1))?),
        });
        let date = date.ok_or_else(|| {
            let (m, d) = (self.month.unwrap_or(1), self.day.unwrap_or(1));
            format!("{year}-{m:02}-{d:02} is not a date")
        })?;
        let hour = match (self.hour, self.half_day_hour) {
            (Some(h), _) => h,
            (None, Some(h)) => h + if self.pm { 12 } else { 0 },
            (None, None) => 0,
        };
        let time = small(hour)
            .zip(small(self.minute))
            .zip(small(self.second).zip(small(self.nanos)))
            .and_then(|((h, m), (s, n))| NaiveTime::from_hms_nano_opt(h, m, s, n))
            .ok_or_else(|| format!("{hour:02}:{:02}:{:02} is not a time of day", self.minute, self.second))?;
        let utc = TimeDelta::try_seconds(self.offset_seconds).and_then(|d| date.and_time(time).checked_sub_signed(d));
        utc.map(|t| t.and_utc()).ok_or_else(|| "the time is out of range".into())
    }
}

/// Matches one of `names` (full, else its first three letters), ignoring case; its index.
fn pick(s: &[char], i: &mut usize, names: &[&str]) -> Option<usize> {
    let matches = |candidate: &str| {
        let len = candidate.chars().count();
        let ok = s.get(*i..*i + len).is_some_and(|got| got.iter().zip(candidate.chars()).all(|(a, b)| a.eq_ignore_ascii_case(&b)));
        ok.then_some(len)
    };
    let found = (names.iter().enumerate().find_map(|(n, full)| matches(full).map(|len| (n, len))))
        .or_else(|| names.iter().enumerate().find_map(|(n, full)| matches(&name(full, 3)).map(|len| (n, len))))?;
    *i += found.1;
    Some(found.0)
}

/// `Z`, `+hh`, `+hhmm` or `+hh:mm` (or `-`), in seconds east of UTC.
fn offset(s: &[char], i: &mut usize) -> Option<i64> {
    let sign = match s.get(*i)? {
        'Z' => {
            *i += 1;
            return Some(0);
        }
        '+' => 1,
        '-' => -1,
        _ => return None,
    };
    let two = |at: usize| -> Option<i64> { Some(i64::from(s.get(at)?.to_digit(10)? * 10 + s.get(at + 1)?.to_digit(10)?)) };
    let hours = two(*i + 1)?;
    *i += 3;
    if s.get(*i) == Some(&':') {
        *i += 1;
    }
    let minutes = match two(*i) {
        Some(m) => {
            *i += 2;
            m
        }
        None => 0,
    };
    Some(sign * (hours * 3600 + minutes * 60))
}
