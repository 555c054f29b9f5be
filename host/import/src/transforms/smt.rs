//! One Kafka Connect SMT (`transforms.<alias>.type` and its options) as one step of Turnpike's
//! built-in transforms: the plugin name, its config in Turnpike's keys and value syntax, and
//! for each option where it went or why it did not.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::ctx::{int, java_only_regex, list, literal};

/// Where a routing step sends records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// The step keeps the topic.
    None,
    /// Always this topic (a RegexRouter replacement without `$` groups).
    Topic(String),
    /// Topics made from the record (a RegexRouter replacement with groups).
    Pattern,
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

/// A name or list of names as Kafka Connect's SMTs take them (V1: a name may hold dots) or,
/// with `field.syntax.version=V2`, dotted paths (KIP-821) — the syntax Turnpike's paths share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Syntax {
    V1,
    V2,
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
            "HeaderFrom" => Some("Turnpike's header-from reads fields of the value only"),
            "SetSchemaMetadata" => Some("Turnpike's set-schema-metadata sets the schema.name / schema.version headers, which describe the value"),
            "ConfluentFilter" => Some("Turnpike's json_path predicate tests the value only"),
            _ => None,
        };
        if let Some(why) = only_value {
            return Err(format!("{class}: {why}; {left_out}"));
        }
    }
    let mut b = Builder::new(plugin, options);
    if let (Some(p), true) = (part, name != "ConfluentFilter" && name != "HeaderFrom" && name != "SetSchemaMetadata") {
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
    let need = |b: &mut Builder, option: &str| b.take(option).ok_or_else(|| format!("{class} needs `{option}`, which is not given; {left_out}"));
    match name {
        "Cast" => {
            let spec = need(&mut b, "spec")?;
            b.set("spec", "spec", cast_spec(&spec, syntax).map_err(|why| format!("spec: {why}; {left_out}"))?);
            b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
        }
        "DropHeaders" => {
            let headers = need(&mut b, "headers")?;
            b.set("headers", "headers", json!(list(&headers)));
        }
        "ExtractField" => {
            let field = need(&mut b, "field")?;
            b.set("field", "field", json!(path(&field, syntax)));
            b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
        }
        "Filter" => {}
        "Flatten" => {
            if let Some(d) = b.take_raw("delimiter") {
                b.set("delimiter", "delimiter", json!(literal(&d)));
            }
        }
        "HeaderFrom" => {
            let fields = list(&need(&mut b, "fields")?);
            let headers = list(&need(&mut b, "headers")?);
            if fields.len() != headers.len() {
                return Err(format!("fields names {} fields but headers {} headers; Kafka Connect refuses that too; {left_out}", fields.len(), headers.len()));
            }
            let operation = need(&mut b, "operation")?.to_ascii_lowercase();
            if operation != "copy" && operation != "move" {
                return Err(format!("operation {operation:?} is not copy or move; {left_out}"));
            }
            b.set("fields", "fields", json!(fields.iter().map(|f| path(f, syntax)).collect::<Vec<_>>()));
            b.set("headers", "headers", json!(headers));
            b.set("operation", "operation", json!(operation));
            b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
        }
        "HoistField" => {
            let field = need(&mut b, "field")?;
            b.set("field", "field", json!(path(&field, syntax)));
        }
        "InsertField" => insert_field(&mut b, syntax).map_err(|why| format!("{why}; {left_out}"))?,
        "InsertHeader" => {
            let header = need(&mut b, "header")?;
            let value = options.get("value.literal").cloned().ok_or_else(|| format!("{class} needs `value.literal`, which is not given; {left_out}"))?;
            b.take("value.literal");
            b.set("header", "header", json!(header));
            b.set("value.literal", "value", json!(literal(&value)));
        }
        "MaskField" => {
            let fields = need(&mut b, "fields")?;
            b.set("fields", "fields", json!(list(&fields).iter().map(|f| path(f, syntax)).collect::<Vec<_>>()));
            if let Some(r) = b.take_raw("replacement") {
                b.set("replacement", "replacement", json!(literal(&r)));
            }
        }
        "RegexRouter" => {
            let regex = need(&mut b, "regex")?;
            let replacement = options.get("replacement").cloned().ok_or_else(|| format!("{class} needs `replacement`, which is not given; {left_out}"))?;
            b.take("replacement");
            if let Some(feature) = java_only_regex(&regex) {
                b.step.notes.push(format!("its regex uses {feature}, which Java has and Turnpike's regular expressions do not: rewrite it, or the connector is refused"));
            }
            b.set("regex", "regex", json!(regex));
            b.set("replacement", "replacement", json!(literal(&replacement)));
            b.step.route = if replacement.contains('$') { Route::Pattern } else { Route::Topic(replacement) };
        }
        "ReplaceField" => replace_field(&mut b, syntax).map_err(|why| format!("{why}; {left_out}"))?,
        "SetSchemaMetadata" => {
            let name = b.take("schema.name");
            let version = b.take("schema.version");
            if name.is_none() && version.is_none() {
                return Err(format!("{class} needs schema.name or schema.version; {left_out}"));
            }
            if let Some(n) = name {
                b.set("schema.name", "schema_name", json!(literal(&n)));
            }
            if let Some(v) = version {
                let v = int(&v).filter(|v| (0..=i64::from(i32::MAX)).contains(v)).ok_or_else(|| format!("schema.version {v:?} is not a whole number; {left_out}"))?;
                b.set("schema.version", "schema_version", json!(v));
            }
            b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
            b.step.notes.push("Turnpike records carry no Connect schemas: set-schema-metadata writes the headers schema.name / schema.version instead".into());
        }
        "TimestampConverter" => timestamp_converter(&mut b, syntax).map_err(|why| format!("{why}; {left_out}"))?,
        "TimestampRouter" => {
            let topic_format = b.take_raw("topic.format").unwrap_or_else(|| "${topic}-${timestamp}".to_owned());
            if options.contains_key("topic.format") {
                b.set("topic.format", "topic_format", json!(literal(&topic_format)));
            }
            if let Some(f) = b.take("timestamp.format") {
                if let Some(letter) = unsupported_date_letter(&f) {
                    b.step.notes.push(format!("its timestamp.format uses `{letter}`, which Turnpike's date formats do not support: change it, or the connector is refused"));
                }
                b.set("timestamp.format", "timestamp_format", json!(literal(&f)));
            }
            b.step.route = Route::Format(topic_format);
        }
        "ValueToKey" => {
            let fields = need(&mut b, "fields")?;
            b.set("fields", "fields", json!(list(&fields).iter().map(|f| path(f, syntax)).collect::<Vec<_>>()));
            b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
        }
        "ConfluentFilter" => confluent_filter(&mut b).map_err(|why| format!("{why}; {left_out}"))?,
        _ => unreachable!("every name above has a plugin"),
    }
    Ok(b.finish(name))
}

