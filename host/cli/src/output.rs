//! Printing API answers: tables for people, JSON for scripts.

use clap::ValueEnum;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use serde_json::Value;

/// How to print answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns.
    Table,
    /// The API's JSON, pretty-printed.
    Json,
}

/// Prints `rows` as a table with `columns` (each a header and a JSON pointer into a row), or
/// `whole` as JSON.
pub fn print(format: Format, whole: &Value, rows: &[Value], columns: &[(&str, &str)]) {
    match format {
        Format::Json => println!("{}", serde_json::to_string_pretty(whole).unwrap_or_default()),
        Format::Table => {
            let mut table = Table::new();
            table.load_preset(UTF8_FULL_CONDENSED);
            table.set_header(columns.iter().map(|(h, _)| *h));
            for row in rows {
                table.add_row(columns.iter().map(|(_, pointer)| cell(row.pointer(pointer).unwrap_or(&Value::Null))));
            }
            println!("{table}");
        }
    }
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(cell).collect::<Vec<_>>().join(", "),
        Value::Object(map) if map.is_empty() => "-".into(),
        Value::Object(map) if map.contains_key("class") => format!("{}: {}", cell(&map["class"]), cell(map.get("message").unwrap_or(&Value::Null))),
        Value::Object(map) => map.iter().map(|(k, v)| format!("{k}={}", cell(v))).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}
