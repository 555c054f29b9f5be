//! Idle connectors give their consumer up (`batch.idle_after_ms`) and take one again for the
//! next record, losing none: a transform that read from its partitions before, a
//! `start_from: latest` one whose topic nobody wrote to before it went idle (its new consumer
//! would start after the records that woke it, if the release had not committed where the
//! watch started), and a sink, which flushes first and is told its partitions went and came.
//! A pause and a plugin swap are handled without taking a consumer.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use anyhow::Result;
use turnpike_tests::*;

/// Whether every task of `connector` says it gave its consumer up.
fn all_idle(host: &HostProcess, connector: &str) -> Result<bool> {
    let (_, body) = host.get(&format!("/v1/connectors/{connector}"))?;
    let tasks = body["tasks"].as_array().cloned().unwrap_or_default();
    Ok(!tasks.is_empty() && tasks.iter().all(|t| t["idle"] == true))
}

/// Waits until every one of `connectors` says each of its tasks is idle and the broker has no
/// member left in its group (`turnpike-<name>`); on a timeout the error carries the host log.
fn wait_idle(host: &HostProcess, connectors: &[&str], what: &str, within: Duration) -> Result<()> {
    let idle = wait_until(what, within, || {
        for connector in connectors {
            if !all_idle(host, connector)? || group_members(&format!("turnpike-{connector}"))? != 0 {
                return Ok(None);
            }
        }
        Ok(Some(()))
    });
    idle.map_err(|e| anyhow::anyhow!("{e}; log:\n{}", host.log_text()))
}

/// Fails if a task of `connector` has a consumer, or its group a member.
fn still_out(host: &HostProcess, connector: &str, what: &str) -> Result<()> {
    let (idle, members) = (all_idle(host, connector)?, group_members(&format!("turnpike-{connector}"))?);
    let (_, status) = host.get(&format!("/v1/connectors/{connector}"))?;
    anyhow::ensure!(idle && members == 0, "{what}, {connector} took a consumer (idle {idle}, group members {members}): {status}; log:\n{}", host.log_text());
    Ok(())
}