/// Collects a step and accounts for its options.
struct Builder<'a> {
    options: &'a BTreeMap<String, String>,
    taken: Vec<String>,
    step: Step,
}

impl<'a> Builder<'a> {
    fn new(plugin: &'static str, options: &'a BTreeMap<String, String>) -> Self {
        let step = Step { plugin, config: Map::new(), used: Vec::new(), skipped: Vec::new(), notes: Vec::new(), route: Route::None, json_path: None };
        Self { options, taken: Vec::new(), step }
    }

    /// The trimmed value of `option` if given and not empty; marks it taken.
    fn take(&mut self, option: &str) -> Option<String> {
        self.taken.push(option.to_owned());
        self.options.get(option).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty())
    }

    /// The value as written (not trimmed), if not empty.
    fn take_raw(&mut self, option: &str) -> Option<String> {
        self.taken.push(option.to_owned());
        self.options.get(option).filter(|v| !v.is_empty()).cloned()
    }

    fn set(&mut self, option: &str, key: &str, value: Value) {
        self.step.config.insert(key.to_owned(), value);
        self.used(option, key);
    }

    fn used(&mut self, option: &str, to: &str) {
        self.taken.push(option.to_owned());
        self.step.used.push((option.to_owned(), to.to_owned()));
    }

    fn skip_if_given(&mut self, option: &str, why: &str) {
        self.taken.push(option.to_owned());
        if self.options.contains_key(option) {
            self.step.skipped.push((option.to_owned(), why.to_owned()));
        }
    }

    /// The step, every option not accounted for left out as unknown to the SMT.
    fn finish(mut self, smt: &str) -> Step {
        let accounted: Vec<String> = self.step.used.iter().chain(&self.step.skipped).map(|(o, _)| o.clone()).collect();
        for option in self.options.keys() {
            if !accounted.contains(option) {
                let why = if self.taken.contains(option) {
                    "is empty, so it sets nothing".to_owned()
                } else {
                    format!("not an option of {}; Kafka Connect ignored it too", smt.trim_start_matches("Confluent"))
                };
                self.step.skipped.push((option.clone(), why));
            }
        }
        self.step
    }
}

