//! Printing API answers: tables for people, JSON for scripts.
//!
//! Everything shown here came from the server or from a plugin, so it is treated as hostile:
//! [`escape`] turns control characters into visible escapes before they reach the terminal.

use clap::ValueEnum;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use serde_json::Value;

/// How to print answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns.
    Table,
    /// The API's JSON, pretty-printed.
    Json,
}

/// Prints `rows` as a table with `columns` (each a header and a JSON pointer into a row), or
/// `whole` as JSON.
pub fn print(format: Format, whole: &Value, rows: &[Value], columns: &[(&str, &str)]) {
    println!("{}", render(format, whole, rows, columns));
}

fn render(format: Format, whole: &Value, rows: &[Value], columns: &[(&str, &str)]) -> String {
    match format {
        Format::Json => json(whole),
        Format::Table => {
            let mut table = Table::new();
            table.load_preset(UTF8_FULL_CONDENSED);
            table.set_header(columns.iter().map(|(h, _)| *h));
            for row in rows {
                table.add_row(columns.iter().map(|(_, pointer)| escape(&cell(row.pointer(pointer).unwrap_or(&Value::Null)))));
            }
            table.to_string()
        }
    }
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(cell).collect::<Vec<_>>().join(", "),
        Value::Object(map) if map.is_empty() => "-".into(),
        Value::Object(map) if map.contains_key("class") => format!("{}: {}", cell(&map["class"]), cell(map.get("message").unwrap_or(&Value::Null))),
        Value::Object(map) => map.iter().map(|(k, v)| format!("{k}={}", cell(v))).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

/// `s` safe to print on a terminal, on one line: every control character (C0 including
/// `\n`, `\r` and `\t`, DEL, C1) and every bidirectional override is written as an escape
/// (`\n`, `\r`, `\t`, `\u{1b}`, …) instead of being sent as is. Raw, ESC and CSI (`\u{9b}`)
/// start sequences that move the cursor, rewrite or hide what was printed, set the window
/// title, or in some terminals answer back as if typed; CR overwrites the line; the bidi
/// overrides reorder what is shown. Backslashes are left alone, so a path reads as it is.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

/// [`escape`] for text that is meant to span lines (YAML, error chains): each line escaped,
/// the line breaks kept.
pub fn escape_lines(s: &str) -> String {
    s.split('\n').map(escape).collect::<Vec<_>>().join("\n")
}

/// `v` as pretty JSON safe for a terminal. serde_json already writes C0 controls inside
/// strings as `\u00XX`; this does the same for DEL, C1 and the bidi overrides, which it
/// leaves raw. The result is the same JSON value: outside strings JSON text is plain ASCII,
/// so every character replaced was inside a string, where `\uXXXX` means that character.
pub fn json(v: &Value) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        // Below DEL only the layout's own newlines are left; keep them.
        if u32::from(c) >= 0x7f && is_unsafe(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

/// Control characters (Unicode `Cc`: C0, DEL, C1) and the bidirectional embedding, override
/// and isolate characters (U+202A–U+202E, U+2066–U+2069).
fn is_unsafe(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn escape_shows_control_characters_instead_of_sending_them() {
        let cases = [
            ("plain text, ünïcode ✓", "plain text, ünïcode ✓"),
            ("\u{1b}[2J\u{1b}]0;title\u{7}", "\\u{1b}[2J\\u{1b}]0;title\\u{7}"),
            ("line one\nline two\r\tx", "line one\\nline two\\r\\tx"),
            ("\u{0}\u{7f}\u{80}\u{9b}31m\u{9f}", "\\u{0}\\u{7f}\\u{80}\\u{9b}31m\\u{9f}"),
            ("abc\u{202e}fed\u{2066}", "abc\\u{202e}fed\\u{2066}"),
            ("C:\\path\\n", "C:\\path\\n"),
        ];
        for (input, shown) in cases {
            assert_eq!(escape(input), shown, "{input:?}");
        }
        assert_eq!(escape_lines("a: \u{1b}[1m\nb: x\ry\n"), "a: \\u{1b}[1m\nb: x\\ry\n");
    }

    #[test]
    fn table_cells_carry_no_control_characters() {
        let row = json!({ "name": "evil\u{1b}[2Jname", "error": { "class": "plugin\u{9b}", "message": "line\nnext\r" } });
        let table = render(Format::Table, &Value::Null, &[row], &[("NAME", "/name"), ("ERROR", "/error")]);
        assert!(table.contains("evil\\u{1b}[2Jname"), "{table}");
        assert!(table.contains("line\\nnext\\r"), "{table}");
        // Only the table's own line breaks remain.
        assert!(!table.chars().any(|c| is_unsafe(c) && c != '\n'), "{table:?}");
        assert_eq!(table.lines().count(), 5, "{table}");
    }

    #[test]
    fn json_output_escapes_what_serde_json_leaves_raw_and_stays_the_same_value() {
        let v = json!({ "e": "\u{1b}[0m\u{7f}\u{9b}\u{202e}ok" });
        let text = render(Format::Json, &v, &[], &[]);
        assert!(!text.chars().any(|c| is_unsafe(c) && c != '\n'), "{text:?}");
        assert!(text.contains(r"\u001b[0m\u007f\u009b\u202eok"), "{text}");
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }
}
