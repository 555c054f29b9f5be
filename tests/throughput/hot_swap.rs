//! Hot-swapping a plugin under steady traffic on real Kafka: a new version takes over at a
//! batch boundary, no record is lost, and a neighbour connector keeps pace with its feed
//! through the swap.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::Context;
use rdkafka::consumer::{Consumer, StreamConsumer};
use rdkafka::message::{Headers, Message};
use serde_json::json;
use turnpike_tests::*;

use crate::neighbour::{feed, one_at_a_time, traffic_runtime, wait_keeping_up, Fed, Rates, RATE};

/// How long the neighbour is measured after the switch, on top of the switch itself.
const AFTER_THE_SWITCH: Duration = Duration::from_secs(2);

#[test]
fn a_new_version_takes_over_under_traffic_losing_nothing() -> anyhow::Result<()> {
    let _alone = one_at_a_time();
    let traffic = traffic_runtime()?;
    let (topic_in, topic_out, steady_in) = (unique("swap-in"), unique("swap-out"), unique("swap-steady"));
    traffic.block_on(async {
        create_topic(&topic_in, 2).await?;
        create_topic(&steady_in, 1).await
    })?;
    let tagger = fixture("tagger")?;
    let dir = std::env::temp_dir().join(unique("turnpike-swap"));
    let mut host = HostProcess::start(&dir, &bare_host_config())?;
    wait_healthy(&host)?;
    assert_eq!(upload_plugin(&host.admin, "xf", "1", &builtin("identity")?)?.0, 201);
    let swapped = json!({ "topics": [topic_in], "output_topic": topic_out, "batch": { "max_wait_ms": 5 }, "transforms": [{ "plugin": "xf@latest" }] });
    let steady = json!({ "topics": [steady_in], "output_topic": format!("{steady_in}-out"), "batch": { "max_wait_ms": 5 }, "transforms": [{ "plugin": "identity" }] });
    assert_eq!(http_json(&host.admin, "PUT", "/v1/connectors/xf", &swapped)?.0, 201);
    assert_eq!(http_json(&host.admin, "PUT", "/v1/connectors/steady", &steady)?.0, 201);
    host.wait_state("xf", "RUNNING", Duration::from_secs(120))?;
    host.wait_state("steady", "RUNNING", Duration::from_secs(120))?;

    let total = 12 * RATE;
    let (fed, fed_swapped) = (Fed::default(), Fed::default());
    let feeding = traffic.spawn(feed(topic_in.clone(), 0..total, fed_swapped.clone()));
    let feeding_steady = traffic.spawn(feed(steady_in.clone(), 0..total, fed.clone()));
    // v1 must be carrying traffic before v2 arrives, or there is nothing to take over.
    wait_keeping_up(&host, "xf", &fed_swapped)?;
    wait_keeping_up(&host, "steady", &fed)?;

    // v2 arrives: the connector on xf@latest switches at its next batch boundary. The
    // neighbour is measured across the switch and a while after it.
    let rates = Rates::measure(&host, "steady", &fed, || {
        assert_eq!(upload_plugin(&host.admin, "xf", "2", &tagger)?.0, 201);
        let switched = wait_until("xf to run xf@2", Duration::from_secs(30), || Ok((host.get("/v1/connectors/xf")?.1["plugins"] == json!(["xf@2"])).then_some(())));
        switched.with_context(|| format!("log:\n{}", host.log_text()))?;
        std::thread::sleep(AFTER_THE_SWITCH);
        Ok(())
    })?;
    traffic.block_on(async {
        feeding.await??;
        feeding_steady.await??;
        anyhow::Ok(())
    })?;
    let status = host.get("/v1/connectors/xf")?.1;
    assert_eq!((&status["state"], &status["swap_error"]), (&json!("RUNNING"), &serde_json::Value::Null), "{status}");

    // Every input came out, each as v1 (untagged) or v2 (tagged) output, and in each
    // partition v1 outputs all come before v2 ones: the switch happened between batches.
    let seen = traffic.block_on(outputs_by_version(&topic_out, total))?;
    let v2 = seen.values().filter(|tagged| **tagged).count();
    let Rates { fed_per_s, out_per_s } = rates;
    println!(
        "hot swap under {RATE} records/s: {} outputs, {} from v1 and {v2} from v2; neighbour fed {fed_per_s:.0} records/s, wrote {out_per_s:.0} across the swap",
        seen.len(),
        seen.len() - v2
    );
    assert_eq!(seen.len(), total, "every input appears as a v1 or a v2 output");
    assert!(v2 > 0 && v2 < total, "both versions produced output");
    rates.ensure_kept_pace("a hot swap").with_context(|| format!("log:\n{}", host.log_text()))?;
    Ok(())
}

/// Reads `topic` until every one of `total` inputs has an output (or two minutes passed): for
/// each input key, whether its output came from v2 (tagged). Fails on a v1 output that
/// follows a v2 one in its partition.
async fn outputs_by_version(topic: &str, total: usize) -> anyhow::Result<HashMap<String, bool>> {
    let consumer: StreamConsumer = rdkafka::config::ClientConfig::new()
        .set("bootstrap.servers", bootstrap())
        .set("group.id", unique("swap-verifier"))
        .set("auto.offset.reset", "earliest")
        .create()?;
    consumer.subscribe(&[topic])?;
    let mut seen: HashMap<String, bool> = HashMap::new();
    let mut switched: HashMap<i32, bool> = HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    while seen.len() < total && Instant::now() < deadline {
        let Ok(Ok(m)) = tokio::time::timeout(Duration::from_secs(1), consumer.recv()).await else { continue };
        let tagged = m.headers().is_some_and(|h| h.iter().any(|h| h.key == "tagged" && h.value == Some(&b"v2"[..])));
        let was_switched = switched.entry(m.partition()).or_default();
        anyhow::ensure!(tagged || !*was_switched, "a v1 output after v2 outputs in partition {}", m.partition());
        *was_switched |= tagged;
        seen.entry(String::from_utf8_lossy(m.key().unwrap_or_default()).into_owned()).or_insert(tagged);
    }
    Ok(seen)
}
