//! `GET /v1/topics` and `GET /v1/topics/{topic}/sample` on real Kafka: the latest records
//! across partitions, values capped, internal topics hidden unless asked, and no consumer
//! group left on the broker (a look must never move or create anyone's offsets).

use std::time::Duration;

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::ClientConfig;
use serde_json::Value;
use turnpike_tests::*;

fn groups_on_broker() -> anyhow::Result<Vec<String>> {
    let client: BaseConsumer = ClientConfig::new().set("bootstrap.servers", bootstrap()).create()?;
    Ok(client.fetch_group_list(None, Duration::from_secs(10))?.groups().iter().map(|g| g.name().to_owned()).collect())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sample_is_the_latest_records_across_partitions_and_leaves_no_group() -> anyhow::Result<()> {
    let topic = unique("sampled");
    create_topic_with(&topic, 3, &[("retention.ms", "-1")]).await?;
    // 30 records with timestamps one second apart: the first 20 over the 3 partitions, the
    // newest 10 all in partition 0 (so a sample that took limit/partitions from each, or only
    // the last few of each, would miss some); one huge value.
    let base = 1_700_000_000_000i64;
    let mut records: Vec<Outgoing> = (0..30)
        .map(|i| Outgoing { key: format!("k{i}"), value: format!("{{\"n\":{i}}}"), partition: Some(if i < 20 { i % 3 } else { 0 }), timestamp: Some(base + i64::from(i) * 1000) })
        .collect();
    records[29].value = format!("{{\"big\":\"{}\"}}", "x".repeat(40 * 1024));
    produce_records(&producer()?, &topic, &records).await?;

    let dir = std::env::temp_dir().join(unique("turnpike-topics"));
    let host = HostProcess::start(&dir, &bare_host_config())?;
    wait_healthy(&host)?;
    let before = groups_on_broker()?;

    let (status, sample) = host.get(&format!("/v1/topics/{topic}/sample?limit=10"))?;
    assert_eq!(status, 200, "{sample}");
    let got: Vec<&Value> = sample["records"].as_array().map(|r| r.iter().collect()).unwrap_or_default();
    let keys: Vec<&str> = got.iter().filter_map(|r| r["key"].as_str()).collect();
    let expected: Vec<String> = (20..30).map(|i| format!("k{i}")).collect();
    assert_eq!(keys, expected, "the latest 10 across the partitions, oldest first: {sample}");
    let last = got.last().copied().cloned().unwrap_or_default();
    assert_eq!(last["value_truncated"], true, "{last}");
    assert_eq!(last["value"].as_str().map(str::len), Some(16 * 1024), "values are capped at 16 KiB");
    assert_eq!(got[0]["timestamp"], base + 20_000);

    let (status, refused) = host.get(&format!("/v1/topics/{topic}/sample?limit=1000"))?;
    assert_eq!((status, refused["error"].as_str()), (422, Some("invalid_limit")), "{refused}");
    let (status, missing) = host.get("/v1/topics/no-such-topic-here/sample")?;
    assert_eq!((status, missing["error"].as_str()), (404, Some("topic_not_found")), "{missing}");

    let (_, listed) = host.get("/v1/topics")?;
    let names: Vec<&str> = listed["topics"].as_array().map(|t| t.iter().filter_map(|t| t["name"].as_str()).collect()).unwrap_or_default();
    assert!(names.contains(&topic.as_str()), "{names:?}");
    let entry = listed["topics"].as_array().and_then(|t| t.iter().find(|t| t["name"] == topic.as_str())).cloned().unwrap_or_default();
    assert_eq!(entry["partitions"], 3, "{entry}");
    assert!(!names.iter().any(|n| n.starts_with("__") || *n == "turnpike-source-positions"), "internal topics hidden: {names:?}");
    let (_, everything) = host.get("/v1/topics?internal=true")?;
    assert!(everything.to_string().contains("turnpike-source-positions"), "asked for, internal topics are listed: {everything}");

    let after = groups_on_broker()?;
    let new: Vec<&String> = after.iter().filter(|g| !before.contains(g)).collect();
    assert!(!new.iter().any(|g| g.contains("sample")), "sampling created no consumer group: {new:?}");
    Ok(())
}
