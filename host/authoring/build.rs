//! Embeds folders of the checkout into the crate, file by file: the WIT contract, the three
//! SDKs (written into every project's `.turnpike/` before a build, and vendored into new
//! projects) and the example plugins, which are the templates of `turnpike plugin new`.
//! Generated, so a file added to one of these folders is embedded without a list to keep up.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Folders (relative to the checkout) and the name of the table each becomes.
const TREES: &[(&str, &str)] = &[
    ("WIT", "wit"),
    ("SDK_RUST", "sdk/rust"),
    ("SDK_BATCH_LAYOUT", "sdk/batch-layout"),
    ("SDK_PYTHON", "sdk/python"),
    ("SDK_JS", "sdk/js"),
    ("TEMPLATE_RUST_TRANSFORM", "examples/plugins/rust-redact"),
    ("TEMPLATE_RUST_SOURCE", "examples/plugins/rust-sequence-source"),
    ("TEMPLATE_RUST_SINK", "examples/plugins/rust-webhook-sink"),
    ("TEMPLATE_PYTHON_TRANSFORM", "examples/plugins/python-redact"),
    ("TEMPLATE_PYTHON_SOURCE", "examples/plugins/python-sequence-source"),
    ("TEMPLATE_PYTHON_SINK", "examples/plugins/python-webhook-sink"),
    ("TEMPLATE_JS_TRANSFORM", "examples/plugins/js-redact"),
    ("TEMPLATE_JS_SOURCE", "examples/plugins/js-sequence-source"),
    ("TEMPLATE_JS_SINK", "examples/plugins/js-webhook-sink"),
];

/// Generated or local-only entries, never embedded.
const SKIPPED: &[&str] = &["target", "node_modules", ".turnpike", "__pycache__", "Cargo.lock", "package-lock.json", ".venv"];
/// Also skipped in the SDKs: their own test suites (a template's tests are part of it).
const SDK_ONLY_SKIPPED: &[&str] = &["tests", "test", "build"];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo")).join("../..");
    let mut out = String::new();
    for (table, dir) in TREES {
        let base = root.join(dir);
        let mut files = Vec::new();
        walk(&base, &base, table.starts_with("SDK_"), &mut files);
        files.sort();
        writeln!(out, "pub(crate) const {table}: &[(&str, &str)] = &[").unwrap();
        for (rel, abs) in files {
            writeln!(out, "    ({rel:?}, include_str!({:?})),", abs.display().to_string()).unwrap();
        }
        writeln!(out, "];").unwrap();
    }
    let dest = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("embedded_trees.rs");
    std::fs::write(dest, out).expect("OUT_DIR is writable");
}

/// Every regular text file under `dir`, as (path relative to `base` with `/`, absolute path).
/// Symbolic links are skipped: an example's link to the SDK is replaced by a copy in new projects.
fn walk(base: &Path, dir: &Path, sdk: bool, files: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if SKIPPED.contains(&name.as_str()) || (sdk && SDK_ONLY_SKIPPED.contains(&name.as_str())) || meta.file_type().is_symlink() || name.ends_with(".wasm") || name.ends_with(".pyc") || name.ends_with(".egg-info") {
            continue;
        }
        if meta.is_dir() {
            walk(base, &path, sdk, files);
        } else if std::fs::read_to_string(&path).is_ok() {
            // Each embedded file, not its folder: cargo scans a folder recursively, and builds and
            // tests write into these (node_modules, .turnpike, *.wasm), which would rebuild the
            // CLI for nothing. A file added to one of these folders is picked up once this script
            // runs again (any change to an embedded file or to this script).
            println!("cargo:rerun-if-changed={}", path.display());
            let rel = path.strip_prefix(base).expect("under base").to_string_lossy().replace('\\', "/");
            files.push((rel, path.canonicalize().expect("exists")));
        }
    }
}
