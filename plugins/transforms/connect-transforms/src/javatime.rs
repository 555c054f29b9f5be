//! Java `SimpleDateFormat` patterns, because Kafka Connect users already have them written
//! (`yyyy-MM-dd'T'HH:mm:ss.SSSZ`): parsed once at `create`, then used to format and parse
//! instants in UTC. chrono does the calendar arithmetic; the pattern language is done here
//! because chrono's own (strftime) is a different language.
//!
//! Letters: `y M d H h k K m s S a E D Z X z`, `'text'` and `''`. Any other ASCII letter is
//! refused when the pattern is parsed, naming the letter, rather than silently misread.

mod parse;

use chrono::{DateTime, Datelike, Timelike, Utc};

use parse::parse_tokens;

/// The default pattern: ISO 8601 / RFC 3339 with milliseconds and `Z`.
pub const ISO: &str = "yyyy-MM-dd'T'HH:mm:ss.SSSXXX";
/// Also accepted when parsing with the default: the same without a fraction.
const ISO_WHOLE_SECONDS: &str = "yyyy-MM-dd'T'HH:mm:ssXXX";

const MONTHS: [&str; 12] = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December",
];
const DAYS: [&str; 7] = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Text(String),
    /// A pattern letter and how many times it is repeated.
    Field(char, usize),
}

/// A parsed pattern.
#[derive(Debug, Clone)]
pub struct Pattern {
    text: String,
    tokens: Vec<Token>,
    /// A second pattern tried when parsing with the first fails (the default's variant
    /// without a fraction of a second).
    fallback: Option<Vec<Token>>,
}

impl Pattern {
    /// Parses a pattern; the error names the offending letter.
    pub fn parse(text: &str) -> Result<Self, String> {
        Ok(Self { text: text.to_owned(), tokens: tokenize(text)?, fallback: None })
    }

    /// The default ([`ISO`]), which also parses times without a fraction of a second.
    pub fn iso() -> Self {
        // Both patterns are constants covered by the tests; an empty pattern would fail them.
        Self { text: ISO.to_owned(), tokens: tokenize(ISO).unwrap_or_default(), fallback: tokenize(ISO_WHOLE_SECONDS).ok() }
    }

    /// The pattern as written, for messages.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Formats `t` (UTC).
    pub fn format(&self, t: &DateTime<Utc>) -> String {
        let mut out = String::new();
        let hour = t.hour();
        for token in &self.tokens {
            let (letter, n) = match token {
                Token::Text(s) => {
                    out.push_str(s);
                    continue;
                }
                Token::Field(letter, n) => (*letter, *n),
            };
            let number = |v: i64| pad(v, n);
            let text = match letter {
                'y' if n == 2 => number(i64::from(t.year()).rem_euclid(100)),
                'y' => number(i64::from(t.year())),
                'M' if n <= 2 => number(i64::from(t.month())),
                'M' => name(MONTHS[t.month0() as usize % 12], n),
                'd' => number(i64::from(t.day())),
                'D' => number(i64::from(t.ordinal())),
                'H' => number(i64::from(hour)),
                'k' => number(i64::from(if hour == 0 { 24 } else { hour })),
                'K' => number(i64::from(hour % 12)),
                'h' => number(i64::from(if hour.is_multiple_of(12) { 12 } else { hour % 12 })),
                'm' => number(i64::from(t.minute())),
                's' => number(i64::from(t.second())),
                // A fraction of a second: SSS is milliseconds, each further S one more digit.
                'S' => format!("{:09}", t.nanosecond() % 1_000_000_000).chars().take(n).collect(),
                'a' => (if hour < 12 { "AM" } else { "PM" }).to_owned(),
                'E' => name(DAYS[t.weekday().num_days_from_monday() as usize % 7], n),
                'Z' => "+0000".to_owned(),
                'X' => "Z".to_owned(),
                'z' => "UTC".to_owned(),
                _ => String::new(),
            };
            out.push_str(&text);
        }
        out
    }

