//! The connector as YAML for `turnpike connector apply --file`: a comment block naming where
//! it came from, every option not carried over and the notes, then the connector with its
//! keys in the order a person writes them (the same text whatever order the JSON map keeps).

use serde_json::Value;
use serde_yaml_ng::{Mapping, Value as Yaml};

use crate::{InputFormat, Unmapped};

/// Key order per kind of mapping; keys not listed follow, sorted.
const TOP: &[&str] = &["name", "topics", "output_topic", "source", "transforms", "sink", "routes", "storage", "database", "start_from", "tasks", "group_id", "errors"];
const STEP: &[&str] = &["plugin", "poll_interval_ms", "flush_interval_ms", "config", "predicate"];
const STORAGE: &[&str] = &["bucket", "prefix", "region", "endpoint", "path_style", "credentials", "part_size_mib", "max_buffered_mib"];
const DATABASE: &[&str] = &["url", "user", "password", "tables", "tls", "ca_file", "statement_timeout_ms", "max_rows"];
const ERRORS: &[&str] = &["tolerance", "dead_letter_topic", "retry_timeout_ms", "retry_max_delay_ms"];
const PREDICATE: &[&str] = &["topic_matches", "has_header", "tombstone", "json_path", "negate"];
const CREDENTIALS: &[&str] = &["access_key_id", "secret_access_key", "session_token"];
const PLUGIN_CONFIG: &[&str] = &["on", "mode", "query"];

pub(crate) struct Header<'a> {
    pub(crate) format: InputFormat,
    pub(crate) origin: Option<&'a str>,
    pub(crate) class: Option<&'a str>,
    pub(crate) unmapped: &'a [Unmapped],
    pub(crate) notes: &'a [String],
}

pub(crate) fn yaml(connector: &Value, header: &Header<'_>) -> String {
    let mut text = comment(header);
    // A mapping of strings, numbers, booleans and lists always serializes.
    text.push_str(&serde_yaml_ng::to_string(&ordered(connector, Kind::Top)).unwrap_or_default());
    text
}

fn comment(h: &Header<'_>) -> String {
    let from = match h.origin {
        Some(origin) => format!("{} ({origin})", h.format.describe()),
        None => h.format.describe().to_owned(),
    };
    let mut lines = vec![format!("Turnpike connector imported from a {from} by turnpike-import.")];
    if let Some(class) = h.class {
        lines.push(format!("Kafka Connect class: {class}"));
    }
    lines.push("Review it, then: turnpike connector apply --file <this file>".to_owned());
    lines.push(String::new());
    if h.unmapped.is_empty() {
        lines.push("Every Kafka Connect option was carried over.".to_owned());
    } else {
        lines.push(format!("Kafka Connect options not carried over ({}):", h.unmapped.len()));
        lines.extend(h.unmapped.iter().map(|u| format!("  {}: {}", u.option, u.reason)));
    }
    if !h.notes.is_empty() {
        lines.push(String::new());
        lines.push("Notes:".to_owned());
        lines.extend(h.notes.iter().map(|n| format!("  - {n}")));
    }
    lines.iter().map(|l| if l.is_empty() { "#\n".to_owned() } else { format!("# {}\n", one_line(l)) }).collect()
}

/// `text` without control characters or Unicode line separators (a line break in an
/// option's value would end the comment and start YAML).
fn one_line(text: &str) -> String {
    text.chars().map(|c| if c.is_control() || c == '\u{2028}' || c == '\u{2029}' { ' ' } else { c }).collect()
}

/// Which mapping a value is, for its key order.
#[derive(Clone, Copy)]
enum Kind {
    Top,
    Step,
    Storage,
    Database,
    Errors,
    Predicate,
    Credentials,
    PluginConfig,
    Other,
}

impl Kind {
    fn order(self) -> &'static [&'static str] {
        match self {
            Kind::Top => TOP,
            Kind::Step => STEP,
            Kind::Storage => STORAGE,
            Kind::Database => DATABASE,
            Kind::Errors => ERRORS,
            Kind::Predicate => PREDICATE,
            Kind::Credentials => CREDENTIALS,
            Kind::PluginConfig => PLUGIN_CONFIG,
            Kind::Other => &[],
        }
    }

    fn child(self, key: &str) -> Kind {
        match (self, key) {
            (Kind::Top, "source" | "sink" | "transforms") => Kind::Step,
            (Kind::Top, "storage") => Kind::Storage,
            (Kind::Top, "database") => Kind::Database,
            (Kind::Top, "errors") => Kind::Errors,
            (Kind::Step, "predicate") => Kind::Predicate,
            (Kind::Step, "config") => Kind::PluginConfig,
            (Kind::Storage, "credentials") => Kind::Credentials,
            _ => Kind::Other,
        }
    }
}

fn ordered(value: &Value, kind: Kind) -> Yaml {
    match value {
        Value::Object(map) => {
            let order = kind.order();
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by_key(|k| (order.iter().position(|o| o == k).unwrap_or(usize::MAX), (*k).clone()));
            let mut out = Mapping::new();
            for key in keys {
                out.insert(Yaml::String(key.clone()), ordered(&map[key], kind.child(key)));
            }
            Yaml::Mapping(out)
        }
        // Items of a list share the list's kind (transform steps).
        Value::Array(items) => Yaml::Sequence(items.iter().map(|v| ordered(v, kind)).collect()),
        Value::String(s) => Yaml::String(s.clone()),
        Value::Bool(b) => Yaml::Bool(*b),
        Value::Null => Yaml::Null,
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Yaml::Number(i.into())
            } else if let Some(u) = n.as_u64() {
                Yaml::Number(u.into())
            } else {
                Yaml::Number(n.as_f64().unwrap_or_default().into())
            }
        }
    }
}
