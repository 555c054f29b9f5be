//! (c) Bad configuration is refused with a message naming the key; plugin and record errors
//! surface in the connector's status.

use std::process::Command;
use std::time::Duration;

use turnpike_tests::*;

fn run_with(config: &str) -> (i32, String) {
    let dir = std::env::temp_dir().join(unique("turnpike-bad"));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.yaml");
    std::fs::write(&path, config).unwrap();
    let out = Command::new(turnpike_bin()).args(["run", "--check", "-c"]).arg(&path).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

const GOOD: &str = "kafka:\n  bootstrap.servers: 127.0.0.1:9092\nconnectors:\n  - name: c\n    topics: [in]\n    output_topic: out\n    transforms:\n      - plugin: identity\n";

#[test]
fn the_good_base_config_passes_the_check() {
    assert_eq!(run_with(GOOD).0, 0);
}

#[test]
fn an_unknown_key_is_refused_naming_the_key_and_line() {
    let (code, err) = run_with(&GOOD.replace("output_topic", "output_topik"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("output_topik"), "{err}");
    assert!(err.contains("line 6"), "{err}");
}

#[test]
fn an_out_of_range_value_is_refused_naming_the_key_and_line() {
    let config = GOOD.replace("topics: [in]", "topics: [in]\n    limits: { memory_mib: 999999 }");
    let (code, err) = run_with(&config);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("connectors[0].limits.memory_mib: 999999 is out of range 1..=4096"), "{err}");
    assert!(err.contains("line 6"), "{err}");
}

#[test]
fn rule_violations_are_all_reported_naming_every_key() {
    let config = GOOD.replace("bootstrap.servers: 127.0.0.1:9092", "client.id: x").replace("output_topic: out", "output_topic: in");
    let (code, err) = run_with(&config);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("kafka.bootstrap.servers"), "{err}");
    assert!(err.contains("connectors[0].output_topic"), "{err}");
}

#[test]
fn a_bad_topic_name_is_refused_with_the_rule() {
    let (code, err) = run_with(&GOOD.replace("[in]", "[\"in put\"]"));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("connectors[0].topics") && err.contains("topic name \"in put\" is not valid"), "{err}");
    assert!(err.contains("line 5"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_config_error_fails_the_connector_naming_the_key() -> anyhow::Result<()> {
    let topic = unique("in");
    create_topic(&topic, 1).await?;
    let connector = format!("- name: badcfg\n  topics: [{topic}]\n  output_topic: {topic}-out\n  transforms:\n    - plugin: pii-mask\n      config: {{ fields: [\"a..b\"] }}\n");
    let dir = std::env::temp_dir().join(unique("turnpike-badcfg"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    let status = host.wait_state("badcfg", "FAILED", Duration::from_secs(120))?;
    assert_eq!(status["error"]["class"], "plugin_config");
    let message = status["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("fields[0]") && message.contains("empty segment"), "{message}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_record_error_fails_a_connector_that_tolerates_none() -> anyhow::Result<()> {
    let topic = unique("in");
    create_topic(&topic, 1).await?;
    let records = vec![("k1".to_owned(), r#"{"email":"a@b.c"}"#.to_owned()), ("k2".to_owned(), "not json".to_owned())];
    produce(&producer()?, &topic, &records).await?;
    let connector = format!("- name: strict\n  topics: [{topic}]\n  output_topic: {topic}-out\n  transforms:\n    - plugin: pii-mask\n      config: {{ fields: [email] }}\n");
    let dir = std::env::temp_dir().join(unique("turnpike-strict"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    let status = host.wait_state("strict", "FAILED", Duration::from_secs(120))?;
    assert_eq!(status["error"]["class"], "record_error");
    let message = status["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not JSON") && message.contains(&format!("{topic}/0@1")), "{message}");
    Ok(())
}
