//! SMTs that change the key or the value (`$Key` / `$Value` variants, plus ValueToKey): each
//! field name they take is written as a Turnpike path in the step's `field.syntax.version`.

use serde_json::{json, Map, Value};

use super::builder::Builder;
use super::syntax::{path, unsupported_date_letter, Syntax};
use super::NO_SCHEMAS;
use crate::ctx::{list, literal};

pub(super) fn cast(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
    let spec = b.need("spec")?;
    b.set("spec", "spec", cast_spec(&spec, syntax).map_err(|why| format!("spec: {why}"))?);
    b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
    Ok(())
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

pub(super) fn extract_field(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
    let field = b.need("field")?;
    b.set("field", "field", json!(path(&field, syntax)));
    b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
    Ok(())
}

pub(super) fn flatten(b: &mut Builder<'_>) -> Result<(), String> {
    if let Some(d) = b.take_raw("delimiter") {
        b.set("delimiter", "delimiter", json!(literal(&d)));
    }
    Ok(())
}

pub(super) fn hoist_field(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
    let field = b.need("field")?;
    b.set("field", "field", json!(path(&field, syntax)));
    Ok(())
}

pub(super) fn insert_field(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
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

pub(super) fn mask_field(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
    let fields = b.need("fields")?;
    b.set("fields", "fields", json!(list(&fields).iter().map(|f| path(f, syntax)).collect::<Vec<_>>()));
    if let Some(r) = b.take_raw("replacement") {
        b.set("replacement", "replacement", json!(literal(&r)));
    }
    Ok(())
}

pub(super) fn replace_field(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
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

pub(super) fn timestamp_converter(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
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

pub(super) fn value_to_key(b: &mut Builder<'_>, syntax: Syntax) -> Result<(), String> {
    let fields = b.need("fields")?;
    b.set("fields", "fields", json!(list(&fields).iter().map(|f| path(f, syntax)).collect::<Vec<_>>()));
    b.skip_if_given("replace.null.with.default", NO_SCHEMAS);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::convert;
    use super::super::tests::{ok, opts};
    use super::*;

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
}