fn keyed(prefix: &str, n: usize) -> Vec<(String, String)> {
    (0..n).map(|i| (format!("{prefix}-{i}"), format!(r#"{{"k":"{prefix}-{i}"}}"#))).collect()
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
        wait_idle(&host, &["idle-read", "idle-new"], &format!("round {round}: both connectors idle, their groups empty"), Duration::from_secs(60))?;

        let sent = Instant::now();
        produce(&producer, &new_in, &keyed(&format!("new-{round}"), 5)).await?;
        produce(&producer, &read_in, &keyed(&format!("read-{round}"), 5)).await?;
        let new = consume_until(&new_out, Duration::from_secs(60), distinct_keys_reach(5 * round)).await?;
        let read = consume_until(&read_out, Duration::from_secs(60), distinct_keys_reach(10 + 5 * round)).await?;
        println!("round {round}: both woke; every record out {:?} after it was sent", sent.elapsed());
        assert_eq!(distinct_and_duplicates(&new).0, 5 * round, "start_from: latest, woken: every record written since it went idle; log:\n{}", host.log_text());
        assert_eq!(distinct_and_duplicates(&read).0, 10 + 5 * round, "read before, woken: every record; log:\n{}", host.log_text());
    }

    // Paused and resumed while idle, it says PAUSED (its tasks listed, still idle), then
    // RUNNING, and never takes a consumer for that.
    wait_idle(&host, &["idle-read"], "idle before the pause", Duration::from_secs(60))?;
    let admin = host.admin.clone();
    let pause = |verb: &str| -> Result<()> {
        let (status, body) = http_json(&admin, "POST", &format!("/v1/connectors/idle-read/{verb}"), &serde_json::json!({}))?;
        anyhow::ensure!(status < 300, "{verb}: {status} {body}");
        Ok(())
    };
    pause("pause")?;
    host.wait_state("idle-read", "PAUSED", Duration::from_secs(30))?;
    still_out(&host, "idle-read", "paused while idle")?;
    pause("resume")?;
    host.wait_state("idle-read", "RUNNING", Duration::from_secs(30))?;
    still_out(&host, "idle-read", "paused and resumed while idle")?;
    // Records that come while it is paused wake it once it is resumed.
    pause("pause")?;
    host.wait_state("idle-read", "PAUSED", Duration::from_secs(30))?;
    produce(&producer, &read_in, &keyed("paused", 5)).await?;
    pause("resume")?;
    host.wait_state("idle-read", "RUNNING", Duration::from_secs(30))?;
    let read = consume_until(&read_out, Duration::from_secs(60), distinct_keys_reach(25)).await?;
    assert_eq!(distinct_and_duplicates(&read).0, 25, "the records written while paused; log:\n{}", host.log_text());

    // A plugin swap while idle is applied there, without a consumer; the next records go
    // through the new chain.
    wait_idle(&host, &["idle-read"], "idle before the swap", Duration::from_secs(60))?;
    let masking = serde_json::json!({ "name": "idle-read", "topics": [read_in], "output_topic": read_out, "batch": { "idle_after_ms": 1000 },
        "transforms": [{ "plugin": "pii-mask", "config": { "fields": ["k"] } }] });
    let (status, body) = http_json(&host.admin, "PUT", "/v1/connectors/idle-read", &masking)?;
    assert_eq!(status, 200, "swap: {body}");
    still_out(&host, "idle-read", "swapped while idle")?;
    produce(&producer, &read_in, &keyed("swapped", 5)).await?;
    let read = consume_until(&read_out, Duration::from_secs(60), distinct_keys_reach(30)).await?;
    let swapped: Vec<&String> = read.iter().filter(|(k, _)| k.starts_with("swapped-")).map(|(_, v)| v).collect();
    assert!(!swapped.is_empty() && swapped.iter().all(|v| v.as_str() == r#"{"k":"***"}"#), "after the swap: {swapped:?}; log:\n{}", host.log_text());
    assert!(host.stop()?.success());
    Ok(())
}

/// Every line the endpoint accepted.
fn accepted(server: &TestServer) -> HashSet<String> {
    let ok = server.received().into_iter().filter(|r| r.method == "POST" && (200..300).contains(&r.status));
    ok.flat_map(|r| String::from_utf8_lossy(&r.body).lines().map(str::to_owned).collect::<Vec<_>>()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_sink_flushes_gives_its_consumer_up_and_writes_what_comes_next() -> Result<()> {
    let server = TestServer::start(|_| json(200, "ok"))?;
    let topic = unique("idle-sink");
    create_topic(&topic, 2).await?;
    let producer = producer()?;
    produce(&producer, &topic, &keyed("before", 10)).await?;
    let connector = format!(
        "- name: idle-sink\n  topics: [{topic}]\n  batch: {{ idle_after_ms: 1000 }}\n  http: {{ allow: [\"127.0.0.1:{}\"] }}\n  sink:\n    plugin: http-sink\n    flush_interval_ms: 60000\n    config: {{ url: \"{}\" }}\n",
        server.port,
        server.url("/ingest")
    );
    let dir = std::env::temp_dir().join(unique("turnpike-idle-sink"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    host.wait_state("idle-sink", "RUNNING", Duration::from_secs(120))?;
    for round in 0..=2 {
        // Flushed before it went idle (the flush interval is a minute), its group empty.
        wait_idle(&host, &["idle-sink"], &format!("round {round}: the sink idle, its group empty"), Duration::from_secs(30))?;
        let expected = 10 + 5 * round;
        assert_eq!(accepted(&server).len(), expected, "everything read was written before the sink went idle; log:\n{}", host.log_text());
        produce(&producer, &topic, &keyed(&format!("round-{round}"), 5)).await?;
        // Woken: what came is written before the next round looks for the sink idle again.
        wait_until(&format!("round {round}: the new records written"), Duration::from_secs(60), || Ok((accepted(&server).len() >= expected + 5).then_some(())))?;
    }
    assert_eq!(accepted(&server).len(), 25);
    assert!(host.stop()?.success());
    Ok(())
}

/// Writes `records` in one committed transaction.
fn produce_in_transaction(topic: &str, transactional_id: &str, records: &[(String, String)]) -> Result<()> {
    use rdkafka::producer::{BaseProducer, BaseRecord, Producer as _};
    let producer: BaseProducer = rdkafka::ClientConfig::new().set("bootstrap.servers", bootstrap()).set("transactional.id", transactional_id).create()?;
    let timeout = Duration::from_secs(30);
    producer.init_transactions(timeout)?;
    producer.begin_transaction()?;
    for (key, value) in records {
        producer.send(BaseRecord::to(topic).key(key).payload(value)).map_err(|(e, _)| e)?;
    }
    producer.commit_transaction(timeout)?;
    Ok(())
}

/// A transactional input: the consumer steps over each commit marker, so its position is
/// past the offset after its last record. It used to wait for that offset to be committed
/// for ever, and never went idle.
#[tokio::test(flavor = "multi_thread")]
async fn a_connector_reading_transactions_goes_idle_and_wakes() -> Result<()> {
    let (topic_in, topic_out) = (unique("idle-txn"), unique("idle-txn-out"));
    create_topic(&topic_in, 1).await?;
    create_topic(&topic_out, 1).await?;
    let transactional_id = unique("idle-txn-writer");
    produce_in_transaction(&topic_in, &transactional_id, &keyed("first", 5))?;
    let connector = format!("- name: idle-txn\n  topics: [{topic_in}]\n  output_topic: {topic_out}\n  batch: {{ idle_after_ms: 1000 }}\n  transforms:\n    - plugin: identity\n");
    let dir = std::env::temp_dir().join(unique("turnpike-idle-txn"));
    let mut host = HostProcess::start(&dir, &host_config(free_port(), &connector))?;
    host.wait_state("idle-txn", "RUNNING", Duration::from_secs(120))?;
    consume_until(&topic_out, Duration::from_secs(60), distinct_keys_reach(5)).await?;
    wait_idle(&host, &["idle-txn"], "the connector idle after reading a transaction", Duration::from_secs(30))?;
    produce_in_transaction(&topic_in, &transactional_id, &keyed("second", 5))?;
    let out = consume_until(&topic_out, Duration::from_secs(60), distinct_keys_reach(10)).await?;
    assert_eq!(distinct_and_duplicates(&out).0, 10, "woken by the second transaction; log:\n{}", host.log_text());
    assert!(host.stop()?.success());
    Ok(())
}

/// A partition added to a topic while its connector is idle belongs to none of the partitions
/// the idle watch reads for it: the watch reads the topic's partition count every
/// `topic.metadata.refresh.interval.ms` when that is shorter than a minute, but not more often
/// than every 5 s (5 s here), and wakes the task, whose new consumer is given the new
/// partition too and reads its records.
#[tokio::test(flavor = "multi_thread")]
async fn a_partition_added_while_a_connector_is_idle_is_read() -> Result<()> {
    let (input, output) = (unique("idle-grow"), unique("idle-grow-out"));
    create_topic(&input, 1).await?;
    create_topic(&output, 1).await?;
    produce(&producer()?, &input, &keyed("before", 3)).await?;
    let connector = format!(
        "- name: idle-grow\n  topics: [{input}]\n  output_topic: {output}\n  start_from: earliest\n  batch: {{ idle_after_ms: 1000 }}\n  transforms:\n    - plugin: identity\n"
    );
    let base = host_config(free_port(), &connector);
    let config = base.replace("  session.timeout.ms: 6000\n", "  session.timeout.ms: 6000\n  topic.metadata.refresh.interval.ms: 1000\n");
    assert_ne!(config, base, "the host config names the metadata interval");
    let dir = std::env::temp_dir().join(unique("turnpike-idle-grow"));
    let mut host = HostProcess::start(&dir, &config)?;
    host.wait_state("idle-grow", "RUNNING", Duration::from_secs(120))?;
    consume_until(&output, Duration::from_secs(60), distinct_keys_reach(3)).await?;
    wait_idle(&host, &["idle-grow"], "the connector idle, its group empty", Duration::from_secs(60))?;

    add_partitions(&input, 2).await?;
    // A producer made now knows the new partition (one made before may not yet).
    let record = Outgoing { key: "grown-0".into(), value: r#"{"k":"grown-0"}"#.into(), partition: Some(1), timestamp: None };
    let deadline = Instant::now() + Duration::from_secs(30);
    while let Err(e) = produce_records(&producer()?, &input, std::slice::from_ref(&record)).await {
        anyhow::ensure!(Instant::now() < deadline, "could not write to the new partition: {e}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let out = consume_until(&output, Duration::from_secs(60), distinct_keys_reach(4)).await?;
    assert_eq!(distinct_and_duplicates(&out).0, 4, "the record on the partition added while idle; log:\n{}", host.log_text());
    assert!(host.log_text().contains("partitions added to a topic idle tasks read"), "woken by the partition count; log:\n{}", host.log_text());
    assert!(host.stop()?.success());
    Ok(())
}