/// A Kafka Connect field name (V1) or path (V2) as a Turnpike path: a V1 name holding `.`,
/// `[`, `]` or a backquote is written in backquotes, a backquote or backslash in it escaped
/// with a backslash (KIP-821).
fn path(name: &str, syntax: Syntax) -> String {
    if syntax == Syntax::V2 || !name.contains(['.', '[', ']', '`']) {
        return name.to_owned();
    }
    format!("`{}`", name.replace('\\', "\\\\").replace('`', "\\`"))
}

/// Cast's `spec`: one type (the whole key/value) or `field:type,…` as a map.
fn cast_spec(spec: &str, syntax: Syntax) -> Result<Value, String> {
    const TYPES: [&str; 8] = ["int8", "int16", "int32", "int64", "float32", "float64", "boolean", "string"];
    let check = |t: &str| {
        let t = t.trim().to_ascii_lowercase();
        if TYPES.contains(&t.as_str()) {
            Ok(t)
        } else {
            Err(format!("{t:?} is not one of {}", TYPES.join(", ")))
        }
    };
    let items = list(spec);
    if items.len() == 1 && !items[0].contains(':') {
        return Ok(json!(check(&items[0])?));
    }
    let mut map = Map::new();
    for item in items {
        let Some((field, t)) = item.split_once(':') else {
            return Err(format!("{item:?} is not field:type"));
        };
        if t.contains(':') {
            return Err(format!("{item:?} is not field:type"));
        }
        map.insert(path(field.trim(), syntax), json!(check(t)?));
    }
    if map.is_empty() {
        return Err("names no field".into());
    }
    Ok(Value::Object(map))
}

fn insert_field(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
    let mut any = false;
    for (option, key) in [("topic.field", "topic_field"), ("partition.field", "partition_field"), ("offset.field", "offset_field"), ("timestamp.field", "timestamp_field")] {
        let Some(field) = b.take(option) else { continue };
        let bare = field.trim_end_matches(['!', '?']);
        if bare.len() != field.len() {
            b.step
                .notes
                .push(format!("{option} {field:?}: the `{}` suffix says whether the field's Connect schema is optional; Turnpike records have no schemas, so it is dropped", &field[bare.len()..]));
        }
        b.set(option, key, json!(path(bare, syntax)));
        any = true;
    }
    match (b.take("static.field"), b.take_raw("static.value")) {
        (Some(field), Some(value)) => {
            let bare = field.trim_end_matches(['!', '?']).to_owned();
            if bare.len() != field.len() {
                b.step.notes.push(format!("static.field {field:?}: the suffix about the Connect schema is dropped; Turnpike records have no schemas"));
            }
            b.set("static.field", "static_field", json!(path(&bare, syntax)));
            // Kafka Connect inserts the text; so does this.
            b.set("static.value", "static_value", json!(literal(&value)));
            any = true;
        }
        (Some(_), None) => b.step.skipped.push(("static.field".into(), "needs static.value, which is not given (Kafka Connect inserted nothing either)".into())),
        (None, Some(_)) => b.step.skipped.push(("static.value".into(), "needs static.field, which is not given (Kafka Connect inserted nothing either)".into())),
        (None, None) => {}
    }
    b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
    if any {
        Ok(())
    } else {
        Err("InsertField names no field to insert".into())
    }
}

fn replace_field(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
    let mut any = false;
    for (option, old) in [("include", "whitelist"), ("exclude", "blacklist")] {
        let (given, from) = match (b.take(option), b.take(old)) {
            (Some(v), old_value) => {
                if old_value.is_some() {
                    b.step.skipped.push((old.to_owned(), format!("{option} is given too, and Kafka Connect used {option}")));
                }
                (v, option)
            }
            (None, Some(v)) => (v, old),
            (None, None) => continue,
        };
        b.set(from, option, json!(list(&given).iter().map(|f| path(f, syntax)).collect::<Vec<_>>()));
        any = true;
    }
    if let Some(renames) = b.take("renames") {
        let mut map = Map::new();
        for pair in list(&renames) {
            let Some((from, to)) = pair.split_once(':').filter(|(_, to)| !to.contains(':')) else {
                return Err(format!("renames: {pair:?} is not old:new"));
            };
            map.insert(path(from.trim(), syntax), json!(to.trim()));
        }
        b.set("renames", "renames", Value::Object(map));
        any = true;
    }
    b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
    if any {
        Ok(())
    } else {
        Err("ReplaceField has no include, exclude or renames".into())
    }
}

