//! The configuration-error golden files (`tests/fixtures/config-errors`, see its README)
//! through the binary: `turnpike run --check -c NAME.yaml` exits 2 and prints every expected
//! problem, or exits 0 for a valid file. The loader's own test reads the same files.

use std::path::PathBuf;
use std::process::Command;

use turnpike_tests::*;

#[test]
fn run_check_reports_every_golden_problem() -> anyhow::Result<()> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/config-errors");
    let mut checked = 0;
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        if path.extension().is_none_or(|x| x != "yaml") {
            continue;
        }
        let expected = std::fs::read_to_string(path.with_extension("expected"))?;
        let expected: Vec<&str> = expected.lines().filter(|l| !l.trim().is_empty()).collect();
        let out = Command::new(turnpike_bin()).args(["run", "--check", "-c"]).arg(&path).output()?;
        let stderr = String::from_utf8_lossy(&out.stderr);
        let want_code = if expected.is_empty() { 0 } else { 2 };
        let name = path.file_name().unwrap_or_default().to_string_lossy().into_owned();
        if out.status.code() != Some(want_code) {
            failures.push(format!("{name}: exit {:?}, wanted {want_code}; stderr:\n{stderr}", out.status.code()));
        }
        for line in expected.iter().filter(|l| !stderr.contains(**l)) {
            failures.push(format!("{name}: stderr lacks {line:?}; stderr:\n{stderr}"));
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} golden cases in {}", dir.display());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    Ok(())
}
