//! Reading the text: Kafka Connect's REST JSON (`{"name": …, "config": {…}}`, the flat
//! config map of `PUT /connectors/NAME/config`, or a `GET /connectors/NAME` answer) or a
//! `.properties` file, into one list of options.

use serde::Serialize;
use serde_json::Value;

use crate::{properties, ImportError};

/// The kind of text a config was given as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputFormat {
    /// The JSON of Kafka Connect's REST API.
    Json,
    /// A Java `.properties` file (`connect-standalone` style).
    Properties,
}

impl InputFormat {
    /// `Json` when the text starts with `{` (after whitespace), else `Properties`.
    pub fn detect(text: &str) -> Self {
        if text.trim_start_matches('\u{feff}').trim_start().starts_with('{') {
            Self::Json
        } else {
            Self::Properties
        }
    }

    /// How the YAML header names it.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Json => "Kafka Connect REST API JSON",
            Self::Properties => "Kafka Connect .properties file",
        }
    }
}

/// The options of the config, in input order, each key once (the last value wins, as in
/// Kafka Connect), and what reading them noticed.
pub(crate) struct Input {
    pub(crate) entries: Vec<(String, String)>,
    pub(crate) notes: Vec<String>,
}

pub(crate) fn read(text: &str, format: InputFormat) -> Result<Input, ImportError> {
    let mut notes = Vec::new();
    let raw = match format {
        InputFormat::Json => json_entries(text, &mut notes)?,
        InputFormat::Properties => properties::parse(text)?,
    };
    let mut entries: Vec<(String, String)> = Vec::with_capacity(raw.len());
    for (key, value) in raw {
        match entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => {
                notes.push(format!("`{key}` is given more than once; the last value is used, as Kafka Connect does"));
                slot.1 = value;
            }
            None => entries.push((key, value)),
        }
    }
    if entries.is_empty() {
        return Err(ImportError::Empty);
    }
    Ok(Input { entries, notes })
}

fn json_entries(text: &str, notes: &mut Vec<String>) -> Result<Vec<(String, String)>, ImportError> {
    let text = text.trim_start_matches('\u{feff}');
    let document: Value = serde_json::from_str(text).map_err(|e| {
        let message = e.to_string();
        let message = message.rfind(" at line ").map_or(message.as_str(), |i| &message[..i]).to_owned();
        ImportError::Json { line: e.line(), column: e.column(), message }
    })?;
    let Value::Object(top) = &document else {
        return Err(ImportError::NotAnObject { what: "the JSON", found: kind(&document) });
    };
    // Read again keeping the document's key order (serde_json's map is sorted unless a crate
    // of the build turns on `preserve_order`), so options are listed as the user wrote them.
    let ordered = |text: &str| serde_json::from_str::<Ordered>(text).map(|o| o.0).unwrap_or_default();
    let Some(config) = top.get("config") else {
        // The flat map of `PUT /connectors/NAME/config`.
        return ordered(text).iter().map(|(k, v)| Ok((k.clone(), text_of(k, v)?))).collect();
    };
    let Value::Object(config) = config else {
        return Err(ImportError::NotAnObject { what: "`config`", found: kind(config) });
    };
    let config_in_order = serde_json::from_str::<Body>(text).map(|b| b.config.0).unwrap_or_default();
    let mut entries: Vec<(String, String)> = Vec::new();
    for (key, value) in &ordered(text) {
        match key.as_str() {
            "config" => {}
            // `name` beside `config`: the connector's name, unless `config` names it too.
            "name" if !config.contains_key("name") => entries.push(("name".to_owned(), text_of(key, value)?)),
            "name" => {
                let outer = text_of(key, value)?;
                let inner = config.get("name").map(|v| text_of("name", v)).transpose()?.unwrap_or_default();
                if outer != inner {
                    notes.push(format!("the body names the connector {outer:?} but its config says {inner:?}; Kafka Connect refuses that, and {inner:?} is used here"));
                }
            }
            "tasks" | "type" => notes.push(format!("`{key}` in the JSON is Kafka Connect's status of a running connector (a GET answer), not configuration; it is ignored")),
            other => notes.push(format!("`{other}` beside `config` is not part of a Kafka Connect connector body; it is ignored")),
        }
    }
    for (key, value) in &config_in_order {
        entries.push((key.clone(), text_of(key, value)?));
    }
    Ok(entries)
}

/// A JSON object's entries in document order.
struct Ordered(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for Ordered {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = Ordered;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(Ordered(entries))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// `{"config": {…}, …}` with the config's entries in document order.
#[derive(serde::Deserialize)]
struct Body {
    config: Ordered,
}

/// A config value as the text Kafka Connect would see: strings as they are, numbers and
/// booleans as written, null as empty, a list of those as comma-separated text.
fn text_of(key: &str, value: &Value) -> Result<String, ImportError> {
    Ok(match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Array(items) => items.iter().map(|v| if v.is_array() || v.is_object() { Err(nested(key)) } else { text_of(key, v) }).collect::<Result<Vec<_>, _>>()?.join(","),
        Value::Object(_) => return Err(nested(key)),
    })
}

fn nested(key: &str) -> ImportError {
    ImportError::NestedValue { key: key.to_owned() }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
