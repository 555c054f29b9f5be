//! Compiles the built-in plugins (`plugins/`, a wasm workspace of its own) for wasm32-wasip2
//! and writes `builtins.rs` into OUT_DIR, which embeds each component with `include_bytes!`.
//! So the host binary carries its plugins: at run time nothing calls cargo or reads the
//! checkout.

use std::fmt::Write as _;

/// Every built-in plugin: the name users refer to it by, its crate's library name (the
/// `.wasm` file stem) and a one-line description.
const BUILTINS: &[(&str, &str, &str)] = &[
    ("identity", "identity", "passes records through unchanged"),
    ("pii-mask", "pii_mask", "masks personal data in JSON values"),
    ("datagen", "datagen", "source: JSON records from a field spec"),
    ("http-source", "http_source", "source: polls a JSON API"),
    ("sql-source", "sql_source", "source: streams database tables (PostgreSQL, MySQL, MariaDB), JDBC-source modes"),
    ("http-sink", "http_sink", "sink: sends records to an HTTP endpoint"),
    ("s3-sink", "s3_sink", "sink: writes topics to S3 objects (JSON lines, bytes, Parquet)"),
];

fn main() {
    let libs: Vec<&str> = BUILTINS.iter().map(|(_, lib, _)| *lib).collect();
    // The plugins' own target directory inside the one `target/`, shared by every profile of
    // the host, so a debug and a release build compile the plugins once.
    let embedded = turnpike_wasm_build::build_for_embedding("plugins", "target/plugins", &libs).unwrap_or_else(|e| panic!("building the built-in plugins failed: {e}"));
    let mut code = String::from("/// Every built-in plugin, its component embedded.\npub const BUILTINS: &[Builtin] = &[\n");
    for ((name, _, description), path) in BUILTINS.iter().zip(&embedded) {
        writeln!(code, "    Builtin {{ name: {name:?}, description: {description:?}, wasm: include_bytes!({:?}) }},", path.display().to_string()).expect("write to String");
    }
    code.push_str("];\n");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("builtins.rs"), code).unwrap_or_else(|e| panic!("writing builtins.rs: {e}"));
}
