//! The configuration-error golden files (`tests/fixtures/config-errors`): each `NAME.yaml`
//! is a host config file, `NAME.expected` the problems the loader must report for it, one per
//! line, in any order (empty: the file is valid). The CLI test (`turnpike run --check`) reads
//! the same files. `TURNPIKE_BLESS=1` rewrites the expected files from what the loader says
//! now, for review in the diff.

use std::collections::BTreeSet;
use std::path::PathBuf;

use turnpike_config::{ConfigError, HostConfig};

fn cases() -> Vec<(String, PathBuf)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/config-errors");
    let mut cases: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .map(|p| (p.file_stem().unwrap_or_default().to_string_lossy().into_owned(), p))
        .collect();
    cases.sort();
    cases
}

/// What the loader reports, one problem per line.
fn reported(name: &str, text: &str) -> BTreeSet<String> {
    match HostConfig::from_yaml(text, &format!("{name}.yaml")) {
        Ok(_) => BTreeSet::new(),
        Err(ConfigError::Syntax { message, .. }) => BTreeSet::from([message]),
        Err(ConfigError::Invalid { problems, .. }) => problems.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn every_golden_config_reports_exactly_its_expected_problems() {
    let cases = cases();
    assert!(cases.len() >= 10, "the golden folder lost its cases: {cases:?}");
    let bless = std::env::var_os("TURNPIKE_BLESS").is_some();
    let mut mismatches = Vec::new();
    for (name, path) in &cases {
        let text = std::fs::read_to_string(path).expect("read case");
        let got = reported(name, &text);
        let expected_path = path.with_extension("expected");
        if bless {
            let body: String = got.iter().map(|l| format!("{l}\n")).collect();
            std::fs::write(&expected_path, body).expect("write expected");
            continue;
        }
        let expected_text = std::fs::read_to_string(&expected_path).unwrap_or_else(|e| panic!("{}: {e} (run with TURNPIKE_BLESS=1 to create it)", expected_path.display()));
        let expected: BTreeSet<String> = expected_text.lines().filter(|l| !l.trim().is_empty()).map(str::to_owned).collect();
        if got != expected {
            let missing: Vec<_> = expected.difference(&got).collect();
            let extra: Vec<_> = got.difference(&expected).collect();
            mismatches.push(format!("{name}: missing {missing:#?}, unexpected {extra:#?}"));
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
