//! Kafka Connect's notations an SMT option is written in (field names and paths, Java date
//! patterns), read the way Turnpike's transforms take them; shared by every kind of SMT.

/// A name or list of names as Kafka Connect's SMTs take them (V1: a name may hold dots) or,
/// with `field.syntax.version=V2`, dotted paths (KIP-821) — the syntax Turnpike's paths share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Syntax {
    V1,
    V2,
}

/// A Kafka Connect field name (V1) or path (V2) as a Turnpike path: a V1 name holding `.`,
/// `[`, `]` or a backquote is written in backquotes, a backquote or backslash in it escaped
/// with a backslash (KIP-821).
pub(super) fn path(name: &str, syntax: Syntax) -> String {
    if syntax == Syntax::V2 || !name.contains(['.', '[', ']', '`']) {
        return name.to_owned();
    }
    format!("`{}`", name.replace('\\', "\\\\").replace('`', "\\`"))
}

/// The first letter of a Java SimpleDateFormat pattern outside quotes that Turnpike's date
/// formats do not support.
pub(super) fn unsupported_date_letter(format: &str) -> Option<char> {
    const SUPPORTED: &str = "yMdHhkKmsSaEDZXz";
    let mut quoted = false;
    for c in format.chars() {
        if c == '\'' {
            quoted = !quoted;
        } else if !quoted && c.is_ascii_alphabetic() && !SUPPORTED.contains(c) {
            return Some(c);
        }
    }
    None
}
