//! Java `.properties` text, read as `java.util.Properties.load` reads it: `#` and `!` comment
//! lines, `key=value`, `key: value` and `key value`, whitespace around the separator, a
//! backslash at the end of a line continuing it (the next line's leading whitespace dropped),
//! and the escapes `\t \n \r \f \uXXXX` (any other escaped character stands for itself).

use crate::ImportError;

/// Whitespace as `Properties` sees it.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\x0c')
}

/// Every `key=value` in file order, escapes resolved (a repeated key appears twice; the
/// caller keeps the last, as `Properties` does). Errors name the 1-based line.
pub(crate) fn parse(text: &str) -> Result<Vec<(String, String)>, ImportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let natural: Vec<&str> = split_lines(text);
    let mut entries = Vec::new();
    let mut i = 0;
    while i < natural.len() {
        let first_line = i + 1;
        let start = natural[i].trim_start_matches(is_space);
        i += 1;
        if start.is_empty() || start.starts_with('#') || start.starts_with('!') {
            // A comment is one natural line: a backslash at its end continues nothing.
            continue;
        }
        let mut logical = String::from(start);
        while ends_with_odd_backslashes(&logical) {
            logical.pop();
            match natural.get(i) {
                Some(next) => {
                    logical.push_str(next.trim_start_matches(is_space));
                    i += 1;
                }
                None => break,
            }
        }
        let (raw_key, raw_value) = split_key_value(&logical);
        let key = unescape(raw_key).map_err(|message| ImportError::Properties { line: first_line, message })?;
        let value = unescape(raw_value).map_err(|message| ImportError::Properties { line: first_line, message })?;
        entries.push((key, value));
    }
    Ok(entries)
}

/// Lines ended by `\n`, `\r\n` or `\r`.
fn split_lines(text: &str) -> Vec<&str> {
    let mut lines = Vec::new();
    let bytes = text.as_bytes();
    let (mut start, mut i) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                lines.push(&text[start..i]);
                start = i + 1;
            }
            b'\r' => {
                lines.push(&text[start..i]);
                if bytes.get(i + 1) == Some(&b'\n') {
                    i += 1;
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < bytes.len() {
        lines.push(&text[start..]);
    }
    lines
}

fn ends_with_odd_backslashes(line: &str) -> bool {
    line.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1
}

/// The raw key and raw value of a logical line (escapes still in place): the key ends at the
/// first unescaped `=`, `:` or whitespace; whitespace, then one `=` or `:`, then whitespace
/// separate it from the value.
fn split_key_value(line: &str) -> (&str, &str) {
    let mut chars = line.char_indices();
    let mut key_end = line.len();
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            '=' | ':' => {
                key_end = at;
                break;
            }
            c if is_space(c) => {
                key_end = at;
                break;
            }
            _ => {}
        }
    }
    let key = &line[..key_end];
    let mut rest = line[key_end..].trim_start_matches(is_space);
    if let Some(after) = rest.strip_prefix(['=', ':']) {
        rest = after.trim_start_matches(is_space);
    }
    (key, rest)
}

/// Resolves the escapes. `\uXXXX` pairs that form a surrogate pair make one character; a
/// malformed or lone `\u` is an error, as in Java.
fn unescape(raw: &str) -> Result<String, String> {
    let mut units: Vec<u16> = Vec::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            let mut buf = [0u16; 2];
            units.extend_from_slice(c.encode_utf16(&mut buf));
            continue;
        }
        match chars.next() {
            // A lone backslash at the very end: dropped, as `Properties` does.
            None => {}
            Some('t') => units.push(u16::from(b'\t')),
            Some('n') => units.push(u16::from(b'\n')),
            Some('r') => units.push(u16::from(b'\r')),
            Some('f') => units.push(0x0c),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let unit = (hex.len() == 4).then(|| u16::from_str_radix(&hex, 16).ok()).flatten();
                match unit {
                    Some(u) => units.push(u),
                    None => return Err(format!("malformed \\u escape \"\\u{hex}\": write four hexadecimal digits, like \\u00e9")),
                }
            }
            Some(other) => {
                let mut buf = [0u16; 2];
                units.extend_from_slice(other.encode_utf16(&mut buf));
            }
        }
    }
    String::from_utf16(&units).map_err(|_| "a \\u escape is half of a surrogate pair without its other half".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(text: &str) -> Vec<(String, String)> {
        parse(text).expect("parses")
    }

    fn p(k: &str, v: &str) -> (String, String) {
        (k.to_owned(), v.to_owned())
    }

    #[test]
    fn separators_and_whitespace() {
        let text = "a=1\nb = 2\n  c:3\nd : 4\ne 5\nf\ng=\nh   =   spaced value  \n";
        assert_eq!(pairs(text), [p("a", "1"), p("b", "2"), p("c", "3"), p("d", "4"), p("e", "5"), p("f", ""), p("g", ""), p("h", "spaced value  ")]);
    }

    #[test]
    fn comments_and_blank_lines() {
        let text = "# a comment \\\nnot.continued=1\n   ! bang comment\n\n\t\nk=v # not a comment\n";
        assert_eq!(pairs(text), [p("not.continued", "1"), p("k", "v # not a comment")]);
    }

    #[test]
    fn continuations_drop_the_next_lines_leading_whitespace() {
        let text = "list=a,\\\n    b,\\\r\n\tc\nodd=x\\\\\nnext=y\nend=z\\";
        assert_eq!(pairs(text), [p("list", "a,b,c"), p("odd", "x\\"), p("next", "y"), p("end", "z")]);
    }

    #[test]
    fn escapes() {
        let text = "tab=a\\tb\nkey\\ with\\=odd\\:chars=v\nuni=caf\\u00e9 \\uD83D\\uDE00\nplain=C:\\\\dir\\q\nre=Cast$Value\n";
        assert_eq!(pairs(text), [p("tab", "a\tb"), p("key with=odd:chars", "v"), p("uni", "café 😀"), p("plain", "C:\\dirq"), p("re", "Cast$Value")]);
    }

    #[test]
    fn bad_unicode_escapes_name_the_line() {
        let err = parse("ok=1\nbad=\\u12g4\n").unwrap_err();
        assert_eq!(err, ImportError::Properties { line: 2, message: "malformed \\u escape \"\\u12g4\": write four hexadecimal digits, like \\u00e9".into() });
        assert!(matches!(parse("x=\\uD800"), Err(ImportError::Properties { line: 1, .. })));
    }

    #[test]
    fn old_mac_line_ends_and_a_byte_order_mark() {
        assert_eq!(pairs("\u{feff}a=1\rb=2"), [p("a", "1"), p("b", "2")]);
    }
}
