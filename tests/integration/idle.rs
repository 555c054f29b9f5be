//! Idle transform connectors give their consumer up (`batch.idle_after_ms`) and take one
//! again for the next record, losing none: one that read from its partitions before, and a
//! `start_from: latest` one whose topic nobody wrote to before it went idle (its new consumer
//! would start after the records that woke it, if the release had not committed where the
//! watch started).

use std::time::{Duration, Instant};

use anyhow::Result;
use turnpike_tests::*;

/// Whether every task of `connector` says it gave its consumer up.
fn all_idle(host: &HostProcess, connector: &str) -> Result<bool> {
    let (_, body) = host.get(&format!("/v1/connectors/{connector}"))?;
    let tasks = body["tasks"].as_array().cloned().unwrap_or_default();
    Ok(!tasks.is_empty() && tasks.iter().all(|t| t["idle"] == true))
}

fn keyed(prefix: &str, n: usize) -> Vec<(String, String)> {
    (0..n).map(|i| (format!("{prefix}-{i}"), format!(r#"{{"n":{i}}}"#))).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_connectors_give_their_consumer_up_and_lose_no_record_when_woken() -> Result<()> {
    let (read_in, read_out, new_in, new_out) = (unique("idle-read"), unique("idle-read-out"), unique("idle-new"), unique("idle-new-out"));
    for topic in [&read_in, &read_out, &new_in, &new_out] {
        create_topic(topic, 2).await?;
    }
    let producer = producer()?;
    produce(&producer, &read_in, &keyed("before", 10)).await?;
    let connectors = format!(
        r#"- name: idle-read
  topics: [{read_in}]
  output_topic: {read_out}
  batch: {{ idle_after_ms: 1000 }}
  transforms:
    - plugin: identity
- name: idle-new
  topics: [{new_in}]
  output_topic: {new_out}
  start_from: latest
  batch: {{ idle_after_ms: 1000 }}
  transforms:
    - plugin: identity
"#
    );
    let dir = std::env::temp_dir().join(unique("turnpike-idle"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connectors))?;
    host.wait_state("idle-read", "RUNNING", Duration::from_secs(120))?;
    host.wait_state("idle-new", "RUNNING", Duration::from_secs(120))?;
    consume_until(&read_out, Duration::from_secs(60), distinct_keys_reach(10)).await?;

    for round in 1..=2 {
        // Idle: each says so, and the broker has no member left in either group.
        let idle = wait_until(&format!("round {round}: both connectors idle, their groups empty"), Duration::from_secs(60), || {
            let status = all_idle(&host, "idle-read")? && all_idle(&host, "idle-new")?;
            let empty = group_members("turnpike-idle-read")? == 0 && group_members("turnpike-idle-new")? == 0;
            Ok((status && empty).then_some(()))
        });
        idle.map_err(|e| anyhow::anyhow!("{e}; log:\n{}", host.log_text()))?;

        let sent = Instant::now();
        produce(&producer, &new_in, &keyed(&format!("new-{round}"), 5)).await?;
        produce(&producer, &read_in, &keyed(&format!("read-{round}"), 5)).await?;
        let new = consume_until(&new_out, Duration::from_secs(60), distinct_keys_reach(5 * round)).await?;
        let read = consume_until(&read_out, Duration::from_secs(60), distinct_keys_reach(10 + 5 * round)).await?;
        println!("round {round}: both woke; every record out {:?} after it was sent", sent.elapsed());
        assert_eq!(distinct_and_duplicates(&new).0, 5 * round, "start_from: latest, woken: every record written since it went idle; log:\n{}", host.log_text());
        assert_eq!(distinct_and_duplicates(&read).0, 10 + 5 * round, "read before, woken: every record; log:\n{}", host.log_text());
    }

    // Paused while idle, it wakes and says PAUSED; resumed, it reads what came meanwhile.
    wait_until("idle again", Duration::from_secs(60), || Ok(all_idle(&host, "idle-read")?.then_some(())))?;
    let (status, body) = http_json(&host.admin, "POST", "/v1/connectors/idle-read/pause", &serde_json::json!({}))?;
    assert!(status < 300, "pause: {status} {body}");
    host.wait_state("idle-read", "PAUSED", Duration::from_secs(30))?;
    produce(&producer, &read_in, &keyed("paused", 5)).await?;
    let (status, body) = http_json(&host.admin, "POST", "/v1/connectors/idle-read/resume", &serde_json::json!({}))?;
    assert!(status < 300, "resume: {status} {body}");
    host.wait_state("idle-read", "RUNNING", Duration::from_secs(30))?;
    let read = consume_until(&read_out, Duration::from_secs(60), distinct_keys_reach(25)).await?;
    assert_eq!(distinct_and_duplicates(&read).0, 25, "the records written while paused; log:\n{}", host.log_text());
    assert!(host.stop()?.success());
    Ok(())
}
