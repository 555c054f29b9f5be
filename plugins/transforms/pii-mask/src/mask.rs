//! The masking modes, applied to JSON values and to detected substrings.

use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::config::Mode;

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

    /// Masks a JSON value in place. Strings are masked as text; numbers, booleans, objects
    /// and arrays are masked as their JSON text (and become strings). `null` stays `null`:
    /// there is nothing to hide.
    pub fn value(&self, value: &mut Value, mode: Mode, keep_last: usize) {
        let masked = match &*value {
            Value::Null => return,
            Value::String(s) => self.text(s, mode, keep_last),
            other => self.text(&other.to_string(), mode, keep_last),
        };
        *value = Value::String(masked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        let mut v = json!(12345678);
        m.value(&mut v, Mode::Partial, 2);
        assert_eq!(v, json!("******78"));
        let mut n = Value::Null;
        m.value(&mut n, Mode::Redact, 0);
        assert_eq!(n, Value::Null);
    }
}
