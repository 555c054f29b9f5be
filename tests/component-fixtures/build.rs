//! Compiles the test fixtures (`tests/components`, a wasm workspace of its own) once, when
//! this crate is built, so no test calls cargo (or spends its timed window compiling).

use std::fmt::Write as _;

/// `(constant name, library name)` of every fixture.
const FIXTURES: &[(&str, &str)] = &[("FAULTY", "faulty"), ("TAGGER", "tagger"), ("WRONG_WORLD", "wrong_world"), ("PARTITION_SINK", "partition_sink"), ("STORE_PROBE", "store_probe"), ("HALF_FILTER", "half_filter")];

fn main() {
    let libs: Vec<&str> = FIXTURES.iter().map(|(_, lib)| *lib).collect();
    let embedded = turnpike_wasm_build::build_for_embedding("tests/components", "target/test-components", &libs).unwrap_or_else(|e| panic!("building the test fixtures failed: {e}"));
    let mut code = String::new();
    for ((constant, lib), path) in FIXTURES.iter().zip(&embedded) {
        writeln!(code, "/// `tests/components`: the `{lib}` component.\npub const {constant}: &[u8] = include_bytes!({:?});", path.display().to_string()).expect("write to String");
    }
    writeln!(code, "/// Every fixture by library name.\npub const ALL: &[(&str, &[u8])] = &[{}];", FIXTURES.iter().map(|(c, l)| format!("({l:?}, {c})")).collect::<Vec<_>>().join(", ")).expect("write to String");
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("fixtures.rs"), code).unwrap_or_else(|e| panic!("writing fixtures.rs: {e}"));
}
