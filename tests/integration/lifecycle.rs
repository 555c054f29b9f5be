//! Connector lifecycle over the admin API, on real Kafka: pause stops consuming, stop
//! releases everything, and neither loses a record.

use std::time::Duration;

use serde_json::json;
use turnpike_tests::*;

fn records(from: usize, to: usize) -> Vec<(String, String)> {
    (from..to).map(|i| (format!("k{i}"), format!(r#"{{"email":"u{i}@x.io"}}"#))).collect()
}

fn wait(host: &HostProcess, name: &str, what: &str, ok: impl Fn(&serde_json::Value) -> bool) -> anyhow::Result<serde_json::Value> {
    let found = wait_until(&format!("{name} {what}"), Duration::from_secs(60), || {
        let (_, status) = host.get(&format!("/v1/connectors/{name}"))?;
        Ok(ok(&status).then_some(status))
    });
    anyhow::Context::with_context(found, || format!("log:\n{}", host.log_text()))
}

#[tokio::test(flavor = "multi_thread")]
async fn pause_resume_stop_over_the_api_lose_nothing() -> anyhow::Result<()> {
    let (topic_in, topic_out) = (unique("life-in"), unique("life-out"));
    create_topic(&topic_in, 2).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-life"));
    let config = bare_host_config();
    let host = HostProcess::start(&dir, &config)?;
    wait_healthy(&host)?;
    let connector = json!({
        "topics": [topic_in], "output_topic": topic_out,
        "batch": { "max_wait_ms": 5 },
        "transforms": [{ "plugin": "pii-mask", "config": { "fields": ["email"] } }]
    });
    let (status, body) = http_json(&host.admin, "PUT", "/v1/connectors/life", &connector)?;
    anyhow::ensure!(status == 201, "created: {status} {body}");
    // The same connector, never paused: once it has read what was produced during the pause,
    // so would `life` have, had the pause not held it.
    let mut control = connector.clone();
    control["output_topic"] = json!(format!("{topic_out}-control"));
    assert_eq!(http_json(&host.admin, "PUT", "/v1/connectors/control", &control)?.0, 201);
    let producer = producer()?;
    produce(&producer, &topic_in, &records(0, 100)).await?;
    wait(&host, "life", "through the first 100", |s| s["records_out"] == 100)?;

    http_json(&host.admin, "POST", "/v1/connectors/life/pause", &json!({}))?;
    wait(&host, "life", "paused", |s| s["state"] == "PAUSED")?;
    produce(&producer, &topic_in, &records(100, 200)).await?;
    wait(&host, "control", "through 200, unpaused", |s| s["records_in"] == 200)?;
    let paused = host.get("/v1/connectors/life")?.1;
    assert_eq!((&paused["state"], &paused["records_in"]), (&json!("PAUSED"), &json!(100)), "nothing consumed while paused");
    http_json(&host.admin, "POST", "/v1/connectors/life/resume", &json!({}))?;
    wait(&host, "life", "through 200 after resuming", |s| s["records_out"] == 200 && s["state"] == "RUNNING")?;

    http_json(&host.admin, "POST", "/v1/connectors/life/stop", &json!({}))?;
    wait(&host, "life", "stopped", |s| s["state"] == "STOPPED")?;
    produce(&producer, &topic_in, &records(200, 300)).await?;
    http_json(&host.admin, "POST", "/v1/connectors/life/resume", &json!({}))?;
    wait(&host, "life", "through 300 after a stop", |s| s["records_out"].as_u64() >= Some(300))?;

    let out = consume_until(&topic_out, Duration::from_secs(60), distinct_keys_reach(300)).await?;
    assert_eq!(distinct_and_duplicates(&out).0, 300, "every record once paused, stopped and resumed");
    assert_eq!(http(&host.admin, "DELETE", "/v1/connectors/life")?.0, 204);
    assert_eq!(host.get("/v1/connectors/life")?.0, 404);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_host_comes_back_as_it_was() -> anyhow::Result<()> {
    let topic = unique("restore-in");
    create_topic(&topic, 1).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-restore"));
    let config = bare_host_config();
    let mut host = HostProcess::start(&dir, &config)?;
    wait_healthy(&host)?;

    // An uploaded plugin version, and three connectors left in three states.
    let (code, _) = upload_plugin(&host.admin, "copy", "2.0.0", &builtin("identity")?)?;
    assert_eq!(code, 201);
    for name in ["run", "pau", "sto"] {
        let connector = json!({ "topics": [topic], "output_topic": format!("{topic}-{name}"), "transforms": [{ "plugin": "copy@2.0.0" }] });
        assert_eq!(http_json(&host.admin, "PUT", &format!("/v1/connectors/{name}"), &connector)?.0, 201);
        wait(&host, name, "running", |s| s["state"] == "RUNNING")?;
    }
    http_json(&host.admin, "POST", "/v1/connectors/pau/pause", &json!({}))?;
    http_json(&host.admin, "POST", "/v1/connectors/sto/stop", &json!({}))?;
    wait(&host, "pau", "paused", |s| s["state"] == "PAUSED")?;
    wait(&host, "sto", "stopped", |s| s["state"] == "STOPPED")?;
    assert!(host.stop()?.success());

    let host = HostProcess::start(&dir, &config)?;
    wait_healthy(&host)?;
    wait(&host, "run", "running again", |s| s["state"] == "RUNNING" && s["plugins"] == json!(["copy@2.0.0"]))?;
    wait(&host, "pau", "paused again", |s| s["state"] == "PAUSED")?;
    wait(&host, "sto", "stopped again", |s| s["state"] == "STOPPED")?;
    // A connector restored paused starts paused: it never says RUNNING on the way (each
    // state change is an event, and an info line in the log).
    let log = host.log_text();
    let pau_states: Vec<&str> = log.lines().filter(|l| l.contains("connector state changed") && l.contains("\"pau\"")).collect();
    assert!(pau_states.iter().all(|l| !l.contains("Running")), "the paused connector went through RUNNING:\n{}", pau_states.join("\n"));
    let (_, plugins) = http_get(&host.admin, "/v1/plugins/copy")?;
    assert_eq!(plugins["plugins"][0]["version"], "2.0.0");
    let mut used_by: Vec<&str> = plugins["plugins"][0]["used_by"].as_array().into_iter().flatten().filter_map(|c| c.as_str()).collect();
    used_by.sort_unstable();
    assert_eq!(used_by, ["pau", "run", "sto"], "{plugins}");
    Ok(())
}