    /// Parses `input`, which must match the whole pattern. Without an offset in the pattern
    /// the time is UTC; with one (`Z`, `X`), it is converted to UTC.
    pub fn parse_time(&self, input: &str) -> Result<DateTime<Utc>, String> {
        match parse_tokens(&self.tokens, input) {
            Err(e) => match &self.fallback {
                Some(fallback) => parse_tokens(fallback, input).map_err(|_| e),
                None => Err(e),
            },
            ok => ok,
        }
    }
}

fn tokenize(pattern: &str) -> Result<Vec<Token>, String> {
    fn push_text(tokens: &mut Vec<Token>, s: &str) {
        match tokens.last_mut() {
            Some(Token::Text(t)) => t.push_str(s),
            _ => tokens.push(Token::Text(s.to_owned())),
        }
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        if c == '\'' {
            i += 1;
            if chars.get(i) == Some(&'\'') {
                push_text(&mut tokens, "'");
                i += 1;
                continue;
            }
            let mut text = String::new();
            loop {
                match chars.get(i) {
                    None => return Err("a quote (') is not closed; write '' for a quote character".into()),
                    Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                        text.push('\'');
                        i += 2;
                    }
                    Some('\'') => {
                        i += 1;
                        break;
                    }
                    Some(&other) => {
                        text.push(other);
                        i += 1;
                    }
                }
            }
            push_text(&mut tokens, &text);
        } else if c.is_ascii_alphabetic() {
            let n = chars[i..].iter().take_while(|&&x| x == c).count();
            if !"yMdHhkKmsSaEDZXz".contains(c) {
                return Err(unsupported(c));
            }
            if c == 'X' && n > 3 {
                return Err("X takes one to three letters (X, XX or XXX)".into());
            }
            if c == 'S' && n > 9 {
                return Err("S takes at most nine letters (nanoseconds)".into());
            }
            tokens.push(Token::Field(c, n));
            i += n;
        } else {
            push_text(&mut tokens, &c.to_string());
            i += 1;
        }
    }
    Ok(tokens)
}

fn unsupported(letter: char) -> String {
    let hint = match letter {
        'Y' => " (week year; use y for the calendar year)",
        'u' => " (day number of the week; use E for the day name)",
        'L' => " (stand-alone month; use M)",
        'w' | 'W' | 'F' => " (week numbers)",
        'G' => " (era)",
        _ => "",
    };
    format!(
        "the letter '{letter}'{hint} is not supported; use y M d H h k K m s S a E D Z X z, and put other text in single quotes, such as 'T'"
    )
}

/// Whether a field is read as digits.
fn numeric(letter: char, n: usize) -> bool {
    matches!(letter, 'y' | 'd' | 'D' | 'H' | 'h' | 'k' | 'K' | 'm' | 's' | 'S') || (letter == 'M' && n <= 2)
}

fn pad(v: i64, width: usize) -> String {
    if v < 0 {
        format!("-{:0width$}", v.unsigned_abs())
    } else {
        format!("{v:0width$}")
    }
}

