//! Compiles the built-in plugins (`plugins/`, a wasm workspace of its own) for wasm32-wasip2
//! and writes `builtins.rs` into OUT_DIR, which embeds each component with `include_bytes!`.
//! So the host binary carries its plugins: at run time nothing calls cargo or reads the
//! checkout.

use std::fmt::Write as _;

/// Every built-in plugin: the name users refer to it by, its crate's library name (the
/// `.wasm` file stem), a one-line description and, for a component holding several
/// transforms, the one this name runs (see `turnpike_runtime::Plugin::preset`).
const BUILTINS: &[(&str, &str, &str, Option<&str>)] = &[
    ("identity", "identity", "passes records through unchanged", None),
    ("pii-mask", "pii_mask", "masks personal data in JSON values", None),
    ("datagen", "datagen", "source: JSON records from a field spec", None),
    ("http-source", "http_source", "source: polls a JSON API", None),
    ("sql-source", "sql_source", "source: streams database tables (PostgreSQL, MySQL, MariaDB), JDBC-source modes", None),
    ("http-sink", "http_sink", "sink: sends records to an HTTP endpoint", None),
    ("s3-sink", "s3_sink", "sink: writes topics to S3 objects (JSON lines, bytes, Parquet)", None),
    ("cast", CONNECT, "casts fields or the whole key/value to another type (Kafka Connect Cast)", Some("cast")),
    ("drop-headers", CONNECT, "removes headers by name or wildcard (Kafka Connect DropHeaders)", Some("drop-headers")),
    ("extract-field", CONNECT, "replaces the key/value with one of its fields (Kafka Connect ExtractField)", Some("extract-field")),
    ("filter", CONNECT, "drops the records its predicate selects (Kafka Connect Filter)", Some("filter")),
    ("flatten", CONNECT, "flattens nested objects into dotted keys (Kafka Connect Flatten)", Some("flatten")),
    ("header-from", CONNECT, "copies or moves fields into headers (Kafka Connect HeaderFrom)", Some("header-from")),
    ("hoist-field", CONNECT, "wraps the key/value in an object under a field (Kafka Connect HoistField)", Some("hoist-field")),
    ("insert-field", CONNECT, "adds the topic, partition, offset, timestamp or a constant as fields (Kafka Connect InsertField)", Some("insert-field")),
    ("insert-header", CONNECT, "adds a header with a literal value (Kafka Connect InsertHeader)", Some("insert-header")),
    ("mask-field", CONNECT, "replaces fields with an empty value or a literal (Kafka Connect MaskField)", Some("mask-field")),
    ("regex-router", CONNECT, "renames the topic with a regular expression (Kafka Connect RegexRouter)", Some("regex-router")),
    ("replace-field", CONNECT, "keeps, drops or renames fields (Kafka Connect ReplaceField)", Some("replace-field")),
    ("set-schema-metadata", CONNECT, "sets schema name and version headers (Kafka Connect SetSchemaMetadata)", Some("set-schema-metadata")),
    ("timestamp-converter", CONNECT, "converts timestamps between text, Unix time, date and time (Kafka Connect TimestampConverter)", Some("timestamp-converter")),
    ("timestamp-router", CONNECT, "routes to a topic named after the record's timestamp (Kafka Connect TimestampRouter)", Some("timestamp-router")),
    ("value-to-key", CONNECT, "sets the key from fields of the value (Kafka Connect ValueToKey)", Some("value-to-key")),
];

/// The component that holds every Kafka Connect transform.
const CONNECT: &str = "connect_transforms";

fn main() {
    let mut libs: Vec<&str> = Vec::new();
    for (_, lib, _, _) in BUILTINS {
        if !libs.contains(lib) {
            libs.push(lib);
        }
    }
    // The plugins' own target directory inside the one `target/`, shared by every profile of
    // the host, so a debug and a release build compile the plugins once.
    let embedded = turnpike_wasm_build::build_for_embedding("plugins", "target/plugins", &libs).unwrap_or_else(|e| panic!("building the built-in plugins failed: {e}"));
    // One static per component, so a component serving several names is embedded once.
    let mut code = String::new();
    for (lib, path) in libs.iter().zip(&embedded) {
        writeln!(code, "static {}: &[u8] = include_bytes!({:?});", lib.to_uppercase(), path.display().to_string()).expect("write to String");
    }
    code.push_str("/// Every built-in plugin, its component embedded.\npub const BUILTINS: &[Builtin] = &[\n");
    for (name, lib, description, preset) in BUILTINS {
        writeln!(code, "    Builtin {{ name: {name:?}, description: {description:?}, wasm: {}, preset: {preset:?} }},", lib.to_uppercase()).expect("write to String");
    }
    code.push_str("];\n");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("builtins.rs"), code).unwrap_or_else(|e| panic!("writing builtins.rs: {e}"));
}
