//! How one plugin log line is bounded and escaped before the host writes it.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Longest message kept, in characters; longer ones are cut (and end with `…`).
const MAX_MESSAGE_CHARS: usize = 4096;
/// Most fields kept from one line; the line says how many more were cut.
const MAX_FIELDS: usize = 32;
/// Longest field key kept, in characters; longer ones are cut (and end with `…`).
const MAX_KEY_CHARS: usize = 64;
/// Longest field value kept, in characters; longer ones are cut (and end with `…`).
const MAX_VALUE_CHARS: usize = 1024;

/// One plugin log line as the host writes it: every text cut to its limit and escaped.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Line {
    pub(super) message: String,
    /// `key=value` pairs joined by spaces, then `(N more fields cut)` if there were more
    /// than [`MAX_FIELDS`].
    pub(super) fields: String,
}

impl Line {
    pub(super) fn of(message: &str, fields: &[(String, String)]) -> Self {
        let mut shown: Vec<String> =
            fields.iter().take(MAX_FIELDS).map(|(k, v)| format!("{}={}", cut_and_escape(k, MAX_KEY_CHARS), cut_and_escape(v, MAX_VALUE_CHARS))).collect();
        let more = fields.len().saturating_sub(MAX_FIELDS);
        if more > 0 {
            shown.push(format!("({more} more fields cut)"));
        }
        Self { message: cut_and_escape(message, MAX_MESSAGE_CHARS), fields: shown.join(" ") }
    }
}

/// `text` cut to its first `most` characters (ending with `…` when cut), then escaped. The
/// cut is made before escaping so an escape is never split; an escaped character takes at
/// most 8 characters, which bounds the result.
fn cut_and_escape(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        None => escape_control(text).into_owned(),
        Some((end, _)) => format!("{}…", escape_control(&text[..end])),
    }
}

/// `text` with every control character escaped, so that plugin text written into a log line
/// stays on that line and cannot drive the reader's terminal: `\n`, `\r` and `\t` as those
/// two characters, any other C0 or C1 control (ESC, NUL, DEL, …) as `\u{1b}`, and likewise
/// the Unicode line and paragraph separators and the bidirectional controls that can make a
/// line read differently from what it holds. Borrowed when nothing needed escaping.
///
/// A backslash is left as it is, so the escaping is not reversible; it exists so what a
/// plugin wrote cannot pass for what the host wrote.
pub fn escape_control(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if needs_escape(c) => {
                // Writing to a String cannot fail.
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

fn needs_escape(c: char) -> bool {
    // `is_control` is Unicode's Cc: C0 (U+0000..U+001F), DEL and C1 (U+007F..U+009F).
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        for (text, expected) in [
            ("plain text, ünïcödé", "plain text, ünïcödé"),
            ("one\ntwo", "one\\ntwo"),
            ("a\r\nINFO host: forged", "a\\r\\nINFO host: forged"),
            ("tab\there", "tab\\there"),
            ("\u{1b}[31mred\u{1b}[0m", "\\u{1b}[31mred\\u{1b}[0m"),
            ("nul\0del\u{7f}c1\u{9b}", "nul\\u{0}del\\u{7f}c1\\u{9b}"),
            ("line\u{2028}sep", "line\\u{2028}sep"),
            ("abc\u{202e}fed", "abc\\u{202e}fed"),
            ("back\\slash", "back\\slash"),
        ] {
            assert_eq!(escape_control(text), expected, "{text:?}");
        }
        assert!(matches!(escape_control("nothing to do"), Cow::Borrowed(_)));
    }

    #[test]
    fn texts_are_cut_to_their_limits() {
        let line = Line::of(&"m".repeat(MAX_MESSAGE_CHARS + 10), &[]);
        assert_eq!(line.message, format!("{}…", "m".repeat(MAX_MESSAGE_CHARS)));
        assert_eq!(line.fields, "");

        let exactly = "é".repeat(MAX_MESSAGE_CHARS);
        assert_eq!(Line::of(&exactly, &[]).message, exactly, "a message at the limit is whole");

        let long = [("k".repeat(MAX_KEY_CHARS + 1), "v".repeat(MAX_VALUE_CHARS + 1))];
        let line = Line::of("m", &long);
        assert_eq!(line.fields, format!("{}…={}…", "k".repeat(MAX_KEY_CHARS), "v".repeat(MAX_VALUE_CHARS)));
    }

    #[test]
    fn fields_beyond_the_limit_are_counted_not_kept() {
        let fields: Vec<(String, String)> = (0..MAX_FIELDS + 3).map(|i| (format!("k{i}"), i.to_string())).collect();
        let line = Line::of("m", &fields);
        let shown: Vec<&str> = line.fields.split(' ').collect();
        assert_eq!(shown.len(), MAX_FIELDS + 4, "{}", line.fields);
        assert_eq!(shown[0], "k0=0");
        assert_eq!(shown[MAX_FIELDS - 1], format!("k{}={}", MAX_FIELDS - 1, MAX_FIELDS - 1));
        assert!(line.fields.ends_with("(3 more fields cut)"), "{}", line.fields);
        assert!(!line.fields.contains(&format!("k{MAX_FIELDS}=")), "{}", line.fields);
    }

    #[test]
    fn plugin_text_cannot_start_a_line_of_its_own() {
        let fields = [("user\nWARN".to_owned(), "x\r\n2024-01-01 ERROR host: forged \u{1b}]0;title\u{7}".to_owned())];
        let line = Line::of("ok\nERROR turnpike: connector stopped", &fields);
        for text in [&line.message, &line.fields] {
            assert!(!text.chars().any(needs_escape), "{text:?}");
        }
        assert_eq!(line.message, "ok\\nERROR turnpike: connector stopped");
        assert_eq!(line.fields, "user\\nWARN=x\\r\\n2024-01-01 ERROR host: forged \\u{1b}]0;title\\u{7}");
    }
}
