//! The host keeps its promises against hostile input, on real Kafka: a record whose header key
//! is not UTF-8 goes through the error policy instead of killing the connector silently, and
//! a plugin cannot route records to a topic its connector was not granted.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::json;
use turnpike_tests::*;

fn good(from: usize, to: usize) -> Vec<(String, String)> {
    (from..to).map(|i| (format!("k{i}"), format!(r#"{{"n":{i}}}"#))).collect()
}

/// Ten good records, one whose header key is the bytes `ff fe 62 61 64` (offset 10), ten more.
async fn produce_with_poison(topic: &str) -> anyhow::Result<()> {
    let producer = producer()?;
    produce(&producer, topic, &good(0, 10)).await?;
    produce_with_raw_header_key(topic, br#"{"n":"poison"}"#, b"\xff\xfebad", b"v")?;
    produce(&producer, topic, &good(10, 20)).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_header_key_that_is_not_utf8_is_dead_lettered_and_the_rest_flow() -> anyhow::Result<()> {
    let (topic, dlq) = (unique("poison-hdr-in"), unique("poison-hdr-dlq"));
    create_topic(&topic, 1).await?;
    produce_with_poison(&topic).await?;
    let connector = format!(
        "- name: hdr\n  topics: [{topic}]\n  output_topic: {topic}-out\n  errors: {{ tolerance: all, dead_letter_topic: {dlq} }}\n  transforms:\n    - plugin: identity\n"
    );
    let dir = std::env::temp_dir().join(unique("turnpike-poison-hdr"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    host.wait_state("hdr", "RUNNING", Duration::from_secs(120))?;

    let out = consume_until(&format!("{topic}-out"), Duration::from_secs(60), |got| got.len() >= 20).await?;
    assert_eq!(distinct_and_duplicates(&out).0, 20, "every good record passes; log:\n{}", host.log_text());
    let dead = read_with_headers(&dlq, 1, Duration::from_secs(60)).await?;
    assert_eq!(dead.len(), 1, "log:\n{}", host.log_text());
    let headers: &HashMap<String, String> = &dead[0].headers;
    assert_eq!(dead[0].value, r#"{"n":"poison"}"#);
    assert_eq!(headers["turnpike.error.stage"], "read");
    assert_eq!(headers["turnpike.error.class"], "unreadable_record");
    assert_eq!(headers["turnpike.error.offset"], "10");
    assert!(headers["turnpike.error.message"].contains("not valid UTF-8"), "{headers:?}");

    let status = wait_until("the poison counted", Duration::from_secs(30), || {
        let (_, s) = host.get("/v1/connectors/hdr")?;
        Ok((s["records_dead_lettered"] == 1).then_some(s))
    })?;
    assert_eq!(status["state"], "RUNNING", "{status}");
    assert!(host.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_header_key_that_is_not_utf8_fails_the_connector_naming_its_offset_every_time() -> anyhow::Result<()> {
    let topic = unique("poison-hdr-none");
    create_topic(&topic, 1).await?;
    produce_with_poison(&topic).await?;
    let connector = format!(
        "- name: strict\n  topics: [{topic}]\n  output_topic: {topic}-out\n  restart: {{ enabled: false }}\n  transforms:\n    - plugin: identity\n"
    );
    let dir = std::env::temp_dir().join(unique("turnpike-poison-strict"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    let failed = host.wait_state("strict", "FAILED", Duration::from_secs(120))?;
    let error = failed["error"]["message"].as_str().unwrap_or_default().to_owned();
    assert!(error.contains(&format!("{topic}/0@10")) && error.contains("not valid UTF-8"), "{failed}");
    assert_eq!(failed["error"]["class"], "unreadable_record");

    // A restart reads the same record again and fails again: never RUNNING with a stuck count.
    let mut events = event_stream(&host.admin)?;
    assert_eq!(http_json(&host.admin, "POST", "/v1/connectors/strict/restart", &json!({}))?.0, 202);
    let mut seen_failed = false;
    for _ in 0..200 {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut events, &mut line)? == 0 {
            break;
        }
        if line.contains("state_changed") && line.contains("FAILED") && line.contains("@10") {
            seen_failed = true;
            break;
        }
    }
    assert!(seen_failed, "a FAILED event naming the offset after the restart; log:\n{}", host.log_text());
    assert!(host.stop()?.success());
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_routes_only_to_the_topics_its_connector_may_write() -> anyhow::Result<()> {
    let (topic, granted, dlq) = (unique("route-in"), unique("route-granted"), unique("route-dlq"));
    create_topic(&topic, 1).await?;
    produce(&producer()?, &topic, &good(0, 5)).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-route"));
    let host = HostProcess::start(&dir, &bare_host_config())?;
    wait_healthy(&host)?;
    assert_eq!(upload_plugin(&host.admin, "tagger", "1.0.0", &fixture("tagger")?)?.0, 201);

    // Naming the internal positions topic as a route is refused outright.
    let internal = json!({ "topics": [topic], "output_topic": format!("{topic}-out"), "routes": ["turnpike-source-positions"],
        "transforms": [{ "plugin": "tagger@1.0.0" }] });
    let (code, body) = http_json(&host.admin, "PUT", "/v1/connectors/forge", &internal)?;
    assert_eq!(code, 422, "{body}");
    assert!(body.to_string().contains("connector.routes[0]"), "{body}");

    // A plugin routing to the positions topic (not granted) has every record refused.
    let forging = json!({ "topics": [topic], "output_topic": format!("{topic}-out"),
        "errors": { "tolerance": "all", "dead_letter_topic": dlq },
        "transforms": [{ "plugin": "tagger@1.0.0", "config": { "route_to": "turnpike-source-positions" } }] });
    assert_eq!(http_json(&host.admin, "PUT", "/v1/connectors/forger", &forging)?.0, 201);
    let dead = read_with_headers(&dlq, 5, Duration::from_secs(60)).await?;
    assert_eq!(dead.len(), 5, "log:\n{}", host.log_text());
    assert!(dead.iter().all(|d| d.headers["turnpike.error.class"] == "route_refused"), "{dead:?}");

    // A granted route is written to.
    let routed = json!({ "topics": [topic], "output_topic": format!("{topic}-out"), "routes": [granted],
        "transforms": [{ "plugin": "tagger@1.0.0", "config": { "route_to": granted } }] });
    let (code, body) = http_json(&host.admin, "PUT", "/v1/connectors/router", &routed)?;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["routes"], json!([granted]), "routes are shown in the status");
    let out = consume_until(&granted, Duration::from_secs(60), |got| got.len() >= 5).await?;
    assert_eq!(distinct_and_duplicates(&out).0, 5);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_retrying_connector_neither_waits_out_its_retries_nor_blocks_another() -> anyhow::Result<()> {
    let (slow_in, other_in) = (unique("slowstop-in"), unique("slowstop-other"));
    create_topic(&slow_in, 1).await?;
    create_topic(&other_in, 1).await?;
    produce(&producer()?, &slow_in, &good(0, 3)).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-slowstop"));
    let host = HostProcess::start(&dir, &bare_host_config())?;
    wait_healthy(&host)?;
    // Port 1 refuses connections: the sink retries for up to two minutes.
    let slow = json!({ "topics": [slow_in], "http": { "allow": ["127.0.0.1:1"] },
        "sink": { "plugin": "http-sink", "config": { "url": "http://127.0.0.1:1/" } },
        "errors": { "retry_timeout_ms": 120_000, "retry_max_delay_ms": 1_000 }, "restart": { "enabled": false } });
    assert_eq!(http_json(&host.admin, "PUT", "/v1/connectors/slowstop", &slow)?.0, 201);
    let other = json!({ "topics": [other_in], "output_topic": format!("{other_in}-out"), "transforms": [{ "plugin": "identity" }] });
    assert_eq!(http_json(&host.admin, "PUT", "/v1/connectors/other", &other)?.0, 201);
    wait_until("the sink retrying", Duration::from_secs(60), || {
        let (_, s) = host.get("/v1/connectors/slowstop")?;
        Ok((s["retries"].as_u64() >= Some(2)).then_some(()))
    })?;
    wait_until("the other connector running", Duration::from_secs(60), || Ok((host.get("/v1/connectors/other")?.1["state"] == "RUNNING").then_some(())))?;

    let admin = host.admin.clone();
    let started = std::time::Instant::now();
    let delete = std::thread::spawn(move || http(&admin, "DELETE", "/v1/connectors/slowstop").map(|r| (r.0, started.elapsed())));
    let (code, _) = http_json(&host.admin, "POST", "/v1/connectors/other/pause", &json!({}))?;
    let paused_after = started.elapsed();
    let (deleted, deleted_after) = delete.join().expect("delete thread")?;
    assert_eq!((code, deleted), (202, 204));
    // Before: the delete waited out the retry budget (two minutes here) while holding a
    // host-wide lock, and the pause waited behind it.
    assert!(deleted_after < Duration::from_secs(30), "the delete took {deleted_after:?}");
    assert!(paused_after < Duration::from_secs(30), "the unrelated pause took {paused_after:?}");
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plugin_failing_every_record_cannot_flood_the_host_log() -> anyhow::Result<()> {
    let topic = unique("flood-in");
    create_topic(&topic, 1).await?;
    let records: Vec<_> = (0..60).map(|i| (format!("k{i}"), format!("not json {i}\nforged log line"))).collect();
    produce(&producer()?, &topic, &records).await?;
    let connector = format!(
        "- name: flood\n  topics: [{topic}]\n  output_topic: {topic}-out\n  batch: {{ max_records: 100, max_wait_ms: 2000 }}\n  errors: {{ tolerance: all }}\n  transforms:\n    - plugin: pii-mask\n      config: {{ fields: [email] }}\n"
    );
    let dir = std::env::temp_dir().join(unique("turnpike-flood"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    host.wait_state("flood", "RUNNING", Duration::from_secs(120))?;
    wait_until("every record failed and counted", Duration::from_secs(60), || Ok((host.get("/v1/connectors/flood")?.1["records_failed"] == 60).then_some(())))?;
    let log = host.log_text();
    let logged = log.lines().filter(|l| l.contains("record failed")).count();
    assert!((1..=20).contains(&logged), "the first few per batch are logged one by one, not all 60: {logged}\n{log}");
    assert!(log.contains("more records of the batch failed"), "the rest are counted in one line:\n{log}");
    assert!(!log.lines().any(|l| l.starts_with("forged log line")), "plugin-chosen text cannot start a log line of its own");
    assert!(host.stop()?.success());
    Ok(())
}
