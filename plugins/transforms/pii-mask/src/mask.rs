//! The masking modes, applied to JSON values and to detected substrings.

use sha2::{Digest, Sha256};

use crate::config::Mode;
use crate::doc::Node;

/// Masks text according to a mode.
#[derive(Debug, Clone)]
pub struct Masker {
    replacement: String,
    /// `replacement` as a JSON string, written once instead of per masked value.
    replacement_json: String,
    salt: String,
}

impl Masker {
    pub fn new(replacement: String, salt: String) -> Self {
        Self { replacement_json: json_string(&replacement), replacement, salt }
    }

    /// Masks a piece of text.
    pub fn text(&self, text: &str, mode: Mode, keep_last: usize) -> String {
        match mode {
            Mode::Redact => self.replacement.clone(),
            Mode::Hash => String::from_utf8(self.hash_hex(text, Vec::with_capacity(64))).expect("hex digits are ASCII"),
            Mode::Partial => partial(text, keep_last),
        }
    }

    /// The replacement JSON text for a value, given its raw JSON text: strings are masked as
    /// text; numbers, booleans, objects and arrays as their JSON text (becoming strings).
    /// `None` for `null`: there is nothing to hide.
    pub fn value(&self, node: &Node<'_>, raw: &str, mode: Mode, keep_last: usize) -> Option<String> {
        let text = match node {
            Node::Null => return None,
            Node::String(s) => s,
            _ => raw,
        };
        Some(match mode {
            Mode::Redact => self.replacement_json.clone(),
            // Hex needs no escaping: the quotes go round it as it is written.
            Mode::Hash => {
                let mut quoted = Vec::with_capacity(66);
                quoted.push(b'"');
                let mut quoted = self.hash_hex(text, quoted);
                quoted.push(b'"');
                String::from_utf8(quoted).expect("hex digits are ASCII")
            }
            Mode::Partial => json_string(&partial(text, keep_last)),
        })
    }

    /// Appends the hex SHA-256 of salt + `text` to `out`.
    fn hash_hex(&self, text: &str, mut out: Vec<u8>) -> Vec<u8> {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut h = Sha256::new();
        h.update(self.salt.as_bytes());
        h.update(text.as_bytes());
        // By table: `hex::encode` built its string a char at a time through an iterator,
        // about as costly as the hashing itself in a WebAssembly profile.
        for b in h.finalize() {
            out.extend_from_slice(&[DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]]);
        }
        out
    }
}

/// `text` with all but its last `keep_last` characters replaced by `*`.
fn partial(text: &str, keep_last: usize) -> String {
    // Most masked values (card numbers, phone numbers, IDs) are ASCII: a character is a byte.
    if text.is_ascii() {
        let hidden = text.len().saturating_sub(keep_last);
        let mut out = "*".repeat(hidden);
        out.push_str(&text[hidden..]);
        return out;
    }
    let hidden = text.chars().count().saturating_sub(keep_last);
    text.chars().enumerate().map(|(i, c)| if i < hidden { '*' } else { c }).collect()
}

/// `text` as a JSON string. Masked text (a hash, `***`, digits) rarely has anything to
/// escape: then it is only quoted, without serde_json's escaping pass over it.
pub fn json_string(text: &str) -> String {
    // Exactly what serde_json escapes: a quote, a backslash and the control characters.
    if text.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        return serde_json::to_string(text).expect("a string always serializes");
    }
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    quoted.push_str(text);
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masker() -> Masker {
        Masker::new("***".into(), "s".into())
    }

    #[test]
    fn modes_mask_as_documented() {
        let m = masker();
        assert_eq!(m.text("secret", Mode::Redact, 4), "***");
        assert_eq!(m.text("4111111111111111", Mode::Partial, 4), "************1111");
        assert_eq!(m.text("abc", Mode::Partial, 4), "abc");
        // sha256("s" + "x")
        assert_eq!(m.text("x", Mode::Hash, 0), "9740c9dcdb4487d8cd63d2a544d8e6573f082081c49aef08c7853ab0f99e019a");
        assert_ne!(m.text("x", Mode::Hash, 0), Masker::new("***".into(), "t".into()).text("x", Mode::Hash, 0));
        assert_eq!(m.text("ab", Mode::Partial, 4), "ab");
        assert_eq!(m.text("café-1234", Mode::Partial, 2), "*******34");
        assert_eq!(m.text("1234é", Mode::Partial, 2), "***4é");
    }

    #[test]
    fn json_strings_are_what_serde_json_writes() {
        for text in ["", "***", "plain text é", "a\"b", "back\\slash", "tab\tnew\nline", "\u{1}", "\u{7f}"] {
            assert_eq!(json_string(text), serde_json::to_string(text).unwrap(), "{text:?}");
        }
    }

    #[test]
    fn non_string_values_are_masked_as_text_and_null_is_kept() {
        let m = masker();
        assert_eq!(m.value(&Node::Scalar, "12345678", Mode::Partial, 2).as_deref(), Some(r#""******78""#));
        assert_eq!(m.value(&Node::String("a\"b".into()), r#""a\"b""#, Mode::Partial, 2).as_deref(), Some(r#""*\"b""#));
        assert_eq!(m.value(&Node::Null, "null", Mode::Redact, 0), None);
        // Each mode's JSON is its text, quoted and escaped.
        let quoted = Masker::new("<\"gone\">".into(), "s".into());
        for mode in [Mode::Redact, Mode::Hash, Mode::Partial] {
            let json = quoted.value(&Node::String("a\"b\\c".into()), "", mode, 2).unwrap();
            assert_eq!(json, serde_json::to_string(&quoted.text("a\"b\\c", mode, 2)).unwrap(), "{mode:?}");
        }
    }
}
