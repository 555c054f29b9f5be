//! `pii-mask`: masks personal data in JSON record values, by field path and by detection.
//! See this plugin's README for the configuration table and examples.

mod config;
mod detect;
mod doc;
mod mask;
mod path;

use turnpike_sdk::prelude::*;

pub use config::Config;
use config::{Field, Mode, NonJson};
use detect::Detectors;
use doc::{range, Edits, Node, Tree};
use mask::Masker;

/// The configured transform.
pub struct PiiMask {
    fields: Vec<Field>,
    detectors: Detectors,
    detector_mode: Mode,
    keep_last: usize,
    masker: Masker,
    on_non_json: NonJson,
}

impl Transform for PiiMask {
    type Config = Config;

    fn create(config: Config) -> Result<Self, ConfigError> {
        Ok(Self {
            fields: config.fields()?,
            detectors: Detectors::new(&config.detectors),
            detector_mode: config.detector_mode,
            keep_last: config.keep_last,
            masker: Masker::new(config.replacement, config.salt),
            on_non_json: config.on_non_json,
        })
    }

    fn transform(&mut self, record: &Record<'_>, out: &mut Output<'_>) -> Result<(), RecordError> {
        // A tombstone carries nothing to mask: pass it on so deletes still propagate.
        let Some(bytes) = record.value() else {
            out.forward(record);
            return Ok(());
        };
        let parsed = std::str::from_utf8(bytes).map_err(|e| e.to_string()).and_then(|text| Tree::parse(text).map(|root| (text, root)).map_err(|e| e.to_string()));
        let (text, root) = match parsed {
            Ok(doc) => doc,
            Err(e) => return self.not_json(record, out, &e),
        };
        let edits = self.mask(text, &root);
        if root.read_unreadable() {
            return self.not_json(record, out, "a key or string in it has a lone UTF-16 surrogate such as \\ud800, which cannot be decoded");
        }
        out.forward_with_value(record, edits.apply(text));
        Ok(())
    }
}

impl PiiMask {
    /// A value that cannot be read as JSON: passed on unmasked, or failed (the default).
    fn not_json(&self, record: &Record<'_>, out: &mut Output<'_>, why: &str) -> Result<(), RecordError> {
        match self.on_non_json {
            NonJson::Pass => {
                out.forward(record);
                Ok(())
            }
            NonJson::Error => Err(RecordError::invalid(format!("the value is not JSON ({why}); set on_non_json: pass to let such records through unmasked"))),
        }
    }

    /// Masks configured fields, then runs detectors over every string not already masked.
    fn mask<'a>(&self, text: &'a str, root: &Tree<'a>) -> Edits {
        let mut edits = Edits::default();
        for field in &self.fields {
            field.path.for_each(root, &mut |v| {
                if let Some(masked) = self.masker.value(v.node(), v.raw(), field.mode, field.keep_last) {
                    edits.replace(range(text, v.raw()), masked);
                }
            });
        }
        if !self.detectors.is_empty() {
            let mask = |found: &str| self.masker.text(found, self.detector_mode, self.keep_last);
            visit_strings(root, &mut |raw, s| {
                let at = range(text, raw);
                if edits.covers(&at) {
                    return;
                }
                if let Some(masked) = self.detectors.apply(s, &mask) {
                    edits.replace(at, mask::json_string(&masked));
                }
            });
        }
        edits
    }
}

/// Calls `f` with every string value in the document (not object keys).
fn visit_strings<'a>(value: &Tree<'a>, f: &mut impl FnMut(&'a str, &str)) {
    match value.node() {
        Node::String(s) => f(value.raw(), s),
        Node::Array(items) => items.iter().for_each(|v| visit_strings(v, f)),
        Node::Object(entries) => entries.iter().for_each(|(_, v)| visit_strings(v, f)),
        Node::Null | Node::Scalar | Node::Unreadable => {}
    }
}

