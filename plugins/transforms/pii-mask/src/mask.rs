//! The masking modes, applied to JSON values and to detected substrings.

use sha2::{Digest, Sha256};

use crate::config::Mode;
use crate::doc::Node;

/// Masks text according to a mode.
#[derive(Debug, Clone)]
pub struct Masker {
    pub replacement: String,
    pub salt: String,
}

impl Masker {
    /// Masks a piece of text.
    pub fn text(&self, text: &str, mode: Mode, keep_last: usize) -> String {
        match mode {
            Mode::Redact => self.replacement.clone(),
            Mode::Hash => {
                let mut h = Sha256::new();
                h.update(self.salt.as_bytes());
                h.update(text.as_bytes());
                hex::encode(h.finalize())
            }
            Mode::Partial => {
                let total = text.chars().count();
                let hidden = total.saturating_sub(keep_last);
                text.chars().enumerate().map(|(i, c)| if i < hidden { '*' } else { c }).collect()
            }
        }
    }

    /// The replacement JSON text for a value, given its raw JSON text: strings are masked as
    /// text; numbers, booleans, objects and arrays as their JSON text (becoming strings).
    /// `None` for `null`: there is nothing to hide.
    pub fn value(&self, node: &Node<'_>, raw: &str, mode: Mode, keep_last: usize) -> Option<String> {
        let masked = match node {
            Node::Null => return None,
            Node::String(s) => self.text(s, mode, keep_last),
            _ => self.text(raw, mode, keep_last),
        };
        Some(serde_json::to_string(&masked).expect("a string always serializes"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masker() -> Masker {
        Masker { replacement: "***".into(), salt: "s".into() }
    }

    #[test]
    fn modes_mask_as_documented() {
        let m = masker();
        assert_eq!(m.text("secret", Mode::Redact, 4), "***");
        assert_eq!(m.text("4111111111111111", Mode::Partial, 4), "************1111");
        assert_eq!(m.text("abc", Mode::Partial, 4), "abc");
        // sha256("s" + "x")
        assert_eq!(m.text("x", Mode::Hash, 0), "9740c9dcdb4487d8cd63d2a544d8e6573f082081c49aef08c7853ab0f99e019a");
        assert_ne!(m.text("x", Mode::Hash, 0), Masker { salt: "t".into(), ..m.clone() }.text("x", Mode::Hash, 0));
    }

    #[test]
    fn non_string_values_are_masked_as_text_and_null_is_kept() {
        let m = masker();
        assert_eq!(m.value(&Node::Scalar, "12345678", Mode::Partial, 2).as_deref(), Some(r#""******78""#));
        assert_eq!(m.value(&Node::String("a\"b".into()), r#""a\"b""#, Mode::Partial, 2).as_deref(), Some(r#""*\"b""#));
        assert_eq!(m.value(&Node::Null, "null", Mode::Redact, 0), None);
    }
}
