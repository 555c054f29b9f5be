//! `format.class: json`: one JSON value per line. A value is checked, not re-encoded, so its
//! numbers keep every digit; newlines between its tokens (pretty-printed JSON) become spaces,
//! which is safe because a JSON string cannot hold a raw newline.

use serde::de::IgnoredAny;
use serde_json::{Map, Value};
use turnpike_sdk::{Record, RecordError};

use super::Extras;

/// Parses a value as JSON, for the options that read its fields.
pub fn parse(value: &[u8]) -> Result<Value, RecordError> {
    serde_json::from_slice(value).map_err(|e| RecordError::invalid(format!("the value is not JSON: {e}")))
}

/// `bytes` as JSON text, if it is JSON.
fn as_json(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    serde_json::from_str::<IgnoredAny>(text).ok().map(|_| text)
}

/// Appends JSON text on one line.
fn push_flat(out: &mut Vec<u8>, text: &str) {
    out.extend(text.trim().bytes().map(|b| if b == b'\n' || b == b'\r' { b' ' } else { b }));
}

/// The record's line: the value, or with `extras` `{"value": …, "key": …, "headers": {…}}`.
/// `parsed` is the value already parsed (then it is known to be JSON).
pub fn line(record: &Record<'_>, value: &[u8], parsed: Option<&Value>, extras: Extras) -> Result<Vec<u8>, RecordError> {
    let text = match (parsed, std::str::from_utf8(value)) {
        (Some(_), Ok(text)) => text,
        (None, Ok(text)) => serde_json::from_str::<IgnoredAny>(text).map(|_| text).map_err(|e| RecordError::invalid(format!("the value is not JSON (format.class is json): {e}")))?,
        (_, Err(e)) => return Err(RecordError::invalid(format!("the value is not JSON (format.class is json): it is not UTF-8 text ({e})"))),
    };
    let mut out = Vec::with_capacity(value.len() + 16);
    if !extras.key && !extras.headers {
        push_flat(&mut out, text);
        out.push(b'\n');
        return Ok(out);
    }
    out.extend_from_slice(b"{\"value\":");
    push_flat(&mut out, text);
    if extras.key {
        out.extend_from_slice(b",\"key\":");
        match record.key() {
            None => out.extend_from_slice(b"null"),
            Some(key) => match as_json(key) {
                Some(json) => push_flat(&mut out, json),
                None => write_json(&mut out, &Value::String(String::from_utf8_lossy(key).into_owned()))?,
            },
        }
    }
    if extras.headers {
        out.extend_from_slice(b",\"headers\":");
        write_json(&mut out, &headers(record))?;
    }
    out.extend_from_slice(b"}\n");
    Ok(out)
}

/// The record's headers as a JSON object of strings (a repeated name keeps its last value).
pub fn headers(record: &Record<'_>) -> Value {
    let map: Map<String, Value> = record.headers().map(|(k, v)| (k.to_owned(), Value::String(String::from_utf8_lossy(v).into_owned()))).collect();
    Value::Object(map)
}

fn write_json(out: &mut Vec<u8>, value: &Value) -> Result<(), RecordError> {
    serde_json::to_writer(out, value).map_err(|e| RecordError::fatal(format!("encoding JSON: {e}")))
}
