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

/// `group.protocol: consumer` beside a setting only the classic protocol has, or a protocol
/// librdkafka does not know, would fail every consumer the host creates: `run --check`
/// refuses the file, naming the setting.
#[test]
fn run_check_refuses_kip_848_beside_a_classic_only_setting() -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(unique("kip848-check"));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("host.yaml");
    let connectors = "connectors:\n  - name: c\n    topics: [in]\n    output_topic: out\n    transforms:\n      - plugin: identity\n";
    std::fs::write(&path, format!("kafka:\n  bootstrap.servers: 127.0.0.1:9092\n  group.protocol: consumer\n  session.timeout.ms: 6000\n{connectors}"))?;
    let out = Command::new(turnpike_bin()).args(["run", "--check", "-c"]).arg(&path).output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("kafka: session.timeout.ms is a classic group protocol setting, but group.protocol is consumer"), "{stderr}");
    std::fs::write(&path, format!("kafka:\n  bootstrap.servers: 127.0.0.1:9092\n  group.protocol: kip848\n{connectors}"))?;
    let out = Command::new(turnpike_bin()).args(["run", "--check", "-c"]).arg(&path).output()?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(r#"kafka: group.protocol: "kip848" is not one of consumer, classic"#), "{stderr}");
    std::fs::write(&path, format!("kafka:\n  bootstrap.servers: 127.0.0.1:9092\n  group.protocol: classic\n  session.timeout.ms: 6000\n{connectors}"))?;
    let out = Command::new(turnpike_bin()).args(["run", "--check", "-c"]).arg(&path).output()?;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    Ok(())
}
