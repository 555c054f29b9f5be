//! Hot-swapping a plugin under steady traffic on real Kafka: a new version takes over at a
//! batch boundary, no record is lost, and a neighbour connector does not notice.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::{Headers, Message};
use serde_json::json;
use turnpike_tests::*;

const RATE: usize = 1_000;

async fn feed(topic: String, from: usize, to: usize) -> anyhow::Result<()> {
    let producer = producer()?;
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    for chunk in (from..to).collect::<Vec<_>>().chunks(RATE / 10) {
        tick.tick().await;
        let batch: Vec<_> = chunk.iter().map(|i| (format!("k{i}"), format!(r#"{{"n":{i}}}"#))).collect();
        produce(&producer, &topic, &batch).await?;
    }
    Ok(())
}

fn records_out(host: &HostProcess, name: &str) -> anyhow::Result<u64> {
    Ok(host.get(&format!("/v1/connectors/{name}"))?.1["records_out"].as_u64().unwrap_or(0))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_new_version_takes_over_under_traffic_losing_nothing() -> anyhow::Result<()> {
    let (topic_in, topic_out, steady_in) = (unique("swap-in"), unique("swap-out"), unique("swap-steady"));
    create_topic(&topic_in, 2).await?;
    create_topic(&steady_in, 1).await?;
    let dir = std::env::temp_dir().join(unique("turnpike-swap"));
    let config = bare_host_config();
    let host = HostProcess::start(&dir, &config)?;
    wait_healthy(&host)?;
    assert_eq!(upload_plugin(&host.admin, "xf", "1", &builtin("identity")?)?.0, 201);
    let swapped = json!({ "topics": [topic_in], "output_topic": topic_out, "batch": { "max_wait_ms": 5 }, "transforms": [{ "plugin": "xf@latest" }] });
    let steady = json!({ "topics": [steady_in], "output_topic": format!("{steady_in}-out"), "batch": { "max_wait_ms": 5 }, "transforms": [{ "plugin": "identity" }] });
    assert_eq!(http_json(&host.admin, "PUT", "/v1/connectors/xf", &swapped)?.0, 201);
    assert_eq!(http_json(&host.admin, "PUT", "/v1/connectors/steady", &steady)?.0, 201);

    let total = 8 * RATE;
    let feeding = tokio::spawn(feed(topic_in.clone(), 0, total));
    let feeding_steady = tokio::spawn(feed(steady_in.clone(), 0, total));
    std::thread::sleep(Duration::from_secs(3));
    let (before, t0) = (records_out(&host, "steady")?, Instant::now());
    std::thread::sleep(Duration::from_secs(2));
    let rate_before = (records_out(&host, "steady")? - before) as f64 / t0.elapsed().as_secs_f64();

    // v2 arrives: the connector on xf@latest switches at its next batch boundary.
    let (after, t1) = (records_out(&host, "steady")?, Instant::now());
    assert_eq!(upload_plugin(&host.admin, "xf", "2", &fixture("tagger")?)?.0, 201);
    let deadline = Instant::now() + Duration::from_secs(30);
    while host.get("/v1/connectors/xf")?.1["plugins"] != json!(["xf@2"]) {
        anyhow::ensure!(Instant::now() < deadline, "never switched: {}\nlog:\n{}", host.get("/v1/connectors/xf")?.1, host.log_text());
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_secs(2));
    let rate_during = (records_out(&host, "steady")? - after) as f64 / t1.elapsed().as_secs_f64();
    feeding.await??;
    feeding_steady.await??;
    let status = host.get("/v1/connectors/xf")?.1;
    assert_eq!((&status["state"], &status["swap_error"]), (&json!("RUNNING"), &serde_json::Value::Null), "{status}");

    // Every input came out, each as v1 (untagged) or v2 (tagged) output, and in each
    // partition v1 outputs all come before v2 ones: the switch happened between batches.
    let consumer: StreamConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set("group.id", unique("swap-verifier"))
        .set("auto.offset.reset", "earliest")
        .create()?;
    consumer.subscribe(&[&topic_out])?;
    let mut seen: HashMap<String, bool> = HashMap::new();
    let mut switched: HashMap<i32, bool> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while seen.len() < total && Instant::now() < deadline {
        let Ok(Ok(m)) = tokio::time::timeout(Duration::from_secs(1), consumer.recv()).await else { continue };
        let tagged = m.headers().is_some_and(|h| h.iter().any(|h| h.key == "tagged" && h.value == Some(&b"v2"[..])));
        let was_switched = switched.entry(m.partition()).or_default();
        assert!(tagged || !*was_switched, "a v1 output after v2 outputs in partition {}", m.partition());
        *was_switched |= tagged;
        seen.entry(String::from_utf8_lossy(m.key().unwrap_or_default()).into_owned()).or_insert(tagged);
    }
    let v2 = seen.values().filter(|t| **t).count();
    println!("hot swap under {RATE} records/s: {} outputs, {} from v1 and {v2} from v2; neighbour {rate_before:.0} records/s before, {rate_during:.0} during the swap", seen.len(), seen.len() - v2);
    assert_eq!(seen.len(), total, "every input appears as a v1 or a v2 output");
    assert!(v2 > 0 && v2 < total, "both versions produced output");
    // A neighbour still catching up on its start-up backlog runs above the feed rate before
    // the swap; in steady state it can only keep up with the feed.
    let expected = rate_before.min(RATE as f64);
    assert!(rate_during >= 0.9 * expected, "the neighbour kept {rate_during:.0} of {expected:.0} records/s");
    Ok(())
}
