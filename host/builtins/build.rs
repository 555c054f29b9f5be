//! Compiles the built-in plugins (`plugins/`, a wasm workspace of its own) for wasm32-wasip2
//! and writes `builtins.rs` into OUT_DIR, which embeds each component with `include_bytes!`.
//! So the host binary carries its plugins: at run time nothing calls cargo or reads the
//! checkout.

use std::fmt::Write as _;
use std::path::PathBuf;

/// Every built-in plugin: the name users refer to it by, its crate's library name (the
/// `.wasm` file stem) and a one-line description.
const BUILTINS: &[(&str, &str, &str)] = &[
    ("identity", "identity", "passes records through unchanged"),
    ("pii-mask", "pii_mask", "masks personal data in JSON values"),
    ("datagen", "datagen", "source: JSON records from a field spec"),
    ("http-source", "http_source", "source: polls a JSON API"),
    ("http-sink", "http_sink", "sink: sends records to an HTTP endpoint"),
];

fn main() {
    let root = turnpike_wasm_build::source_root();
    // The plugins, the SDK they use and the contract: a change to any of them rebuilds.
    for input in ["plugins", "sdk/rust", "sdk/batch-layout", "wit"] {
        let path = root.join(input);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    // The plugins' own target directory inside the one `target/`, shared by every profile of
    // the host so a debug and a release build compile the plugins once.
    let target = root.join("target").join("plugins");
    let release = turnpike_wasm_build::build_workspace(&root.join("plugins"), &target).unwrap_or_else(|e| fail(&e));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut code = String::from("/// Every built-in plugin, its component embedded.\npub const BUILTINS: &[Builtin] = &[\n");
    for (name, lib, description) in BUILTINS {
        let built = turnpike_wasm_build::component(&release, lib).unwrap_or_else(|e| fail(&e));
        // Copied so the binary embeds the bytes of this build even if the shared target
        // directory changes later.
        let embedded = out.join(format!("{lib}.wasm"));
        std::fs::copy(&built, &embedded).unwrap_or_else(|e| fail(&format!("copying {}: {e}", built.display())));
        writeln!(code, "    Builtin {{ name: {name:?}, description: {description:?}, wasm: include_bytes!({:?}) }},", embedded.display().to_string()).expect("write to String");
    }
    code.push_str("];\n");
    std::fs::write(out.join("builtins.rs"), code).unwrap_or_else(|e| fail(&format!("writing builtins.rs: {e}")));
}

fn fail(error: &dyn std::fmt::Display) -> ! {
    panic!("building the built-in plugins failed: {error}");
}
