//! Compiles the test fixtures (`tests/components`, a wasm workspace of its own) once, when
//! this crate is built, so no test calls cargo (or spends its timed window compiling).

use std::fmt::Write as _;
use std::path::PathBuf;

/// `(constant name, library name)` of every fixture.
const FIXTURES: &[(&str, &str)] = &[("FAULTY", "faulty"), ("TAGGER", "tagger"), ("WRONG_WORLD", "wrong_world"), ("PARTITION_SINK", "partition_sink")];

fn main() {
    let root = turnpike_wasm_build::source_root();
    for input in ["tests/components", "sdk/rust", "sdk/batch-layout", "wit"] {
        let path = root.join(input);
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    let release = turnpike_wasm_build::build_workspace(&root.join("tests/components"), &root.join("target/test-components")).unwrap_or_else(|e| panic!("building the test fixtures failed: {e}"));
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut code = String::new();
    for (constant, lib) in FIXTURES {
        let built = turnpike_wasm_build::component(&release, lib).unwrap_or_else(|e| panic!("{e}"));
        let embedded = out.join(format!("{lib}.wasm"));
        std::fs::copy(&built, &embedded).unwrap_or_else(|e| panic!("copying {}: {e}", built.display()));
        writeln!(code, "/// `tests/components`: the `{lib}` component.\npub const {constant}: &[u8] = include_bytes!({:?});", embedded.display().to_string()).expect("write to String");
    }
    writeln!(code, "/// Every fixture by library name.\npub const ALL: &[(&str, &[u8])] = &[{}];", FIXTURES.iter().map(|(c, l)| format!("({l:?}, {c})")).collect::<Vec<_>>().join(", ")).expect("write to String");
    std::fs::write(out.join("fixtures.rs"), code).unwrap_or_else(|e| panic!("writing fixtures.rs: {e}"));
}