/// A month or day name: three letters for up to three pattern letters, else the full name.
fn name(full: &str, n: usize) -> String {
    if n >= 4 {
        full.to_owned()
    } else {
        full.chars().take(3).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(millis: i64) -> DateTime<Utc> {
        DateTime::from_timestamp_millis(millis).unwrap()
    }

    fn fmt(pattern: &str, millis: i64) -> String {
        Pattern::parse(pattern).unwrap().format(&at(millis))
    }

    fn parse(pattern: &str, input: &str) -> Result<i64, String> {
        Pattern::parse(pattern).unwrap().parse_time(input).map(|t| t.timestamp_millis())
    }

    // 2024-03-05T07:08:09.012Z, a Tuesday.
    const T: i64 = 1_709_622_489_012;

    #[test]
    fn formats_each_letter() {
        assert_eq!(fmt("yyyy-MM-dd HH:mm:ss.SSS", T), "2024-03-05 07:08:09.012");
        assert_eq!(fmt("yy/M/d", T), "24/3/5");
        assert_eq!(fmt("MMM MMMM EEE EEEE", T), "Mar March Tue Tuesday");
        assert_eq!(fmt("h:mm a K k D DDD", T), "7:08 AM 7 7 65 065");
        assert_eq!(fmt("Z X XXX z", T), "+0000 Z Z UTC");
        assert_eq!(fmt("'T'''HH'o''clock'", T), "T'07o'clock");
        assert_eq!(fmt("S SS SSSSSS", T), "0 01 012000");
        assert_eq!(fmt("h a k", 1_709_596_800_000 + 13 * 3_600_000), "1 PM 13");
        assert_eq!(fmt("h k", 1_709_596_800_000), "12 24");
        assert_eq!(Pattern::iso().format(&at(T)), "2024-03-05T07:08:09.012Z");
    }

    #[test]
    fn parses_what_it_formats() {
        for pattern in [ISO, "yyyyMMddHHmmssSSS", "EEE, d MMM yyyy HH:mm:ss.SSS Z", "yyyy-DDD'T'hh:mm:ss.SSS a", "dd MMMM yyyy HH:mm:ss.SSS z"] {
            let text = fmt(pattern, T);
            assert_eq!(parse(pattern, &text), Ok(T), "{pattern}: {text}");
        }
    }

    #[test]
    fn parses_offsets_fractions_and_short_years() {
        assert_eq!(parse(ISO, "2024-03-05T09:08:09.012+02:00"), Ok(T));
        assert_eq!(Pattern::iso().parse_time("2024-03-05T07:08:09Z").map(|t| t.timestamp_millis()), Ok(T - 12));
        assert_eq!(parse("yyyy-MM-dd'T'HH:mm:ss.SXXX", "2024-03-05T07:08:09.012345Z"), Ok(T));
        assert_eq!(parse("yyyy-MM-dd HH:mm:ss.SSSZ", "2024-03-05 02:08:09.012-0500"), Ok(T));
        assert_eq!(parse("yyyy-MM-dd HH:mm:ss.SSSX", "2024-03-05 08:08:09.012+01"), Ok(T));
        assert_eq!(parse("yy-MM-dd", "24-03-05"), parse("yyyy-MM-dd", "2024-03-05"));
        assert_eq!(parse("yy-MM-dd", "99-03-05"), parse("yyyy-MM-dd", "1999-03-05"));
        assert_eq!(parse("MMM d yyyy", "mar 5 2024"), parse("yyyy-MM-dd", "2024-03-05"));
        assert_eq!(parse("HH:mm", "01:00"), Ok(3_600_000));
    }

    #[test]
    fn parse_errors_say_where() {
        let err = |p: &str, s: &str| parse(p, s).unwrap_err();
        assert_eq!(err("yyyy-MM-dd", "2024/03/05"), r#"expected "-" at character 5"#);
        assert_eq!(err("yyyy-MM-dd", "2024-02-30"), "2024-02-30 is not a date");
        assert_eq!(err("yyyy-MM-dd", "2024-03-05x"), r#"unexpected "x" after the end of the pattern"#);
        assert_eq!(err("HH:mm", "25:00"), "25:00:00 is not a time of day");
        assert_eq!(err("yyyy", ""), "expected a number for 'y' at character 1");
        assert!(err(ISO, "2024-03-05T07:08:09.012+0x:00").contains("offset"));
        assert!(err("MMM", "Foo").contains("month name"));
        assert!(err("yyyy", "999999999999").contains("not a date"));
    }

    #[test]
    fn unsupported_letters_are_named() {
        let err = Pattern::parse("YYYYMM").unwrap_err();
        assert!(err.starts_with("the letter 'Y' (week year; use y for the calendar year) is not supported"), "{err}");
        assert!(Pattern::parse("yyyy-MM-dd'T").unwrap_err().contains("not closed"));
        assert!(Pattern::parse("XXXX").is_err());
        assert!(Pattern::parse("SSSSSSSSSS").is_err());
        assert!(Pattern::parse("yyyy 'Q' é").is_ok());
    }
}