export_transform!(PiiMask);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use turnpike_sdk::testing;

    fn run(config: Value, values: &[&str]) -> testing::TestOutput {
        let mut t = testing::create::<PiiMask>(&config.to_string()).unwrap();
        testing::run(&mut t, values.iter().map(|v| TestRecord::value(*v))).unwrap()
    }

    #[test]
    fn masks_fields_by_path_and_keeps_the_rest_byte_identical() {
        let input = r#"{"id":7,"price":10.50,"user":{"email":"a@b.co","name":"Ann"},"cards":[{"n":"4111111111111111"}]}"#;
        let out = run(json!({"fields": ["user.email", {"path": "cards[*].n", "mode": "partial"}]}), &[input]);
        assert_eq!(out.values()[0], r#"{"id":7,"price":10.50,"user":{"email":"***","name":"Ann"},"cards":[{"n":"************1111"}]}"#);
    }

    #[test]
    fn hash_mode_is_stable_so_joins_still_work() {
        let cfg = json!({"fields": [{"path": "email", "mode": "hash"}], "salt": "pepper"});
        let out = run(cfg, &[r#"{"email":"x@y.io"}"#, r#"{"email":"x@y.io"}"#, r#"{"email":"z@y.io"}"#]);
        let hashes: Vec<Value> = out.values().iter().map(|v| serde_json::from_str::<Value>(v).unwrap()["email"].clone()).collect();
        assert_eq!(hashes[0], hashes[1]);
        assert_ne!(hashes[0], hashes[2]);
        assert_eq!(hashes[0].as_str().unwrap().len(), 64);
    }

    #[test]
    fn untouched_bytes_stay_identical_even_odd_number_spellings_and_spaces() {
        let input = "{ \"big\": 1e3, \"email\" : \"a@b.co\", \"neg\": -0.0, \"t\": [ true ] }";
        let out = run(json!({"fields": ["email"]}), &[input]);
        assert_eq!(out.values()[0], "{ \"big\": 1e3, \"email\" : \"***\", \"neg\": -0.0, \"t\": [ true ] }");
    }

    #[test]
    fn any_json_document_is_read_padding_and_huge_numbers_included() {
        let out = run(json!({"fields": ["a"]}), &[" {\"a\": 1}\n", " 1e400 ", "[{\"a\":\"x\"}]", "{\"a\":1} x"]);
        assert_eq!(out.values(), [" {\"a\": \"***\"}\n", " 1e400 ", "[{\"a\":\"***\"}]"]);
        assert_eq!(out.errors.len(), 1, "trailing text is not JSON");
        assert_eq!(out.errors[0].0, 3);
    }

    /// serde_json's check of a document skips strings without decoding them, so a lone
    /// surrogate passes it and fails only when a level is read: such a record is not masked
    /// silently, it is not JSON.
    #[test]
    fn a_lone_surrogate_where_masking_must_look_is_not_json() {
        let out = run(json!({"fields": ["u.email"]}), &[r#"{"u":{"\ud800":0,"email":"a@b.co"}}"#, r#"{"\ud800":1,"u":{"email":"a@b.co"}}"#]);
        assert_eq!(out.errors.len(), 2, "{:?}", out.values());
        assert!(out.errors[0].1.message.contains("lone UTF-16 surrogate"), "{}", out.errors[0].1.message);
        let out = run(json!({"detectors": ["email"]}), &[r#"{"n":"a@b.co \ud800"}"#]);
        assert_eq!(out.errors.len(), 1);
        // A level the configuration never reads is not checked further.
        let out = run(json!({"fields": ["email"]}), &[r#"{"other":{"\ud800":1},"email":"a@b.co"}"#]);
        assert_eq!(out.values(), [r#"{"other":{"\ud800":1},"email":"***"}"#]);
        let out = run(json!({"fields": ["u.email"], "on_non_json": "pass"}), &[r#"{"u":{"\ud800":0,"email":"a@b.co"}}"#]);
        assert_eq!(out.values(), [r#"{"u":{"\ud800":0,"email":"a@b.co"}}"#]);
    }

    #[test]
    fn detectors_find_pii_in_free_text() {
        let cfg = json!({"detectors": ["email", "phone", "credit_card", "ssn"]});
        let out = run(cfg, &[r#"{"note":"mail a@b.com or call 555-123-4567, card 4111 1111 1111 1111, ssn 123-45-6789"}"#]);
        assert_eq!(out.values()[0], r#"{"note":"mail *** or call ***, card ***, ssn ***"}"#);
    }

    #[test]
    fn non_json_is_an_error_by_default_and_passes_when_configured() {
        let out = run(json!({"fields": ["a"]}), &["not json", r#"{"a":1}"#]);
        assert_eq!(out.errors.len(), 1);
        assert_eq!(out.errors[0].0, 0);
        assert!(out.errors[0].1.message.contains("not JSON"));
        assert_eq!(out.values(), [r#"{"a":"***"}"#]);
        let out = run(json!({"fields": ["a"], "on_non_json": "pass"}), &["not json"]);
        assert_eq!(out.values(), ["not json"]);
    }

    #[test]
    fn config_errors_name_the_key() {
        let err = testing::create::<PiiMask>(r#"{"fields":["a..b"]}"#).err().unwrap();
        assert_eq!(err.key.as_deref(), Some("fields[0]"));
        let err = testing::create::<PiiMask>(r#"{"fields":["a"],"default_mode":"scramble"}"#).err().unwrap();
        assert_eq!(err.key.as_deref(), Some("default_mode"));
        assert!(err.message.contains("unknown variant `scramble`"), "{}", err.message);
        // A mistake inside a rule is named at its key, not "did not match any variant".
        let err = testing::create::<PiiMask>(r#"{"fields":["a",{"path":"b","mode":"scramble"}]}"#).err().unwrap();
        assert_eq!(err.key.as_deref(), Some("fields[1].mode"), "{err}");
        assert!(err.message.contains("unknown variant `scramble`"), "{}", err.message);
        let err = testing::create::<PiiMask>(r#"{"fields":[{"path":"b","mdoe":"hash"}]}"#).err().unwrap();
        assert_eq!(err.key.as_deref(), Some("fields[0].mdoe"), "{err}");
        let err = testing::create::<PiiMask>(r#"{"fields":[7]}"#).err().unwrap();
        assert!(err.message.contains("a path (`user.email`) or a rule"), "{}", err.message);
        let err = testing::create::<PiiMask>("{}").err().unwrap();
        assert_eq!(err.key.as_deref(), Some("fields"));
    }
}