fn timestamp_converter(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
    let target = b.take("target.type").ok_or("TimestampConverter needs `target.type`, which is not given")?;
    let lower = target.to_ascii_lowercase();
    if !["string", "unix", "date", "time", "timestamp"].contains(&lower.as_str()) {
        return Err(format!("target.type {target:?} is not string, unix, Date, Time or Timestamp"));
    }
    if let Some(field) = b.take("field") {
        b.set("field", "field", json!(path(&field, syntax)));
    }
    b.set("target.type", "target_type", json!(lower));
    if let Some(format) = b.take_raw("format") {
        if let Some(letter) = unsupported_date_letter(&format) {
            b.step.notes.push(format!("its format uses `{letter}`, which Turnpike's date formats do not support: change it, or the connector is refused"));
        }
        b.set("format", "format", json!(literal(&format)));
    }
    if let Some(precision) = b.take("unix.precision") {
        let lower = precision.to_ascii_lowercase();
        if !["seconds", "milliseconds", "microseconds", "nanoseconds"].contains(&lower.as_str()) {
            return Err(format!("unix.precision {precision:?} is not seconds, milliseconds, microseconds or nanoseconds"));
        }
        b.set("unix.precision", "unix_precision", json!(lower));
    }
    b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
    Ok(())
}

/// Confluent's `Filter$Value`: a `filter` step whose predicate is the condition, negated for
/// `include` (the filter drops what its predicate selects; include keeps what matches).
fn confluent_filter(b: &mut Builder<'_>) -> Result<(), String> {
    let condition = b.take("filter.condition").ok_or("Filter needs `filter.condition`, which is not given")?;
    let kind = b.take("filter.type").map(|t| t.to_ascii_lowercase()).ok_or("Filter needs `filter.type` (include or exclude), which is not given")?;
    let include = match kind.as_str() {
        "include" => true,
        "exclude" => false,
        other => return Err(format!("filter.type {other:?} is not include or exclude")),
    };
    b.used("filter.condition", "— the step's predicate.json_path");
    b.used("filter.type", "— the step's predicate.negate (include: true, exclude: false)");
    if let Some(op) = [" =~ ", " in ", " nin ", " subsetof ", " anyof ", " noneof ", " size ", " empty ", ".length()"].iter().find(|op| condition.contains(**op)) {
        b.step
            .notes
            .push(format!("its filter.condition uses `{}`, which is Jayway JsonPath, not RFC 9535: rewrite it (e.g. `=~ /re/` as `search(@.x, 're')`), or the connector is refused", op.trim()));
    }
    // Turnpike never fails a record over the condition: a value without the field (or a null
    // value) is selected by no query, so `exclude` keeps it and `include` drops it.
    let kept = if include { "drops" } else { "keeps" };
    let same = if include { "exclude" } else { "include" };
    match b.take("missing.or.null.behavior").map(|m| m.to_ascii_lowercase()) {
        Some(m) if m == same => b.used("missing.or.null.behavior", "— the predicate's behaviour: a record without the field, or a null value, is never selected"),
        Some(m) => {
            b.step.skipped.push((
                "missing.or.null.behavior".into(),
                format!("{m:?} cannot be kept: with filter.type {kind}, Turnpike {kept} a record whose field is missing or whose value is null (as {same} would)"),
            ));
        }
        None => b.step.notes.push(format!("missing.or.null.behavior was not set, so Kafka Connect failed records whose field is missing or null; Turnpike {kept} them (as `{same}` would)")),
    }
    b.step.json_path = Some((condition, include));
    Ok(())
}

