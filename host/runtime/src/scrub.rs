//! Hiding a connector's secrets in what its plugins say. A plugin is handed its config with
//! every `${secret:…}`, `${env:…}` and `${file:…}` resolved, and may repeat a value in an
//! error ("401 for token abc…"), a log line or its panic output. Every such text passes
//! [`Scrub::clean`] in the sandbox before the host keeps it, so a value never reaches the
//! status, the events, the host log or a dead-letter header.
//!
//! It catches a value as it is and as Rust's `{:?}` and JSON would quote it; a plugin that
//! encodes, splits or hashes one is beyond it. Values shorter than
//! [`turnpike_config::MIN_SECRET_CHARS`] are left alone: hiding them would hide ordinary words.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use turnpike_config::MIN_SECRET_CHARS;

/// What a hidden value is replaced by (the same marker the admin API shows for a secret).
const MARKER: &str = "***";

/// The values to hide from one connector's plugin messages, longest first (so a value that
/// contains another is hidden whole). Cheap to clone; `Debug` shows only how many.
#[derive(Clone, Default)]
pub struct Scrub(Arc<[String]>);

impl Scrub {
    /// Hides `values` (what a connector's references resolved to), each also as `{:?}` and
    /// JSON would write it.
    pub fn new(values: impl IntoIterator<Item = String>) -> Self {
        let mut all: Vec<String> = Vec::new();
        for value in values.into_iter().filter(|v| v.chars().count() >= MIN_SECRET_CHARS) {
            let quoted = format!("{value:?}");
            // `{:?}` of a string is always enclosed in (ASCII) double quotes.
            let debug = quoted[1..quoted.len() - 1].to_owned();
            let json = json_escaped(&value);
            all.extend([debug, json]);
            all.push(value);
        }
        all.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        all.dedup();
        Self(all.into())
    }

    /// These values and `more` (what another reference resolved to, such as a storage
    /// credential resolved at start).
    pub fn and(&self, more: impl IntoIterator<Item = String>) -> Self {
        let mut all: Vec<String> = self.0.iter().cloned().chain(Scrub::new(more).0.iter().cloned()).collect();
        all.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| a.cmp(b)));
        all.dedup();
        Self(all.into())
    }

    /// Whether there is nothing to hide.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `text` with every value replaced by `***`; borrowed when none occurs.
    pub fn clean<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for value in self.0.iter() {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), MARKER));
            }
        }
        out
    }

    /// [`Scrub::clean`] for an owned text: the same `String` back when nothing occurs.
    pub fn clean_string(&self, text: String) -> String {
        if self.0.iter().any(|v| text.contains(v.as_str())) {
            self.clean(&text).into_owned()
        } else {
            text
        }
    }
}

impl fmt::Debug for Scrub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Scrub({} forms hidden)", self.0.len())
    }
}

/// `value` as it appears inside a JSON string (serde_json's escapes).
fn json_escaped(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_occurrence_is_hidden_and_a_clean_text_is_borrowed() {
        let scrub = Scrub::new(["tok-123456".to_owned(), "tok-1234567890".to_owned()]);
        assert_eq!(scrub.clean("401 for tok-123456; again tok-123456"), "401 for ***; again ***");
        assert_eq!(scrub.clean("longer tok-1234567890 first"), "longer *** first", "the longer value is hidden whole");
        assert!(matches!(scrub.clean("nothing here"), Cow::Borrowed(_)));
        assert_eq!(scrub.clean_string("x tok-123456".to_owned()), "x ***");
        let more = scrub.and(["key-abcdef".to_owned()]);
        assert_eq!(more.clean("tok-123456 key-abcdef"), "*** ***");
    }

    #[test]
    fn quoted_forms_are_hidden_too() {
        let scrub = Scrub::new(["pa\"ss\\word\n2".to_owned()]);
        assert_eq!(scrub.clean(&format!("{:?} refused", "pa\"ss\\word\n2")), "\"***\" refused", "as {{:?}} writes it");
        assert_eq!(scrub.clean(r#"{"password":"pa\"ss\\word\n2"}"#), r#"{"password":"***"}"#, "as JSON writes it");
        assert_eq!(scrub.clean("raw pa\"ss\\word\n2"), "raw ***");
    }

    #[test]
    fn short_values_are_left_alone_and_debug_shows_no_value() {
        let scrub = Scrub::new(["abc".to_owned(), String::new()]);
        assert!(scrub.is_empty());
        assert_eq!(scrub.clean("abc"), "abc");
        let scrub = Scrub::new(["s3cr3t".to_owned()]);
        assert!(!format!("{scrub:?}").contains("s3cr3t"));
        assert!(Scrub::default().is_empty());
    }
}
