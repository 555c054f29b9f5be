//! One Kafka Connect SMT (`transforms.<alias>.type` and its options) as one step of Turnpike's
//! built-in transforms: the plugin name, its config in Turnpike's keys and value syntax, and
//! for each option where it went or why it did not.
//!
//! This module resolves the class and dispatches; the converters are grouped by what the SMT
//! works on (`field`: the key or value, `header`: headers, `router`: the topic, `filter`:
//! whether the record goes on), and `builder` accounts for every option so none is dropped
//! silently.

mod builder;
mod field;
mod filter;
mod header;
mod router;
mod syntax;

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use builder::Builder;
use syntax::Syntax;

/// Where a routing step sends records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// The step keeps the topic.
    None,
    /// Always this topic (a RegexRouter replacement without `$` groups).
    Topic(String),
    /// Topics made from the record's topic (a RegexRouter replacement with groups): the
    /// regex and the Java replacement, as Kafka Connect wrote them.
    Pattern { regex: String, replacement: String },
    /// TimestampRouter's `topic.format`, as Kafka Connect wrote it.
    Format(String),
}

/// A converted step.
#[derive(Debug)]
pub(crate) struct Step {
    pub(crate) plugin: &'static str,
    pub(crate) config: Map<String, Value>,
    /// Option → the config key it went to.
    pub(crate) used: Vec<(String, String)>,
    /// Option → why it was left out (the step itself is kept).
    pub(crate) skipped: Vec<(String, String)>,
    pub(crate) notes: Vec<String>,
    pub(crate) route: Route,
    /// Confluent's Filter: its condition, and whether the predicate is negated (include).
    pub(crate) json_path: Option<(String, bool)>,
}

/// Which part a `$Key` / `$Value` SMT works on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Key,
    Value,
}

const APACHE: &str = "org.apache.kafka.connect.transforms.";
const CONFLUENT_FILTER: &str = "io.confluent.connect.transforms.Filter";
const NO_SCHEMAS: &str = "Turnpike records carry no Connect schemas, so there is no default to put in place of null";