/// The first letter of a Java SimpleDateFormat pattern outside quotes that Turnpike's date
/// formats do not support.
fn unsupported_date_letter(format: &str) -> Option<char> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    fn ok(class: &str, pairs: &[(&str, &str)]) -> Step {
        convert(class, &opts(pairs)).unwrap_or_else(|e| panic!("{class}: {e}"))
    }

    #[test]
    fn cast_specs_become_maps_or_one_type() {
        let s = ok("org.apache.kafka.connect.transforms.Cast$Value", &[("spec", "f1:int32, f2:STRING,a.b:boolean")]);
        assert_eq!(Value::Object(s.config), json!({"on": "value", "spec": {"f1": "int32", "f2": "string", "`a.b`": "boolean"}}));
        let s = ok("org.apache.kafka.connect.transforms.Cast$Key", &[("spec", "int64")]);
        assert_eq!(Value::Object(s.config), json!({"on": "key", "spec": "int64"}));
        let err = convert("org.apache.kafka.connect.transforms.Cast$Value", &opts(&[("spec", "a:decimal")])).unwrap_err();
        assert!(err.starts_with("spec: \"decimal\" is not one of int8"), "{err}");
    }

    #[test]
    fn extract_field_paths_follow_the_syntax_version() {
        let v1 = ok("org.apache.kafka.connect.transforms.ExtractField$Value", &[("field", "a.b")]);
        assert_eq!(v1.config["field"], json!("`a.b`"));
        let v2 = ok("org.apache.kafka.connect.transforms.ExtractField$Value", &[("field", "a.b"), ("field.syntax.version", "V2")]);
        assert_eq!(v2.config["field"], json!("a.b"));
        assert!(v2.skipped.is_empty());
        assert_eq!(path("we`ird.x", Syntax::V1), "`we\\`ird.x`");
    }

    #[test]
    fn replace_field_takes_the_removed_names_too() {
        let s = ok("org.apache.kafka.connect.transforms.ReplaceField$Value", &[("blacklist", "a, b"), ("renames", "foo:c1,bar:c2"), ("whitelist", "x"), ("include", "y")]);
        assert_eq!(Value::Object(s.config), json!({"on": "value", "include": ["y"], "exclude": ["a", "b"], "renames": {"foo": "c1", "bar": "c2"}}));
        assert_eq!(s.skipped, [("whitelist".to_owned(), "include is given too, and Kafka Connect used include".to_owned())]);
    }

    #[test]
    fn timestamp_converter_lowercases_its_types() {
        let s = ok("org.apache.kafka.connect.transforms.TimestampConverter$Value", &[("field", "ts"), ("target.type", "Timestamp"), ("format", "yyyy-MM-dd"), ("unix.precision", "SECONDS")]);
        assert_eq!(Value::Object(s.config), json!({"on": "value", "field": "ts", "target_type": "timestamp", "format": "yyyy-MM-dd", "unix_precision": "seconds"}));
        let s = ok("org.apache.kafka.connect.transforms.TimestampConverter$Value", &[("target.type", "string"), ("format", "YYYY-ww")]);
        assert!(s.notes[0].contains("`Y`"), "{:?}", s.notes);
    }

    #[test]
    fn unknown_options_and_classes_are_explained() {
        let s = ok("org.apache.kafka.connect.transforms.Flatten$Value", &[("delimiter", "_"), ("colour", "red")]);
        assert_eq!(s.skipped, [("colour".to_owned(), "not an option of Flatten; Kafka Connect ignored it too".to_owned())]);
        let err = convert("io.debezium.transforms.ExtractNewRecordState", &opts(&[])).unwrap_err();
        assert!(err.starts_with("io.debezium.transforms.ExtractNewRecordState: no Turnpike transform does this"), "{err}");
        assert!(err.ends_with("the step is left out and the chain runs without it"));
        assert!(convert("org.apache.kafka.connect.transforms.Cast", &opts(&[("spec", "int8")])).unwrap_err().contains("Cast$Key or"));
        assert!(convert("org.apache.kafka.connect.transforms.HeaderFrom$Key", &opts(&[])).unwrap_err().contains("value only"));
    }

    #[test]
    fn routers_say_where_records_go_and_keep_dollar_signs_literal() {
        let s = ok("org.apache.kafka.connect.transforms.RegexRouter", &[("regex", "(.*)"), ("replacement", "all-${x}$1")]);
        assert_eq!(s.config["replacement"], json!("all-$${x}$1"));
        assert_eq!(s.route, Route::Pattern);
        let s = ok("org.apache.kafka.connect.transforms.TimestampRouter", &[("topic.format", "${topic}_${timestamp}")]);
        assert_eq!(Value::Object(s.config), json!({"topic_format": "$${topic}_$${timestamp}"}));
        assert_eq!(s.route, Route::Format("${topic}_${timestamp}".into()));
    }

    #[test]
    fn confluent_filter_missing_behaviour() {
        let s = ok(CONFLUENT_FILTER_VALUE, &[("filter.condition", "$[?(@.a == 1)]"), ("filter.type", "include"), ("missing.or.null.behavior", "exclude")]);
        assert_eq!(s.json_path, Some(("$[?(@.a == 1)]".to_owned(), true)));
        assert!(s.skipped.is_empty());
        let s = ok(CONFLUENT_FILTER_VALUE, &[("filter.condition", "$[?(@.a == 1)]"), ("filter.type", "exclude"), ("missing.or.null.behavior", "fail")]);
        assert_eq!(s.json_path, Some(("$[?(@.a == 1)]".to_owned(), false)));
        assert_eq!(s.skipped[0].0, "missing.or.null.behavior");
    }

    const CONFLUENT_FILTER_VALUE: &str = "io.confluent.connect.transforms.Filter$Value";
}
