//! (c) Plugin and record errors surface in the connector's status, naming the key or the
//! record. (Configuration files refused by `run --check`: `config_golden.rs`, from the golden
//! files in tests/fixtures/config-errors.)

use std::time::Duration;

use turnpike_tests::*;

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