/// `class` with its options (keys without the `transforms.<alias>.` prefix, raw values) as a
/// step, or why no Turnpike transform does what it does.
pub(crate) fn convert(class: &str, options: &BTreeMap<String, String>) -> Result<Step, String> {
    let left_out = "the step is left out and the chain runs without it";
    let (base, part) = match class.rsplit_once('$') {
        Some((base, "Key")) => (base, Some(Part::Key)),
        Some((base, "Value")) => (base, Some(Part::Value)),
        _ => (class, None),
    };
    let name = match base.strip_prefix(APACHE) {
        Some(name) => name,
        None if base == CONFLUENT_FILTER => "ConfluentFilter",
        None => {
            let hint = match class {
                "io.debezium.transforms.ExtractNewRecordState" => " (extract-field with field `after` keeps the row after a change, without the delete handling)",
                _ => "",
            };
            return Err(format!("{class}: no Turnpike transform does this{hint}; {left_out}"));
        }
    };
    let (plugin, with_part) = match name {
        "Cast" => ("cast", true),
        "DropHeaders" => ("drop-headers", false),
        "ExtractField" => ("extract-field", true),
        "Filter" => ("filter", false),
        "Flatten" => ("flatten", true),
        "HeaderFrom" => ("header-from", true),
        "HoistField" => ("hoist-field", true),
        "InsertField" => ("insert-field", true),
        "InsertHeader" => ("insert-header", false),
        "MaskField" => ("mask-field", true),
        "RegexRouter" => ("regex-router", false),
        "ReplaceField" => ("replace-field", true),
        "SetSchemaMetadata" => ("set-schema-metadata", true),
        "TimestampConverter" => ("timestamp-converter", true),
        "TimestampRouter" => ("timestamp-router", false),
        "ValueToKey" => ("value-to-key", false),
        "ConfluentFilter" => ("filter", true),
        _ => return Err(format!("{class}: no Turnpike transform does this; {left_out}")),
    };
    let part = match (with_part, part) {
        (true, Some(p)) => Some(p),
        (false, None) => None,
        (true, None) => return Err(format!("{class} is not a Kafka Connect class (write {base}$Key or {base}$Value); {left_out}")),
        (false, Some(_)) => return Err(format!("{class} is not a Kafka Connect class ({base} has no $Key/$Value variants); {left_out}")),
    };
    if part == Some(Part::Key) {
        let only_value = match name {
            "SetSchemaMetadata" => Some("Turnpike's set-schema-metadata sets the schema.name / schema.version headers, which describe the value"),
            "ConfluentFilter" => Some("Turnpike's json_path predicate tests the value only"),
            _ => None,
        };
        if let Some(why) = only_value {
            return Err(format!("{class}: {why}; {left_out}"));
        }
    }
    let mut b = Builder::new(class, plugin, options);
    if let (Some(p), true) = (part, name != "ConfluentFilter" && name != "SetSchemaMetadata") {
        b.step.config.insert("on".into(), json!(if p == Part::Key { "key" } else { "value" }));
    }
    let syntax = match b.take("field.syntax.version").map(|v| v.to_ascii_uppercase()).as_deref() {
        Some("V2") => Syntax::V2,
        Some("V1") | None => Syntax::V1,
        Some(other) => return Err(format!("field.syntax.version {other:?} is not V1 or V2; {left_out}")),
    };
    if options.contains_key("field.syntax.version") {
        b.used("field.syntax.version", "— the paths written (V2: dotted paths; V1: names, a dotted one in backquotes)");
    }
    let converted = match name {
        "Cast" => field::cast(&mut b, syntax),
        "DropHeaders" => header::drop_headers(&mut b),
        "ExtractField" => field::extract_field(&mut b, syntax),
        // Filter has no options: its predicate says which records it drops.
        "Filter" => Ok(()),
        "Flatten" => field::flatten(&mut b),
        "HeaderFrom" => header::header_from(&mut b, syntax),
        "HoistField" => field::hoist_field(&mut b, syntax),
        "InsertField" => field::insert_field(&mut b, syntax),
        "InsertHeader" => header::insert_header(&mut b),
        "MaskField" => field::mask_field(&mut b, syntax),
        "RegexRouter" => router::regex_router(&mut b),
        "ReplaceField" => field::replace_field(&mut b, syntax),
        "SetSchemaMetadata" => header::set_schema_metadata(&mut b),
        "TimestampConverter" => field::timestamp_converter(&mut b, syntax),
        "TimestampRouter" => router::timestamp_router(&mut b),
        "ValueToKey" => field::value_to_key(&mut b, syntax),
        "ConfluentFilter" => filter::confluent_filter(&mut b),
        _ => unreachable!("every name above has a plugin"),
    };
    converted.map_err(|why| format!("{why}; {left_out}"))?;
    Ok(b.finish(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    pub(super) fn ok(class: &str, pairs: &[(&str, &str)]) -> Step {
        convert(class, &opts(pairs)).unwrap_or_else(|e| panic!("{class}: {e}"))
    }

    #[test]
    fn unknown_options_and_classes_are_explained() {
        let s = ok("org.apache.kafka.connect.transforms.Flatten$Value", &[("delimiter", "_"), ("colour", "red")]);
        assert_eq!(s.skipped, [("colour".to_owned(), "not an option of Flatten; Kafka Connect ignored it too".to_owned())]);
        let err = convert("io.debezium.transforms.ExtractNewRecordState", &opts(&[])).unwrap_err();
        assert!(err.starts_with("io.debezium.transforms.ExtractNewRecordState: no Turnpike transform does this"), "{err}");
        assert!(err.ends_with("the step is left out and the chain runs without it"));
        assert!(convert("org.apache.kafka.connect.transforms.Cast", &opts(&[("spec", "int8")])).unwrap_err().contains("Cast$Key or"));
        assert!(convert("org.apache.kafka.connect.transforms.SetSchemaMetadata$Key", &opts(&[("schema.name", "x")])).unwrap_err().contains("describe the value"));
        let key = ok("org.apache.kafka.connect.transforms.HeaderFrom$Key", &[("fields", "id"), ("headers", "id"), ("operation", "copy")]);
        assert_eq!(key.config["on"], json!("key"), "HeaderFrom$Key reads the key");
    }
}
