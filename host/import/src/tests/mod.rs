//! Real-world-shaped Kafka Connect configs (`tests/fixtures/`) through the importer: the
//! connector written, every option accounted for, no credential anywhere in the output, and
//! the result read back by the host's own parser and rules (`turnpike-config`), so "what the
//! admin API accepts" is checked rather than assumed.

mod input;
mod jdbc;
mod s3;
mod transforms;

use serde_json::Value;
use turnpike_config::{Connector, HostConfig, SandboxConfig};

use crate::{import, properties, Imported, InputFormat};

/// The input's options as Kafka Connect sees them (read independently of the importer for
/// JSON; through the tested `.properties` reader otherwise).
fn input_options(text: &str) -> Vec<(String, String)> {
    let as_text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
    match InputFormat::detect(text) {
        InputFormat::Json => {
            let doc: Value = serde_json::from_str(text).unwrap();
            let config = doc.get("config").unwrap_or(&doc);
            let mut out: Vec<(String, String)> = config.as_object().unwrap().iter().map(|(k, v)| (k.clone(), as_text(v))).collect();
            if let (Some(name), false) = (doc.get("name"), config.get("name").is_some()) {
                out.push(("name".into(), as_text(name)));
            }
            out
        }
        InputFormat::Properties => properties::parse(text).unwrap(),
    }
}

/// The checks every fixture passes: each option mapped or unmapped (never both, never
/// neither), no credential in any output, the YAML the same object as `connector`.
fn checked(text: &str) -> Imported {
    let imported = import(text).unwrap_or_else(|e| panic!("import failed: {e}"));
    for (key, _) in input_options(text) {
        let mapped = imported.mapped.iter().filter(|m| m.option == key).count();
        let unmapped = imported.unmapped.iter().filter(|u| u.option == key).count();
        assert_eq!(mapped + unmapped, 1, "{key}: mapped {mapped} times, unmapped {unmapped} times");
    }
    let credentials: Vec<String> =
        input_options(text).into_iter().filter(|(k, _)| k.contains("password") || k.contains("secret") || k.ends_with("access.key.id")).map(|(_, v)| v).filter(|v| !v.starts_with("${env:")).collect();
    let everything = format!("{}\n{}\n{:?}\n{:?}\n{:?}", imported.connector, imported.yaml, imported.unmapped, imported.notes, imported.mapped);
    for secret in &credentials {
        assert!(!everything.contains(secret.as_str()), "the credential {secret:?} is in the output");
    }
    let from_yaml: Value = serde_yaml_ng::from_str(&imported.yaml).expect("the YAML parses");
    assert_eq!(from_yaml, imported.connector, "the YAML is not the connector:\n{}", imported.yaml);
    // The header shows each one on one line (line breaks in a value become spaces).
    let one_line = |t: &str| t.chars().map(|c| if c.is_control() || c == '\u{2028}' || c == '\u{2029}' { ' ' } else { c }).collect::<String>();
    for u in &imported.unmapped {
        assert!(imported.yaml.contains(&format!("#   {}: {}", u.option, one_line(&u.reason))), "{} is not in the YAML header", u.option);
    }
    imported
}

/// The host's own checks of the connector, as `PUT /v1/connectors/NAME` runs them.
fn host_problems(connector: &Value) -> Vec<String> {
    let bytes = serde_json::to_vec(connector).unwrap();
    let config = HostConfig::parse_connector_json(&bytes, "imported").unwrap_or_else(|e| panic!("the host cannot parse it: {e}\n{connector:#}"));
    match Connector::validate(config, &SandboxConfig::default(), "connector") {
        Ok(_) => Vec::new(),
        Err(problems) => problems.into_iter().map(|p| p.key).collect(),
    }
}

fn unmapped_options(imported: &Imported) -> Vec<&str> {
    imported.unmapped.iter().map(|u| u.option.as_str()).collect()
}

fn reason<'a>(imported: &'a Imported, option: &str) -> &'a str {
    imported.unmapped.iter().find(|u| u.option == option).map_or_else(|| panic!("{option} is not unmapped"), |u| u.reason.as_str())
}

fn has_note(imported: &Imported, words: &str) -> bool {
    imported.notes.iter().any(|n| n.contains(words))
}
